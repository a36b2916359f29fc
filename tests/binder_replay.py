"""Binder's build replayed without Docker, as repo2docker does it with binder/: a fresh
virtual environment, `pip install -r binder/requirements.txt` from the repository root,
binder/postBuild, then each notebook executed through binder/start by a kernel of that
environment. tests/test_notebooks.py runs the course this way; `make notebooks` saves the
executed notebooks (outputs kept) in place:

    python -m tests.binder_replay [--venv build/binder] notebooks/01_tour.ipynb ...
"""
from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
EXECUTE = ROOT / "tests" / "binder_execute.py"
KERNEL = "binder-replay"
# repo2docker's own variables are the only ones a Binder kernel sees; ours must not leak in
LEAKING = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_DATA_DIR")


@dataclass(frozen=True)
class BinderEnv:
    """A virtual environment built as Binder builds its image."""
    prefix: Path

    @property
    def python(self) -> Path:
        return self.prefix / "bin" / "python"

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in LEAKING}
        env["PATH"] = os.pathsep.join([str(self.prefix / "bin"), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.prefix)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env


def _run(command: list[str], env: BinderEnv, what: str) -> None:
    done = subprocess.run(command, cwd=ROOT, env=env.environ(), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stdout[-4000:]}"
                           f"\n{done.stderr[-4000:]}")


def build(prefix: Path) -> BinderEnv:
    """The image's Python environment: requirements, then postBuild, then a kernel spec
    of this environment's own Python. Unlike repo2docker, pip's cache is used (a second
    build downloads nothing) and modules are byte-compiled when first imported, not all
    at install (most of an install's CPU time)."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(prefix)], check=True)
    env = BinderEnv(prefix)
    _run([str(env.python), "-m", "pip", "install", "-q", "--no-compile", "-r",
          str(BINDER / "requirements.txt")], env, "pip install -r binder/requirements.txt")
    _run([str(BINDER / "postBuild")], env, "binder/postBuild")
    _run([str(env.python), "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL],
         env, "ipykernel install")
    return env


def build_once(folder: Path) -> BinderEnv:
    """The environment built in `folder/venv` by the first process that asks (under a
    lock on `folder`), then reused: pytest-xdist's workers share one build. A failed
    build leaves no mark, so the next process to ask builds again (and fails alike)."""
    folder.mkdir(parents=True, exist_ok=True)
    built = folder / "built"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # released when the file closes
        if built.exists():
            return BinderEnv(folder / "venv")
        env = build(folder / "venv")
        built.touch()
        return env


def execute(env: BinderEnv, notebook: Path, saved: Path) -> float:
    """Executes `notebook` through binder/start (as Binder starts its server) and writes
    the executed notebook to `saved`; returns the seconds it took."""
    start = time.perf_counter()
    done = subprocess.run([str(BINDER / "start"), str(env.python), str(EXECUTE), KERNEL,
                           str(notebook), str(saved)],
                          cwd=ROOT, env=env.environ(), capture_output=True, text=True)
    if done.returncode:
        raise AssertionError(f"{notebook.name} did not run cleanly in the Binder "
                             f"environment:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=ROOT / "build" / "binder",
                        help="where to build the environment (reused when it exists)")
    parser.add_argument("notebooks", nargs="+", type=Path, help="executed and saved in place")
    args = parser.parse_args(argv)
    env = BinderEnv(args.venv.resolve())
    if not env.python.exists():
        start = time.perf_counter()
        env = build(env.prefix)
        print(f"built the Binder environment in {time.perf_counter() - start:.0f} s")
    for notebook in args.notebooks:
        seconds = execute(env, notebook.resolve(), notebook.resolve())
        print(f"{notebook}: {seconds:.1f} s, {notebook.stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
