"""Graph walks shared by the IR and the tracers."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")


def toposort(roots: Iterable[T], parents: Callable[[T], Sequence[T]]) -> list[T]:
    """Every node reachable from roots once, parents before children. Iterative, so
    deep chains (a loop unrolled a thousand times) cannot overflow the stack."""
    order: list[T] = []
    seen: set[int] = set()
    stack: list[tuple[T, bool]] = [(r, False) for r in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((p, False) for p in reversed(parents(node)) if id(p) not in seen)
    return order
