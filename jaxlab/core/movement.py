"""Movement primitives: each only rewrites views (no copies, no kernels)."""
from __future__ import annotations

import math
from typing import Sequence

from jaxlab.core.primitives import lowerings, primitive
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


def _reshape(x: Lazy, *, new_sizes: tuple[int, ...]) -> Lazy:
    if math.prod(new_sizes) != x.size or any(n < 0 for n in new_sizes):
        raise ValueError(f"cannot reshape array of shape {x.shape} (size {x.size}) "
                         f"into shape {tuple(new_sizes)}")
    return x if tuple(new_sizes) == x.shape else lz.movement(x, "reshape", tuple(new_sizes))


def _transpose(x: Lazy, *, permutation: Sequence[int]) -> Lazy:
    if sorted(permutation) != list(range(len(x.shape))):
        raise ValueError(f"transpose permutation {tuple(permutation)} is not a permutation "
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
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape} "
                         f"with broadcast_dimensions {tuple(broadcast_dimensions)}")
    ones = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        ones[d] = x.shape[i]
    y = _reshape(x, new_sizes=tuple(ones))
    return y if tuple(ones) == shape else lz.movement(y, "expand", shape)


def _pad(x: Lazy, padval: Lazy, *, padding_config: Sequence[tuple[int, int, int]]) -> Lazy:
    """lax.pad: (low, high, interior) per dim; negative low/high crop."""
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
            raise IndexError(f"slice [{lo}:{hi}] out of range for dimension of size {n}")
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
