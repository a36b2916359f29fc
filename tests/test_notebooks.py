"""The course's notebooks and the lab smoke notebook, executed headless by nbclient in
the Binder replay (tests/binder_replay.py: a fresh environment built from binder/, the
notebooks run through binder/start by its kernel; each notebook runs once, here): no cell
errors, reports in the recorded outputs, the widget view beside its static HTML, saved
files under 1 MB; the kernel browser widget they show; the Binder files and links."""
from __future__ import annotations

import html
import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

import numpy as np  # noqa: E402

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402
from jaxlab.engine.devices import get_device  # noqa: E402
from jaxlab.engine.devices import unavailable as jaxlab_unavailable  # noqa: E402
from jaxlab.lab.widgets import (TABS, browse, find_kernel, recompile,  # noqa: E402
                                time_executable)
from tests import binder_replay  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NOTEBOOKS = TUTORIALS + [ROOT / "tests" / "notebooks" / "lab_smoke.ipynb"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
REPORT_JSON = "application/vnd.jaxlab.report+json"
MAX_SAVED_BYTES = 1_000_000


@pytest.fixture(scope="session")
def binder_env(tmp_path_factory: pytest.TempPathFactory) -> binder_replay.BinderEnv:
    """Binder's build, replayed in a fresh virtual environment once per run: the xdist
    workers share it through the run's temporary folder (each worker's own is below it),
    so the notebook tests may run on any worker."""
    run_folder = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        run_folder = run_folder.parent
    return binder_replay.build_once(run_folder / "binder")


def execute(path: Path, env: binder_replay.BinderEnv, saved: Path) -> nbformat.NotebookNode:
    """Runs every cell in the Binder environment; nbclient's per-cell timeout bounds a hung
    cell (speed itself is not asserted here: a busy machine would fail it)."""
    binder_replay.execute(env, path, saved)
    return nbformat.read(saved, as_version=4)


def outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def plain(fragment: str) -> str:
    """The text a person reads in an HTML fragment."""
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", "", fragment, flags=re.S))
    return " ".join(html.unescape(text).split())


def html_of(out: dict) -> str:
    return out.get("data", {}).get("text/html", "")


def check_clean(nb: nbformat.NotebookNode) -> None:
    errors = [o for o in outputs(nb) if o.output_type == "error"]
    assert not errors, "\n".join(f"{e.ename}: {e.evalue}" for e in errors)
    stderr = "".join(o.get("text", "") for o in outputs(nb)
                     if o.output_type == "stream" and o.name == "stderr")
    assert "Traceback" not in stderr and "XDG_RUNTIME_DIR" not in stderr, stderr
    saved = len(nbformat.writes(nb).encode())    # as saved with its outputs
    assert saved < MAX_SAVED_BYTES, f"{saved} bytes saved"


def reports_in(nb: nbformat.NotebookNode) -> list[dict]:
    """Every report's data; the two sides of a --compare count as two."""
    found = []
    for out in outputs(nb):
        data = out.get("data", {}).get(REPORT_JSON)
        if data is not None:
            assert 'class="jaxlab-report jl-scope"' in html_of(out)
            assert "<script" not in html_of(out).lower()
            found += data.get("compare", [data])
    return found


def check_reports(nb: nbformat.NotebookNode) -> None:
    reports = reports_in(nb)
    assert reports, "no %%kernel report"
    for data in reports:
        assert data["version"] == 2 and data["kernels"], data.keys()


def check_highlighted_sources(nb: nbformat.NotebookNode) -> None:
    """Every device's report shows its generated source highlighted, with no token
    the lexer failed on (Pygments marks those class="err")."""
    languages = set()
    for out in outputs(nb):
        data = out.get("data", {}).get(REPORT_JSON, {})
        kernels = [k for side in data.get("compare", [data]) for k in side.get("kernels", ())]
        for language in {k["source_language"] for k in kernels} & {"wgsl", "wat"}:
            languages.add(language)
            assert f"source ({language})" in html_of(out)
            assert re.search(r'<pre class="jl-code">.*?<span class="[a-z]+">', html_of(out), re.S)
            assert 'class="err"' not in html_of(out), language
    running = {d.platform for d in jaxlab.devices()}
    expected = {language for platform, language in (("webgpu", "wgsl"), ("wasm", "wat"))
                if platform in running}
    assert languages == expected, (languages, running)


def check_tour(nb: nbformat.NotebookNode) -> None:
    reports = reports_in(nb)
    names = [k["name"] for r in reports for k in r["kernels"]]
    assert any(n.startswith("r_256_64") for n in names), names   # matmul + bias + relu
    assert any(r["program"] for r in reports), "the jit cell shows no program"


def check_widget(nb: nbformat.NotebookNode) -> None:
    views = [o for o in outputs(nb) if WIDGET_VIEW in o.get("data", {})]
    assert views, "no widget"
    for out in views:
        assert out["data"]["text/plain"].startswith("jaxlab report")
        if "text/html" in out["data"]:     # browse(): the static report travels with it
            assert 'class="jaxlab-report jl-scope"' in html_of(out)
    state = json.dumps(nb.metadata.get("widgets", {}))
    assert views[0]["data"][WIDGET_VIEW]["model_id"] in state, "widget state was not saved"
    check_static_export(nb, views)


def check_static_export(nb: nbformat.NotebookNode, views: list[dict]) -> None:
    """nbconvert's HTML shows each widget's static report where the widget state is not
    saved (JupyterLab's default); where it is, the state hides a widget output's own
    HTML, and `%%kernel --widget` cells still show theirs (an output of its own)."""
    exporter = pytest.importorskip("nbconvert").HTMLExporter()
    without_state = nbformat.from_dict(json.loads(json.dumps(nb)))
    without_state.metadata.pop("widgets", None)
    body, _ = exporter.from_notebook_node(without_state)
    for out in views:
        assert plain(out["data"]["text/plain"].splitlines()[0]) in plain(body)
    widget_cells = [c for c in nb.cells if c.cell_type == "code"
                    and c.source.startswith("%%kernel") and "--widget" in c.source.splitlines()[0]]
    body, _ = exporter.from_notebook_node(nb)
    for cell in widget_cells:
        (report,) = [o for o in cell.outputs if REPORT_JSON in o.get("data", {})]
        assert plain(html_of(report)) in plain(body)   # nbconvert re-serializes entities


def check_reading(nb: nbformat.NotebookNode) -> None:
    """The report-reading tutorial shows each tool: user lines, roofline, fusion story, diffs."""
    text = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs(nb))
    for shown in ("your code: time by line", "roofline (", "fusion story", "jaxlab diff:",
                  "kernels matched by structure"):
        assert shown in text, shown
    assert "<svg" in "".join(html_of(o) for o in outputs(nb))


def check_compare(nb: nbformat.NotebookNode) -> None:
    """A `--compare` cell: one report holding both devices' sides."""
    compared = [out["data"][REPORT_JSON] for out in outputs(nb)
                if "compare" in out.get("data", {}).get(REPORT_JSON, {})]
    assert compared and all(len(c["compare"]) == 2 for c in compared), "no --compare report"


def check_autotune(nb: nbformat.NotebookNode) -> None:
    texts = [out["data"]["text/plain"] for out in outputs(nb)
             if REPORT_JSON in out.get("data", {})]
    assert any("autotune" in text and "candidates" in text for text in texts), \
        "no report lists autotune candidates"


def check_loops(nb: nbformat.NotebookNode) -> None:
    """A loop's kernels are reported once with their calls; the loss curve is a figure."""
    reports = reports_in(nb)
    assert any("loop " in (r.get("program") or "") for r in reports), "no loop in a program"
    assert any(k["calls"] > 1 for r in reports for k in r["kernels"]), "no kernel ran in a loop"
    assert any("image/png" in out.get("data", {}) for out in outputs(nb)), "no figure"


def check_routines(nb: nbformat.NotebookNode) -> None:
    kinds = {(k["backend"], k["kind"]) for r in reports_in(nb) for k in r["kernels"]}
    assert ("webgpu", "routine") in kinds and ("wasm", "routine") in kinds, kinds


CHECKS = {"01_tour.ipynb": (check_reports, check_tour),
          "08_reading_a_report.ipynb": (check_reports, check_reading),
          "02_transformations.ipynb": (check_reports,),
          "03_fusion.ipynb": (check_reports,),
          "04_backends.ipynb": (check_reports, check_compare, check_highlighted_sources),
          "05_tuning.ipynb": (check_reports, check_widget, check_autotune),
          "06_control_flow_and_training.ipynb": (check_reports, check_loops),
          "07_routines.ipynb": (check_reports, check_compare, check_routines),
          "09_extending.ipynb": (check_reports,),
          "lab_smoke.ipynb": (check_reports, check_widget, check_highlighted_sources)}
# devices a notebook runs real `%%kernel --backend` cells on: without one (no driver or
# no GPU library on this machine) it cannot run here
DEVICES_NEEDED = {name: ("wasm", "webgpu") for name in
                  ("04_backends.ipynb", "05_tuning.ipynb", "07_routines.ipynb")}


def test_checks_name_notebooks_that_exist() -> None:
    assert TUTORIALS and set(CHECKS) <= {p.name for p in NOTEBOOKS}


# one test per notebook, each run once, in the one Binder environment of this run
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook(path: Path, binder_env: binder_replay.BinderEnv, tmp_path: Path) -> None:
    running = {d.platform for d in jaxlab.devices()}
    for platform in DEVICES_NEEDED.get(path.name, ()):
        if platform not in running:
            pytest.skip(f"no {platform} device here: {jaxlab_unavailable().get(platform)}")
    nb = execute(path, binder_env, tmp_path / path.name)
    check_clean(nb)
    for check in CHECKS.get(path.name, ()):
        check(nb)


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_saved_notebook_is_small_and_was_run_top_to_bottom(path: Path) -> None:
    """As committed: outputs kept (they read on GitHub and nbviewer), under 1 MB, every
    code cell executed once, in order (`make notebooks` saves them so)."""
    assert path.stat().st_size < MAX_SAVED_BYTES, f"{path.stat().st_size} bytes"
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), counts
    assert outputs(nb), "saved without outputs"
    for cell in nb.cells:
        for target in re.findall(r"\]\(([\w./-]+\.(?:ipynb|md))\)", cell.source):
            assert (path.parent / target).is_file(), f"{path.name} links to missing {target}"


# --- the kernel browser the notebooks show ---------------------------------------------------

@pytest.fixture
def cpu_log() -> jaxlab.events.EventLog:
    with jaxlab.default_device("cpu"), jaxlab.capture() as log:
        x = jnp.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))
        jnp.tanh(x * 2 + 1).sum(axis=1).block_until_ready()
        jnp.sort(x.reshape(-1)).block_until_ready()
    return log


def test_browser_lists_kernels_and_fills_stage_tabs(cpu_log) -> None:
    view = browse(cpu_log, title="<script>alert(1)</script>")
    labels = [label for label, _ in view.picker.options]
    assert [label.split(" · ")[0] for label in labels] == ["1. r_4_6", "2. sort_24"]
    assert [view.tabs.get_title(i) for i in range(len(TABS))] == [t for t, _ in TABS]
    tabs = {title: plain(child.value) for (title, _), child in zip(TABS, view.tabs.children)}
    assert "out[gidx]" in tabs["IR"] and "host dispatch" in tabs["timings"]
    assert "no tuning knobs" in plain(view.message.value)     # cpu has none
    assert view.knobs == {} and view.knob_box.children == ()
    bundle = view._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and 'class="jaxlab-report jl-scope"' in bundle["text/html"]
    assert "<script>alert" not in bundle["text/html"] and "<script>alert" not in \
        view.children[0].value


def test_browser_retimes_a_kernel_and_explains_a_routine(cpu_log) -> None:
    view = browse(cpu_log)
    view.retune()
    result = plain(view.result.value)
    assert "before (cached):" in result and "after:" in result and "source" in result
    view.picker.value = 1          # the sort routine: nothing to recompile
    assert view.button.disabled and "routine" in plain(view.message.value)


def test_browser_offers_the_backends_knobs_at_their_current_values(rng) -> None:
    try:
        device = get_device("webgpu")
    except (ValueError, RuntimeError) as exc:
        pytest.skip(f"no webgpu device here: {exc}")
    a = rng.standard_normal((64, 48)).astype(np.float32)
    with jaxlab.default_device(device), jaxlab.capture() as log:
        (jnp.asarray(a) @ jnp.asarray(a.T)).block_until_ready()
    view = browse(log)
    knob, control = view.knobs["strategy"]
    assert knob.current == "tiled" and control.value == "tiled" and view.overrides() == {}
    assert "(current)" in dict((v, l) for l, v in control.options)["tiled"]
    control.value = "reduce"
    assert view.overrides() == {"strategy": "reduce"}
    view.retune()
    result = plain(view.result.value)
    assert "before (cached):" in result and "after:" in result and "set by the caller" in result


def test_recompile_takes_overrides_and_cpu_refuses_them(cpu_log) -> None:
    device, kernel = find_kernel(cpu_log[0])
    exe, compile_ms = recompile(device, kernel, {})
    assert exe.tuning.value("path") and compile_ms > 0
    with pytest.raises(ValueError, match="no tuning knobs"):
        recompile(device, kernel, {"unroll": 2})
    timing = time_executable(device, kernel, exe, runs=2)
    assert timing.host_ms > 0 and timing.device_ms is None


# --- Binder -----------------------------------------------------------------------------

BINDER = ROOT / "binder"
# what the course needs beside jaxlab's own dependencies (Binder's environment only)
COURSE_ONLY = {"scikit-learn", "matplotlib"}


def _requirement_name(line: str) -> str:
    return re.split(r"[\s<>=!~;\[]", line, maxsplit=1)[0].lower().replace("_", "-")


def _requirements(name: str) -> list[str]:
    return [ln.strip() for ln in (BINDER / name).read_text().splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def _links():
    spec = importlib.util.spec_from_file_location("binder_links", BINDER / "links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_binder_requirements_name_what_the_course_needs() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_requirement_name(d) for d in project["dependencies"]}
    declared |= {_requirement_name(d) for deps in project["optional-dependencies"].values()
                 for d in deps}
    wanted = _requirements("requirements.in")
    assert "-e ." in wanted, "jaxlab itself is not installed from the repository root"
    names = {_requirement_name(ln) for ln in wanted if not ln.startswith("-")}
    assert COURSE_ONLY <= names and names <= declared | COURSE_ONLY, names
    assert not COURSE_ONLY & declared, "the course's extras became jaxlab's dependencies"


def test_binder_requirements_are_exact_pins_of_everything_installed() -> None:
    tomllib = pytest.importorskip("tomllib")
    pinned = _requirements("requirements.txt")
    assert pinned[0] == "-e .", pinned[:1]
    for line in pinned[1:]:
        assert re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+", line), line
    pins = {_requirement_name(ln) for ln in pinned[1:]}
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    needed = {_requirement_name(d) for d in runtime}
    needed |= {_requirement_name(ln) for ln in _requirements("requirements.in")
               if not ln.startswith("-")}
    assert needed <= pins, f"not pinned (run `make binder-pins`): {needed - pins}"


def test_binder_scripts_are_executable_shell() -> None:
    for name in ("postBuild", "start"):
        path = BINDER / name
        assert os.access(path, os.X_OK), f"binder/{name} is not executable"
        assert path.read_text().startswith("#!/bin/bash"), name
        subprocess.run(["bash", "-n", str(path)], check=True)
    assert 'exec "$@"' in (BINDER / "start").read_text()
    assert "XDG_RUNTIME_DIR" in (BINDER / "start").read_text()
    post = (BINDER / "postBuild").read_text()
    assert "pip install --no-cache-dir ./extension" in post
    assert (ROOT / "extension" / "pyproject.toml").is_file()
    assert (ROOT / "extension" / "jaxlab_report" / "labextension" / "package.json").is_file(), \
        "postBuild installs the prebuilt extension, which is missing"
    assert "mesa-vulkan-drivers" in (BINDER / "apt.txt").read_text().split()


def test_readmes_launch_every_notebook_from_the_repository_url() -> None:
    links = _links()
    assert links.main(["--check"]) == 0, "a README's Binder links are stale: make binder-links"
    owner, name = links.repository()
    prefix = f"https://mybinder.org/v2/gh/{owner}/{name}/main?urlpath=lab/tree/"
    for readme in links.READMES:
        text = readme.read_text()
        assert f"]({prefix}notebooks/01_tour.ipynb)" in text, readme   # the badge
        launched = re.findall(re.escape(prefix) + r"(notebooks/[\w.]+)\)", text)
        assert {ROOT / p for p in launched} == set(TUTORIALS), readme
        for target in re.findall(r"\]\(([\w./]+\.ipynb)\)", text):
            assert (readme.parent / target).is_file(), (readme, target)
