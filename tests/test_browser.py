"""JupyterLab in headless Chromium: tests/notebooks/lab_smoke.ipynb runs, its reports
(through the extension/ renderer) show the same stage text as their static HTML,
the static HTML's styles win over JupyterLab's, and the kernel browser widget
recompiles and re-times a kernel. Screenshots of the renderer, the widget and the
nbconvert static render, light and dark, go to SCREENSHOTS for a person to look at.
Plus the extension's package metadata, stylesheet and types."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "extension"
PREBUILT = EXTENSION / "jaxlab_report" / "labextension"
SMOKE = ROOT / "tests" / "notebooks" / "lab_smoke.ipynb"
# where the screenshots go (build/ is not tracked)
SCREENSHOTS = Path(os.environ.get("JAXLAB_SCREENSHOTS", ROOT / "build" / "screenshots"))
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# the JupyterLab news pop-up would sit over the notebook
OVERRIDES = {"@jupyterlab/apputils-extension:notification":
             {"fetchNews": "false", "checkForUpdates": False}}


# --- the extension's metadata ------------------------------------------------------------

def test_extension_metadata_is_consistent() -> None:
    tomllib = pytest.importorskip("tomllib")
    package = json.loads((EXTENSION / "package.json").read_text())
    assert package["jupyterlab"]["mimeExtension"] is True
    assert (EXTENSION / package["jupyterlab"]["outputDir"]) == PREBUILT
    pyproject = tomllib.loads((EXTENSION / "pyproject.toml").read_text())
    shared = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["jaxlab_report/labextension"] == f"share/jupyter/labextensions/{package['name']}"
    install = json.loads((EXTENSION / "install.json").read_text())
    assert install["packageName"] == pyproject["project"]["name"]
    assert "application/vnd.jaxlab.report+json" in (EXTENSION / "src" / "index.ts").read_text()
    built = json.loads((PREBUILT / "package.json").read_text())
    assert (built["name"], built["version"]) == (package["name"], package["version"])
    assert (PREBUILT / built["jupyterlab"]["_build"]["load"]).is_file()


def test_extension_stylesheet_is_the_reports() -> None:
    """The renderer draws with the static report's own CSS (regenerate: `jlpm css`)."""
    from jaxlab.lab.view import stylesheet
    assert (EXTENSION / "style" / "report.css").read_text() == stylesheet()
    assert "@import url('./report.css')" in (EXTENSION / "style" / "index.css").read_text()


def test_extension_typechecks() -> None:
    tsc = EXTENSION / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        pytest.skip("extension/node_modules is absent: run `jlpm install` in extension/ "
                    "(needs node and the npm registry) to type-check index.ts")
    done = subprocess.run([str(tsc), "--noEmit", "-p", str(EXTENSION)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# --- JupyterLab in Chromium ----------------------------------------------------------------

def chromium() -> str:
    """Debian's chromium, installed through apt where we are root and it is missing."""
    found = next((p for p in CHROMIUM_PATHS if os.access(p, os.X_OK)), None)
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
                       capture_output=True, timeout=300,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        found = next((p for p in CHROMIUM_PATHS if os.access(p, os.X_OK)), None)
    if found is None:
        pytest.skip("chromium cannot be found or installed here (Debian: apt-get install "
                    "chromium, as `make setup` does when root)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server over a copy of the smoke notebook; yields its URL."""
    pytest.importorskip("jupyterlab")
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "overrides.json").write_text(json.dumps(OVERRIDES))
    shutil.copy(SMOKE, tmp_path / SMOKE.name)
    # the prebuilt renderer from extension/, uninstalled: the server finds an
    # extension's files under a folder named like its package
    (tmp_path / "labextensions").mkdir()
    (tmp_path / "labextensions" / "jaxlab-report").symlink_to(PREBUILT)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                     os.environ.get("PYTHONPATH")])),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={tmp_path}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.app_settings_dir={tmp_path / 'settings'}",
         f"--LabApp.user_settings_dir={tmp_path / 'user-settings'}",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
         f"--LabApp.extra_labextensions_path={tmp_path / 'labextensions'}",
         "--LabApp.extension_manager=readonly"],   # no PyPI here
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "server.log", "wb"))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120   # a busy 2-core machine starts it slowly
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start:\n" +
                                (tmp_path / "server.log").read_text()[-3000:])
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


# Waits for the notebook's session and an idle kernel, then runs every cell; the
# command's promise resolves once the last cell has executed.
RUN_ALL = """async () => {
  const app = window.jupyterapp;
  let panel = null;
  for (let i = 0; i < 300 && !panel; i++) {
    const w = app.shell.currentWidget;
    if (w && w.sessionContext && w.content && w.content.widgets) { panel = w; }
    else { await new Promise(r => setTimeout(r, 100)); }
  }
  if (!panel) { return 'no notebook panel'; }
  await panel.sessionContext.ready;
  for (let i = 0; i < 300; i++) {
    const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
    if (kernel && kernel.status === 'idle') { break; }
    await new Promise(r => setTimeout(r, 100));
  }
  await app.commands.execute('notebook:run-all-cells');
  return 'ok';
}"""


# The text of each stage of each report, as the renderer draws it (interaction-only
# elements, marked jl-ui, left out); and the text/html of the same outputs.
STAGE_TEXTS = """() => Array.from(document.querySelectorAll('.jaxlab-report-app')).map(root =>
  Array.from(root.querySelectorAll('details.jl-stage')).map(d => {
    const copy = d.cloneNode(true);
    copy.querySelectorAll('.jl-ui').forEach(e => e.remove());
    return copy.textContent;
  }))"""
STATIC_HTML = """() => {
  const found = [];
  for (const cell of window.jupyterapp.shell.currentWidget.content.widgets) {
    const outputs = cell.model.outputs;
    for (let i = 0; outputs && i < outputs.length; i++) {
      const data = outputs.get(i).data;
      if (data['application/vnd.jaxlab.report+json']) { found.push(data['text/html']); }
    }
  }
  return found;
}"""


class StageText(HTMLParser):
    """The text of each <details class="jl-stage"> of an HTML report."""

    def __init__(self) -> None:
        super().__init__()
        self.stages: list[str] = []
        self.depth = 0           # open elements inside the current stage
        self.style = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.style = tag == "style"
        if self.depth:
            self.depth += 1
        elif tag == "details" and "jl-stage" in (dict(attrs).get("class") or ""):
            self.depth = 1
            self.stages.append("")

    def handle_endtag(self, tag: str) -> None:
        self.style = False
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth and not self.style:
            self.stages[-1] += data


def stage_texts(html: str) -> list[str]:
    parser = StageText()
    parser.feed(html)
    return parser.stages


# Every capped listing the renderer drew offers its whole text or says it was too long
# to keep; the first "show all N lines" leaves N lines and no gap, and is gone.
SHOW_ALL = """() => {
  const boxes = [...document.querySelectorAll('.jaxlab-report-app .jl-listing')]
    .filter(box => box.querySelector('.jl-gap'));
  const buttons = boxes.map(box => [...box.querySelectorAll('button')]
    .find(b => b.textContent.startsWith('show all ')));
  if (!boxes.length) return 'no capped listing';
  if (boxes.some((box, i) => !buttons[i] && !box.textContent.includes('too long to keep')))
    return 'a capped listing with neither';
  const i = buttons.findIndex(b => b);
  if (i < 0) return 'no show-all button';
  const count = Number(buttons[i].textContent.split(' ')[2]);
  buttons[i].click();
  const pre = boxes[i].querySelector('pre');
  if (pre.querySelector('.jl-gap') || boxes[i].contains(buttons[i])) return 'still capped';
  return pre.querySelectorAll('.jl-line').length === count ? 'ok' : 'wrong line count';
}"""


def test_report_and_widget_render_in_jupyterlab(lab: str, tmp_path: Path) -> None:
    executable = chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(30_000)
            page.goto(f"{lab}/lab/tree/{SMOKE.name}?reset")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell")
            assert page.evaluate(RUN_ALL) == "ok"

            outputs = page.locator(".jp-OutputArea-output")
            report = page.locator(".jaxlab-report-app")   # the extension's renderer
            report.first.wait_for()
            widget = page.locator(".jp-OutputArea-output .widget-select select")
            widget.wait_for()
            page.locator(".jp-RenderedHTMLCommon .jaxlab-report").first.wait_for()
            # (text_content: JupyterLab skips drawing cells outside the viewport)
            assert "r_4_6" in report.first.text_content()
            assert widget.locator("option").count() >= 1
            assert page.locator('.jp-OutputArea-output[data-mime-type='
                                '"application/vnd.jupyter.stderr"]').count() == 0

            # the renderer shows every stage with the static HTML's text, 1-based rows
            # (on a busy machine the renderer may still be drawing the later outputs)
            page.wait_for_function(f"() => ({STAGE_TEXTS})().length === ({STATIC_HTML})().length")
            drawn, static = page.evaluate(STAGE_TEXTS), page.evaluate(STATIC_HTML)
            assert len(drawn) == len(static) >= 4
            for shown, html in zip(drawn, static):
                assert shown == stage_texts(html) and shown
            first_row = report.first.locator("table tbody tr").first.locator("td").first
            assert first_row.text_content() == "1"
            # --show: the chosen stages are open, highlighted; --compare: the ratio table
            shown = report.nth(1)
            assert shown.locator("details.jl-stage[open]").count() >= 3
            assert shown.locator("pre.jl-code span.jl-line span[class]").count() > 3
            assert "right / left" in report.nth(2).text_content()
            assert report.nth(2).locator(".jl-column").count() == 2

            # a capped listing: "show all N lines" puts the whole source in its place
            assert page.evaluate(SHOW_ALL) == "ok"

            # the static HTML's table cells stay left-aligned inside JupyterLab's CSS
            static_td = page.locator(".jp-RenderedHTMLCommon .jaxlab-report td").nth(1)
            assert static_td.evaluate("e => getComputedStyle(e).textAlign") == "left"

            # the renderer sorts and unfolds a kernel's stages on a click
            report.first.locator("th", has_text="time").first.click()
            report.first.locator("tr.jl-clickable").first.click()
            report.first.locator("details.jl-kernel[open] details.jl-stage").first.wait_for()

            # the widget recompiles the selected kernel and times old and new
            page.locator(".jp-OutputArea-output button", has_text="recompile & time").click()
            page.get_by_text("before (cached)").wait_for()
            parts = {"renderer-show": report.nth(1), "renderer-compare": report.nth(2),
                     "static-html": page.locator(".jp-RenderedHTMLCommon .jaxlab-report").first,
                     "widget": page.locator(".jp-OutputArea-output:has(.widget-select)").first}
            for theme in ("light", "dark"):
                if theme == "dark":
                    page.evaluate("() => window.jupyterapp.commands.execute("
                                  "'apputils:change-theme', {theme: 'JupyterLab Dark'})")
                    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
                    page.wait_for_timeout(500)    # the theme's CSS variables settle
                page.screenshot(path=str(SCREENSHOTS / f"lab-{theme}.png"))
                for name, part in parts.items():
                    part.scroll_into_view_if_needed()
                    part.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}.png"))
            assert outputs.count() >= 2
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            page.wait_for_timeout(1000)

            # the saved notebook as nbconvert renders it, light and dark
            saved = tmp_path / SMOKE.name
            for theme in ("light", "dark"):
                target = SCREENSHOTS / f"nbconvert-{theme}.html"
                subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html",
                                f"--HTMLExporter.theme={theme}", "--output",
                                str(target.with_suffix("")), str(saved)],
                               check=True, capture_output=True, timeout=120)
                assert "jaxlab report" in target.read_text()
                static_page = browser.new_page(viewport={"width": 1400, "height": 1100},
                                               color_scheme=theme)
                static_page.goto(target.as_uri())
                # the first screenful: a whole page of reports passes the height a
                # browser can capture at once ("Unable to capture screenshot")
                static_page.screenshot(path=str(SCREENSHOTS / f"nbconvert-{theme}.png"))
                static_page.close()
        finally:
            browser.close()
    for name in ("lab", "nbconvert", "renderer-show", "renderer-compare", "static-html", "widget"):
        for theme in ("light", "dark"):
            assert (SCREENSHOTS / f"{name}-{theme}.png").stat().st_size > 5_000, (name, theme)
