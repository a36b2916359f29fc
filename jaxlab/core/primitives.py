"""Primitives as plain data, and the one dispatch point `bind`.

A Primitive is a name plus rule tables keyed by the primitive: `lowerings`
(to lazy arrays: what eager evaluation and jit run) here; the tracing issue
adds abstract evaluation, jvp, transpose and batching rules beside each one.
"""
from __future__ import annotations

from typing import Any, Callable


class Primitive:
    def __init__(self, name: str, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return bind(self, *args, **params)

    def __repr__(self) -> str:
        return self.name


PRIMITIVES: dict[str, Primitive] = {}
# primitive -> fn(*lazies, **params) -> Lazy or tuple of Lazy
lowerings: dict[Primitive, Callable[..., Any]] = {}


def primitive(name: str, multiple_results: bool = False) -> Primitive:
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} defined twice")
    p = Primitive(name, multiple_results)
    PRIMITIVES[name] = p
    return p


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply a primitive. Today: evaluate eagerly (lazily fused) on Arrays."""
    from jaxlab.array import Array, wrap
    lazies = [a._lazy for a in args] if all(isinstance(a, Array) for a in args) else None
    if lazies is None:
        bad = [type(a).__name__ for a in args if not isinstance(a, Array)]
        raise TypeError(f"{prim.name}: expected jaxlab Arrays, got {', '.join(bad)}")
    out = lowerings[prim](*lazies, **params)
    return tuple(wrap(o) for o in out) if prim.multiple_results else wrap(out)
