"""The cpu backend's fast path: strided views instead of gathers.

When every load of a kernel reads `buffer[offset + sum_d coeff_d * i_d]` for the
loop indices i_d (output dims, then reduce dims), each load is a zero-copy
`as_strided` view over the flat buffer, NumPy broadcasting does the rest, and a
sum of products runs as BLAS through einsum. plan_strided() decides once per
kernel (or says why not); run_strided() evaluates a plan. Op semantics stay those
of ir/evaluate.py: only how loads are read changes.
"""
from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.kernel import ACC, GIDX, RIDX, Kernel, Reduction
from jaxlab.ir.printer import render

NP_REDUCE = {AluOp.Add: np.sum, AluOp.Mul: np.prod, AluOp.Max: np.max, AluOp.Min: np.min}
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_CHUNK_ELEMENTS = (32 << 20) // 8   # ~32 MB per temporary, even at 8 bytes an element

Box = tuple[tuple[int, int], ...]   # [start, stop) per loop axis


def reduce_axes(op: AluOp, body: np.ndarray, axes: int | tuple[int, ...],
                dtype: DType) -> np.ndarray:
    """Fold `body` along `axes` with `op`; float16 accumulates in float32, as on GPUs."""
    acc_dtype = np.float32 if dtype in (DType.float16, DType.bfloat16) else dtype.np
    with np.errstate(all="ignore"):
        return NP_REDUCE[op](body.astype(acc_dtype, copy=False), axis=axes).astype(dtype.np)


class _Decline(Exception):
    """The fast path does not apply; the message says why (it goes in the tuning record)."""


# --- affine index expressions ------------------------------------------------

@dataclass(frozen=True)
class Affine:
    """offset + sum_d coeffs[d] * i_d over the loop indices."""
    offset: int
    coeffs: tuple[int, ...]

    def plus(self, other: "Affine", sign: int = 1) -> "Affine":
        return Affine(self.offset + sign * other.offset,
                      tuple(a + sign * b for a, b in zip(self.coeffs, other.coeffs)))

    def times(self, k: int) -> "Affine":
        return Affine(self.offset * k, tuple(c * k for c in self.coeffs))

    def bounds(self, box: Box) -> tuple[int, int]:
        """(min, max) over the box (axes past the box's end must have coefficient 0)."""
        lo = hi = self.offset
        for c, (a, b) in zip(self.coeffs, box):
            lo += min(c * a, c * (b - 1))
            hi += max(c * a, c * (b - 1))
        return lo, hi


@dataclass(frozen=True)
class _Loop:
    """The loop space: one fresh Special per axis of size > 1; gidx and ridx as
    row-major sums of them."""
    sizes: tuple[int, ...]             # output dims, then reduce dims
    n_out: int
    flat: dict[str, AluExp]            # GIDX / RIDX -> sum of axis specials * strides
    axis_of: dict[AluExp, int]

    @staticmethod
    def make(sizes: tuple[int, ...], n_out: int) -> "_Loop":
        specials = {d: AluExp.special(f"_ax{d}", n) for d, n in enumerate(sizes) if n > 1}
        flat = {GIDX: _row_major(specials, sizes, range(n_out)),
                RIDX: _row_major(specials, sizes, range(n_out, len(sizes)))}
        return _Loop(sizes, n_out, flat, {s: d for d, s in specials.items()})

    @property
    def full(self) -> Box:
        return tuple((0, n) for n in self.sizes)

    def substitute(self, e: AluExp) -> AluExp:
        """e with gidx/ridx spelled in axis specials, simplified."""
        mapping = {n: self.flat[n.arg[0]] for n in e.toposort()
                   if n.op is AluOp.Special and n.arg[0] in self.flat}
        return e.substitute(mapping).simplify()

    def linear(self, e: AluExp) -> Affine:
        return _affine(e, self.axis_of, self.sizes)

    def linear_inside(self, e: AluExp, box: Box) -> Affine:
        """e as an Affine where every loop index lies in the (non-empty) box: there
        index ranges are tighter, so more // and % fold (padding then reshaping)."""
        inner = {d: AluExp.special(f"_in{d}", b - a) for d, (a, b) in enumerate(box) if b - a > 1}
        shifted = {s: inner[d] + box[d][0] if d in inner else AluExp.const(box[d][0], DType.int32)
                   for s, d in self.axis_of.items()}
        affine = _affine(e.substitute(shifted).simplify(), {s: d for d, s in inner.items()},
                         tuple(b - a for a, b in box))
        return Affine(affine.offset - sum(c * a for c, (a, _) in zip(affine.coeffs, box)),
                      affine.coeffs)

    def box(self, cond: AluExp) -> Box:
        """The loop indices where `cond` holds, when it is a conjunction of one-axis
        bounds (as padding produces), or _Decline."""
        if cond.op is AluOp.Const:
            return self.full if cond.arg else tuple((0, 0) for _ in self.sizes)
        if cond.op is AluOp.And:
            return tuple((max(a, c), min(b, d)) for (a, b), (c, d)
                         in zip(self.box(cond.src[0]), self.box(cond.src[1])))
        axis, lo, hi = self._half_line(cond)
        return tuple((max(a, lo), min(b, hi)) if d == axis else (a, b)
                     for d, (a, b) in enumerate(self.full))

    def _half_line(self, cond: AluExp) -> tuple[int, float, float]:
        """(axis, lo, hi): cond is lo <= i_axis < hi with one side infinite."""
        if cond.op is AluOp.Cmpne and cond.src[1].is_const and cond.src[1].arg is True:
            axis, lo, hi = self._half_line(cond.src[0])   # !x
            return (axis, hi, math.inf) if lo == -math.inf else (axis, -math.inf, lo)
        if cond.op is not AluOp.Cmplt:
            raise _Decline(f"validity {render(cond)} is not a box")
        diff = self.linear(cond.src[0]).plus(self.linear(cond.src[1]), -1)   # diff < 0
        axes = [d for d, c in enumerate(diff.coeffs) if c]
        if len(axes) != 1:
            raise _Decline(f"validity {render(cond)} is not a one-axis bound")
        c, k = diff.coeffs[axes[0]], diff.offset
        if c > 0:   # c*i + k < 0  <=>  i < ceil(-k / c)
            return axes[0], -math.inf, -(k // c)
        return axes[0], k // -c + 1, math.inf   # i > k / -c


def _affine(e: AluExp, axis_of: dict[AluExp, int], sizes: tuple[int, ...]) -> Affine:
    """e as an exact Affine in the specials of axis_of, or _Decline. Every
    subexpression's value over the loop space must fit int32, so the kernel's int32
    arithmetic computes exactly that affine function."""
    if e.dtype is not DType.int32:
        raise _Decline(f"index {render(e)} is not int32")
    if e.op is AluOp.Const:
        out = Affine(e.arg, (0,) * len(sizes))
    elif e.op is AluOp.Special and e in axis_of:
        out = Affine(0, tuple(int(d == axis_of[e]) for d in range(len(sizes))))
    elif e.op in (AluOp.Add, AluOp.Sub):
        out = _affine(e.src[0], axis_of, sizes).plus(_affine(e.src[1], axis_of, sizes),
                                                     1 if e.op is AluOp.Add else -1)
    elif e.op is AluOp.Mul and (e.src[0].is_const or e.src[1].is_const):
        k, x = (e.src[0], e.src[1]) if e.src[0].is_const else (e.src[1], e.src[0])
        out = _affine(x, axis_of, sizes).times(k.arg)
    else:
        raise _Decline(f"index {render(e)} is not affine")
    lo, hi = out.bounds(tuple((0, n) for n in sizes))
    if lo < _INT32_MIN or hi > _INT32_MAX:
        raise _Decline(f"index {render(e)} may overflow int32")
    return out


def _row_major(specials: dict[int, AluExp], sizes: Sequence[int], axes: range) -> AluExp:
    flat, stride = AluExp.const(0, DType.int32), 1
    for d in reversed(axes):
        if d in specials:
            flat = flat + specials[d] * stride
        stride *= sizes[d]
    return flat


# --- loads as views ----------------------------------------------------------

@dataclass(frozen=True)
class StridedLoad:
    """buffer[index] where the loop indices lie in `valid`, buffer[0] elsewhere
    (exactly what the kernel's `load(where(valid, index, 0))` reads)."""
    slot: int
    name: str                  # the variable that stands for the load
    index: Affine
    valid: Optional[Box]       # None: the whole loop space
    dims: tuple[bool, ...]     # the axes the value depends on

    def read(self, buf: np.ndarray, box: Box) -> np.ndarray:
        """The load over `box`, size 1 along axes it does not depend on."""
        box = tuple(r if used else (r[0], r[0] + 1) for r, used in zip(box, self.dims))
        if self.valid is None:
            return _view(buf, self.index, box)
        out = np.full([b - a for a, b in box], buf[0])
        inner = tuple((max(a, va), min(b, vb)) for (a, b), (va, vb) in zip(box, self.valid))
        if all(a < b for a, b in inner):
            region = tuple(slice(ia - a, ib - a) for (a, _), (ia, ib) in zip(box, inner))
            out[region] = _view(buf, self.index, inner)
        return out

    def elements(self, box: Box) -> int:
        return math.prod(b - a for (a, b), used in zip(box, self.dims) if used)

    def describe(self) -> str:
        text = f"in{self.slot}[{self.index.offset} + strides {list(self.index.coeffs)}]"
        return text + (f" inside {list(self.valid)}" if self.valid is not None else "")


def _view(buf: np.ndarray, index: Affine, box: Box) -> np.ndarray:
    start = index.offset + sum(c * a for c, (a, _) in zip(index.coeffs, box))
    strides = [c * buf.itemsize for c, _ in zip(index.coeffs, box)]
    return as_strided(buf[start:], [b - a for a, b in box], strides, writeable=False)


def _strided_load(node: AluExp, name: str, loop: _Loop, count: int) -> StridedLoad:
    slot = node.arg
    if any(n.op is AluOp.GlobalIndex for n in node.src[0].toposort()):
        raise _Decline(f"load in{slot} has a data-dependent index")
    index = loop.substitute(node.src[0])
    if count == 0:
        raise _Decline(f"load in{slot} reads an empty buffer")
    if index.op is AluOp.Where and index.src[2].is_const and index.src[2].arg == 0:
        valid = loop.box(index.src[0])
        if not all(a < b for a, b in valid):   # never valid: always buffer[0]
            return StridedLoad(slot, name, Affine(0, (0,) * len(loop.sizes)), None,
                               (False,) * len(loop.sizes))
        affine = loop.linear_inside(index.src[1], valid)
    else:
        valid, affine = None, loop.linear(index)
    lo, hi = affine.bounds(valid if valid is not None else loop.full)
    if lo < 0 or hi >= count:
        raise _Decline(f"load in{slot} reads outside its buffer (a clipped gather)")
    dims = tuple(c != 0 or (valid is not None and valid[d] != (0, n))
                 for d, (c, n) in enumerate(zip(affine.coeffs, loop.sizes)))
    return StridedLoad(slot, name, affine, valid, dims)


# --- the plan ------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """An expression with its loads replaced by variables that the views fill, and
    its index math spelled over the axis specials."""
    exp: AluExp
    loads: tuple[StridedLoad, ...]
    axes: tuple[tuple[str, int], ...]   # (special name, loop axis) the exp still reads

    @staticmethod
    def make(exp: AluExp, loop: _Loop, inputs: Sequence[tuple[DType, int]]) -> "Stage":
        nodes = [n for n in exp.toposort() if n.op is AluOp.GlobalIndex]
        loads = tuple(_strided_load(n, f"_load{k}", loop, inputs[n.arg][1])
                      for k, n in enumerate(nodes))
        staged = _index_math(exp.substitute({n: AluExp.variable(sl.name, n.dtype)
                                             for n, sl in zip(nodes, loads)}), loop)
        specials = [n for n in staged.toposort() if n.op is AluOp.Special]
        unknown = [n.arg[0] for n in specials if n not in loop.axis_of]
        if unknown:
            raise _Decline(f"unknown loop indices {unknown}")
        return Stage(staged, loads, tuple((n.arg[0], loop.axis_of[n]) for n in specials))


def _index_math(exp: AluExp, loop: _Loop) -> AluExp:
    """exp with every largest integer/bool subexpression of gidx and ridx alone
    rewritten over the axis specials and simplified: `gidx // 9 < 1` becomes
    `_ax0 < 1`, evaluated on one small arange per axis that broadcasts."""
    order = exp.toposort()
    pure = _pure_index(order)
    read_by_impure = {s for n in order if n not in pure for s in n.src}
    largest = [n for n in order if n in pure and not n.is_const
               and (n in read_by_impure or n is exp)]
    return exp.substitute({n: loop.substitute(n) for n in largest})


def _pure_index(order: list[AluExp]) -> set[AluExp]:
    """The integer/bool nodes computed from constants and loop indices only."""
    pure: set[AluExp] = set()
    for n in order:
        if n.dtype.is_float or n.op in (AluOp.Variable, AluOp.GlobalIndex):
            continue
        if n.op in (AluOp.Special, AluOp.Const) or all(s in pure for s in n.src):
            pure.add(n)
    return pure


@dataclass(frozen=True)
class Factor:
    """One multiplicand of a sum of products: an expression of some loads, evaluated
    over only the loop axes those loads read (a ReLU'd activation, a cast weight)."""
    exp: AluExp
    loads: tuple[StridedLoad, ...]
    axes: tuple[int, ...]

    def value(self, bufs: Sequence[np.ndarray], box: Box) -> np.ndarray:
        env = {sl.name: np.asarray(sl.read(bufs[sl.slot], box), order="C") for sl in self.loads}
        val = np.broadcast_to(evaluate(self.exp, env),
                              [box[d][1] - box[d][0] if d in self.axes else 1
                               for d in range(len(box))])
        return val.reshape([box[d][1] - box[d][0] for d in self.axes])


def _product_terms(e: AluExp) -> list[AluExp]:
    if e.op is AluOp.Mul:
        return _product_terms(e.src[0]) + _product_terms(e.src[1])
    return [e]


@dataclass(frozen=True)
class Einsum:
    """acc = the sum over the reduce axes of a product of factors, each an
    expression of loads: BLAS through einsum, or np.sum for a single factor."""
    factors: tuple[Factor, ...]
    n_out: int
    out_axes: tuple[int, ...]     # the output axes some factor reads, in order

    @staticmethod
    def match(red: Reduction, body: Stage, loop: _Loop) -> Optional["Einsum"]:
        if red.op is not AluOp.Add or body.exp.dtype is not DType.float32 or body.axes \
                or len(loop.sizes) > len(string.ascii_letters):
            return None
        by_name = {sl.name: sl for sl in body.loads}
        factors = []
        for t in _product_terms(body.exp):
            loads = tuple(dict.fromkeys(by_name[n.arg] for n in t.toposort()
                                        if n.op is AluOp.Variable))
            if not loads:
                return None   # a constant factor: the general path handles it
            axes = tuple(d for d in range(len(loop.sizes)) if any(sl.dims[d] for sl in loads))
            factors.append(Factor(t, loads, axes))
        read = [any(d in f.axes for f in factors) for d in range(len(loop.sizes))]
        if not all(read[d] or loop.sizes[d] == 1 for d in range(loop.n_out, len(loop.sizes))):
            return None   # summing over an axis nothing reads: leave it to the general path
        return Einsum(tuple(factors), loop.n_out,
                      tuple(d for d in range(loop.n_out) if read[d]))

    @property
    def subscripts(self) -> str:
        def letters(axes) -> str:
            return "".join(string.ascii_letters[d] for d in axes)
        ins = ",".join(letters(f.axes) for f in self.factors)
        return f"{ins}->{letters(self.out_axes)}"

    def describe(self) -> str:
        if len(self.factors) > 1:
            return f"a sum of products: einsum {self.subscripts}"
        return f"one factor summed: np.sum ({self.subscripts})"

    def run(self, bufs: Sequence[np.ndarray], box: Box) -> np.ndarray:
        with np.errstate(all="ignore"):
            operands = [f.value(bufs, box) for f in self.factors]
            if len(operands) > 1:
                acc = np.einsum(self.subscripts, *operands, optimize=True)
            else:   # einsum folds one operand in a plain loop; np.sum sums pairwise
                reduce = tuple(p for p, d in enumerate(self.factors[0].axes) if d >= self.n_out)
                acc = np.sum(operands[0], axis=reduce)
        return np.asarray(acc, order="C").reshape(
            [b - a if d in self.out_axes else 1 for d, (a, b) in enumerate(box[:self.n_out])])


@dataclass(frozen=True)
class StridedPlan:
    loop: _Loop
    body: Stage
    reduction: Optional[Reduction]
    epilogue: Optional[Stage]
    einsum: Optional[Einsum]

    @property
    def path(self) -> str:
        return "strided-einsum" if self.einsum else "strided"

    def describe(self) -> str:
        loads = self.body.loads + (self.epilogue.loads if self.epilogue else ())
        lines = [f"NumPy over strided views (loop {list(self.loop.sizes)}):"]
        lines += [f"  {sl.describe()}" for sl in loads]
        if self.einsum:
            lines.append(f"  {self.einsum.describe()}, then the epilogue")
        elif self.reduction:
            lines.append(f"  {self.reduction.op.name.lower()}-reduce the reduce axes, "
                         "then the epilogue")
        return "\n".join(lines)

    def cost(self, box: Box) -> int:
        """Elements materialised at once for an output box."""
        full = box + self.loop.full[self.loop.n_out:]
        if self.einsum:
            return math.prod(b - a for a, b in box) + \
                sum(sl.elements(full) for f in self.einsum.factors for sl in f.loads)
        return math.prod(b - a for a, b in full)


def plan_strided(kernel: Kernel) -> tuple[Optional[StridedPlan], str]:
    """A plan when every load is an affine view, else None; and the reason."""
    red = kernel.reduction
    if kernel.size == 0 or (red is not None and red.size == 0):
        return None, "empty loop"
    red_shape = tuple(kernel.reduce_shape) if red is not None else ()
    if red is not None and math.prod(red_shape) != red.size:
        return None, "reduce_shape does not match the reduction size"
    loop = _Loop.make(tuple(kernel.shape) + red_shape, len(kernel.shape))
    try:
        body = Stage.make(kernel.exp, loop, kernel.inputs)
        epilogue = Stage.make(red.epilogue, loop, kernel.inputs) if red is not None else None
    except _Decline as why:
        return None, str(why)
    einsum = Einsum.match(red, body, loop) if red is not None else None
    n = len(body.loads) + (len(epilogue.loads) if epilogue else 0)
    reason = f"all {n} loads are affine views"
    if einsum:
        reason += f"; the body is {einsum.describe()}"
    return StridedPlan(loop, body, red, epilogue, einsum), reason


# --- running a plan ------------------------------------------------------------

def run_strided(plan: StridedPlan, bufs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """Evaluate the plan into the flat `out`, one box of output indices at a time."""
    loop = plan.loop
    out_nd = out.reshape(loop.sizes[:loop.n_out])
    for box in _chunks(loop.sizes[:loop.n_out], plan.cost):
        out_nd[tuple(slice(a, b) for a, b in box)] = \
            np.broadcast_to(_compute(plan, bufs, box), [b - a for a, b in box])


def _compute(plan: StridedPlan, bufs: Sequence[np.ndarray], box: Box) -> np.ndarray:
    loop = plan.loop
    if plan.reduction is None:
        return _evaluate(plan.body, bufs, box)
    full = box + loop.full[loop.n_out:]
    if plan.einsum:
        acc = plan.einsum.run(bufs, full)
    else:
        body = np.broadcast_to(_evaluate(plan.body, bufs, full),
                               [b - a for a, b in full])
        acc = reduce_axes(plan.reduction.op, body, tuple(range(loop.n_out, len(full))),
                          plan.body.exp.dtype)
    return _evaluate(plan.epilogue, bufs, box, {ACC: acc})


def _evaluate(stage: Stage, bufs: Sequence[np.ndarray], box: Box,
              env: Optional[dict[str, np.ndarray]] = None) -> np.ndarray:
    env = dict(env or {})
    # NumPy runs its SIMD loops (which round some transcendentals differently from
    # the strided scalar ones) on contiguous input only: copy like a gather would
    env.update((sl.name, np.asarray(sl.read(bufs[sl.slot], box), order="C"))
               for sl in stage.loads)
    env.update((name, _axis_index(box, d)) for name, d in stage.axes)
    return evaluate(stage.exp, env)


def _axis_index(box: Box, axis: int) -> np.ndarray:
    """The loop index along `axis` over the box, shaped to broadcast."""
    a, b = box[axis]
    return np.arange(a, b, dtype=np.int32).reshape([b - a if d == axis else 1
                                                    for d in range(len(box))])


def _chunks(sizes: tuple[int, ...], cost: Callable[[Box], int]) -> Iterator[Box]:
    """Boxes covering the output: leading axes one index at a time until a run
    along the next axis fits in _CHUNK_ELEMENTS. A box's cost is affine in the run
    length (each term is a product over distinct axes), so two probes give it."""
    if not sizes:
        yield ()
        return
    k = next((k for k in range(len(sizes)) if cost(_run(sizes, k, 1)) <= _CHUNK_ELEMENTS),
             len(sizes) - 1)
    slope = cost(_run(sizes, k, 2)) - cost(_run(sizes, k, 1)) if sizes[k] > 1 else 0
    fixed = cost(_run(sizes, k, 1)) - slope
    step = sizes[k] if slope <= 0 else max(1, (_CHUNK_ELEMENTS - fixed) // slope)
    rest = tuple((0, n) for n in sizes[k + 1:])
    for lead in itertools.product(*(range(n) for n in sizes[:k])):
        for a in range(0, sizes[k], step):
            yield tuple((i, i + 1) for i in lead) + ((a, min(a + step, sizes[k])),) + rest


def _run(sizes: tuple[int, ...], k: int, length: int) -> Box:
    """The box of `length` indices along axis k, one index before it, all after it."""
    return tuple((0, 1) if d < k else (0, length) if d == k else (0, n)
                 for d, n in enumerate(sizes))
