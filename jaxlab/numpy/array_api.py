"""The Array API standard's names that jax.numpy has beside NumPy's: aliases,
cumulative_sum/prod, unstack, matrix_transpose, vecdot, count_nonzero, diff,
meshgrid, nextafter, real/imag/conj of real arrays, searchsorted and isin (both
traceable), the set functions and nonzero (data-dependent shapes: outside jit only),
DLPack exchange and __array_namespace_info__."""
from __future__ import annotations

import math
import operator
from typing import Any, Optional

import numpy as np

from jaxlab import lax
from jaxlab.array import Array, ArrayBase
from jaxlab.ir.dtypes import DType, canonical, default_float, default_int
from jaxlab.numpy import creation, reductions, shape_ops, ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, canonical_axis, promote_dtypes
from jaxlab.numpy.complex_functions import conjugate

# --- the standard's spellings of NumPy names -----------------------------------------------
acos, acosh, asin, asinh = ufuncs.arccos, ufuncs.arccosh, ufuncs.arcsin, ufuncs.arcsinh
atan, atan2, atanh = ufuncs.arctan, ufuncs.arctan2, ufuncs.arctanh
bitwise_left_shift, bitwise_right_shift = ufuncs.left_shift, ufuncs.right_shift
bitwise_invert, pow = ufuncs.invert, ufuncs.power  # noqa: A001
concat = shape_ops.concatenate


def permute_dims(a: Any, /, axes: Any) -> Array:
    return shape_ops.transpose(a, axes)


def matrix_transpose(x: Any, /) -> Array:
    x = asarray_(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got {x.ndim}")
    return shape_ops.swapaxes(x, -1, -2)


def _cumulative(fold: Any, x: Any, axis: Optional[int], dtype: Any,
                include_initial: bool, initial: float, name: str) -> Array:
    x = arraylike_(name, x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one "
                             f"dimension, got shape {x.shape}")
        axis = 0
    axis = canonical_axis(axis, max(x.ndim, 1))
    out = fold(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = shape_ops.concatenate([creation.full(shape, initial, out.dtype), out], axis)
    return out


def cumulative_sum(x: Any, /, *, axis: Optional[int] = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    x = arraylike_("cumulative_sum", x)   # counts in the default int, as sum (JAX)
    dtype = reductions.summed_dtype(x.jdtype) if dtype is None else dtype
    return _cumulative(reductions.cumsum, x, axis, dtype, include_initial, 0, "cumulative_sum")


def cumulative_prod(x: Any, /, *, axis: Optional[int] = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    return _cumulative(reductions.cumprod, x, axis, dtype, include_initial, 1,
                       "cumulative_prod")


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Array, ...]:
    x = asarray_(x)
    if x.ndim == 0:
        raise ValueError("unstack requires arrays with rank > 0, however a scalar array "
                         "was passed.")
    moved = shape_ops.moveaxis(x, canonical_axis(axis, x.ndim), 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Array:
    """sum(conj(x1) * x2) along axis, after broadcasting."""
    a, b = asarray_(x1), asarray_(x2)
    if a.shape[axis] != b.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has sizes {a.shape[axis]} and {b.shape[axis]}")
    product = ufuncs.multiply(conjugate(a), b)
    return reductions.sum(product, axis=axis, dtype=product.dtype)   # no int promotion


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    return reductions.sum(ufuncs.not_equal(arraylike_("count_nonzero", a), 0), axis=axis,
                          keepdims=keepdims, dtype=default_int())


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Array:
    """The n-th discrete difference along axis."""
    x = arraylike_("diff", a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    axis = canonical_axis(axis, x.ndim)
    pieces = [v for v in (prepend, x, append) if v is not None]
    if len(pieces) > 1:
        shape = list(x.shape)
        shape[axis] = 1
        pieces = [v if v is x else shape_ops.broadcast_to(asarray_(v, x.jdtype), shape)
                  if np.ndim(v) == 0 else asarray_(v, x.jdtype) for v in pieces]
        x = shape_ops.concatenate(pieces, axis)
    for _ in range(n):
        take = lambda lo, hi: x[(slice(None),) * axis + (slice(lo, hi),)]
        x = (ufuncs.not_equal if x.jdtype is DType.bool else ufuncs.subtract)(
            take(1, None), take(None, -1))
    return x


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[Array, ...]:
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    arrays = [shape_ops.ravel(arraylike_("meshgrid", x, i)) for i, x in enumerate(xi)]
    n = len(arrays)
    axis_of = list(range(n))
    if indexing == "xy" and n >= 2:   # Cartesian: the first two inputs' axes swap
        axis_of[0], axis_of[1] = 1, 0
    full = [0] * n
    for k, a in enumerate(arrays):
        full[axis_of[k]] = a.size
    out = [shape_ops.reshape(a, tuple(-1 if i == axis_of[k] else 1 for i in range(n)))
           for k, a in enumerate(arrays)]
    # a tuple, as the standard (2025.12) says; JAX gives a list
    return tuple(out if sparse else (shape_ops.broadcast_to(a, tuple(full)) for a in out))


def nextafter(x1: Any, x2: Any, /) -> Array:
    """The float32 next to x1 in the direction of x2, by stepping its bit pattern."""
    dt = promote_dtypes(x1, x2)
    if dt is not DType.float32:
        raise TypeError(f"nextafter: jaxlab supports float32 only, got {dt}")
    a, b = (asarray_(v, dt) for v in (x1, x2))
    bits = lax.bitcast_convert_type(a, DType.int32)
    away_from_zero = ufuncs.equal(ufuncs.less(a, b), ufuncs.greater(a, 0.0))
    stepped = lax.bitcast_convert_type(ufuncs.where(away_from_zero, bits + 1, bits - 1),
                                       DType.float32)
    tiny = float(np.nextafter(np.float32(0), np.float32(1)))
    from_zero = ufuncs.where(ufuncs.less(a, b), tiny, -tiny)
    out = ufuncs.where(ufuncs.equal(a, 0.0), from_zero, stepped)
    out = ufuncs.where(ufuncs.equal(a, b), b, out)
    return ufuncs.where(ufuncs.isnan(a) | ufuncs.isnan(b), np.float32(np.nan), out)


# --- searching ---------------------------------------------------------------------------

def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Array:
    """Insertion points of v into sorted 1-D a: how many of a are < v (left) or <= v
    (right), counted by one comparison per pair (traceable, int32)."""
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         f"['left', 'right'].")
    a = arraylike_("searchsorted", a)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = a[asarray_(sorter)]
    dt = promote_dtypes(a, v)
    a, v = asarray_(a, dt), arraylike_("searchsorted", v, 1).astype(dt)
    before = (ufuncs.less if side == "left" else ufuncs.less_equal)(
        a, shape_ops.expand_dims(v, -1))
    return reductions.sum(before, axis=-1, dtype=DType.int32)


def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Array:
    """Whether each element occurs in test_elements (traceable: one comparison per pair)."""
    e = arraylike_("isin", element)
    t = shape_ops.ravel(arraylike_("isin", test_elements, 1))
    found = reductions.any(ufuncs.equal(shape_ops.expand_dims(e, -1), t), axis=-1)
    return ufuncs.logical_not(found) if invert else found


# --- data-dependent shapes: concrete arrays only ------------------------------------------

def _host(name: str, x: Any) -> np.ndarray:
    """x's values; a traced x raises ConcretizationTypeError (its values are unknown)."""
    x = arraylike_(name, x)
    return np.asarray(x)


def _device(data: np.ndarray, dtype: DType) -> Array:
    return asarray_(data.astype(dtype.np), dtype)


def nonzero(a: Any, *, size: Optional[int] = None, fill_value: Any = None) -> tuple[Array, ...]:
    """Indices of the nonzero elements, one array per axis. Without `size` the count
    decides the shape (values needed: outside jit only); with it (also under jit) the
    first `size` indices, padded with `fill_value` (0, or one per axis)."""
    x = arraylike_("nonzero", a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d "
                         "(scalar).nonzero() instead.")
    if size is None:
        if fill_value is not None:
            raise ValueError("fill_value must be None when size is None")
        return tuple(_device(i, default_int()) for i in np.nonzero(_host("nonzero", x)))
    return _nonzero_sized(x, operator.index(size), fill_value)


def _nonzero_sized(x: Array, size: int, fill_value: Any) -> tuple[Array, ...]:
    """Each nonzero element's flat position scattered to its rank among them (ranks
    past `size` are dropped), then split into one index per axis."""
    mask = shape_ops.ravel(x) != 0
    index_dtype = default_int()
    rank = reductions.cumsum(mask.astype(index_dtype)) - 1
    slot = ufuncs.where(mask, rank, size)   # zeros go past the end: dropped
    flat = creation.zeros(size, index_dtype).at[slot].set(
        creation.arange(mask.size, dtype=index_dtype), mode="drop")
    found = creation.arange(size, dtype=index_dtype) < reductions.sum(mask)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else \
        (0 if fill_value is None else fill_value,) * x.ndim
    if len(fills) != x.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {x.ndim}; "
                         f"got {fill_value}")
    strides = [math.prod(x.shape[d + 1:]) for d in range(x.ndim)]
    return tuple(ufuncs.where(found, (flat // stride) % dim, asarray_(fill, index_dtype))
                 for stride, dim, fill in zip(strides, x.shape, fills))


def flatnonzero(a: Any, *, size: Optional[int] = None, fill_value: Any = None) -> Array:
    return nonzero(shape_ops.ravel(arraylike_("flatnonzero", a)), size=size,
                   fill_value=fill_value)[0]


# --- DLPack ------------------------------------------------------------------------------

def from_dlpack(x: Any, /, *, device: Any = None, copy: Any = None) -> Array:
    """An array from any DLPack producer on the host (NumPy arrays, other frameworks'
    CPU arrays), copied to `device` (the default device when None)."""
    from jaxlab.device_put import device_put
    return device_put(np.from_dlpack(x), device)


# --- __array_namespace_info__ --------------------------------------------------------------

class ArrayNamespaceInfo:
    """What the Array API standard's inspection API reports for jaxlab.numpy."""

    # the standard's dtype kinds, by NumPy kind letters (bfloat16 and float16 are
    # jaxlab's but not the standard's: left out)
    _KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
              "real floating": "f", "complex floating": "c", "numeric": "iufc"}
    _STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128")

    def capabilities(self) -> dict:
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": None}

    def default_device(self) -> Any:
        from jaxlab.engine.devices import current_device
        return current_device()

    def devices(self) -> tuple:
        from jaxlab.engine.devices import devices
        return tuple(devices())   # a tuple, as the standard (2025.12) says

    def default_dtypes(self, *, device: Any = None) -> dict:
        return {"real floating": default_float().np, "complex floating": None,
                "integral": default_int().np, "indexing": default_int().np}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
        """The standard's dtypes arrays have now (64-bit ones with x64 only)."""
        stored = {d.value for d in DType if canonical(d) is d}
        names = [n for n in self._STANDARD if n in stored]
        if kind is not None:
            letters = "".join(self._kind_letters(k) for k in
                              (kind if isinstance(kind, tuple) else (kind,)))
            names = [n for n in names if np.dtype(n).kind in letters]
        return {n: np.dtype(n) for n in names}

    def _kind_letters(self, kind: Any) -> str:
        if isinstance(kind, str):
            if kind not in self._KINDS:
                raise ValueError(f"unknown dtype kind {kind!r}")
            return self._KINDS[kind]
        return np.dtype(kind).kind


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()


def _array_namespace(self: ArrayBase, /, *, api_version: Optional[str] = None) -> Any:
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        raise ValueError(f"Unrecognized array API version: {api_version!r}")
    import jaxlab.numpy
    return jaxlab.numpy


def _dlpack(self: Array, /, *, stream: Any = None, max_version: Any = None,
            dl_device: Any = None, copy: Any = None) -> Any:
    """The values as a DLPack capsule, through a host copy (jaxlab memory is not
    host-addressable on every device)."""
    kwargs = {} if max_version is None else {"max_version": max_version}
    return np.ascontiguousarray(self.to_numpy()).__dlpack__(**kwargs)


def _dlpack_device(self: Array) -> tuple[int, int]:
    return (1, 0)   # kDLCPU: the capsule holds a host copy


def _to_device(self: Array, device: Any, /, *, stream: Any = None) -> Array:
    from jaxlab.device_put import device_put
    return device_put(self, device)


ArrayBase.__array_namespace__ = _array_namespace
Array.__dlpack__ = _dlpack
Array.__dlpack_device__ = _dlpack_device
Array.to_device = _to_device

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_invert", "pow", "concat", "permute_dims",
           "matrix_transpose", "cumulative_sum", "cumulative_prod", "unstack", "vecdot",
           "count_nonzero", "diff", "meshgrid", "nextafter",
           "searchsorted", "isin", "nonzero", "flatnonzero", "from_dlpack",
           "__array_namespace_info__"]
