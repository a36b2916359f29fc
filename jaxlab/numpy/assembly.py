"""Assembling and cutting arrays: append, insert, delete, block, column_stack, hsplit,
vsplit, dsplit, resize, trim_zeros. Positions are static (concrete), as the result's shape
depends on them."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from jaxlab.array import Array
from jaxlab.numpy import creation, shape_ops
from jaxlab.numpy._util import (arraylike_, asarray_, canonical_axis, promote_dtypes,
                                static_shape)
from jaxlab.numpy.shape_ops import take_static

__all__ = ["append", "insert", "delete", "block", "column_stack", "hsplit", "vsplit",
           "dsplit", "resize", "trim_zeros"]


def append(arr: Any, values: Any, axis: Optional[int] = None) -> Array:
    """arr with values added at the end (both flattened when axis is None)."""
    a, v = arraylike_("append", arr), arraylike_("append", values, 1)
    if axis is None:
        return shape_ops.concatenate([shape_ops.ravel(a), shape_ops.ravel(v)])
    if a.ndim != v.ndim:
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: "
                        f"got {a.shape}, {v.shape}.")
    return shape_ops.concatenate([a, v], axis=axis)


def _positions(name: str, obj: Any, n: int) -> np.ndarray:
    """obj (a slice, an int, integer or boolean positions) as host integers; traced
    positions raise ConcretizationTypeError (they decide the shape)."""
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    if isinstance(obj, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(obj)} at "
                        f"position 1.")
    held = np.asarray(obj)
    if held.dtype == bool:
        if held.shape != (n,):
            raise ValueError(f"{name}: boolean obj must have shape ({n},), got {held.shape}")
        return np.flatnonzero(held)
    if held.dtype.kind not in "iu":
        raise ValueError(f"{name}: index array argument obj must be integer typed")
    return held.astype(np.int64)


def delete(arr: Any, obj: Any, axis: Optional[int] = None, *,
           assume_unique_indices: bool = False) -> Array:
    """arr without the entries at obj along axis (flattened when None)."""
    a = arraylike_("delete", arr)
    if axis is None:
        a, axis = shape_ops.ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    drop = _positions("delete", obj, n).ravel()
    if ((drop < -n) | (drop >= n)).any():
        raise IndexError(f"index {drop[(drop < -n) | (drop >= n)][0]} is out of bounds for "
                         f"axis {axis} with size {n}")
    kept = np.ones(n, bool)
    kept[drop] = False
    keep = np.flatnonzero(kept)
    return take_static(a, axis, keep.tolist()) if len(keep) else \
        a[(slice(None),) * axis + (slice(0, 0),)]


def insert(arr: Any, obj: Any, values: Any, axis: Optional[int] = None) -> Array:
    """arr with values inserted before the positions obj along axis (flattened when None):
    one position takes all of values (broadcast), several take one slice each."""
    a = arraylike_("insert", arr)
    if axis is None:
        a, axis = shape_ops.ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    single = not isinstance(obj, slice) and np.ndim(obj) == 0
    where = _positions("insert", obj, n).ravel()
    if ((where < -n) | (where > n)).any():
        raise IndexError(f"index {where[0]} is out of bounds for axis {axis} with size {n}")
    where = np.where(where < 0, where + n, where)
    v = arraylike_("insert", values, 2).astype(a.dtype)
    shape = list(a.shape)
    if single:   # values, raised to arr's rank, fill a block of their first dim's length
        v = shape_ops.reshape(v, (1,) * (a.ndim - v.ndim) + v.shape)
        v = shape_ops.moveaxis(v, 0, axis)
        shape[axis] = v.shape[axis]
        w = int(where[0])
        return shape_ops.concatenate([a[(slice(None),) * axis + (slice(0, w),)],
                                      shape_ops.broadcast_to(v, tuple(shape)),
                                      a[(slice(None),) * axis + (slice(w, None),)]], axis=axis)
    shape[axis] = len(where)
    block = shape_ops.broadcast_to(v, tuple(shape))
    # the new order: old entry i at 2i + 1, values inserted before it at 2i (ties: stable)
    order = np.argsort(np.concatenate([2 * np.arange(n) + 1, 2 * where]), kind="stable")
    joined = shape_ops.concatenate([a, block], axis=axis)
    return take_static(joined, axis, order.tolist())


def _block_depth(arrays: Any) -> int:
    depth, level = 0, arrays
    while isinstance(level, list):
        if not level:
            raise ValueError("Lists cannot be empty")
        depth, level = depth + 1, level[0]
    return depth


def _block(arrays: Any, depth: int, ndim: int) -> Array:
    if not isinstance(arrays, list):
        x = asarray_(arrays)
        return shape_ops.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    if depth == 0 or any(isinstance(p, list) != (depth > 1) for p in arrays):
        raise ValueError("List depths are mismatched")
    parts = [_block(p, depth - 1, ndim) for p in arrays]
    return shape_ops.concatenate(parts, axis=ndim - depth)


def block(arrays: Any) -> Array:
    """An array assembled from nested lists of blocks: the innermost lists join along the
    last axis, each outer level along the axis before."""
    if isinstance(arrays, tuple):
        raise TypeError("jax.numpy.block does not allow tuples, got (...)")
    depth = _block_depth(arrays)
    leaves = list(_leaves(arrays))
    ndim = max([depth] + [np.ndim(x) for x in leaves])
    dt = promote_dtypes(*leaves)
    return _block(_cast(arrays, dt), depth, ndim)


def _leaves(arrays: Any):
    if isinstance(arrays, list):
        for p in arrays:
            yield from _leaves(p)
    else:
        yield arrays


def _cast(arrays: Any, dt: Any) -> Any:
    return [_cast(p, dt) for p in arrays] if isinstance(arrays, list) else asarray_(arrays, dt)


def column_stack(tup: Sequence[Any]) -> Array:
    """1-D arrays as columns (others as they are), joined along axis 1."""
    cols = [arraylike_("column_stack", x, i) for i, x in enumerate(tup)]
    cols = [shape_ops.reshape(c, (-1, 1)) if c.ndim < 2 else c for c in cols]
    return shape_ops.concatenate(cols, axis=1)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Array]:
    """split along axis 1 (axis 0 for 1-D arrays)."""
    a = arraylike_("hsplit", ary)
    return shape_ops.split(a, indices_or_sections, axis=1 if a.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Array]:
    """split along axis 0."""
    return shape_ops.split(arraylike_("vsplit", ary), indices_or_sections, axis=0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Array]:
    """split along axis 2 (at least 3 dims)."""
    a = arraylike_("dsplit", ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return shape_ops.split(a, indices_or_sections, axis=2)


def resize(a: Any, new_shape: Any) -> Array:
    """An array of new_shape filled with a's values (flattened) repeated in order."""
    x = shape_ops.ravel(arraylike_("resize", a))
    shape = static_shape(new_shape)
    size = math.prod(shape)
    if x.size == 0 or size == 0:
        return creation.zeros(shape, x.jdtype)
    repeated = shape_ops.tile(x, -(-size // x.size))
    return shape_ops.reshape(repeated[:size], shape)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Array:
    """filt without its leading ('f') and/or trailing ('b') zeros (slices that are all zero
    along each of `axis`, every axis when None); the bounds are read on the host."""
    x = arraylike_("trim_zeros", filt)
    trim = trim.lower()
    if any(c not in "fb" for c in trim):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    held = np.asarray(x != 0)
    axes = range(x.ndim) if axis is None else \
        [canonical_axis(a, x.ndim) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    index = [slice(None)] * x.ndim
    if not held.any():
        return x[tuple(slice(0, 0) if d in axes else slice(None) for d in range(x.ndim))]
    for d in axes:
        along = np.flatnonzero(held.any(axis=tuple(e for e in range(x.ndim) if e != d)))
        index[d] = slice(along[0] if "f" in trim else None,
                         along[-1] + 1 if "b" in trim else None)
    return x[tuple(index)]
