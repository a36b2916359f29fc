"""%load_ext jaxlab, %%kernel and %jaxlab through IPython's own test shell."""
from __future__ import annotations

import contextlib
import importlib.machinery
import json
import pathlib
import re
import subprocess
import sys
import types

import pytest
from IPython.core.error import UsageError
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.cpu import CpuBackend
from jaxlab.backends.autotuning import TuneCache
from jaxlab.lab import magics, progress
from jaxlab.engine import devices
from jaxlab.lab.report import MIME
from tests.test_autotune_cache import GOOD

MATMUL = "y = (jnp.ones((4,4)) @ jnp.ones((4,4))).sum(); y.block_until_ready()"
OPTIONS = ("--backend", "--show", "--repeat", "--autotune", "--compare", "--trace", "--widget")


@pytest.fixture(scope="module")
def ip():
    """IPython's test shell with the extension loaded; cells run on cpu unless
    a test says otherwise (the default device depends on the machine)."""
    shell = get_ipython()
    shell.run_line_magic("load_ext", "jaxlab")
    shell.run_cell("import jaxlab, jaxlab.numpy as jnp")
    with devices.default_device("cpu"):
        yield shell
    shell.run_line_magic("unload_ext", "jaxlab")


@pytest.fixture
def lab2():
    """A second device (the cpu backend under another name) and a broken one."""
    def broken():
        raise OSError("no such driver")
    devices.register_backend("lab2", CpuBackend, priority=-10)
    devices.register_backend("labbroken", broken, priority=-11)
    yield devices.get_device("lab2")
    devices.set_default_device("cpu")
    devices.unregister_backend("lab2")
    devices.unregister_backend("labbroken")


def run(ip, cell: str):
    """Run a cell as a notebook would; returns (result, captured output)."""
    with capture_output() as out:
        result = ip.run_cell(cell)
    return result, out


def displayed(out) -> list[dict]:
    return [o.data for o in out.outputs]


def report_of(out) -> dict:
    (data,) = [d for d in displayed(out) if MIME in d]
    return data


# --- loading --------------------------------------------------------------------------

def test_load_and_unload_extension(ip):
    magics = ip.magics_manager.magics
    assert "kernel" in magics["cell"] and "jaxlab" in magics["line"]
    ip.run_line_magic("unload_ext", "jaxlab")
    assert "kernel" not in magics["cell"] and "jaxlab" not in magics["line"]
    ip.run_line_magic("load_ext", "jaxlab")
    assert "kernel" in magics["cell"]


def test_engine_does_not_import_ipython():
    code = "import sys, jaxlab, jaxlab.lab; assert 'IPython' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=pathlib.Path(__file__).parents[1])


def test_magics_document_every_option(ip):
    doc = ip.find_cell_magic("kernel").__doc__
    for option in OPTIONS:
        assert option in doc
        assert re.search(rf"^ +%%kernel {option}\b", doc, re.M), f"no example of {option}"
    assert "Chrome/Perfetto trace" in doc and "best and median" in doc
    line_doc = ip.find_line_magic("jaxlab").__doc__
    for command in ("status", "backend", "kernels", "debug", "clear"):
        assert command in line_doc


# --- %%kernel -------------------------------------------------------------------------

def test_kernel_shows_a_report_in_three_mimetypes(ip):
    result, out = run(ip, f"%%kernel --show ir\n{MATMUL}")
    assert result.success
    data = report_of(out)
    assert set(data) == {"text/plain", "text/html", MIME}
    doc = data[MIME]
    assert json.loads(json.dumps(doc)) == doc
    assert [k["name"] for k in doc["kernels"]] == ["r_4_4_4", "r_1_4_4"]
    assert doc["stages"] == ["ir"] and doc["title"] == "cpu"
    assert "IR:" in data["text/plain"] and "source (" not in data["text/plain"]
    assert "<script" not in data["text/html"]
    assert ip.user_ns["y"].item() == 64.0


@pytest.mark.parametrize("platform", [d.platform for d in jaxlab.devices()])
def test_generated_source_is_highlighted_on_every_device(ip, platform):
    _, out = run(ip, f"%%kernel --backend {platform} --show source\n{MATMUL}")
    doc = report_of(out)[MIME]
    languages = {k["source_language"] for k in doc["kernels"]}
    assert len(languages) == 1 and {k["backend"] for k in doc["kernels"]} == {platform}
    page = report_of(out)["text/html"]
    assert f"<summary>source ({languages.pop()})</summary>" in page
    assert '<pre class="jl-code">' in page and 'class="err"' not in page


def test_cell_output_and_value_are_as_without_the_magic(ip):
    result, out = run(ip, "%%kernel\nprint('hello')\nz = jnp.arange(3.0)\nz * 2")
    assert out.stdout.count("hello") == 1
    assert result.result.tolist() == [0.0, 2.0, 4.0]
    quiet, _ = run(ip, "%%kernel\nz * 2;")
    assert quiet.result is None


def test_lazy_assigned_arrays_are_computed_inside_the_capture(ip):
    _, out = run(ip, "%%kernel\nw = jnp.ones(5) * 3")
    assert [k["name"] for k in report_of(out)[MIME]["kernels"]] == ["E_5"]
    assert ip.user_ns["w"].is_realized


def test_jit_program_appears_in_the_report(ip):
    ip.run_cell("f = jaxlab.jit(lambda x: jnp.tanh(x).sum())\nx4 = jnp.ones(4).block_until_ready()")
    _, out = run(ip, "%%kernel\ns = f(x4)")
    assert report_of(out)[MIME]["program"].startswith("program on cpu")
    _, out = run(ip, "%%kernel\ns = f(x4)")      # a replay shows it as well
    assert report_of(out)[MIME]["program"].startswith("program on cpu")


def test_jit_program_with_a_loop_appears_in_the_report(ip):
    ip.run_cell("g = jaxlab.jit(lambda x: jaxlab.lax.fori_loop(0, 3, lambda i, v: v * 2.0, x))\n"
                "x3 = jnp.ones(3).block_until_ready()\ng(x3).block_until_ready()")
    result, out = run(ip, "%%kernel\nt = g(x3)")
    assert result.error_in_exec is None, result.error_in_exec
    program = report_of(out)[MIME]["program"]
    assert program.startswith("program on cpu") and "loop 3 x" in program, program
    assert list(ip.user_ns["t"]) == [8.0, 8.0, 8.0]


def test_backend_option(ip, lab2):
    _, out = run(ip, f"%%kernel --backend lab2\n{MATMUL}")
    assert {k["backend"] for k in report_of(out)[MIME]["kernels"]} == {"lab2"}
    assert ip.user_ns["y"].device is lab2
    assert jaxlab.numpy.ones(1).device.platform == "cpu"    # the default is untouched
    result, out = run(ip, "%%kernel --backend nowhere\n1")
    assert isinstance(result.error_in_exec, UsageError) and "unknown device" in out.stdout + out.stderr


def test_show_filters_stages(ip):
    _, out = run(ip, f"%%kernel --show source,timings\n{MATMUL}")
    text = report_of(out)["text/plain"]
    assert "source (text):" in text and "timings:" in text and "IR:" not in text
    result, _ = run(ip, "%%kernel --show ir,bogus\n1")
    assert isinstance(result.error_in_exec, UsageError)


def test_repeat_times_warm_runs_with_output_shown_once(ip):
    result, out = run(ip, f"%%kernel --repeat 3\nprint('run')\n{MATMUL}")
    assert result.success and out.stdout.count("run") == 1
    wall = {q["name"]: q["value"] for q in report_of(out)[MIME]["totals"]}
    assert wall["runs"] == 3 and wall["best wall"] <= wall["median wall"]
    assert "wall over 3 runs: best" in report_of(out)["text/plain"]
    assert len(report_of(out)[MIME]["kernels"]) == 2      # the first run's events only
    result, _ = run(ip, "%%kernel --repeat -1\n1")
    assert isinstance(result.error_in_exec, UsageError)


def test_compare_shows_both_backends_side_by_side(ip, lab2):
    result, out = run(ip, f"%%kernel --compare lab2\nprint('once')\n{MATMUL}")
    assert result.success and out.stdout.count("once") == 1
    data = report_of(out)
    left, right = data[MIME]["compare"]
    assert (left["title"], right["title"]) == ("cpu", "lab2")
    assert {k["backend"] for k in right["kernels"]} == {"lab2"}
    assert '<div class="jl-columns">' in data["text/html"]
    assert "time per kernel" in data["text/plain"] and "r_4_4_4" in data["text/plain"]
    assert ip.user_ns["y"].device.platform == "cpu"       # the main run's values stay
    result, _ = run(ip, "%%kernel --compare cpu\n1")
    assert isinstance(result.error_in_exec, UsageError)


def test_trace_writes_a_perfetto_file_and_links_it(ip, tmp_path):
    path = tmp_path / "cell trace.json"
    result, out = run(ip, f"%%kernel --trace '{path}'\n{MATMUL}")
    assert result.success
    doc = json.loads(path.read_text())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    assert [e["name"] for e in spans] == ["r_4_4_4", "r_1_4_4"]
    assert all(e["dur"] > 0 and "device_ms" in e["args"] for e in spans)
    (link,) = [d for d in displayed(out) if MIME not in d]
    assert f'<a href="{str(path).replace(" ", "%20")}"' in link["text/html"]
    assert link["text/plain"].startswith(f"Perfetto trace: {path}")


def test_autotune_on_wasm_shows_progress_candidates_and_the_disk_cache(ip, monkeypatch,
                                                                       tmp_path):
    if "wasm" not in [d.platform for d in jaxlab.devices()]:
        pytest.skip("no wasm device here")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(progress, "_in_terminal", lambda: False)   # as in a notebook
    cell = ("%%kernel --backend wasm --autotune\n"
            "t = jnp.ones((7, 13)) @ jnp.ones((13, 11)); t.block_until_ready()")
    run(ip, "%jaxlab backend wasm")
    try:
        run(ip, "%jaxlab clear")
        _, out = run(ip, cell)
        shown = [d["text/plain"] for d in displayed(out)]
        assert any("autotuning r_7_11_13: " in text and "best" in text for text in shown)
        text = report_of(out)["text/plain"]
        assert re.search(r"autotune: \d+ candidates compiled and timed in", text)
        assert "autotuning " in text.splitlines()[1]        # the total, in the headline
        run(ip, "%jaxlab clear")                            # compiled again: the disk answers
        _, out = run(ip, cell)
        text = report_of(out)["text/plain"]
        assert "from the on-disk cache, measured" in text
        assert "autotuning " not in text.splitlines()[1]
    finally:
        run(ip, "%jaxlab backend cpu")


def _progress_lines(out) -> list[str]:
    """The texts the progress line showed, in order (the report and prints left out)."""
    return [d["text/plain"] for d in displayed(out) if MIME not in d]


def test_repeat_shows_progress_then_clears_it_in_a_notebook(ip, monkeypatch):
    monkeypatch.setattr(progress, "_in_terminal", lambda: False)
    _, out = run(ip, "%%kernel --repeat 3\nr = (jnp.ones(5) * 2).block_until_ready()")
    lines = _progress_lines(out)
    assert [line.split()[-1] for line in lines[:-1]] == ["1/3", "2/3", "3/3"]
    assert all("--repeat: " in line for line in lines[:-1])
    assert lines[-1] == ""                                # cleared when the cell ends
    assert "--repeat:" not in json.dumps(report_of(out))   # never part of the report


def test_repeat_shows_tqdm_style_text_in_a_terminal(ip, monkeypatch):
    monkeypatch.setattr(progress, "_in_terminal", lambda: True)
    _, out = run(ip, "%%kernel --repeat 2\nr = (jnp.ones(5) * 3).block_until_ready()")
    assert "\r" in out.stderr and "--repeat: 2/2" in out.stderr and "█" in out.stderr
    assert out.stderr.endswith("\r")                       # the line is blanked at the end
    assert _progress_lines(out) == []                       # no display outputs


def test_compiling_many_kernels_names_each_past_a_handful(ip, monkeypatch, backend):
    monkeypatch.setattr(progress, "_in_terminal", lambda: False)
    count = progress.HANDFUL + 2
    cell = (f"%%kernel --backend {backend}\n"
            f"for n in range({count}):\n"             # shapes no other test uses: compiled
            f"    jnp.cumsum(jnp.ones(n + 101)).block_until_ready()")
    run(ip, f"%jaxlab backend {backend}")
    try:
        run(ip, "%jaxlab clear")
        _, out = run(ip, cell)
    finally:
        run(ip, "%jaxlab backend cpu")
    lines = _progress_lines(out)
    assert any(line.startswith(f"compiling kernel: {progress.HANDFUL + 1}, ") for line in lines)
    assert not any(f"compiling kernel: {progress.HANDFUL}," in line for line in lines)
    assert lines[-1] == ""
    assert "compiling kernel" not in json.dumps(report_of(out))


def test_a_failing_cell_shows_the_users_frames_and_lines(ip, monkeypatch):
    run(ip, "def bad_matmul(a):\n    return a @ jnp.ones((3, 2))\n")
    cell = "%%kernel\nx2 = jnp.ones((2, 2))\ny2 = bad_matmul(x2)\n"
    result, out = run(ip, cell)
    shown = out.stdout + out.stderr
    assert isinstance(result.error_in_exec, TypeError)    # JAX's type for this
    assert re.search(r"----> 3 y2 = bad_matmul\(x2\)", shown)     # the cell's own line 3
    assert "return a @ jnp.ones((3, 2))" in shown
    assert "jaxlab/numpy" not in shown and "magics.py" not in shown and "hidden" in shown
    monkeypatch.setenv("JAXLAB_TRACEBACK_FILTERING", "off")
    _, out = run(ip, cell)
    assert "jaxlab/numpy/products.py" in out.stdout + out.stderr


def test_autotune_needs_jaxlab_autotune(ip, monkeypatch):
    monkeypatch.delattr(jaxlab, "autotune", raising=False)
    result, out = run(ip, f"%%kernel --autotune\n{MATMUL}")
    assert isinstance(result.error_in_exec, UsageError)
    assert "autotun" in out.stdout + out.stderr
    entered = []

    @contextlib.contextmanager
    def autotune():
        entered.append(True)
        yield

    monkeypatch.setattr(jaxlab, "autotune", autotune, raising=False)
    result, out = run(ip, f"%%kernel --autotune\n{MATMUL}")
    assert result.success and entered == [True] and report_of(out)


def test_widget_hands_the_log_to_the_browser(ip, monkeypatch):
    seen = []
    fake = types.ModuleType("jaxlab.lab.widgets")
    fake.__spec__ = importlib.machinery.ModuleSpec("jaxlab.lab.widgets", None)
    fake.browse = lambda log, fallback: seen.append(log) or {"a widget": True}
    monkeypatch.setitem(sys.modules, "jaxlab.lab.widgets", fake)
    result, out = run(ip, f"%%kernel --widget\n{MATMUL}")
    assert result.success and [e.name for e in seen[0]] == ["r_4_4_4", "r_1_4_4"]
    report, widget = displayed(out)      # the static report first, for static renders
    assert MIME in report and report["text/plain"].startswith("jaxlab report: cpu")
    assert widget == {"text/plain": "{'a widget': True}"}


def test_widget_without_the_module_is_a_usage_error(ip, monkeypatch):
    monkeypatch.setitem(sys.modules, "jaxlab.lab.widgets", None)    # import fails
    result, out = run(ip, f"%%kernel --widget\n{MATMUL}")
    assert isinstance(result.error_in_exec, UsageError) and "--widget needs" in out.stdout + out.stderr


def test_an_error_reaches_the_user_and_the_report_still_shows(ip):
    result, out = run(ip, "%%kernel\na = (jnp.ones(3) + 1).block_until_ready()\n"
                          "raise ValueError('boom')\nb = 2")
    assert isinstance(result.error_in_exec, ValueError) and "boom" in str(result.error_in_exec)
    assert [k["name"] for k in report_of(out)[MIME]["kernels"]] == ["E_3"]
    assert "b" not in ip.user_ns
    result, out = run(ip, "%%kernel\nc = jnp.ones(2) * 3")       # the engine keeps working
    assert result.success and ip.user_ns["c"].tolist() == [3.0, 3.0]


def test_a_compile_error_shows_its_source_with_the_line_marked(ip):
    cell = ("%%kernel\nclass ShaderError(Exception):\n    source = 'fn main() {\\n  let x = 1 +;\\n}'\n"
            "    line = 2\nraise ShaderError('expected expression')")
    result, out = run(ip, cell)
    assert type(result.error_in_exec).__name__ == "ShaderError"
    error_view = displayed(out)[-1]
    assert "> 2 |   let x = 1 +;" in error_view["text/plain"]
    assert "jl-fault" in error_view["text/html"]


def test_a_function_named_script_is_shown_as_text(ip):
    cell = ("%%kernel\ndef g(x):\n    return jnp.sin(x)\ng.__name__ = '<script>alert(1)</script>'\n"
            "gj = jaxlab.custom_jvp(g)\ngj.defjvp(lambda p, t: (g(p[0]), t[0]))\n"
            "h = jaxlab.jit(lambda x: gj(x) + 1)\nv = h(jnp.ones(2))\nprint(g.__name__)")
    result, out = run(ip, cell)
    assert result.success and "<script>alert(1)</script>" in out.stdout
    page = report_of(out)["text/html"]
    assert "<script" not in page and "custom_jvp_call" in page


# --- %jaxlab --------------------------------------------------------------------------

def test_backend_moves_the_cells_arrays_there_and_back(ip, lab2):
    run(ip, "a = jnp.arange(6.0).reshape(2, 3); b = jnp.ones(4); a.block_until_ready()")
    a = ip.user_ns["a"]
    _, out = run(ip, "%%kernel --backend lab2\nc = (a * 2).sum(axis=1)")
    data = report_of(out)
    assert {k["backend"] for k in data[MIME]["kernels"]} == {"lab2"}
    assert "moved to lab2 for this cell: a (24 B from cpu); 24 B in all" in data["text/plain"]
    assert "b (" not in data["text/plain"]                  # the cell does not read b
    assert ip.user_ns["c"].device is lab2 and ip.user_ns["a"] is a   # a is given back
    assert ip.user_ns["c"].tolist() == [6.0, 24.0]
    assert jaxlab.numpy.ones(1).device.platform == "cpu"    # the default is as before
    result, _ = run(ip, "d = a + 1; d.block_until_ready()")  # the next cell works
    assert result.success


TEN_KERNELS = """x = jnp.asarray(np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32))
for i in range(5):   # a shape per step: the scalar (i + 1) alone is a kernel argument
    m = x[:, i:].max(axis=1, keepdims=True).block_until_ready()   # a kernel of its own
    y = jnp.exp(x[:, i:] * (i + 1) - m)
    y = (y / y.sum(axis=1, keepdims=True)).block_until_ready()
"""


@pytest.mark.parametrize("platform", [d.platform for d in jaxlab.devices()])
def test_a_ten_kernel_report_stays_under_200_kb(ip, platform):
    run(ip, "import numpy as np")
    _, out = run(ip, f"%%kernel --backend {platform}\n{TEN_KERNELS}")
    data = report_of(out)
    assert len(data[MIME]["kernels"]) >= 10
    size = sum(len(json.dumps(v)) for v in data.values())
    # (provenance adds about 12%: every kernel's equations by user line, eager ones too,
    # and the generated lines beside what they compute for the longest kernels; the
    # roofline, its plot and each kernel's bound about 4%; the fusion story about 6%)
    assert size < 260_000, (size, len(data[MIME]["kernels"]))
    if platform != "cpu":      # long generated sources: head and tail, the gap counted
        assert re.search(r"… \d+ lines omitted …", data["text/plain"])
        # the renderer's "show all lines": some capped listings carry their whole text,
        # the one left out at the middle, which the static views do not show
        capped = [c for c in _code_nodes(data[MIME]["view"])
                  if any("gap" in part for part in c["parts"])]
        whole = [c["full"] for c in capped if c["full"] is not None]
        assert whole
        for c in capped:
            if c["full"] is not None:
                shown = sum(p.get("gap", 0) or p["text"].count("\n") + 1 for p in c["parts"])
                assert len(c["full"].splitlines()) == shown


def _code_nodes(node: dict) -> list[dict]:
    below = [c for child in node.get("children", []) for c in _code_nodes(child)]
    return [node] + below if node.get("t") == "code" else below


def test_jitted_kernels_are_grouped_under_the_function_and_its_site(ip):
    run(ip, "@jaxlab.jit\ndef step_fn(v):\n    return jnp.tanh(v @ v).sum(0)\n")
    _, out = run(ip, "%%kernel\nr = step_fn(jnp.ones((3, 3)))")
    data = report_of(out)
    assert re.search(r"^jit step_fn at .+:1 · 2 kernels:$", data["text/plain"], re.M)
    assert '<details class="jl-function" open><summary>jit step_fn at ' in data["text/html"]


def test_status_lists_devices_backend_info_and_unavailable(ip, lab2):
    devices.devices()     # tries every backend: labbroken fails
    _, out = run(ip, "%jaxlab status")
    text = "\n".join(d["text/plain"] for d in displayed(out))
    assert "jaxlab devices" in text and "cpu backend" in text and "lab2 backend" in text
    assert "labbroken" in text and "no such driver" in text
    assert all("<script" not in d["text/html"] for d in displayed(out))


def test_status_shows_each_devices_live_pooled_and_peak_bytes(ip):
    with jaxlab.default_device("cpu"):
        kept = (jnp.ones(1000) + 1).block_until_ready()
        _, out = run(ip, "%jaxlab status")
    text = "\n".join(d["text/plain"] for d in displayed(out))
    memory = text.split("device memory", 1)[1]
    row = next(line for line in memory.splitlines() if line.startswith("CpuDevice"))
    live, pooled, peak = _sizes(row)
    assert live >= 4000 and peak >= live and pooled >= 0
    del kept


def _sizes(row: str) -> list[float]:
    """The byte counts in a status row ('4 kB' -> 4000)."""
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
    cells = row.split()[1:]
    return [float(v) * scale[u] for v, u in zip(cells[::2], cells[1::2])]


def test_backend_sets_the_default_device(ip, lab2):
    result, out = run(ip, "%jaxlab backend lab2")
    assert result.success and "default device: lab2" in out.stdout
    assert devices.current_device() is lab2
    _, out = run(ip, "%%kernel\nq = jnp.ones(2) + 1")
    assert report_of(out)[MIME]["kernels"][0]["backend"] == "lab2"
    result, _ = run(ip, "%jaxlab backend nowhere")
    assert isinstance(result.error_in_exec, UsageError)
    result, _ = run(ip, "%jaxlab backend")
    assert isinstance(result.error_in_exec, UsageError)


def test_kernels_lists_the_cache_and_clear_empties_it(ip):
    run(ip, f"%%kernel\n{MATMUL}")
    cache = devices.current_device().cache
    _, out = run(ip, "%jaxlab kernels")
    (table,) = displayed(out)
    for program in cache:
        assert program.name in table["text/plain"] and program.key in table["text/html"]
    result, out = run(ip, "%jaxlab clear")
    assert result.success and "cleared" in out.stdout and len(cache) == 0
    result, _ = run(ip, "%jaxlab clear now")
    assert isinstance(result.error_in_exec, UsageError)


def test_debug_prints_each_event_as_it_happens(ip):
    try:
        _, out = run(ip, "%jaxlab debug 1\nd = (jnp.ones(7) + 1).block_until_ready()")
        assert "E_7" in out.stdout and "kernel E_7" not in out.stdout
        _, out = run(ip, "%jaxlab debug 2\nd = (jnp.ones(7) + 2).block_until_ready()")
        assert "kernel E_7(in0: f32[1]) -> f32[7]" in out.stdout   # the IR too (2 is an input)
    finally:
        _, out = run(ip, "%jaxlab debug 0\nd = (jnp.ones(7) + 3).block_until_ready()")
    assert out.stdout == "" and not jaxlab.events.listening()
    result, _ = run(ip, "%jaxlab debug loud")
    assert isinstance(result.error_in_exec, UsageError)


def test_unknown_command_is_a_usage_error(ip):
    result, out = run(ip, "%jaxlab reboot")
    assert isinstance(result.error_in_exec, UsageError) and "invalid choice" in out.stdout + out.stderr


# --- --trace checked first, never hiding the cell; %jaxlab autotune ---------------

def test_unwritable_trace_is_refused_before_the_cell_runs(ip, tmp_path):
    ip.user_ns["ran"] = False
    target = tmp_path / "no such folder" / "t.json"
    result, out = run(ip, f"%%kernel --trace '{target}'\nran = True")
    assert isinstance(result.error_in_exec, UsageError)
    assert "--trace" in out.stdout + out.stderr and ip.user_ns["ran"] is False
    assert not target.parent.exists()


def test_a_checked_trace_leaves_no_file_when_the_cell_fails_early(ip, tmp_path):
    target = tmp_path / "t.json"
    result, _ = run(ip, f"%%kernel --trace {target} --repeat -1\n1")
    assert isinstance(result.error_in_exec, UsageError) and not target.exists()


@pytest.mark.parametrize("cell, check", [
    ("1 / 0", lambda r: isinstance(r.error_in_exec, ZeroDivisionError)),
    ("41 + 1", lambda r: r.success and r.result == 42),
])
def test_a_failed_trace_write_never_hides_the_cell(ip, tmp_path, monkeypatch, cell, check):
    def fail(events, path):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(magics, "write_trace", fail)
    result, out = run(ip, f"%%kernel --trace {tmp_path / 't.json'}\n{cell}")
    assert check(result), result
    assert "could not write" in out.stderr


def test_jaxlab_autotune_shows_and_clears(ip, tmp_path, monkeypatch):
    caches = {}

    def cache_of(backend):
        return caches.setdefault(backend, TuneCache(backend, tmp_path / f"{backend}.json"))
    monkeypatch.setattr(jaxlab, "autotune_cache", cache_of)
    cache_of("cpu").put("llvmpipe|Vulkan|False|r_4_4", GOOD)
    result, out = run(ip, "%jaxlab autotune")
    assert result.success
    (table,) = displayed(out)
    text = table["text/plain"]
    assert "1 autotuned kernels" in text and "r_4_4" in text and "workgroup=64" in text
    result, out = run(ip, "%jaxlab autotune clear")
    assert result.success and "cleared 1 autotuned kernels" in out.stdout
    assert cache_of("cpu").entries() == {}
    result, _ = run(ip, "%jaxlab autotune everything")
    assert isinstance(result.error_in_exec, UsageError)
    result, _ = run(ip, "%jaxlab status now")
    assert isinstance(result.error_in_exec, UsageError)


# --- %jaxlab diff ---------------------------------------------------------------------

def test_jaxlab_diff_compares_the_last_two_runs(ip):
    with pytest.raises(UsageError, match="compares the last two"):
        magics.JaxlabMagics(ip).diff()      # nothing ran yet
    run(ip, "%%kernel --backend wasm\ny = jnp.sin(jnp.arange(8.0)).sum()")
    run(ip, "%%kernel --backend wasm\ny = jnp.cos(jnp.arange(8.0)).sum()")
    _, out = run(ip, "%jaxlab diff")
    text = report_of(out)["text/plain"]
    assert text.startswith("jaxlab diff: last run -> this run")
    assert re.search(r"\| -.*sin", text) and re.search(r"\| \+.*cos", text)
    # the %%kernel report placed its kernels under wasm's measured roofs
    _, out = run(ip, "%%kernel --backend wasm --compare cpu\ny = jnp.arange(8.0).sum()")
    compared = report_of(out)[MIME]
    assert compared["compare"][0]["roofs"]["wasm"]["gbps"] > 0
    _, out = run(ip, "%jaxlab diff")
    assert "jaxlab diff: cpu -> wasm" in report_of(out)["text/plain"]
