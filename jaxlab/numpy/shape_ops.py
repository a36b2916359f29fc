"""Shape manipulation: views (movement primitives) wherever the result is one.

Selections along an axis are Python `range`s (what a slice selects): one
`slice` plus one `rev` primitive picks any arithmetic progression. Static
index patterns (pad's edge/reflect modes, roll, per-element repeat) are cut
into such runs and joined with `concatenate`; only patterns with too many
runs fall back to one gather.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from jaxlab.array import Array
from jaxlab.core import indexing, movement
from jaxlab.numpy._util import asarray_, astype_, broadcast_all, broadcast_to_, canonical_axes, \
    canonical_axis, canonical_shape, promote_dtypes
from jaxlab.numpy._util import broadcast_shapes as broadcast_shapes_, refuses_lists
from jaxlab.numpy.ufuncs import where

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
           "broadcast_to", "broadcast_shapes", "broadcast_arrays", "concatenate", "stack", "hstack", "vstack",
           "dstack", "split", "array_split", "tile", "repeat", "pad", "flip", "roll",
           "atleast_1d", "atleast_2d", "atleast_3d"]

# More runs than this and a static pattern is one gather instead of a concatenate chain.
_MAX_RUNS = 8


def _resolve_shape(size: int, newshape: Any) -> tuple[int, ...]:
    dims = canonical_shape(newshape)
    if dims.count(-1) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {dims}")
        dims = tuple(size // known if d == -1 else d for d in dims)
    return dims


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Array:
    """`copy` has no effect: arrays are immutable, so a copy and a view are alike."""
    a = asarray_(a)
    if order != "C":
        raise NotImplementedError("reshape supports order='C' only")
    shape = newshape if shape is None else shape
    return movement.reshape_p.bind(a, new_sizes=_resolve_shape(a.size, shape))


def ravel(a: Any) -> Array:
    return reshape(a, (-1,))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Array:
    a = asarray_(a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else \
        tuple(canonical_axis(x, a.ndim) for x in axes)
    if perm == tuple(range(a.ndim)):   # as lax.transpose: the identity moves nothing
        return a
    return movement.transpose_p.bind(a, permutation=perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> Array:
    a = asarray_(a)
    perm = list(range(a.ndim))
    i, j = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    perm[i], perm[j] = j, i
    return transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Array:
    a = asarray_(a)
    src, dst = canonical_axes(source, a.ndim), canonical_axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} "
                         f"must have the same number of elements")
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Array:
    a = asarray_(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    where = sorted(canonical_axes(axes, a.ndim + len(axes)))
    shape = list(a.shape)
    for w in where:
        shape.insert(w, 1)
    return reshape(a, shape)


def squeeze(a: Any, axis: Any = None) -> Array:
    a = asarray_(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
    else:
        axes = canonical_axes(axis, a.ndim)
        for x in axes:
            if a.shape[x] != 1:
                raise ValueError(f"cannot squeeze axis {x} of size {a.shape[x]} "
                                 f"(shape {a.shape})")
    return reshape(a, tuple(n for i, n in enumerate(a.shape) if i not in axes))


def broadcast_to(a: Any, shape: Sequence[int]) -> Array:
    return broadcast_to_(asarray_(a), canonical_shape(shape))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape arrays of these shapes broadcast to (ValueError if they do not)."""
    shapes = [tuple(canonical_shape(s)) for s in shapes]
    try:
        return broadcast_shapes_(*shapes)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def broadcast_arrays(*args: Any) -> tuple[Array, ...]:
    """A tuple, as the Array API standard (2025.12) says; JAX gives a list."""
    return tuple(broadcast_all(*(asarray_(a) for a in args)))


# --- selections: ranges along axes --------------------------------------------

def _bounds(r: range) -> tuple[int, int]:
    """[lo, hi) around the positions of r (empty ranges select [0, 0))."""
    return (min(r[0], r[-1]), max(r[0], r[-1]) + 1) if r else (0, 0)


def select_ranges(a: Array, ranges: Sequence[range]) -> Array:
    """a at positions ranges[d] along every dim d: one slice, then one rev for
    the descending ranges."""
    lo, hi = zip(*(_bounds(r) for r in ranges)) if ranges else ((), ())
    out = movement.slice_p.bind(a, start_indices=lo, limit_indices=hi,
                                strides=tuple(abs(r.step) for r in ranges))
    return movement.rev_p.bind(out, dimensions=_descending(ranges))


def _descending(ranges: Sequence[range]) -> tuple[int, ...]:
    return tuple(d for d, r in enumerate(ranges) if r.step < 0 and len(r) > 1)


def place_ranges(base: Array, ranges: Sequence[range], part: Array) -> Array:
    """base with `part` written where select_ranges(base, ranges) reads: part
    padded into place (interior padding for steps), then one select."""
    if all(r == range(n) for r, n in zip(ranges, base.shape)):
        return part
    if part.size == 0:
        return base
    part = movement.rev_p.bind(part, dimensions=_descending(ranges))
    config = [(lo, n - hi, abs(r.step) - 1)
              for r, n, (lo, hi) in zip(ranges, base.shape, map(_bounds, ranges))]
    inside = _pad_with(broadcast_to_(asarray_(True), part.shape), config, False)
    return where(inside, _pad_with(part, config, 0), base)


def _along(a: Array, axis: int, r: range) -> Array:
    return select_ranges(a, [r if d == axis else range(n) for d, n in enumerate(a.shape)])


def _runs(idx: Sequence[int]) -> list[tuple[int, int, int]]:
    """Static indices as arithmetic runs (first, step, count), greedily."""
    runs, i = [], 0
    while i < len(idx):
        step = int(idx[i + 1] - idx[i]) if i + 1 < len(idx) else 1
        j = i + 1
        while j < len(idx) and idx[j] - idx[j - 1] == step:
            j += 1
        runs.append((int(idx[i]), step, j - i))
        i = j
    return runs or [(0, 1, 0)]


def _run(a: Array, axis: int, first: int, step: int, count: int) -> Array:
    if step:
        return _along(a, axis, range(first, first + step * count, step))
    one = _along(a, axis, range(first, first + 1))   # a repeated element: broadcast it
    return broadcast_to_(one, a.shape[:axis] + (count,) + a.shape[axis + 1:])


def take_static(a: Array, axis: int, idx: Sequence[int]) -> Array:
    """a's slices at static in-range positions `idx` along `axis`."""
    runs = _runs(idx)
    if len(runs) > _MAX_RUNS:
        return indexing.gather_p.bind(a, asarray_(np.asarray(idx, np.int32)), axis=axis)
    return concatenate([_run(a, axis, *run) for run in runs], axis=axis)


# --- joining and splitting ----------------------------------------------------

def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Array:
    if not len(arrays):
        raise ValueError("need at least one array to concatenate")
    dt = promote_dtypes(*arrays)
    xs = [asarray_(a, dt) for a in arrays]
    if axis is None:
        xs, axis = [ravel(x) for x in xs], 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = canonical_axis(axis, xs[0].ndim)
    for x in xs[1:]:
        if x.ndim != xs[0].ndim or any(n != m for i, (n, m) in enumerate(zip(x.shape, xs[0].shape))
                                       if i != axis):
            raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated: {[y.shape for y in xs]} "
                            f"(axis {axis})")
    return xs[0] if len(xs) == 1 else movement.concatenate_p.bind(*xs, dimension=axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Array:
    if not len(arrays):
        raise ValueError("need at least one array to stack")
    xs = [asarray_(a) for a in arrays]
    if len({x.shape for x in xs}) != 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got "
                         f"{[x.shape for x in xs]}")
    axis = canonical_axis(axis, xs[0].ndim + 1)
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)


# (wanted ndim, ndim) -> the new shape, with the new axes where NumPy puts them
_ATLEAST = {
    (1, 0): lambda s: (1,),
    (2, 0): lambda s: (1, 1), (2, 1): lambda s: (1,) + s,
    (3, 0): lambda s: (1, 1, 1), (3, 1): lambda s: (1,) + s + (1,), (3, 2): lambda s: s + (1,),
}


def _atleast(a: Any, ndim: int) -> Array:
    a = asarray_(a)
    grow = _ATLEAST.get((ndim, a.ndim))
    return a if grow is None else reshape(a, grow(a.shape))


def _atleast_fn(ndim: int):
    def fn(*arys: Any) -> Array | list[Array]:
        out = [_atleast(a, ndim) for a in arys]
        return out[0] if len(out) == 1 else out
    fn.__name__ = fn.__qualname__ = f"atleast_{ndim}d"
    fn.__doc__ = f"Each input viewed with at least {ndim} dims, as jax.numpy.atleast_{ndim}d."
    return fn


atleast_1d, atleast_2d, atleast_3d = (_atleast_fn(n) for n in (1, 2, 3))


def hstack(tup: Sequence[Any]) -> Array:
    xs = [_atleast(a, 1) for a in tup]
    return concatenate(xs, axis=0 if xs and xs[0].ndim == 1 else 1)


def vstack(tup: Sequence[Any]) -> Array:
    return concatenate([_atleast(a, 2) for a in tup], axis=0)


def dstack(tup: Sequence[Any]) -> Array:
    return concatenate([_atleast(a, 3) for a in tup], axis=2)


def _split(ary: Any, spec: Any, axis: int, equal: bool) -> list[Array]:
    a = asarray_(ary)
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if np.ndim(spec) == 0:
        k = operator.index(spec)
        if k <= 0:
            raise ValueError(f"number of sections must be larger than 0, got {k}")
        if equal and n % k:
            raise ValueError(f"array split does not result in an equal division: axis {axis} "
                             f"of size {n} into {k} sections")
        q, r = divmod(n, k)
        edges = np.cumsum([0] + [q + 1] * r + [q] * (k - r)).tolist()
    else:   # split points, with slicing's meaning for negative and large ones
        edges = [0, *(operator.index(i) for i in spec), n]
    return [_along(a, axis, range(*slice(lo, hi).indices(n))) for lo, hi in zip(edges, edges[1:])]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """Views of equal sections (an int) or between split points (a sequence)."""
    return _split(ary, indices_or_sections, axis, equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Array]:
    """As split, but n sections of unequal size are allowed (the first ones are longer)."""
    return _split(ary, indices_or_sections, axis, equal=False)


# --- repetition -----------------------------------------------------------------

def _replicate(a: Array, axis: int, r: int, whole: bool) -> Array:
    """Each element along axis r times (repeat), or the whole axis r times (tile):
    a new broadcast axis beside it, merged in."""
    s = a.shape
    at = axis if whole else axis + 1
    b = broadcast_to_(expand_dims(a, at), s[:at] + (r,) + s[at:])
    return reshape(b, s[:axis] + (s[axis] * r,) + s[axis + 1:])


def _counts(reps: Any, what: str) -> np.ndarray:
    counts = np.asarray(reps)
    if counts.dtype.kind not in "iu" and counts.size:
        raise TypeError(f"{what} must be integers, got {counts.dtype}")
    counts = counts.astype(np.int64)
    if (counts < 0).any():
        raise TypeError(f"{what} must be non-negative, got {reps}")
    return counts


def tile(A: Any, reps: Any) -> Array:
    a = asarray_(A)
    reps = tuple(_counts(reps, "tile reps").reshape(-1).tolist())
    nd = max(a.ndim, len(reps))
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    for axis, r in enumerate((1,) * (nd - len(reps)) + reps):
        a = _replicate(a, axis, r, whole=True)
    return a


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Array:
    """Repeat elements; per-element `repeats` must be static (concrete), as in JAX."""
    a = asarray_(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    counts = _counts(repeats, "repeats")
    if counts.ndim == 0:
        return _replicate(a, axis, int(counts), whole=False)
    n = a.shape[axis]
    if counts.shape not in ((1,), (n,)):
        raise ValueError(f"repeats of shape {counts.shape} do not match axis {axis} of size {n}")
    return take_static(a, axis, np.repeat(np.arange(n), np.broadcast_to(counts, (n,))))


# --- padding, flipping, rolling -----------------------------------------------

def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    w = np.asarray(pad_width)
    if w.dtype.kind not in "iu":
        raise TypeError(f"pad_width must be integers, got {pad_width!r}")
    try:
        w = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad_width {pad_width!r} does not fit an array of {ndim} "
                         f"dimensions: use an int, (before, after) or one pair per axis") from None
    if (w < 0).any():
        raise ValueError(f"pad_width must be non-negative, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in w]


def _pad_with(a: Array, config: Sequence[tuple[int, int, int]], value: Any) -> Array:
    return movement.pad_p.bind(a, astype_(asarray_(value), a.jdtype),
                               padding_config=tuple(config))


def _pad_constant(a: Array, widths: list[tuple[int, int]], values: Any) -> Array:
    if np.ndim(values) == 0:
        return _pad_with(a, [(lo, hi, 0) for lo, hi in widths], values)
    per_axis = np.broadcast_to(np.asarray(values), (a.ndim, 2))
    for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, per_axis)):
        # axis by axis like NumPy, so a corner takes the value of the later axis
        for side, value in (((lo, 0, 0), vlo), ((0, hi, 0), vhi)):
            a = _pad_with(a, [side if d == axis else (0, 0, 0) for d in range(a.ndim)], value)
    return a


# The modes where each padded position copies one input position along its axis.
_INDEX_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array: Any, pad_width: Any, mode: str = "constant", *, constant_values: Any = 0) -> Array:
    """NumPy's pad for modes constant, edge, reflect, symmetric and wrap (views
    and selects, no gather for the usual widths)."""
    a = asarray_(array)
    widths = _pad_widths(pad_width, a.ndim)
    if mode == "constant":
        return _pad_constant(a, widths, constant_values)
    if mode not in _INDEX_PAD_MODES:
        raise NotImplementedError(f"pad mode {mode!r}; supported: constant, "
                                  f"{', '.join(_INDEX_PAD_MODES)}")
    for axis, (lo, hi) in enumerate(widths):
        if (lo or hi) and not a.shape[axis]:
            raise ValueError(f"can't extend empty axis {axis} using mode {mode!r}")
        a = take_static(a, axis, np.pad(np.arange(a.shape[axis]), (lo, hi), mode=mode))
    return a


def flip(m: Any, axis: Any = None) -> Array:
    m = asarray_(m)
    return movement.rev_p.bind(m, dimensions=canonical_axes(axis, m.ndim))


def roll(a: Any, shift: Any, axis: Any = None) -> Array:
    """Static shifts; several axes (or a repeated one) roll one after another."""
    a = asarray_(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts, axes = np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis))
    if shifts.ndim != 1:
        raise ValueError(f"roll: shift {shift} and axis {axis} must be ints or 1-d sequences")
    total = [0] * a.ndim
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        total[canonical_axis(ax, a.ndim)] += s
    for ax, s in enumerate(total):
        a = take_static(a, ax, np.roll(np.arange(a.shape[ax]), s))
    return a

# as JAX: lists and tuples are not arrays here (jnp.asarray converts them)
globals().update({name: refuses_lists(globals()[name]) for name in (
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays")})
globals().update({name: refuses_lists(globals()[name], 1) for name in (
    "ravel", "flip", "squeeze", "transpose", "swapaxes", "moveaxis", "expand_dims",
    "broadcast_to", "repeat", "tile", "roll")})
