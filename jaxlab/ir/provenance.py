"""Provenance: which jaxpr equation, and which user line, each part of a kernel came from.

A traced equation carries a `SourceInfo` (the user's file, line, column and
function, as JAX's source_info). While an equation is lowered, `equation(origin)`
names it, and the lazy engine tags each AluExp node it builds with that
`Origin`. Rewrites (substitute, simplify) done inside `lineage()` record which
node each new node was made from, so the nodes of a lowered and then tuned kernel
can be traced back to the nodes, and equations, they compute.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from jaxlab.graph import toposort

# a generated line that folds a reduction step is marked with FOLD among its nodes
FOLD = "fold"


@dataclass(frozen=True)
class SourceInfo:
    """Where the user's code made an equation (the innermost frame outside jaxlab)."""
    file: str
    line: int
    column: int
    function: str

    def text(self) -> str:
        """As JAX prints it after an equation: `file:line:column (function)`."""
        return f"{self.file}:{self.line}:{self.column} ({self.function})"


@dataclass(frozen=True)
class Origin:
    """One jaxpr equation (as printed, without its binders) and where it was written."""
    equation: str
    source: Optional[SourceInfo] = None


_current: contextvars.ContextVar[Optional[Origin]] = contextvars.ContextVar(
    "jaxlab_current_equation", default=None)


@contextlib.contextmanager
def equation(origin: Optional[Origin]) -> Iterator[None]:
    """Nodes built inside are tagged with `origin` (the equation being lowered)."""
    token = _current.set(origin)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Optional[Origin]:
    return _current.get()


class Lineage:
    """What each rewritten node was made from: `of(node)` is the union of `seed` over
    the nodes it was derived from (itself included)."""

    def __init__(self, seed: Callable[[Any], frozenset]) -> None:
        self.seed = seed
        self.derived: dict[Any, frozenset] = {}

    def derive(self, new: Any, old: Any) -> None:
        if new is old:
            return
        found = self.of(old)
        if found:
            self.derived[new] = self.derived.get(new, frozenset()) | found

    def derive_all(self, new_root: Any, old: Any, kept: tuple) -> None:
        """Every node of `new_root` built to replace `old` (all but the `kept` sources
        it was built on, and theirs) was made from `old`."""
        stop = set(kept)
        for node in toposort((new_root,), lambda n: () if n in stop else n.src):
            if node not in stop:
                self.derive(node, old)

    def of(self, node: Any) -> frozenset:
        return self.derived.get(node, frozenset()) | self.seed(node)


_lineage: contextvars.ContextVar[Optional[Lineage]] = contextvars.ContextVar(
    "jaxlab_lineage", default=None)


@contextlib.contextmanager
def lineage(seed: Callable[[Any], frozenset]) -> Iterator[Lineage]:
    """Rewrites inside record where their nodes came from (see Lineage)."""
    found = Lineage(seed)
    token = _lineage.set(found)
    try:
        yield found
    finally:
        _lineage.reset(token)


def active_lineage() -> Optional[Lineage]:
    return _lineage.get()


@dataclass(frozen=True)
class KernelOrigins:
    """A kernel's provenance: the equations behind each of its nodes, and behind
    its reduction (the fold itself)."""
    nodes: dict
    reduction: frozenset = frozenset()

    def of(self, marks: frozenset) -> frozenset:
        """The origins of a generated line that computes `marks` (nodes, or FOLD)."""
        out: frozenset = frozenset()
        for m in marks:
            out |= self.reduction if m == FOLD else self.nodes.get(m, frozenset())
        return out


class LineOrigins:
    """Per line of a kernel's generated source, the equations it computes: the nodes
    each line computes (recorded by the generator, the same for every kernel of one
    structure) resolved through one kernel's origins when first asked."""

    def __init__(self, marks: tuple[frozenset, ...], origins: KernelOrigins) -> None:
        self.marks, self.origins = marks, origins

    @functools.cached_property
    def lines(self) -> tuple[frozenset, ...]:
        return tuple(self.origins.of(m) for m in self.marks)

    def __deepcopy__(self, memo: dict) -> "LineOrigins":   # (dataclasses.asdict of an event)
        return self
