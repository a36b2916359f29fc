"""Reduction primitives: folds that become a kernel's Reduction, plus the
arg-reductions and cumulative scans composed from them."""
from __future__ import annotations

from typing import Sequence

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
        best = lz.realize(lz.reduce(x, op, [axis]))
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


def _cumulative(op: AluOp, name: str):
    def rule(x: Lazy, *, axis: int, reverse: bool = False) -> Lazy:
        """Hillis-Steele scan: log2(n) passes, each one fused kernel."""
        _check_axes(name, x, [axis])
        n = x.shape[axis]
        y = lz.movement(x, "flip", (axis,)) if reverse else x
        ident = lz.full(x.shape, reduce_identity(op, x.dtype), x.dtype, x.device)
        k = 1
        while k < n:
            y = lz.realize(y)
            pads = [(0, 0)] * len(x.shape)
            pads[axis] = (k, 0)
            bounds = [(0, s) for s in x.shape]
            bounds[axis] = (0, n)
            shifted = lz.movement(lz.movement(y, "pad", tuple(pads)), "shrink", tuple(bounds))
            mask = lz.movement(lz.pad_mask(x.shape, pads, x.device), "shrink", tuple(bounds))
            y = lz.elementwise(op, [y, lz.elementwise(AluOp.Where, [mask, shifted, ident])])
            k *= 2
        return lz.movement(y, "flip", (axis,)) if reverse else y
    return rule


lowerings[argmax_p] = _arg_reduce(AluOp.Max, "argmax")
lowerings[argmin_p] = _arg_reduce(AluOp.Min, "argmin")
for _name, _op in CUMULATIVE_OPS.items():
    lowerings[cumulative_prims[_name]] = _cumulative(_op, _name)
