"""Layers point one way (docs/ARCHITECTURE.md): a module imports only from its own layer,
the layers below it, and the modules that stand beside every layer.

The import graph is read with `ast` from the source (imports at module level and inside
functions alike; `if TYPE_CHECKING:` blocks are annotations, not imports), so a lazy import
inside a function cannot hide an upward dependency.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "jaxlab"

# The layer of each package or module, lowest first; a module takes the layer of its
# longest listed prefix. Keep this table small: it is the architecture drawing in code.
LAYERS: dict[str, int] = {
    "jaxlab.ir": 0,
    "jaxlab.backends": 1,
    "jaxlab.engine": 2,
    "jaxlab.core": 3,
    "jaxlab.array": 3,
    "jaxlab": 4,            # API: the user API: numpy, lax, nn, random, scipy, api, ...
    "jaxlab.lab": 5,        # the notebook front end reads everything, nothing reads it
    "jaxlab.demo": 5,       # `make demo`: a program using the package
}
TOP = "jaxlab"              # jaxlab/__init__.py gathers the public API: on top, imports anything
API = 4
# The user API reaches the engine only through its public modules (devices and what
# they can hold); lazy arrays, lowering and dispatch are for core.
ENGINE_PUBLIC = frozenset({"jaxlab.engine", "jaxlab.engine.devices", "jaxlab.engine.limits"})
# Beside the layers: importable from every layer; they import only each other.
BESIDE = frozenset({"jaxlab.events", "jaxlab.errors", "jaxlab.configuration", "jaxlab.graph",
                    "jaxlab.tree_util", "jaxlab.tree_paths", "jaxlab.shaped", "jaxlab.state"})


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    at_module_level: bool       # runs when the importer is imported (not inside a function)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _import_nodes(tree: ast.AST):
    """(node, at module level) for every Import/ImportFrom, skipping `if TYPE_CHECKING:` bodies."""
    stack = [(tree, True)]
    while stack:
        node, top = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, top
        children = list(node.orelse) if _is_type_checking_block(node) else ast.iter_child_nodes(node)
        inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, inner) for child in children)


def import_graph(root: Path) -> list[Import]:
    """The imports between modules of the package at `root`."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    package = root.name
    edges = []
    for name, path in sorted(files.items()):
        is_package = path.name == "__init__.py"
        for node, top in _import_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # `from pkg import sub` imports the submodule pkg.sub where there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            for target in targets:
                if target == package or target.startswith(package + "."):
                    while target not in files:          # `import jaxlab.x.y` names a module
                        target = target.rpartition(".")[0]
                    if target != name:
                        edges.append(Import(name, target, node.lineno, top))
    return edges


def layer_of(module: str) -> int:
    if module == TOP:
        return max(LAYERS.values())
    best = max((prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")),
               key=len)
    return LAYERS[best]


def allowed(importer: str, imported: str) -> bool:
    if importer == TOP:
        return True
    if importer in BESIDE:
        return imported in BESIDE
    if layer_of(importer) == API and imported.startswith("jaxlab.engine"):
        return imported in ENGINE_PUBLIC
    return imported in BESIDE or layer_of(imported) <= layer_of(importer)


def violations(edges: list[Import]) -> list[str]:
    return [f"{e.importer} (line {e.line}, layer {layer_of(e.importer)}) imports {e.imported} "
            f"(layer {layer_of(e.imported)})"
            for e in edges if not allowed(e.importer, e.imported)]


def modules_in_cycles(edges: list[Import]) -> set[str]:
    """Modules in a strongly connected component of more than one module (Tarjan, iterative)."""
    succ: dict[str, set[str]] = {}
    for e in edges:
        succ.setdefault(e.importer, set()).add(e.imported)
        succ.setdefault(e.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: set[str] = set()
    for start in succ:
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.update(component)
    return found


def test_jaxlab_layers_point_one_way():
    assert violations(import_graph(PACKAGE_ROOT)) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_reports_an_upward_import(tmp_path):
    """A synthetic package: ir imports numpy inside a function, engine imports core at the
    top, events imports engine, numpy imports lab and the engine's lazy arrays, nn imports
    the package itself (which imports everything). The checker must name these six, and
    nothing else."""
    root = tmp_path / "jaxlab"
    _write(root, {
        "__init__.py": "from jaxlab import numpy\n",
        "events.py": "def f():\n    from jaxlab.engine import lazy\n",
        "ir/__init__.py": "",
        "ir/alu.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import jaxlab.numpy\n",
        "ir/dtypes.py": "from . import alu\ndef call():\n    import jaxlab.numpy as jnp\n",
        "engine/__init__.py": "",
        "engine/lazy.py": "from jaxlab.ir import dtypes\nfrom ..core import rules\nfrom jaxlab import events\n",
        "core/__init__.py": "",
        "core/rules.py": "from jaxlab.engine.lazy import x\n",
        "numpy/__init__.py": "from jaxlab.core.rules import y\nfrom jaxlab.lab import view\n",
        "numpy/creation.py": "from jaxlab.engine.devices import d\nfrom jaxlab.engine import lazy\n",
        "nn.py": "import jaxlab\n",
        "lab/__init__.py": "",
        "lab/view.py": "import jaxlab.numpy\n",
    })
    found = violations(import_graph(root))
    assert len(found) == 6, found
    assert any(v.startswith("jaxlab.ir.dtypes (line 3") and v.endswith("imports jaxlab.numpy (layer 4)")
               for v in found)
    assert any(v.startswith("jaxlab.engine.lazy (line 2") and "jaxlab.core.rules" in v for v in found)
    assert any(v.startswith("jaxlab.events") and "jaxlab.engine.lazy" in v for v in found)
    assert any(v.startswith("jaxlab.numpy (line 2") and "jaxlab.lab.view" in v for v in found)
    assert any(v.startswith("jaxlab.numpy.creation (line 2") and "jaxlab.engine.lazy" in v
               for v in found)
    assert "jaxlab.nn (line 1, layer 4) imports jaxlab (layer 5)" in found
    # ir.dtypes -> numpy -> core.rules -> engine.lazy -> ir.dtypes; engine.lazy <-> events
    assert modules_in_cycles(import_graph(root)) == {
        "jaxlab.numpy", "jaxlab.lab.view", "jaxlab.engine.lazy", "jaxlab.core.rules",
        "jaxlab.ir.dtypes", "jaxlab.events"}
