"""Movement primitives: each only rewrites views (no copies, no kernels)."""
from __future__ import annotations

import math
from typing import Any, Sequence

from jaxlab.core.primitives import lowerings, primitive, weak_preserving
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp

reshape_p = primitive("reshape")
transpose_p = primitive("transpose")
broadcast_in_dim_p = primitive("broadcast_in_dim")
pad_p = primitive("pad")
slice_p = primitive("slice")
rev_p = primitive("rev")
concatenate_p = primitive("concatenate")
# a value only moved keeps its weak type (JAX: broadcasting `2.0` stays weak)
weak_preserving.update({reshape_p, transpose_p, broadcast_in_dim_p})


def _reshape(x: Lazy, *, new_sizes: tuple[int, ...]) -> Lazy:
    if math.prod(new_sizes) != x.size or any(n < 0 for n in new_sizes):
        raise TypeError(f"cannot reshape array of shape {x.shape} (size {x.size}) "
                         f"into shape {tuple(new_sizes)}")
    return x if tuple(new_sizes) == x.shape else lz.movement(x, "reshape", tuple(new_sizes))


def _transpose(x: Lazy, *, permutation: Sequence[int]) -> Lazy:
    if sorted(permutation) != list(range(len(x.shape))):
        raise TypeError(f"transpose permutation {tuple(permutation)} is not a permutation "
                         f"of the axes of shape {x.shape}")
    if list(permutation) == list(range(len(x.shape))):
        return x
    return lz.movement(x, "permute", tuple(permutation))


def _broadcast_in_dim(x: Lazy, *, shape: Sequence[int],
                      broadcast_dimensions: Sequence[int]) -> Lazy:
    """Place x's dims at broadcast_dimensions of `shape`, the rest broadcast."""
    shape = tuple(shape)
    if len(broadcast_dimensions) != len(x.shape) or any(
            x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise TypeError(f"cannot broadcast shape {x.shape} to {shape} "
                         f"with broadcast_dimensions {tuple(broadcast_dimensions)}")
    ones = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        ones[d] = x.shape[i]
    y = _reshape(x, new_sizes=tuple(ones))
    return y if tuple(ones) == shape else lz.movement(y, "expand", shape)


def _pad(x: Lazy, padval: Lazy, *, padding_config: Sequence[tuple[int, int, int]]) -> Lazy:
    """lax.pad: (low, high, interior) per dim; negative low/high crop."""
    if len(padding_config) != len(x.shape):
        raise ValueError(f"pad: the padding config has {len(padding_config)} entries for an "
                         f"operand of shape {x.shape}: one (low, high, interior) per axis")
    if any(i < 0 for _, _, i in padding_config):
        raise ValueError("pad: interior padding must be non-negative")
    y = x
    if any(i for _, _, i in padding_config):   # interior: pad a trailing dim, then fold it
        y = _interior(y, [i for _, _, i in padding_config])
    crop = [(max(-lo, 0), n - max(-hi, 0)) for (lo, hi, _), n in zip(padding_config, y.shape)]
    if any(lo or hi != n for (lo, hi), n in zip(crop, y.shape)):
        y = lz.movement(y, "shrink", tuple(crop))
    pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config)
    if any(lo or hi for lo, hi in pads):
        padded = lz.movement(y, "pad", pads)
        fill = lz.movement(lz.movement(padval, "reshape", (1,) * len(y.shape)),
                           "expand", padded.shape)
        y = lz.elementwise(AluOp.Where, [lz.pad_mask(y.shape, pads, x.device), padded, fill])
    return y


def _interior(x: Lazy, interior: list[int]) -> Lazy:
    for d, k in enumerate(interior):
        if k == 0 or x.shape[d] == 0:
            continue
        n = x.shape[d]
        shape = list(x.shape)
        y = lz.movement(x, "reshape", tuple(shape[:d + 1] + [1] + shape[d + 1:]))
        pads = [(0, 0)] * len(y.shape)
        pads[d + 1] = (0, k)
        y = lz.movement(y, "pad", tuple(pads))
        y = lz.movement(y, "reshape", tuple(shape[:d] + [n * (k + 1)] + shape[d + 1:]))
        bounds = [(0, s) for s in y.shape]
        bounds[d] = (0, n * (k + 1) - k)
        x = lz.movement(y, "shrink", tuple(bounds))
    return x


def _slice(x: Lazy, *, start_indices: Sequence[int], limit_indices: Sequence[int],
           strides: Sequence[int] | None = None) -> Lazy:
    bounds = tuple(zip(start_indices, limit_indices))
    for (lo, hi), n in zip(bounds, x.shape):
        if not 0 <= lo <= hi <= n:
            raise TypeError(f"slice [{lo}:{hi}] out of range for dimension of size {n}")
    y = x if all(lo == 0 and hi == n for (lo, hi), n in zip(bounds, x.shape)) \
        else lz.movement(x, "shrink", bounds)
    if strides is not None and any(s != 1 for s in strides):
        if any(s < 1 for s in strides):
            raise ValueError(f"slice strides must be positive, got {tuple(strides)}")
        y = lz.movement(y, "step", tuple(strides))
    return y


def _rev(x: Lazy, *, dimensions: Sequence[int]) -> Lazy:
    return lz.movement(x, "flip", tuple(dimensions)) if dimensions else x


def _concatenate(*xs: Lazy, dimension: int) -> Lazy:
    """Each operand padded into place; a Where chain picks the one that is valid."""
    if not 0 <= dimension < len(xs[0].shape):
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {', '.join(str(x.shape) for x in xs)}")
    total = sum(x.shape[dimension] for x in xs)
    out = None
    start = 0
    for x in xs:
        n = x.shape[dimension]
        pads = [(0, 0)] * len(x.shape)
        pads[dimension] = (start, total - start - n)
        start += n
        if n == 0:
            continue
        placed = lz.movement(x, "pad", tuple(pads))
        if out is None:
            out = placed
            continue
        out = lz.elementwise(AluOp.Where, [lz.pad_mask(x.shape, pads, x.device), placed, out])
    if out is None:
        shape = list(xs[0].shape)
        shape[dimension] = 0
        return lz.full(tuple(shape), 0, xs[0].dtype, xs[0].device)
    return out


lowerings.update({
    reshape_p: _reshape, transpose_p: _transpose, broadcast_in_dim_p: _broadcast_in_dim,
    pad_p: _pad, slice_p: _slice, rev_p: _rev, concatenate_p: _concatenate,
})


# --- differentiation and batching rules --------------------------------------
from jaxlab.core.batching import move_to  # noqa: E402
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import batch_at_front, is_undef, jvp_linear  # noqa: E402

for _p in (reshape_p, transpose_p, broadcast_in_dim_p, pad_p, slice_p, rev_p, concatenate_p):
    jvp_rules[_p] = jvp_linear(_p)


def _zero_scalar(like: Any) -> Any:
    from jaxlab.core.values import full
    return full((), 0, like.aval.dtype if is_undef(like) else like.jdtype)


def _t_broadcast_in_dim(cts, x, *, shape, broadcast_dimensions):
    from jaxlab.core.reductions import reduce_prims
    (ct,) = cts
    in_shape = x.aval.shape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions] + \
        [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    out = reduce_prims["reduce_sum"].bind(ct, axes=tuple(sorted(summed))) if summed else ct
    return [reshape_p.bind(out, new_sizes=tuple(in_shape))]


def _t_pad(cts, x, padval, *, padding_config):
    from jaxlab.core.reductions import reduce_prims
    (ct,) = cts
    unpadded = pad_p.bind(ct, _zero_scalar(ct),
                          padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_x = slice_p.bind(unpadded, start_indices=(0,) * len(unpadded.shape),
                        limit_indices=unpadded.shape,
                        strides=tuple(i + 1 for _, _, i in padding_config))
    ct_pad = None
    if is_undef(padval):
        total = reduce_prims["reduce_sum"].bind
        axes = tuple(range(len(ct.shape)))
        ct_pad = total(ct, axes=axes) - total(ct_x, axes=axes)
    return [ct_x if is_undef(x) else None, ct_pad]


def _t_slice(cts, x, *, start_indices, limit_indices, strides=None):
    (ct,) = cts
    strides = strides or (1,) * len(start_indices)
    config = []
    for n, lo, m, s in zip(x.aval.shape, start_indices, ct.shape, strides):
        span = (m - 1) * s + 1 if m else 0
        config.append((lo, n - lo - span, s - 1 if m else 0))
    return [pad_p.bind(ct, _zero_scalar(ct), padding_config=tuple(config))]


def _t_concatenate(cts, *xs, dimension):
    (ct,) = cts
    out, start = [], 0
    for x in xs:
        shape = x.aval.shape if is_undef(x) else x.shape
        n = shape[dimension]
        if is_undef(x):
            lo = [0] * len(shape)
            lo[dimension] = start
            hi = list(ct.shape)
            hi[dimension] = start + n
            out.append(slice_p.bind(ct, start_indices=tuple(lo), limit_indices=tuple(hi)))
        else:
            out.append(None)
        start += n
    return out


transpose_rules.update({
    reshape_p: lambda cts, x, *, new_sizes: [reshape_p.bind(cts[0],
                                                             new_sizes=tuple(x.aval.shape))],
    transpose_p: lambda cts, x, *, permutation: [transpose_p.bind(
        cts[0], permutation=tuple(sorted(range(len(permutation)),
                                         key=lambda i: permutation[i])))],
    broadcast_in_dim_p: _t_broadcast_in_dim, pad_p: _t_pad, slice_p: _t_slice,
    rev_p: lambda cts, x, *, dimensions: [rev_p.bind(cts[0], dimensions=dimensions)],
    concatenate_p: _t_concatenate,
})


def _shift(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


def _b_pad(size, vals, dims, *, padding_config):
    x, padval = vals
    if dims[1] is not None:
        raise NotImplementedError("vmap of pad with a batched padding value")
    x = move_to(x, dims[0], 0, size)
    return [pad_p.bind(x, padval, padding_config=((0, 0, 0),) + tuple(padding_config))], [0]


def _b_slice(p: dict, n: int) -> dict:
    strides = p.get("strides")
    return dict(start_indices=(0,) + tuple(p["start_indices"]),
                limit_indices=(n,) + tuple(p["limit_indices"]),
                strides=None if strides is None else (1,) + tuple(strides))


batch_rules.update({
    reshape_p: batch_at_front(reshape_p, lambda p, n: dict(new_sizes=(n,) + tuple(p["new_sizes"]))),
    transpose_p: batch_at_front(transpose_p,
                                lambda p, n: dict(permutation=(0,) + _shift(p["permutation"]))),
    broadcast_in_dim_p: batch_at_front(broadcast_in_dim_p, lambda p, n: dict(
        shape=(n,) + tuple(p["shape"]),
        broadcast_dimensions=(0,) + _shift(p["broadcast_dimensions"]))),
    slice_p: batch_at_front(slice_p, _b_slice),
    rev_p: batch_at_front(rev_p, lambda p, n: dict(dimensions=_shift(p["dimensions"]))),
    concatenate_p: batch_at_front(concatenate_p, lambda p, n: dict(dimension=p["dimension"] + 1)),
    pad_p: _b_pad,
})
