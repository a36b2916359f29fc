"""The course's Binder links, built from ONE place: `[project.urls] Repository` in
pyproject.toml (a GitHub URL) and the notebooks that exist in notebooks/. Rewrites the
blocks between `<!-- binder:NAME -->` and `<!-- /binder:NAME -->` in the READMEs:

    python binder/links.py           # rewrite (make binder-links)
    python binder/links.py --check   # exit 1 when a README is stale (the tests run this)

NAME is `badge` (the Binder badge, opening the first tutorial) or `index` (every notebook:
its title, its file, its launch link).
"""
from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
READMES = (ROOT / "README.md", NOTEBOOKS / "README.md", ROOT / "binder" / "README.md")
BRANCH = "main"
BADGE = "https://mybinder.org/badge_logo.svg"
BLOCK = re.compile(r"(<!-- binder:(\w+) -->\n)(.*?)(<!-- /binder:\2 -->)", re.S)


def repository() -> tuple[str, str]:
    """(owner, name) of the GitHub repository that pyproject.toml names."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?",
                         urls["Repository"])
    if found is None:
        raise ValueError(f"Repository {urls['Repository']!r} is not a GitHub URL")
    return found[1], found[2]


def launch_url(notebook: Path) -> str:
    owner, name = repository()
    path = notebook.relative_to(ROOT).as_posix()
    return f"https://mybinder.org/v2/gh/{owner}/{name}/{BRANCH}?urlpath=lab/tree/{path}"


def course() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def title(notebook: Path) -> str:
    """The notebook's first heading."""
    cells = json.loads(notebook.read_text())["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and source.startswith("# "):
            return source.splitlines()[0][2:].strip()
    raise ValueError(f"{notebook.name} has no '# title' in a markdown cell")


def render(block: str, readme: Path) -> str:
    here = readme.parent
    if block == "badge":
        return f"[![Binder]({BADGE})]({launch_url(course()[0])})\n"
    if block == "index":
        return "".join(f"- {nb.name[:2]} · [{title(nb)}]({_relative(nb, here)}) · "
                       f"[launch on Binder]({launch_url(nb)})\n" for nb in course())
    raise ValueError(f"{readme}: unknown block binder:{block}")


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def rewritten(readme: Path) -> str:
    return BLOCK.sub(lambda m: m[1] + render(m[2], readme) + m[4], readme.read_text())


def main(argv: list[str]) -> int:
    stale = [r for r in READMES if rewritten(r) != r.read_text()]
    if "--check" in argv:
        for readme in stale:
            print(f"{readme.relative_to(ROOT)} is stale: run `make binder-links`")
        return 1 if stale else 0
    for readme in stale:
        readme.write_text(rewritten(readme))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
