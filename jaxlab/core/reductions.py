"""Reduction primitives: folds that become a kernel's Reduction, plus the
arg-reductions and cumulative scans composed from them."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlab.core.primitives import lowerings, primitive
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import reduce_identity

REDUCE_OPS = {"reduce_sum": AluOp.Add, "reduce_prod": AluOp.Mul,
              "reduce_max": AluOp.Max, "reduce_min": AluOp.Min}
reduce_prims = {name: primitive(name) for name in REDUCE_OPS}
argmax_p = primitive("argmax")
argmin_p = primitive("argmin")
CUMULATIVE_OPS = {"cumsum": AluOp.Add, "cumprod": AluOp.Mul,
                  "cummax": AluOp.Max, "cummin": AluOp.Min}
cumulative_prims = {name: primitive(name) for name in CUMULATIVE_OPS}


def _check_axes(name: str, x: Lazy, axes: Sequence[int]) -> None:
    for a in axes:
        if not 0 <= a < len(x.shape):
            raise ValueError(f"{name}: axis {a} is out of bounds for shape {x.shape}")


def _reduce_rule(name: str, op: AluOp):
    def rule(x: Lazy, *, axes: Sequence[int]) -> Lazy:
        _check_axes(name, x, axes)
        return lz.reduce(x, op, axes)
    return rule


for _name, _op in REDUCE_OPS.items():
    lowerings[reduce_prims[_name]] = _reduce_rule(_name, _op)


def iota(shape: Sequence[int], dimension: int, dtype: DType, device) -> Lazy:
    """0..n-1 along `dimension`, broadcast to `shape` (a small upload, then views)."""
    n = shape[dimension]
    line = lz.from_numpy(np.arange(n, dtype=dtype.np), dtype, device)
    ones = [1] * len(shape)
    ones[dimension] = n
    return lz.movement(lz.movement(line, "reshape", tuple(ones)), "expand", tuple(shape))


def _arg_reduce(op: AluOp, name: str):
    def rule(x: Lazy, *, axes: Sequence[int], index_dtype: DType) -> Lazy:
        _check_axes(name, x, axes)
        (axis,) = axes
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"{name}: attempt to get {name} of an empty sequence")
        best = lz.realize(lz.reduce(x, op, [axis]), f"{name}: compared with every element")
        keep = list(x.shape)
        keep[axis] = 1
        best_b = lz.movement(lz.movement(best, "reshape", tuple(keep)), "expand", x.shape)
        hit = lz.elementwise(AluOp.Cmpne, [x, best_b])
        hit = lz.elementwise(AluOp.Xor, [hit, lz.full(x.shape, True, DType.bool, x.device)])
        if x.dtype.is_float:   # the first NaN wins, as in NumPy
            is_nan = lz.elementwise(AluOp.Cmpne, [x, x])
            best_nan = lz.elementwise(AluOp.Cmpne, [best_b, best_b])
            hit = lz.elementwise(AluOp.Where, [best_nan, is_nan, hit])
        idx = iota(x.shape, axis, index_dtype, x.device)
        big = lz.full(x.shape, n, index_dtype, x.device)
        return lz.reduce(lz.elementwise(AluOp.Where, [hit, idx, big]), AluOp.Min, [axis])
    return rule


def scan(parts: Sequence[Lazy], combine: Callable[[list, list], list],
         identities: Sequence[Any], axis: int, reverse: bool, name: str) -> list[Lazy]:
    """Hillis-Steele inclusive scan of a value held as `parts` (one real array, or a
    complex value's re and im): log2(n) passes, each one fused kernel per part."""
    x = parts[0]
    _check_axes(name, x, [axis])
    n = x.shape[axis]
    ys = [lz.movement(p, "flip", (axis,)) if reverse else p for p in parts]
    fills = [lz.full(x.shape, v, p.dtype, x.device) for p, v in zip(parts, identities)]
    k = 1
    while k < n:
        ys = [lz.realize(y, f"{name}: one scan step reads it twice") for y in ys]
        pads = [(0, 0)] * len(x.shape)
        pads[axis] = (k, 0)
        bounds = [(0, s) for s in x.shape]
        bounds[axis] = (0, n)
        mask = lz.movement(lz.pad_mask(x.shape, pads, x.device), "shrink", tuple(bounds))
        shifted = [lz.elementwise(AluOp.Where, [mask, lz.movement(lz.movement(
            y, "pad", tuple(pads)), "shrink", tuple(bounds)), fill])
            for y, fill in zip(ys, fills)]
        ys = combine(ys, shifted)
        k *= 2
    return [lz.movement(y, "flip", (axis,)) if reverse else y for y in ys]


def _cumulative(op: AluOp, name: str):
    def rule(x: Lazy, *, axis: int, reverse: bool = False) -> Lazy:
        combine = lambda ys, shifted: [lz.elementwise(op, [ys[0], shifted[0]])]  # noqa: E731
        return scan([x], combine, [reduce_identity(op, x.dtype)], axis, reverse, name)[0]
    return rule


lowerings[argmax_p] = _arg_reduce(AluOp.Max, "argmax")
lowerings[argmin_p] = _arg_reduce(AluOp.Min, "argmin")
for _name, _op in CUMULATIVE_OPS.items():
    lowerings[cumulative_prims[_name]] = _cumulative(_op, _name)


# --- differentiation and batching rules --------------------------------------
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import batch_at_front, jvp_linear, jvp_zero  # noqa: E402


def _expand_back(y, shape, axes):
    """A reduced value broadcast back over the reduced axes."""
    from jaxlab.core.movement import broadcast_in_dim_p
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    return broadcast_in_dim_p.bind(y, shape=tuple(shape), broadcast_dimensions=kept)


def _jvp_extremum(prim):
    """The tangent at the extreme element(s), shared evenly between ties (as JAX)."""
    def rule(primals, tangents, *, axes):
        from jaxlab.core import rule_ops, values
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if not x.jdtype.is_float:
            return [out], [values.zeros_like(out)]
        hit = rule_ops.equal(x, _expand_back(out, x.shape, axes)).astype(x.dtype)
        total = reduce_prims["reduce_sum"].bind
        return [out], [total(t * hit, axes=axes) / total(hit, axes=axes)]
    return rule


def _jvp_prod(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prims["reduce_prod"].bind(x, axes=axes)
    return [out], [out * reduce_prims["reduce_sum"].bind(t / x, axes=axes)]


jvp_rules.update({
    reduce_prims["reduce_sum"]: jvp_linear(reduce_prims["reduce_sum"]),
    reduce_prims["reduce_max"]: _jvp_extremum(reduce_prims["reduce_max"]),
    reduce_prims["reduce_min"]: _jvp_extremum(reduce_prims["reduce_min"]),
    reduce_prims["reduce_prod"]: _jvp_prod,
    argmax_p: jvp_zero(argmax_p), argmin_p: jvp_zero(argmin_p),
    cumulative_prims["cumsum"]: jvp_linear(cumulative_prims["cumsum"]),
})
transpose_rules.update({
    reduce_prims["reduce_sum"]: lambda cts, x, *, axes: [_expand_back(cts[0], x.aval.shape, axes)],
    cumulative_prims["cumsum"]: lambda cts, x, *, axis, reverse=False: [
        cumulative_prims["cumsum"].bind(cts[0], axis=axis, reverse=not reverse)],
})

_shift_axes = lambda p, n: {**p, "axes": tuple(a + 1 for a in p["axes"])}  # noqa: E731
for _p in list(reduce_prims.values()) + [argmax_p, argmin_p]:
    batch_rules[_p] = batch_at_front(_p, _shift_axes)
for _p in cumulative_prims.values():
    batch_rules[_p] = batch_at_front(_p, lambda p, n: {**p, "axis": p["axis"] + 1})


def _jvp_cumprod(primals, tangents, *, axis, reverse=False):
    (x,), (t,) = primals, tangents
    out = cumulative_prims["cumprod"].bind(x, axis=axis, reverse=reverse)
    return [out], [out * cumulative_prims["cumsum"].bind(t / x, axis=axis, reverse=reverse)]


def _jvp_cum_extremum(name):
    """The tangent of the element holding the running extreme so far: the last
    position (in scan order) where x equalled its own running extreme."""
    def rule(primals, tangents, *, axis, reverse=False):
        from jaxlab.core import rule_ops
        from jaxlab.core.indexing import gather_along
        (x,), (t,) = primals, tangents
        out = cumulative_prims[name].bind(x, axis=axis, reverse=reverse)
        n = x.shape[axis]
        shape = [1] * x.ndim
        shape[axis] = n
        pos = rule_ops.broadcast_to(rule_ops.iota(n).reshape(shape), x.shape)
        # in reverse order the "last" position is the smallest index: scan -pos with max
        key = rule_ops.where(rule_ops.equal(x, out), -pos if reverse else pos, -n)
        last = cumulative_prims["cummax"].bind(key, axis=axis, reverse=reverse)
        return [out], [gather_along(t, -last if reverse else last, axis)]
    return rule


jvp_rules.update({cumulative_prims["cumprod"]: _jvp_cumprod,
                  cumulative_prims["cummax"]: _jvp_cum_extremum("cummax"),
                  cumulative_prims["cummin"]: _jvp_cum_extremum("cummin")})
