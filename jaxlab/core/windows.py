"""windows: the overlapping view that convolutions and pooling read.

windows(x, axes, sizes, strides, dilation) turns each listed axis of length n
into two axes (positions, offsets in the window) without copying. A conv is
then a dot_general over (channels, window offsets), and a pool a reduction
over the offsets, so both fuse into one kernel and inherit every rule.
"""
from __future__ import annotations

from typing import Sequence

from jaxlab.core.primitives import batch_rules, jvp_rules, lowerings, primitive, transpose_rules
from jaxlab.core.rule_helpers import batch_at_front, jvp_linear
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp

windows_p = primitive("windows")


def _lower(x: Lazy, *, axes: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
           dilation: Sequence[int]) -> Lazy:
    for a, k in zip(axes, sizes):
        if k < 1 or (k - 1) * dilation[axes.index(a)] + 1 > x.shape[a]:
            raise ValueError(f"window of size {k} (dilation {dilation[axes.index(a)]}) does "
                             f"not fit axis {a} of shape {x.shape}")
    if x.exp.op is not AluOp.GlobalView or x.exp.arg[1].views[-1].mask is not None:
        x = lz.realize(x, "input of a windowed op (conv or pool) read many times")
    return lz.movement(x, "window", tuple(axes), tuple(sizes), tuple(strides), tuple(dilation))


def _transpose(cts, x, *, axes, sizes, strides, dilation):
    """Overlapping windows add up: place each window offset's slice back with pad."""
    from jaxlab.core.movement import pad_p, slice_p
    from jaxlab.core.values import full
    (ct,) = cts
    in_shape = x.aval.shape
    out_axes = {a: a + i for i, a in enumerate(sorted(axes))}   # position axis in ct
    total = None
    for offsets in _offsets(sizes):
        start = [0] * len(ct.shape)
        limit = list(ct.shape)
        for a, o in zip(axes, offsets):
            start[out_axes[a] + 1], limit[out_axes[a] + 1] = o, o + 1
        piece = slice_p.bind(ct, start_indices=tuple(start), limit_indices=tuple(limit))
        piece = piece.reshape(tuple(n for i, n in enumerate(ct.shape)
                                    if i - 1 not in out_axes.values()))
        config = []
        for a, n in enumerate(in_shape):
            if a in out_axes:
                i = list(axes).index(a)
                m, s, d = piece.shape[a], strides[i], dilation[i]
                lo = offsets[i] * d
                span = (m - 1) * s + 1 if m else 0
                config.append((lo, n - lo - span, s - 1 if m else 0))
            else:
                config.append((0, 0, 0))
        placed = pad_p.bind(piece, full((), 0, piece.jdtype), padding_config=tuple(config))
        total = placed if total is None else total + placed
    return [total]


def _offsets(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for k in sizes:
        out = [o + (i,) for o in out for i in range(k)]
    return out


lowerings[windows_p] = _lower
jvp_rules[windows_p] = jvp_linear(windows_p)
transpose_rules[windows_p] = _transpose
batch_rules[windows_p] = batch_at_front(
    windows_p, lambda p, n: {**p, "axes": tuple(a + 1 for a in p["axes"])})
