"""Which values of a jaxpr with several consumers lower_jaxpr stores, read off the jaxpr.

A value several equations use is stored once when recomputing it per use would cost
more (jit.py decides with the lazy value in hand); two facts about the uses help it:

- widened: some use broadcasts the value over more elements (a matmul operand). An
  expression too big to recompute per copy is stored there anyway, in the layout that
  use reads (a weight gradient's matmul reads it transposed): storing it once where it
  is made serves every use.
- rejoined: every use is elementwise and the uses flow back together into one value
  within a few equations (a relu's gradient: two selects of the cotangent, added). The
  value then needs no store of its own: the region is one expression over it, and a
  matmul that makes it keeps the region as its epilogue.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jaxlab.core.jaxpr import Jaxpr, Var

REGION_EQUATIONS = 8   # equations a rejoining region may span


@dataclass(frozen=True)
class Region:
    """Elementwise equations (indices) over a value that end in one value, `exit`; the
    values they read besides the region's own are `others` (all made before it)."""
    equations: tuple[int, ...]
    exit: Var
    others: tuple[Var, ...]


@dataclass
class Uses:
    count: dict[int, int] = field(default_factory=dict)     # id(var) -> equations using it
    widened: set[int] = field(default_factory=set)           # id(var) of widened values
    rejoined: dict[int, Region] = field(default_factory=dict)


def analyse(jaxpr: Jaxpr) -> Uses:
    from jaxlab.core.elementwise import ELEMENTWISE_PRIMS
    elementwise = frozenset(ELEMENTWISE_PRIMS)
    uses = Uses()
    users: dict[int, list[int]] = {}
    made_at: dict[int, int] = {id(v): -1 for v in jaxpr.in_binders}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var):
                uses.count[id(a)] = uses.count.get(id(a), 0) + 1
                users.setdefault(id(a), []).append(i)
                if _widens(eqn, a):
                    uses.widened.add(id(a))
        for v in eqn.out_binders:
            made_at[id(v)] = i
    returned = {id(v) for v in jaxpr.outs if isinstance(v, Var)}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.out_binders:
            if uses.count.get(id(v), 0) > 1 and id(v) not in returned:
                region = _region(jaxpr, v, i, users, made_at, returned, elementwise)
                if region is not None:
                    uses.rejoined[id(v)] = region
    return uses


def _region(jaxpr: Jaxpr, v: Var, start: int, users: dict[int, list[int]],
            made_at: dict[int, int], returned: set[int], elementwise: frozenset) \
        -> Region | None:
    """The elementwise equations after `start` that take v's uses back to one value."""
    pending = {id(v): len(users[id(v)])}   # region values -> uses not yet in the region
    equations: list[int] = []
    others: dict[int, Var] = {}
    j = start
    while len(equations) < REGION_EQUATIONS:
        j = min((k for r in pending for k in users.get(r, ()) if k > j), default=None)
        if j is None:
            return None
        eqn = jaxpr.eqns[j]
        out = eqn.out_binders
        if eqn.primitive not in elementwise or len(out) != 1 or \
                out[0].aval.shape != v.aval.shape:
            return None
        for a in eqn.inputs:
            if not isinstance(a, Var):
                continue
            if id(a) in pending:
                pending[id(a)] -= 1
                if not pending[id(a)]:
                    del pending[id(a)]
            elif made_at.get(id(a), start) < start:
                others[id(a)] = a
            else:
                return None   # a value made after v: it may carry work of its own
        equations.append(j)
        if id(out[0]) in returned:
            return None
        pending[id(out[0])] = len(users.get(id(out[0]), ()))
        if len(pending) == 1 and id(out[0]) in pending:
            return Region(tuple(equations), out[0], tuple(others.values()))
    return None


def _widens(eqn: Any, a: Var) -> bool:
    """Whether `eqn` reads `a` broadcast over more elements than it has."""
    from jaxlab.core.linalg import dot_general_p
    from jaxlab.core.movement import broadcast_in_dim_p
    if eqn.primitive is dot_general_p:
        return True
    return eqn.primitive is broadcast_in_dim_p and \
        _size(eqn.out_binders[0].aval.shape) > _size(a.aval.shape)


def _size(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
