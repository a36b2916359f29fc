"""`%%kernel --backend B` runs the cell on B: the arrays the cell reads from the
namespace that live on another device are copied to B for the cell, and the
namespace is given its own arrays back afterwards (where the cell did not
rebind the name), so the cells after it see what they saw before.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Iterator

from jaxlab.array import Array
from jaxlab.device_put import device_put
from jaxlab.engine.devices import Device
from jaxlab.tree_util import tree_leaves, tree_map


@dataclass(frozen=True)
class Move:
    name: str
    origin: str        # the devices the value's arrays were on
    nbytes: int


def names_read(cell: str) -> list[str]:
    """Names the cell reads (its Python source; IPython syntax lines are skipped)."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return []     # the cell's own run reports the error
    return list(dict.fromkeys(n.id for n in ast.walk(tree)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)))


def _foreign(value: Any, device: Device) -> list[Array]:
    return [leaf for leaf in _leaves(value) if leaf.device is not device]


def _leaves(value: Any) -> Iterator[Array]:
    if isinstance(value, (Array, list, tuple, dict)):
        for leaf in tree_leaves(value):
            if isinstance(leaf, Array):
                yield leaf


class Placement:
    """Copies of the cell's foreign arrays on `device`, put into `namespace`
    while the cell runs (`restore()` puts the originals back)."""

    def __init__(self, namespace: dict[str, Any], cell: str, device: Device) -> None:
        self.namespace, self.device = namespace, device
        self.moves: list[Move] = []
        self._swapped: dict[str, tuple[Any, Any]] = {}     # name -> (original, copy)
        for name in names_read(cell):
            value = namespace.get(name)
            foreign = _foreign(value, device)
            if not foreign:
                continue
            try:
                copy = tree_map(lambda x: device_put(x, device) if isinstance(x, Array) else x,
                                value)
            except Exception as exc:
                raise RuntimeError(f"--backend {device.platform}: cannot move {name!r} "
                                   f"there: {exc}") from None
            origin = ", ".join(sorted({a.device.platform for a in foreign}))
            self.moves.append(Move(name, origin, sum(a.size * a.dtype.itemsize for a in foreign)))
            self._swapped[name] = (value, copy)

    def __enter__(self) -> "Placement":
        for name, (_, copy) in self._swapped.items():
            self.namespace[name] = copy
        return self

    def __exit__(self, *exc: Any) -> None:
        for name, (original, copy) in self._swapped.items():
            if self.namespace.get(name) is copy:     # not rebound by the cell
                self.namespace[name] = original

    def notes(self) -> list[str]:
        """One line for the report, where anything moved."""
        if not self.moves:
            return []
        total = sum(m.nbytes for m in self.moves)
        items = ", ".join(f"{m.name} ({m.nbytes} B from {m.origin})" for m in self.moves)
        return [f"moved to {self.device.platform} for this cell: {items}; {total} B in all"]
