"""Shape manipulation: every function here only rewrites views."""
from __future__ import annotations

import math
from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.core import movement
from jaxlab.numpy._util import asarray_, broadcast_all, broadcast_to_, canonical_axes, \
    canonical_axis, promote_dtypes


def _resolve_shape(size: int, newshape: Any) -> tuple[int, ...]:
    dims = (newshape,) if isinstance(newshape, int) else tuple(int(d) for d in newshape)
    if dims.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension in {dims}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {dims}")
        dims = tuple(size // known if d == -1 else d for d in dims)
    return dims


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Array:
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
    return movement.transpose_p.bind(a, permutation=perm)


def expand_dims(a: Any, axis: Any) -> Array:
    a = asarray_(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    where = sorted(canonical_axis(x, nd) for x in axes)
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
    return broadcast_to_(asarray_(a), tuple(shape) if not isinstance(shape, int) else (shape,))


def broadcast_arrays(*args: Any) -> list[Array]:
    return broadcast_all(*(asarray_(a) for a in args))


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
            raise ValueError(f"concatenate: shapes {[y.shape for y in xs]} differ "
                             f"outside axis {axis}")
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
