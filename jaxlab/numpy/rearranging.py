"""Rearranging and building matrices: rollaxis, rot90, fliplr, flipud, kron, diag, diagflat,
fill_diagonal."""
from __future__ import annotations

import operator
from typing import Any

from jaxlab.array import Array
from jaxlab.errors import AxisError
from jaxlab.numpy import creation, shape_ops, ufuncs
from jaxlab.numpy._util import arraylike_, canonical_axis
from jaxlab.numpy.linalg_products import diagonal

__all__ = ["rollaxis", "rot90", "fliplr", "flipud", "kron", "diag", "diagflat",
           "fill_diagonal"]


def rollaxis(a: Any, axis: int, start: int = 0) -> Array:
    """a with `axis` moved to just before position `start`."""
    x = arraylike_("rollaxis", a)
    axis = canonical_axis(axis, x.ndim)
    if not -x.ndim <= start <= x.ndim:
        raise AxisError(f"start={start} must satisfy {-x.ndim} <= start <= {x.ndim}")
    start = start % (x.ndim + 1) if start < 0 else start
    return shape_ops.moveaxis(x, axis, start - 1 if axis < start else start)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """m rotated by 90 degrees k times in the plane of `axes` (from the first towards
    the second)."""
    x = arraylike_("rot90", m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    first, second = (canonical_axis(a, x.ndim) for a in axes)
    if first == second:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 2:
        return shape_ops.flip(x, (first, second))
    if k == 1:
        return shape_ops.swapaxes(shape_ops.flip(x, second), first, second)
    if k == 3:
        return shape_ops.flip(shape_ops.swapaxes(x, first, second), second)
    return x


def fliplr(m: Any) -> Array:
    """m reversed along axis 1 (at least 2 dims)."""
    x = arraylike_("fliplr", m)
    canonical_axis(1, x.ndim)
    return shape_ops.flip(x, 1)


def flipud(m: Any) -> Array:
    """m reversed along axis 0 (at least 1 dim)."""
    x = arraylike_("flipud", m)
    canonical_axis(0, x.ndim)
    return shape_ops.flip(x, 0)


def kron(a: Any, b: Any) -> Array:
    """The Kronecker product: blocks a[i, ...] * b, at equal rank (the smaller prepended
    with size-1 dims)."""
    x, y = arraylike_("kron", a), arraylike_("kron", b, 1)
    nd = max(x.ndim, y.ndim)
    x = shape_ops.reshape(x, (1,) * (nd - x.ndim) + x.shape)
    y = shape_ops.reshape(y, (1,) * (nd - y.ndim) + y.shape)
    # interleave: x's dims at even places, y's at odd ones, then merge each pair
    xe = shape_ops.reshape(x, tuple(d for n in x.shape for d in (n, 1)))
    ye = shape_ops.reshape(y, tuple(d for n in y.shape for d in (1, n)))
    return shape_ops.reshape(ufuncs.multiply(xe, ye),
                             tuple(n * m for n, m in zip(x.shape, y.shape)))


def diag(v: Any, k: int = 0) -> Array:
    """The k-th diagonal of a 2-D v, or a square matrix with 1-D v on its k-th diagonal."""
    x = arraylike_("diag", v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, offset=k)
    if x.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = x.shape[0] + abs(k)
    along = creation.arange(x.shape[0])
    return creation.zeros((n, n), x.jdtype).at[along + max(-k, 0), along + max(k, 0)].set(x)


def diagflat(v: Any, k: int = 0) -> Array:
    """A matrix with v's values (flattened) on its k-th diagonal."""
    return diag(shape_ops.ravel(arraylike_("diagflat", v)), k)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Array:
    """a with its main diagonal (every index equal) set to val (repeated along it).
    JAX arrays are immutable: inplace=False is required, as in JAX."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    x = arraylike_("fill_diagonal", a)
    if x.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.ndim > 2 and len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(x.shape)
    values = shape_ops.ravel(arraylike_("fill_diagonal", val, 1))
    if values.size == 0:
        return x
    values = shape_ops.tile(values, -(-n // values.size))[:n] if values.size != n else values
    index = creation.arange(n)
    return x.at[(index,) * x.ndim].set(values.astype(x.dtype))
