"""Orderings built on the stable argsort: lexsort, sort_complex, partition, argpartition."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array, ArrayBase
from jaxlab.errors import AxisError
from jaxlab.ir.dtypes import DType, default_int
from jaxlab.numpy._util import arraylike_, asarray_, astype_, canonical_axis
from jaxlab.numpy.complex_functions import imag, real
from jaxlab.numpy.indexing import take_along_axis
from jaxlab.numpy.sorting import argsort, sort

__all__ = ["lexsort", "sort_complex", "partition", "argpartition"]


def lexsort(keys: Any, axis: int = -1) -> Array:
    """Indices sorting by the last key first, ties broken by the keys before it: stable
    argsorts from the first key to the last, each on the order found so far."""
    if isinstance(keys, ArrayBase) or not isinstance(keys, (list, tuple)):
        keys = list(arraylike_("lexsort", keys))
    if len(keys) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    keys = [arraylike_("lexsort", k, i) for i, k in enumerate(keys)]
    if len({k.shape for k in keys}) != 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        return asarray_(0, default_int())
    axis = canonical_axis(axis, keys[0].ndim)
    order = argsort(keys[0], axis=axis)
    for key in keys[1:]:
        order = take_along_axis(order, argsort(take_along_axis(key, order, axis), axis=axis),
                                axis)
    return order


def complex_order(x: Array, axis: int) -> Array:
    """The stable order of complex values along axis: by real part, then imaginary."""
    return lexsort([imag(x), real(x)], axis=axis)


def sort_complex(a: Any) -> Array:
    """a sorted along its last axis by real part, then imaginary part, as complex."""
    x = arraylike_("sort_complex", a)
    if x.ndim == 0:
        raise AxisError("axis -1 is out of bounds for array of dimension 0")
    dt = x.jdtype if x.jdtype.is_complex else (
        DType.complex128 if x.jdtype is DType.float64 else DType.complex64)
    x = astype_(x, dt)
    return take_along_axis(x, complex_order(x, -1), -1)


def _kth(name: str, x: Array, kth: int, axis: int) -> int:
    axis = canonical_axis(axis, x.ndim)
    n = x.shape[axis]
    if not -n <= kth < n:
        raise ValueError(f"{name}: kth {kth} is out of bounds for axis {axis} of size {n}")
    return axis


def partition(a: Any, kth: int, axis: int = -1) -> Array:
    """a with its kth smallest element (along axis) at position kth, the smaller ones
    before it and the larger ones after. jaxlab returns the fully sorted array (which
    satisfies this); JAX leaves the parts in an unspecified order."""
    x = arraylike_("partition", a)
    return sort(x, axis=_kth("partition", x, kth, axis))


def argpartition(a: Any, kth: int, axis: int = -1) -> Array:
    """Indices that partition a around its kth smallest element (see partition)."""
    x = arraylike_("argpartition", a)
    return argsort(x, axis=_kth("argpartition", x, kth, axis))

