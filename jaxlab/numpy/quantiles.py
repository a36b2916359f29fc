"""quantile, percentile and median, with their NaN-ignoring twins: the reduced axes are
moved last and flattened into one, sorted, and the order statistics picked with
take_along_axis (so grad and vmap go through sort and gather)."""
from __future__ import annotations

import math
from enum import Enum
from typing import Any, Callable

from jaxlab.array import Array
from jaxlab.ir.dtypes import default_int, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, astype_, broadcast_to_, canonical_axes
from jaxlab.numpy.indexing import take_along_axis
from jaxlab.numpy.shape_ops import expand_dims, moveaxis, reshape, transpose
from jaxlab.numpy.sorting import argsort, sort

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian"]


class Method(Enum):
    LINEAR = "linear"
    LOWER = "lower"
    HIGHER = "higher"
    MIDPOINT = "midpoint"
    NEAREST = "nearest"
    INVERTED_CDF = "inverted_cdf"


def _method(method: Any) -> Method:
    try:
        return Method(method)
    except ValueError:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'") from None


# method -> the quantile from the order statistics below and above the position, and
# the position's fraction past the lower one
_BETWEEN: dict[Method, Callable[[Array, Array, Array], Array]] = {
    Method.LINEAR: lambda lo, hi, frac: lo * (1 - frac) + hi * frac,
    Method.LOWER: lambda lo, hi, frac: lo,
    Method.HIGHER: lambda lo, hi, frac: hi,
    Method.MIDPOINT: lambda lo, hi, frac: (lo + hi) * 0.5,
    Method.NEAREST: lambda lo, hi, frac: ufuncs.where(frac <= 0.5, lo, hi),
}


def _rows(x: Array, axes: tuple[int, ...]) -> Array:
    """x with `axes` moved last and flattened into one."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = transpose(x, kept + list(axes))
    return reshape(moved, tuple(x.shape[i] for i in kept) + (-1,))


def _weights(weights: Any, x: Array, axis: Any, axes: tuple[int, ...]) -> Array:
    w = arraylike_("quantile", weights)
    if w.jdtype.is_complex:
        raise ValueError("Weights cannot be complex types.")
    if w.shape == x.shape:
        return astype_(w, x.jdtype)
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    reduced = tuple(x.shape[i] for i in axes)
    if w.shape != reduced:
        raise ValueError(f"Weights shape {w.shape} must match reduction axes {reduced}")
    order = sorted(range(len(axes)), key=lambda k: axes[k])   # w's axes in x's order
    placed = transpose(w, order)
    for i in range(x.ndim):
        if i not in axes:
            placed = expand_dims(placed, i)
    return astype_(broadcast_to_(placed, x.shape), x.jdtype)


def _pick(sorted_rows: Array, index: Array) -> Array:
    """sorted_rows[..., index[..., k]] for each k: rest + (len(q),)."""
    index = broadcast_to_(astype_(index, default_int()),
                          sorted_rows.shape[:-1] + index.shape[-1:])
    return take_along_axis(sorted_rows, index, axis=-1)


def _interpolated(rows: Array, count: Any, q: Array, method: Method) -> Array:
    position = q * (count - 1)
    below = ufuncs.floor(position)
    last = count - 1
    lo = _pick(rows, ufuncs.clip(below, 0, last))
    hi = _pick(rows, ufuncs.clip(ufuncs.ceil(position), 0, last))
    return _BETWEEN[method](lo, hi, position - below)


def _inverted_cdf(rows: Array, weights: Array, count: Any, q: Array, squash: bool) -> Array:
    """The first value whose cumulative weight reaches q of the total."""
    nans = ufuncs.isnan(rows)
    bad = (weights < 0) | ufuncs.isnan(weights)
    clean = ufuncs.where(bad | nans, 0, weights)
    running = reductions.cumsum(clean, axis=-1)
    target = q * running[..., -1:]
    short = ufuncs.less(expand_dims(running, -2), expand_dims(target, -1))
    index = reductions.sum(short, axis=-1)
    picked = _pick(rows, ufuncs.clip(index, 0, ufuncs.maximum(count - 1, 0)))
    empty = (count == 0) if squash else reductions.any(nans, -1, keepdims=True)
    return ufuncs.where(reductions.any(bad, -1, keepdims=True) | empty, math.nan, picked)


def _quantile(name: str, a: Any, q: Any, axis: Any, method: Any, keepdims: bool,
              squash: bool, weights: Any = None) -> Array:
    x = arraylike_(name, a)
    q = arraylike_(name, q, 1)
    how = _method(method)
    if weights is not None and how is not Method.INVERTED_CDF:
        raise NotImplementedError(f"{how.value} doesn't support weights. Only method "
                                  f"'inverted_cdf' supports weights.")
    if x.jdtype.is_complex:
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    dtype = to_inexact(x.jdtype)
    x = astype_(x, dtype)
    axes = canonical_axes(axis, x.ndim)
    rows = _rows(x, axes)
    w = None if weights is None else _rows(_weights(weights, x, axis, axes), axes)
    if not squash:   # one NaN makes the whole row's quantiles NaN
        rows = ufuncs.where(reductions.any(ufuncs.isnan(rows), -1, keepdims=True),
                            math.nan, rows)
    if w is not None:
        order = argsort(rows, axis=-1)
        rows, w = take_along_axis(rows, order, -1), take_along_axis(w, order, -1)
    else:
        rows = sort(rows, axis=-1)   # NaNs last
    n = rows.shape[-1]
    count = reductions.sum(ufuncs.logical_not(ufuncs.isnan(rows)), -1, keepdims=True,
                           dtype=dtype) if squash else n
    qs = astype_(reshape(q, (-1,)), dtype)
    if how is Method.INVERTED_CDF:
        out = _inverted_cdf(rows, ufuncs.where(ufuncs.isnan(rows), 0, 1).astype(dtype)
                            if w is None else w, count, qs, squash)
    else:
        out = _interpolated(rows, count, qs, how)
    out = moveaxis(out, -1, 0)   # q's axis first, as JAX
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape)) if keepdims \
        else tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return astype_(reshape(out, q.shape + kept), dtype)


def quantile(a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None) -> Array:
    """The q-th quantiles (q in [0, 1], a scalar or 1-D) over `axis`; q's axis comes first."""
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: None = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None) -> Array:
    """quantile of the non-NaN values (NaN where a slice has none)."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def _percent(name: str, q: Any) -> Array:
    q = arraylike_(name, q, 1)
    return ufuncs.true_divide(q, 100.0)


def percentile(a: Any, q: Any, axis: Any = None, out: None = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None) -> Array:
    """The q-th percentiles (q in [0, 100]) over `axis`."""
    return quantile(a, _percent("percentile", q), axis, out, overwrite_input, method,
                    keepdims, weights=weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: None = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None) -> Array:
    """percentile of the non-NaN values."""
    return nanquantile(a, _percent("nanpercentile", q), axis, out, overwrite_input, method,
                       keepdims, weights=weights)


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median over `axis` (NaN where a slice holds a NaN)."""
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False)


def nanmedian(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """The median of the non-NaN values over `axis`."""
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True)

