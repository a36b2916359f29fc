"""gather (x[idx] along one axis) and scatter (x.at[idx].op(updates)).

A gather is a load whose index is computed from another array's values, so it
fuses like any elementwise op. A scatter is a reduction over the updates for
each output element (which handles repeated indices the way JAX does), with
the combine against x as its epilogue.
"""
from __future__ import annotations

import math

from jaxlab.core.primitives import lowerings, primitive
from jaxlab.core.reductions import iota
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import reduce_identity

gather_p = primitive("gather")
scatter_p = primitive("scatter")
SCATTER_MODES = {"set": None, "add": AluOp.Add, "multiply": AluOp.Mul,
                 "min": AluOp.Min, "max": AluOp.Max}


def _split(shape: tuple, axis: int) -> tuple[int, int, int]:
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _i32(x: Lazy) -> Lazy:
    if x.dtype.is_float or x.dtype.is_bool:
        raise TypeError(f"indices must be integers, got {x.dtype}")
    return lz.cast(x, DType.int32)


def _gather(x: Lazy, idx: Lazy, *, axis: int) -> Lazy:
    """out[pre, i..., post] = x[pre, clamp(idx[i...]), post]; indices clamp as in JAX."""
    idx = _i32(idx)
    p, n, q = _split(x.shape, axis)
    k = idx.size
    out_shape = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if n == 0 and math.prod(out_shape) > 0:
        raise IndexError(f"gather from an empty axis {axis} of shape {x.shape}")
    src = lz.realize(x, "gather source")
    cube = (p, k, q)
    i_pre = iota(cube, 0, DType.int32, x.device)
    i_post = iota(cube, 2, DType.int32, x.device)
    j = lz.movement(lz.movement(idx, "reshape", (1, k, 1)), "expand", cube)
    j = lz.elementwise(AluOp.Max, [lz.elementwise(AluOp.Min, [j, lz.full(cube, max(n - 1, 0),
                                                                       DType.int32, x.device)]),
                                   lz.full(cube, 0, DType.int32, x.device)])
    flat = _affine(i_pre, n * q, j, q, i_post)
    load = AluExp(AluOp.GlobalIndex, x.dtype, (flat.exp,), src.buffer)
    out = Lazy(cube, x.dtype, x.device, load, flat.pending)
    return lz.movement(out, "reshape", out_shape)


def _affine(a: Lazy, sa: int, b: Lazy, sb: int, c: Lazy) -> Lazy:
    def times(x: Lazy, s: int) -> Lazy:
        return lz.elementwise(AluOp.Mul, [x, lz.full(x.shape, s, DType.int32, x.device)])
    return lz.elementwise(AluOp.Add, [lz.elementwise(AluOp.Add, [times(a, sa), times(b, sb)]), c])


def _scatter(x: Lazy, idx: Lazy, upd: Lazy, *, axis: int, mode: str) -> Lazy:
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter mode {mode!r}; expected one of {', '.join(SCATTER_MODES)}")
    idx = _i32(idx)
    p, n, q = _split(x.shape, axis)
    k = idx.size
    want = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if upd.shape != want:
        raise ValueError(f"scatter: updates of shape {upd.shape}, expected {want}")
    upd = lz.cast(upd, x.dtype)
    if k == 0 or x.size == 0:
        return x
    box = (p, n, q, k)
    j = iota(box, 1, DType.int32, x.device)
    kk = lz.movement(lz.movement(idx, "reshape", (1, 1, 1, k)), "expand", box)
    hit = lz.elementwise(AluOp.Xor, [lz.elementwise(AluOp.Cmpne, [j, kk]),
                                     lz.full(box, True, DType.bool, x.device)])
    if mode == "set":   # the last update to each position wins
        k_iota = iota(box, 3, DType.int32, x.device)
        none = lz.full(box, -1, DType.int32, x.device)
        last = lz.realize(lz.reduce(lz.elementwise(AluOp.Where, [hit, k_iota, none]),
                                    AluOp.Max, [3]), "scatter: the last update per position")
        found = lz.elementwise(AluOp.Cmplt, [lz.full(last.shape, -1, DType.int32, x.device),
                                             last])
        u3 = lz.movement(upd, "reshape", (p, k, q))
        u3 = lz.movement(u3, "permute", (0, 2, 1))           # (p, q, k)
        taken = _gather_rows(u3, last)                        # (p, n, q)
        x3 = lz.movement(x, "reshape", (p, n, q))
        out = lz.elementwise(AluOp.Where, [found, taken, x3])
        return lz.movement(out, "reshape", x.shape)
    op = SCATTER_MODES[mode]
    u4 = lz.movement(lz.movement(upd, "reshape", (p, k, q)), "permute", (0, 2, 1))
    u4 = lz.movement(lz.movement(u4, "reshape", (p, 1, q, k)), "expand", box)
    ident = lz.full(box, reduce_identity(op, x.dtype), x.dtype, x.device)
    folded = lz.reduce(lz.elementwise(AluOp.Where, [hit, u4, ident]), op, [3])
    x3 = lz.movement(x, "reshape", (p, n, q))
    return lz.movement(lz.elementwise(op, [folded, x3]), "reshape", x.shape)


def _gather_rows(u: Lazy, which: Lazy) -> Lazy:
    """u (p, q, k), which (p, n, q) in [-1, k): u[p, q, max(which, 0)] as (p, n, q)."""
    p, q, k = u.shape
    src = lz.realize(u, "gather source")
    i_p = iota(which.shape, 0, DType.int32, u.device)
    i_q = iota(which.shape, 2, DType.int32, u.device)
    w = lz.elementwise(AluOp.Max, [which, lz.full(which.shape, 0, DType.int32, u.device)])
    flat = _affine(i_p, q * k, i_q, k, w)
    return Lazy(which.shape, u.dtype, u.device,
                AluExp(AluOp.GlobalIndex, u.dtype, (flat.exp,), src.buffer), flat.pending)


lowerings.update({gather_p: _gather, scatter_p: _scatter})


# --- differentiation and batching rules --------------------------------------
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import is_undef  # noqa: E402


def gather_along(x, idx, axis: int):
    """take_along_axis: out[..., i, ...] = x[..., idx[..., i, ...], ...] along `axis`."""
    from jaxlab.core import rule_ops
    axis %= x.ndim
    xm, im = rule_ops.moveaxis(x, axis, -1), rule_ops.moveaxis(idx, axis, -1)
    n, rows = xm.shape[-1], math.prod(xm.shape[:-1])
    flat_idx = rule_ops.iota(rows).reshape(im.shape[:-1] + (1,)) * n + im
    out = gather_p.bind(xm.reshape(-1), flat_idx.reshape(-1), axis=0)
    return rule_ops.moveaxis(out.reshape(im.shape), -1, axis)


def _jvp_gather(primals, tangents, *, axis):
    (x, idx), (t, _) = primals, tangents
    return [gather_p.bind(x, idx, axis=axis)], [gather_p.bind(t, idx, axis=axis)]


def _t_gather(cts, x, idx, *, axis):
    from jaxlab.core.values import full
    (ct,) = cts
    base = full(x.aval.shape, 0, x.aval.dtype)
    return [scatter_p.bind(base, idx, ct, axis=axis, mode="add"), None]


def _jvp_scatter(primals, tangents, *, axis, mode):
    (x, idx, upd), (tx, _, tu) = primals, tangents
    out = scatter_p.bind(x, idx, upd, axis=axis, mode=mode)
    if mode in ("max", "min"):
        return [out], [_extremal_tangent(out, x, idx, upd, tx, tu, axis)]
    if mode not in ("add", "set"):
        raise NotImplementedError(f"differentiation of scatter mode {mode!r}")
    return [out], [scatter_p.bind(tx, idx, tu, axis=axis, mode=mode)]


def _landed_cotangent(ct, idx, axis: int):
    """ct where each update landed; zero for the updates dropped (their index out of
    range: a gather would read the clamped neighbour's)."""
    from jaxlab.core import rule_ops
    from jaxlab.core.elementwise import binary_prims
    from jaxlab.core.movement import broadcast_in_dim_p
    out = gather_p.bind(ct, idx, axis=axis)
    inside = binary_prims["and"].bind(rule_ops.greater(idx, -1),
                                      rule_ops.less(idx, ct.shape[axis]))
    inside = broadcast_in_dim_p.bind(inside, shape=tuple(out.shape),
                                     broadcast_dimensions=tuple(range(axis, axis + idx.ndim)))
    return rule_ops.where(inside, out, 0)


def _extremal_tangent(out, x, idx, upd, tx, tu, axis: int):
    """A scatter-max (min)'s tangent: at each place, the mean of the tangents of the
    values that equal the result there (x's own and the updates'), as JAX's: ties share."""
    from jaxlab.core import rule_ops
    from jaxlab.core.values import full, zeros_like

    def hits(a, b):
        return rule_ops.where(rule_ops.equal(a, b), full(a.shape, 1, tx.jdtype),
                              full(a.shape, 0, tx.jdtype))
    x_hit = hits(x, out)
    u_hit = hits(upd, gather_p.bind(out, idx, axis=axis))
    count = x_hit + scatter_p.bind(zeros_like(tx), idx, u_hit, axis=axis, mode="add")
    total = x_hit * tx + scatter_p.bind(zeros_like(tx), idx, u_hit * tu, axis=axis, mode="add")
    return total / count


def _t_scatter(cts, x, idx, upd, *, axis, mode):
    (ct,) = cts
    if mode == "add":
        return [ct if is_undef(x) else None, None,
                _landed_cotangent(ct, idx, axis) if is_undef(upd) else None]
    # set: x's cotangent is masked where updates landed; updates take theirs
    from jaxlab.core.values import full, zeros_like
    landed = scatter_p.bind(zeros_like(ct), idx, full(_aval_shape(upd), 1, ct.jdtype),
                            axis=axis, mode="set")
    return [ct * (1.0 - landed) if is_undef(x) else None, None,
            _landed_cotangent(ct, idx, axis) if is_undef(upd) else None]


def _aval_shape(v) -> tuple:
    return v.aval.shape if is_undef(v) else v.shape


def _b_gather(size, vals, dims, *, axis):
    """Batched x and/or indices: fold the batch into the gathered axis."""
    from jaxlab.core import rule_ops
    from jaxlab.core.batching import move_to
    x, idx = vals
    xd, idd = dims
    if xd is None:   # only the indices vary: their batch axis lands inside the output
        return [gather_p.bind(x, move_to(idx, idd, 0, size), axis=axis)], [axis]
    x = move_to(x, xd, 0, size)
    if idd is None:
        return [gather_p.bind(x, idx, axis=axis + 1)], [0]
    idx = move_to(idx, idd, 0, size)
    n = x.shape[axis + 1]
    xm = rule_ops.moveaxis(x, 0, axis)                 # (..., B, N, ...)
    merged = xm.reshape(xm.shape[:axis] + (size * n,) + xm.shape[axis + 2:])
    offsets = (rule_ops.iota(size) * n).reshape((size,) + (1,) * (idx.ndim - 1))
    clamped = rule_ops.clip(idx.astype(DType.int32), 0, n - 1) + offsets
    return [gather_p.bind(merged, clamped, axis=axis)], [axis]


def _b_scatter(size, vals, dims, *, axis, mode):
    """Fold the batch into the scattered axis of x, indices offset per batch row."""
    from jaxlab.core import rule_ops
    from jaxlab.core.batching import move_to
    x, idx, upd = (move_to(v, d, 0, size) for v, d in zip(vals, dims))
    n = x.shape[axis + 1]
    xm = rule_ops.moveaxis(x, 0, axis)
    merged = xm.reshape(xm.shape[:axis] + (size * n,) + xm.shape[axis + 2:])
    offsets = (rule_ops.iota(size) * n).reshape((size,) + (1,) * (idx.ndim - 1))
    idx = idx.astype(DType.int32)
    # out-of-range indices must stay out of range after the offset (they are dropped)
    safe = rule_ops.where((idx >= 0) & (idx < n), idx + offsets, -1)
    um = rule_ops.moveaxis(upd, 0, axis)               # (..., B, I..., ...)
    out = scatter_p.bind(merged, safe, um, axis=axis, mode=mode)
    out = out.reshape(xm.shape)
    return [rule_ops.moveaxis(out, axis, 0)], [0]


jvp_rules.update({gather_p: _jvp_gather, scatter_p: _jvp_scatter})
transpose_rules.update({gather_p: _t_gather, scatter_p: _t_scatter})
batch_rules.update({gather_p: _b_gather, scatter_p: _b_scatter})
