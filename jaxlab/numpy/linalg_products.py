"""The rest of jnp.linalg that the Array API standard lists (outer, cross, trace,
diagonal, matrix_power, multi_dot, tensordot, vecdot, matrix_norm, vector_norm,
matrix_transpose), and jnp.diagonal/trace/cross: products, gathers and reductions."""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from jaxlab.array import Array
from jaxlab.numpy import reductions, shape_ops
from jaxlab.numpy._util import arraylike_, asarray_, canonical_axis, promote_dtypes
from jaxlab.numpy.array_api import matrix_transpose, vecdot  # noqa: F401
from jaxlab.numpy.creation import eye
from jaxlab.numpy.products import matmul, outer, tensordot  # noqa: F401


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The offset diagonal of the (axis1, axis2) planes, as the last axis."""
    x = arraylike_("diagonal", a)
    if x.ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got {x.ndim}")
    a1, a2 = canonical_axis(axis1, x.ndim), canonical_axis(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 must not be equal")
    x = shape_ops.moveaxis(x, (a1, a2), (-2, -1))
    rows, cols = x.shape[-2:]
    first_row, first_col = max(0, -offset), max(0, offset)
    n = max(0, min(rows - first_row, cols - first_col))
    return x[..., np.arange(n) + first_row, np.arange(n) + first_col]


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Array:
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Array:
    """Cross products of 3-vectors (or 2-vectors: the z component) along the axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    dt = promote_dtypes(a, b)
    x = shape_ops.moveaxis(arraylike_("cross", a).astype(dt), axisa, -1)
    y = shape_ops.moveaxis(arraylike_("cross", b, 1).astype(dt), axisb, -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(f"Dimension must be either 2 or 3 for cross product, got "
                         f"{x.shape[-1]} and {y.shape[-1]}")
    if x.shape[-1] == 2 and y.shape[-1] == 2:
        return x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    pad = lambda v: v if v.shape[-1] == 3 else shape_ops.pad(
        v, [(0, 0)] * (v.ndim - 1) + [(0, 1)])
    (x0, x1, x2), (y0, y1, y2) = ([v[..., i] for i in range(3)] for v in (pad(x), pad(y)))
    out = shape_ops.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], -1)
    return shape_ops.moveaxis(out, -1, axisc)


def matrix_power(a: Any, n: int) -> Array:
    """a @ a @ ... (n times) by repeated squaring; n < 0 powers the inverse."""
    from jaxlab.numpy.linalg import inv
    x = arraylike_("matrix_power", a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power requires square matrices, got shape {x.shape}")
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"exponent must be an integer, got {n}")
    if n == 0:
        return shape_ops.broadcast_to(eye(x.shape[-1], dtype=x.dtype), x.shape)
    if n < 0:
        x, n = inv(x), -n
    result = None
    while n:
        if n & 1:
            result = x if result is None else matmul(result, x)
        n >>= 1
        if n:
            x = matmul(x, x)
    return result


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Array:
    """The chained product; a 1-D first (last) array is a row (column) vector."""
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    return functools.reduce(matmul, [asarray_(a) for a in arrays])


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Array:
    """The vector norm over `axis` (all axes, or several, taken as one vector)."""
    from jaxlab.numpy.linalg import norm
    v = arraylike_("vector_norm", x)
    axes = tuple(range(v.ndim)) if axis is None else \
        tuple(canonical_axis(a, v.ndim) for a in (axis if isinstance(axis, tuple) else (axis,)))
    rest = [i for i in range(v.ndim) if i not in axes]
    flat = shape_ops.reshape(shape_ops.transpose(v, rest + list(axes)),
                             tuple(v.shape[i] for i in rest) + (-1,))
    out = norm(flat, ord, axis=-1)
    if keepdims:
        out = shape_ops.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(v.shape)))
    return out


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    from jaxlab.numpy.linalg import norm
    return norm(x, ord, axis=(-2, -1), keepdims=keepdims)


def linalg_trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The Array API's linalg.trace: over the last two axes."""
    return trace(x, offset, -2, -1, dtype)


def linalg_diagonal(x: Any, /, *, offset: int = 0) -> Array:
    return diagonal(x, offset, -2, -1)


def linalg_cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """The Array API's linalg.cross: 3-vectors only."""
    a, b = asarray_(x1), asarray_(x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ValueError(f"linalg.cross requires arrays of size 3 along axis {axis}, got "
                         f"shapes {a.shape} and {b.shape}")
    return cross(a, b, axis=axis)
