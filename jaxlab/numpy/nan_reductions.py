"""NaN-ignoring reductions (nansum, nanmean, nanargmax, ...): each replaces the NaNs by the
fold's identity with `where` and runs the ordinary reduction, so all of it fuses."""
from __future__ import annotations

import math
from typing import Any, Callable

from jaxlab.array import Array
from jaxlab.ir.dtypes import to_dtype, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, astype_, canonical_axes

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod"]


def _filled(name: str, a: Any, fill: float) -> Array:
    """`a` with its NaNs replaced by `fill` (integers and booleans have none)."""
    x = arraylike_(name, a)
    return ufuncs.where(ufuncs.isnan(x), fill, x) if x.jdtype.is_inexact else x


def _check_unused(name: str, out: Any, where: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if where is not None:
        raise NotImplementedError(f"{name}(where=...) is not supported")


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """Sum over `axis` treating NaNs as zero."""
    _check_unused("nansum", out, where)
    return reductions.sum(_filled("nansum", a, 0), axis, dtype, keepdims, initial)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
    """Product over `axis` treating NaNs as one."""
    _check_unused("nanprod", out, where)
    return reductions.prod(_filled("nanprod", a, 1), axis, dtype, keepdims, initial)


def _nan_extremum(name: str, fold: Callable[..., Array], fill: float):
    def fn(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
        _check_unused(name, out, where)
        x = arraylike_(name, a)
        if not x.jdtype.is_inexact:
            return fold(x, axis, keepdims=keepdims, initial=initial)
        nans = ufuncs.isnan(x)
        folded = fold(ufuncs.where(nans, fill, x), axis, keepdims=keepdims, initial=initial)
        # a slice of NaNs only gives NaN (as JAX; `initial` does not count as a value)
        return ufuncs.where(reductions.all(nans, axis, keepdims), math.nan, folded)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name[3:]} over `axis` ignoring NaNs (NaN where a slice is all NaN)."
    return fn


nanmax = _nan_extremum("nanmax", reductions.max, -math.inf)
nanmin = _nan_extremum("nanmin", reductions.min, math.inf)


def _non_nan_count(x: Array, axis: Any, keepdims: bool) -> Array:
    return reductions.sum(ufuncs.logical_not(ufuncs.isnan(x)), axis, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: Any = None) -> Array:
    """Mean of the non-NaN values over `axis` (NaN where there are none)."""
    _check_unused("nanmean", out, where)
    x = arraylike_("nanmean", a)
    if not x.jdtype.is_inexact:
        return reductions.mean(x, axis, dtype, keepdims)
    out_dtype = x.jdtype if dtype is None else to_dtype(dtype)
    total = nansum(x, axis, out_dtype, keepdims=keepdims)
    return astype_(ufuncs.true_divide(total, _non_nan_count(x, axis, keepdims)), out_dtype)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Array:
    """Variance of the non-NaN values over `axis`, divisor count - ddof (NaN when that is
    not positive)."""
    _check_unused("nanvar", out, where)
    x = arraylike_("nanvar", a)
    if mean is not None:
        raise NotImplementedError("nanvar(mean=...) is not supported")
    out_dtype = to_inexact(x.jdtype) if dtype is None else to_dtype(dtype)
    x = astype_(x, reductions._float_accumulator(out_dtype))
    centre = nanmean(x, axis, keepdims=True)
    squares = ufuncs.square(x - centre)
    divisor = _non_nan_count(x, axis, keepdims) - ddof
    total = nansum(squares, axis, keepdims=keepdims)
    out = ufuncs.where(divisor > 0, ufuncs.true_divide(total, divisor), math.nan)
    return astype_(out, out_dtype)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Array:
    """Standard deviation of the non-NaN values: sqrt of nanvar."""
    return ufuncs.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def _nan_arg(name: str, fold: Callable[..., Array], fill: float):
    def fn(a: Any, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Array:
        _check_unused(name, out, None)
        x = arraylike_(name, a)
        keep = bool(keepdims)
        if not x.jdtype.is_inexact:
            return fold(x, axis, keepdims=keep)
        nans = ufuncs.isnan(x)
        found = fold(ufuncs.where(nans, fill, x), axis, keepdims=keep)
        canonical_axes(axis, x.ndim)   # a bad axis raises here, before the all-NaN test
        # -1 where every value is NaN (as JAX)
        return ufuncs.where(reductions.all(nans, axis, keep), -1, found)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the first {name[6:]} ignoring NaNs along `axis` (flattened " \
                 f"when None); -1 where every value is NaN."
    return fn


nanargmax = _nan_arg("nanargmax", reductions.argmax, -math.inf)
nanargmin = _nan_arg("nanargmin", reductions.argmin, math.inf)


def _nan_cumulative(name: str, fold: Callable[..., Array], fill: float):
    def fn(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Array:
        _check_unused(name, out, None)
        return fold(_filled(name, a, fill), axis, dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Running {name[6:]} along `axis` treating NaNs as {fill:g}."
    return fn


nancumsum = _nan_cumulative("nancumsum", reductions.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", reductions.cumprod, 1)
