"""JupyterLab in headless Chromium: tests/notebooks/lab_smoke.ipynb runs, its report
(through the extension/ renderer) and its kernel browser widget render, the widget
recompiles and re-times a kernel. Plus the extension's package metadata and types."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "extension"
PREBUILT = EXTENSION / "jaxlab_report" / "labextension"
SMOKE = ROOT / "tests" / "notebooks" / "lab_smoke.ipynb"
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
        deadline = time.monotonic() + 30
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


def test_report_and_widget_render_in_jupyterlab(lab: str, tmp_path: Path) -> None:
    executable = chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
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
            assert "r_4_6" in report.first.inner_text()
            assert widget.locator("option").count() >= 1
            assert page.locator('.jp-OutputArea-output[data-mime-type='
                                '"application/vnd.jupyter.stderr"]').count() == 0

            # the extension's table sorts and unfolds a kernel's stages
            report.first.locator("th", has_text="time").click()
            report.first.locator("tr.jaxlab-row").first.click()
            report.first.locator("tr.jaxlab-detail details[open] pre").first.wait_for()

            # the widget recompiles the selected kernel and times old and new
            page.locator(".jp-OutputArea-output button", has_text="recompile & time").click()
            page.get_by_text("before (cached)").wait_for()
            page.screenshot(path=str(tmp_path / "lab_smoke.png"), full_page=True)
            assert outputs.count() >= 2
        finally:
            browser.close()
    assert (tmp_path / "lab_smoke.png").stat().st_size > 10_000
