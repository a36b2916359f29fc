"""Index analysis for the wasm code generator.

A kernel is rewritten over three loop axes: the flat output index becomes
gidx = row * cols + col, and the reduction index stays ridx. A batched contraction
(a convolution, a batched matmul) gets a fourth, outermost axis:
gidx = (batch * rows + row) * cols + col, so that its operands vary along row or
col alone within one batch. The simplifier
then folds the unravelling (`(row*N + col) // N` is `row`), so a load's index
is usually affine in the axes: `row*K + ridx`, `ridx*N + col`. From that the
tuner sees which loads are contiguous along a lane axis, and the code
generator turns affine indices into pointers with constant offsets.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from jaxlab.backends.wasm.optable import CAPABILITIES
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel
from jaxlab.ir.mathlib import expand

class Axis(enum.Enum):
    """A loop axis of the generated kernel. Its value names the Special leaf that stands
    for the loop variable in the IR and the WAT local that holds it."""
    BATCH = "batch"
    ROW = "row"
    COL = "col"
    RIDX = "ridx"

    @property
    def get(self) -> str:
        """WAT that reads the loop variable."""
        return f"(local.get ${self.value})"

    # members are singletons: hash by identity in C, not Enum's hash of the name in Python
    # (axes key every memo of the code generator)
    __hash__ = object.__hash__


BATCH, ROW, COL, RIDX = Axis.BATCH, Axis.ROW, Axis.COL, Axis.RIDX


@dataclass(frozen=True)
class AxisForm:
    """A kernel's expressions over (row, col, ridx)."""
    rows: int
    cols: int
    steps: int                    # reduction length (0 without a reduction)
    body: AluExp                  # the kernel's exp (float math rewritten: optable.CAPABILITIES)
    epilogue: Optional[AluExp]    # over acc, row and col
    out_index: AluExp             # (batch * rows + row) * cols + col
    batches: int = 1              # extent of the batch axis (1: there is none)


def axis_form(kernel: Kernel, cols: int, batches: int = 1) -> AxisForm:
    rows = kernel.size // cols // batches
    row, col = AluExp.special(ROW.value, rows), AluExp.special(COL.value, cols)
    batch = AluExp.special(BATCH.value, batches) if batches > 1 else None
    inner = row * cols + col
    out_index = (inner if batch is None else batch * (rows * cols) + inner).simplify()
    gidx = AluExp.special(GIDX, kernel.size)
    red = kernel.reduction

    def over_axes(e: AluExp) -> AluExp:
        mapping = {gidx: out_index}
        for node in e.toposort():
            if node.op in (AluOp.Idiv, AluOp.Mod) and node.src[0] is gidx \
                    and node.src[1].is_const and node.src[1].arg > 0:
                mapping[node] = _unravel_batched(node.op, node.src[1].arg, batch, row, col,
                                                 rows, cols)
        return expand(e.substitute(mapping).simplify(), CAPABILITIES)

    body = over_axes(kernel.exp)
    epilogue = over_axes(red.epilogue) if red else None
    return AxisForm(rows, cols, red.size if red else 0, body, epilogue, out_index, batches)


def _unravel_batched(op: AluOp, k: int, batch: Optional[AluExp], row: AluExp, col: AluExp,
                     rows: int, cols: int) -> AluExp:
    """gidx // k and gidx % k for gidx = batch*rows*cols + row*cols + col: a k that
    whole batches divide (or that divides one batch) splits off the batch axis."""
    inner = rows * cols
    if batch is None:
        return _unravel(op, k, row, col, cols)
    if k % inner == 0:
        m = k // inner
        if op is AluOp.Idiv:
            return batch // m
        return (batch % m) * inner + row * cols + col
    if inner % k == 0:
        within = _unravel(op, k, row, col, cols)
        return batch * (inner // k) + within if op is AluOp.Idiv else within
    flat = batch * inner + row * cols + col
    return flat // k if op is AluOp.Idiv else flat % k


def _unravel(op: AluOp, k: int, row: AluExp, col: AluExp, cols: int) -> AluExp:
    """gidx // k and gidx % k over (row, col), for gidx = row*cols + col and col < cols
    (the simplifier cannot see that (row*cols + col) // (m*cols) is row // m)."""
    if k % cols == 0:
        m = k // cols
        return row // m if op is AluOp.Idiv else (row % m) * cols + col
    if cols % k == 0:
        return row * (cols // k) + col // k if op is AluOp.Idiv else col % k
    return (row * cols + col) // k if op is AluOp.Idiv else (row * cols + col) % k


class Deps:
    """Which loop axes each node depends on (the accumulator counts as row and col)."""

    def __init__(self) -> None:
        self._memo: dict[AluExp, frozenset[Axis]] = {}

    def __call__(self, e: Optional[AluExp]) -> frozenset[Axis]:
        if e is None:
            return frozenset()
        if e in self._memo:
            return self._memo[e]
        for node in e.toposort():
            if node in self._memo:
                continue
            if node.op is AluOp.Special:
                d = frozenset({Axis(node.arg[0])})
            elif node.op is AluOp.Variable:
                d = frozenset({ROW, COL})
            else:
                d = frozenset().union(*(self._memo[s] for s in node.src))
            self._memo[node] = d
        return self._memo[e]


@dataclass(frozen=True)
class Affine:
    """index = sum(coeff * axis) + const + rest, where rest holds the other terms."""
    coeffs: tuple[tuple[Axis, int], ...]
    const: int
    rest: Optional[AluExp]

    def coeff(self, axis: Axis) -> int:
        return dict(self.coeffs).get(axis, 0)


def affine(index: AluExp) -> Affine:
    coeffs: dict[Axis, int] = {}
    const = 0
    rest: list[AluExp] = []
    stack = [index]
    while stack:
        t = stack.pop()
        if t.op is AluOp.Add:
            stack.extend(t.src)
        elif t.is_const:
            const += t.arg
        elif t.op is AluOp.Special:
            axis = Axis(t.arg[0])
            coeffs[axis] = coeffs.get(axis, 0) + 1
        elif t.op is AluOp.Mul and t.src[0].op is AluOp.Special and t.src[1].is_const:
            axis = Axis(t.src[0].arg[0])
            coeffs[axis] = coeffs.get(axis, 0) + t.src[1].arg
        else:
            rest.append(t)
    rest_sum = None
    for t in rest:
        rest_sum = t if rest_sum is None else AluExp(AluOp.Add, DType.int32, (rest_sum, t))
    terms = sorted(((a, c) for a, c in coeffs.items() if c), key=lambda t: t[0].value)
    return Affine(tuple(terms), const, rest_sum)


def in_bounds(index: AluExp, count: int) -> bool:
    """True when range analysis proves 0 <= index < count."""
    lo, hi = index.vmin, index.vmax
    return lo >= 0 and hi < count


def contiguous(index: AluExp, lane: Axis, deps: Deps) -> bool:
    """Four consecutive values of `lane` read four consecutive elements."""
    aff = affine(index)
    return aff.coeff(lane) == 1 and lane not in deps(aff.rest)


def runs_of_four(index: AluExp, lane: Axis, deps: Deps) -> bool:
    """Four consecutive values of `lane` from a multiple of four (how every vector loop
    walks its lane axis) read four consecutive elements, though the index is not
    affine in the lane: `(col // 64) * 66 + col % 64` (a padded image's rows)."""
    aff = affine(index)
    step = aff.coeff(lane)
    stack = [aff.rest] if aff.rest is not None else []
    while stack:
        t = stack.pop()
        if t.op is AluOp.Add:
            stack.extend(t.src)
            continue
        grows = _growth_per_lane(t, lane, deps)
        if grows is None:
            return False
        step += grows
    return step == 1


def _growth_per_lane(term: AluExp, lane: Axis, deps: Deps) -> Optional[int]:
    """How much `term` grows from one lane to the next within an aligned group of four:
    `lane // k` stays, `lane % k` grows by one, for k a multiple of four (None: unsteady)."""
    if lane not in deps(term):
        return 0
    if term.op is AluOp.Mul and term.src[1].is_const:
        inner = _growth_per_lane(term.src[0], lane, deps)
        return None if inner is None else inner * term.src[1].arg
    if term.op in (AluOp.Idiv, AluOp.Mod) and term.src[0].op is AluOp.Special \
            and term.src[0].arg[0] == lane.value and term.src[1].is_const \
            and term.src[1].arg > 0 and term.src[1].arg % 4 == 0:
        return 0 if term.op is AluOp.Idiv else 1
    return None


def loads(e: Optional[AluExp]) -> list[AluExp]:
    return [] if e is None else [n for n in e.toposort() if n.op is AluOp.GlobalIndex]


def panel_operands(body: AluExp, deps: Deps, side: Axis = COL) -> list[AluExp]:
    """The column-side operands of a matmul-like body (side=ROW: the row-side ones):
    largest subexpressions over (side, ridx) alone that feed a node depending on the
    other axis. Packing their values for a strip of columns (a block of rows) once lets
    every tile read them contiguously."""
    other = ROW if side is COL else COL
    found: dict[AluExp, None] = {}
    for node in body.toposort():
        if other not in deps(node):
            continue
        for s in node.src:
            if deps(s) - {BATCH} == frozenset({side, RIDX}):
                found.setdefault(s)
    return list(found)
