"""Index helpers: grids (mgrid, ogrid, indices, ix_), concatenation by index syntax (r_, c_),
index expressions (s_, index_exp), flat <-> multi-dimensional indices, and the index
arrays of diagonals and triangles (static shapes: computed on the host, uploaded once)."""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.core import values
from jaxlab.ir.dtypes import DType, default_int, to_dtype
from jaxlab.numpy import creation, reductions, shape_ops, ufuncs
from jaxlab.numpy._util import (arraylike_, asarray_, astype_, canonical_shape,
                                promote_dtypes)
from jaxlab.numpy.array_api import meshgrid

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "ix_", "indices", "unravel_index",
           "ravel_multi_index", "diag_indices", "diag_indices_from", "tril_indices",
           "triu_indices", "tril_indices_from", "triu_indices_from", "mask_indices"]


def _host_indices(arrays: Sequence[np.ndarray]) -> tuple[Array, ...]:
    return tuple(values.from_host(np.asarray(a), default_int()) for a in arrays)


# --- grids ------------------------------------------------------------------------------

def _slice_values(s: slice) -> Array:
    """The values a slice names in a grid: a range, or with a complex step j, j values
    from start to stop inclusive (linspace)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return creation.linspace(start, s.stop, int(abs(step)))
    return creation.arange(start, s.stop, step)


class _Grid:
    """mgrid (dense) and ogrid (sparse, open): grid[0:3, 0:2]."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(s) for s in key]
        dt = promote_dtypes(*axes)
        grids = meshgrid(*(astype_(a, dt) for a in axes), indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else shape_ops.stack(grids)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


@dataclass(frozen=True)
class _Directive:
    """How r_/c_ join their items: along `axis`, each raised to at least `ndmin` dims
    with its own dims placed at `own_dims_at` among the new ones (-1: last), and the
    result made a row or column matrix (`matrix`: 'r', 'c' or None)."""
    axis: int = 0
    ndmin: int = 1
    own_dims_at: int = -1
    matrix: Optional[str] = None


def _parse_directive(text: str, default: _Directive) -> _Directive:
    if text in ("r", "c"):
        return _Directive(-1, 2, -1 if text == "r" else 0, text)
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"could not understand directive {text!r}") from None
    if len(numbers) > 3:
        raise ValueError(f"could not understand directive {text!r}")
    return _Directive(*numbers, *(default.ndmin, default.own_dims_at)[len(numbers) - 1:])


def _raised(item: Array, d: _Directive) -> Array:
    """item with at least d.ndmin dims: new size-1 dims around its own, its own starting
    at d.own_dims_at (counted among the ndmin - item.ndim + 1 places)."""
    new = d.ndmin - item.ndim
    if new <= 0:
        return item
    places = new + 1
    at = d.own_dims_at % places
    return shape_ops.reshape(item, (1,) * at + item.shape + (1,) * (new - at))


class _Concatenator:
    """r_ and c_: items (arrays, lists, scalars, slices) joined along an axis."""

    def __init__(self, default: _Directive):
        self.default = default

    def __getitem__(self, key: Any) -> Array:
        items = key if isinstance(key, tuple) else (key,)
        directive = self.default
        if items and isinstance(items[0], str):
            directive = _parse_directive(items[0], self.default)
            items = items[1:]
        arrays = [_slice_values(i) if isinstance(i, slice) else asarray_(i) for i in items]
        if not arrays:
            return creation.zeros((0,))
        out = shape_ops.concatenate([_raised(a, directive) for a in arrays],
                                    axis=directive.axis)
        if directive.matrix == "r":
            return shape_ops.reshape(out, (1, -1)) if out.ndim == 1 else out
        if directive.matrix == "c":
            return shape_ops.reshape(out, (-1, 1)) if out.ndim == 1 else out
        return out


r_ = _Concatenator(_Directive(0, 1, -1))
c_ = _Concatenator(_Directive(-1, 2, 0))


class _IndexExpression:
    """s_ (the key as given) and index_exp (always a tuple)."""

    def __init__(self, as_tuple: bool):
        self.as_tuple = as_tuple

    def __getitem__(self, key: Any) -> Any:
        return (key,) if self.as_tuple and not isinstance(key, tuple) else key


s_ = _IndexExpression(as_tuple=False)
index_exp = _IndexExpression(as_tuple=True)


def ix_(*args: Any) -> tuple[Array, ...]:
    """Open-mesh index arrays: the k-th 1-D sequence shaped to vary along axis k only."""
    out = []
    for k, a in enumerate(args):
        x = arraylike_("ix_", a, k)
        if x.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{x.shape}")
        if x.jdtype is DType.bool:
            raise TypeError("Boolean arguments to jax.numpy.ix_ are not supported")
        out.append(shape_ops.reshape(x, (1,) * k + (-1,) + (1,) * (len(args) - k - 1)))
    return tuple(out)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The index of every position of an array of shape `dimensions`, per axis: stacked
    (dense) or as a tuple of broadcastable arrays (sparse)."""
    dims = canonical_shape(dimensions)
    dt = default_int() if dtype is None else to_dtype(dtype, "indices")
    axes = [creation.arange(n, dtype=dt) for n in dims]
    if not axes:
        return () if sparse else creation.zeros((0,), dt)
    grids = meshgrid(*axes, indexing="ij", sparse=sparse)
    return tuple(grids) if sparse else shape_ops.stack(grids)


# --- flat and multi-dimensional indices -------------------------------------------------

def unravel_index(indices: Any, shape: Any) -> tuple[Array, ...]:
    """Each flat index as one index per axis of `shape` (C order). As in JAX, negative
    indices count from the end and indices out of range are clipped."""
    flat = arraylike_("unravel_index", indices)
    dims = canonical_shape(shape)
    total = math.prod(dims)
    flat = ufuncs.where(flat < 0, flat + total, flat)
    flat = ufuncs.clip(flat, 0, max(total - 1, 0))
    out = []
    for k, n in enumerate(dims):
        stride = math.prod(dims[k + 1:])
        out.append((flat // stride) % n if k else flat // stride)
    return tuple(out)


_OUT_OF_RANGE: dict[str, Callable[[Array, int], Array]] = {
    "clip": lambda i, n: ufuncs.clip(i, 0, n - 1),
    "wrap": lambda i, n: ufuncs.remainder(i, n),
}


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Array:
    """The flat index (C or F order) of each tuple of indices into an array of shape
    dims. mode 'raise' checks the indices (concrete ones only), 'clip' or 'wrap' fix
    them."""
    dims = canonical_shape(dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    idx = [arraylike_("ravel_multi_index", i, k) for k, i in enumerate(multi_index)]
    for i in idx:
        if not i.jdtype.is_int:
            raise TypeError(f"only int indices permitted, got {i.jdtype}")
    if mode == "raise":
        for i, n in zip(idx, dims):
            if not isinstance(i, Array):
                raise ValueError("The error occurred because ravel_multi_index was jit-"
                                 "compiled with mode='raise'. Use mode='wrap' or mode='clip' "
                                 "instead.")
            if bool(reductions.any((i < 0) | (i >= n))):
                raise ValueError("invalid entry in coordinates array")
    else:
        idx = [_OUT_OF_RANGE[mode](i, n) for i, n in zip(idx, dims)]
    dt = default_int() if dtype is None else to_dtype(dtype, "ravel_multi_index")
    strides = [math.prod(dims[k + 1:]) for k in range(len(dims))] if order == "C" else \
        [math.prod(dims[:k]) for k in range(len(dims))]
    flat = asarray_(0, dt)
    for i, stride in zip(idx, strides):
        flat = flat + astype_(i, dt) * stride
    return flat


# --- diagonals and triangles ------------------------------------------------------------

def diag_indices(n: int, ndim: int = 2) -> tuple[Array, ...]:
    """(range(n),) * ndim: the indices of the main diagonal of an n x ... x n array."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (creation.arange(n, dtype=default_int()),) * ndim


def diag_indices_from(arr: Any) -> tuple[Array, ...]:
    """diag_indices for arr's shape (every dimension equal)."""
    shape = _shape_of(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def _shape_of(arr: Any) -> tuple[int, ...]:
    return tuple(arr.shape) if hasattr(arr, "shape") else asarray_(arr).shape


def _triangle_indices(n: Any, k: Any, m: Any, lower: bool) -> tuple[Array, Array]:
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    below = np.tri(n, m, k if lower else k - 1, dtype=bool)
    return _host_indices(np.nonzero(below if lower else ~below))


def tril_indices(n: int, k: int = 0, m: Optional[int] = None) -> tuple[Array, Array]:
    """Row and column indices of the lower triangle (on and below diagonal k) of n x m."""
    return _triangle_indices(n, k, m, lower=True)


def triu_indices(n: int, k: int = 0, m: Optional[int] = None) -> tuple[Array, Array]:
    """Row and column indices of the upper triangle (on and above diagonal k) of n x m."""
    return _triangle_indices(n, k, m, lower=False)


def _from_2d(name: str, arr: Any) -> tuple[int, int]:
    shape = _shape_of(arr)
    if len(shape) != 2:
        raise ValueError(f"Input array must be 2D for {name}; got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """tril_indices for a 2-D array's shape."""
    n, m = _from_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Array, Array]:
    """triu_indices for a 2-D array's shape."""
    n, m = _from_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: Optional[int] = None) -> tuple[Array, Array]:
    """The indices where mask_func(ones((n, n)), k) is nonzero (triu, tril, ...)."""
    from jaxlab.numpy.array_api import nonzero
    mask = mask_func(creation.ones((operator.index(n),) * 2, DType.int32), k)
    return nonzero(asarray_(mask) if not isinstance(mask, ArrayBase) else mask, size=size)
