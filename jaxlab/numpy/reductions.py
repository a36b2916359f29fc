"""Reductions: each is one kernel whose following elementwise work fuses in."""
from __future__ import annotations

import math
from typing import Any, Callable

from jaxlab.array import Array
from jaxlab.core import reductions as red
from jaxlab.ir.dtypes import DType, default_int, default_uint, to_dtype, to_inexact
from jaxlab.numpy import ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, astype_, canonical_axes, canonical_axis
from jaxlab.numpy.shape_ops import broadcast_to, ravel, reshape

# how `initial` joins the folded value
_COMBINE: dict[str, Callable[[Any, Any], Array]] = {
    "reduce_sum": ufuncs.add, "reduce_prod": ufuncs.multiply,
    "reduce_max": ufuncs.maximum, "reduce_min": ufuncs.minimum}


def _keep(x: Array, out: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    if not keepdims:
        return out
    return reshape(out, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))


_HALF_FLOATS = (DType.float16, DType.bfloat16)


def _accumulate(x: Array, fold: Callable[[Array], Array]) -> Array:
    """fold(x), accumulating 16-bit floats in float32 and rounding once (as XLA does)."""
    if x.jdtype in _HALF_FLOATS:
        return astype_(fold(astype_(x, DType.float32)), x.jdtype)
    return fold(x)


def summed_dtype(dt: DType) -> DType:
    """sum/prod's result dtype, as JAX's: bools and integers narrower than the default
    int count in the default int (uint for unsigned ones)."""
    if dt.is_bool:
        return default_int()
    if dt.is_int:
        default = default_int() if dt.is_signed else default_uint()
        return default if dt.itemsize < default.itemsize else dt
    return dt


def _mask(x: Array, where: Any) -> Array:
    return broadcast_to(astype_(asarray_(where), DType.bool), x.shape)


def _masked(x: Array, where: Any, fill: Any) -> Array:
    """x with `fill` where the mask (broadcast to x) is False: a where= reduction then
    reduces every element, the masked ones being its identity."""
    if where is None:
        return x
    return ufuncs.where(_mask(x, where), x, astype_(asarray_(fill), x.jdtype))


def _mask_count(x: Array, where: Any, axes: tuple[int, ...], keepdims: bool = False) -> Any:
    """How many elements a reduction over `axes` takes: all, or the mask's Trues."""
    if where is None:
        return _count(x, axes)
    return sum(_mask(x, where), axes, dtype=DType.float32 if x.jdtype.itemsize < 8 else x.jdtype,
               keepdims=keepdims)


def _reduction(name: str, prim_name: str, sum_like: bool):
    prim = red.reduce_prims[prim_name]

    def fn(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
        x = arraylike_(name, a)
        if dtype is not None:
            x = astype_(x, to_dtype(dtype))
        elif sum_like:
            x = astype_(x, summed_dtype(x.jdtype))
        axes = canonical_axes(axis, x.ndim)
        if not sum_like and initial is None and 0 in [x.shape[i] for i in axes]:
            raise ValueError(f"zero-size array to reduction operation {name} "
                             f"which has no identity")
        if where is not None and not sum_like and initial is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to "
                             f"use a where mask one has to specify 'initial'")
        x = _masked(x, where, initial if not sum_like else _IDENTITY[prim_name])
        out = _accumulate(x, lambda v: prim.bind(v, axes=axes))
        if initial is not None:
            out = astype_(_COMBINE[prim_name](out, initial), out.jdtype)
        return _keep(x, out, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} over `axis` (all axes when None), as jax.numpy.{name}."
    return fn


_IDENTITY = {"reduce_sum": 0, "reduce_prod": 1}
sum = _reduction("sum", "reduce_sum", True)  # noqa: A001
prod = _reduction("prod", "reduce_prod", True)
max = _reduction("max", "reduce_max", False)  # noqa: A001
min = _reduction("min", "reduce_min", False)  # noqa: A001
amax, amin = max, min


def _bool_reduction(name: str, prim_name: str):
    prim = red.reduce_prims[prim_name]

    def fn(a: Any, axis: Any = None, keepdims: bool = False, *, where: Any = None) -> Array:
        # a masked element is the fold's identity: False for any, True for all
        x = _masked(astype_(arraylike_(name, a), DType.bool), where, prim_name == "reduce_min")
        axes = canonical_axes(axis, x.ndim)
        return _keep(x, prim.bind(x, axes=axes), axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} of the truth values over `axis`, as jax.numpy.{name}."
    return fn


any = _bool_reduction("any", "reduce_max")  # noqa: A001  (or over booleans)
all = _bool_reduction("all", "reduce_min")  # noqa: A001  (and over booleans)


# --- statistics -----------------------------------------------------------------

def _float_accumulator(dt: DType) -> DType:
    return DType.float32 if dt in _HALF_FLOATS else dt


def _count(x: Array, axes: tuple[int, ...]) -> int:
    return math.prod(x.shape[i] for i in axes)


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, *,
         where: Any = None) -> Array:
    """Arithmetic mean; integers give float32, float16 is summed in float32 (as JAX)."""
    x = arraylike_("mean", a)
    out_dtype = to_inexact(x.jdtype) if dtype is None else to_dtype(dtype)
    compute = _float_accumulator(out_dtype)
    axes = canonical_axes(axis, x.ndim)
    total = sum(x, axes, dtype=compute, keepdims=keepdims, where=where)
    return astype_(ufuncs.true_divide(total, _mask_count(x, where, axes, keepdims)), out_dtype)


def _ddof(name: str, ddof: int, correction: Any) -> int:
    """The Array API's `correction` is NumPy's `ddof`; JAX refuses both at once."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
    return correction


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False,
        *, where: Any = None, correction: Any = None) -> Array:
    """Variance with divisor N - ddof (NaN where that is not positive, as JAX)."""
    ddof = _ddof("var", ddof, correction)
    x = arraylike_("var", a)
    out_dtype = to_inexact(x.jdtype) if dtype is None else to_dtype(dtype)
    x = astype_(x, _float_accumulator(out_dtype))
    axes = canonical_axes(axis, x.ndim)
    centered = ufuncs.square(x - mean(x, axes, keepdims=True, where=where))
    divisor = _mask_count(x, where, axes, keepdims) - ddof
    if where is None:
        divisor = divisor if divisor > 0 else math.nan
    else:   # per reduced group, from the mask: NaN where it leaves too few elements
        divisor = ufuncs.where(divisor > 0, divisor, math.nan)
    out = ufuncs.true_divide(sum(centered, axes, keepdims=keepdims, where=where), divisor)
    return astype_(out, out_dtype)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False,
        *, where: Any = None, correction: Any = None) -> Array:
    """Standard deviation: sqrt of var (same arguments)."""
    ddof = _ddof("std", ddof, correction)
    return ufuncs.sqrt(var(a, axis, dtype, ddof, keepdims, where=where))


# --- positions and running folds ---------------------------------------------------

def _arg_reduction(name: str, prim):
    def fn(a: Any, axis: int | None = None, keepdims: bool = False) -> Array:
        x = arraylike_(name, a)
        flat = x if axis is not None else ravel(x)
        ax = canonical_axis(0 if axis is None else axis, flat.ndim)
        out = prim.bind(flat, axes=(ax,), index_dtype=default_int())
        return _keep(x, out, tuple(range(x.ndim)) if axis is None else (ax,), keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the first {name[3:]} along `axis` (of the flattened array " \
                 f"when None), as jax.numpy.{name}."
    return fn


argmax = _arg_reduction("argmax", red.argmax_p)
argmin = _arg_reduction("argmin", red.argmin_p)


def _cumulative(name: str):
    prim = red.cumulative_prims[name]

    def fn(a: Any, axis: int | None = None, dtype: Any = None) -> Array:
        x = arraylike_(name, a)
        if axis is None:
            x, axis = ravel(x), 0
        if dtype is not None:
            x = astype_(x, to_dtype(dtype))
        elif x.jdtype.is_bool:   # counts, as JAX
            x = astype_(x, default_int())
        axis = canonical_axis(axis, x.ndim)
        return _accumulate(x, lambda v: prim.bind(v, axis=axis))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Running {name[3:]} along `axis` (of the flattened array when None), " \
                 f"as jax.numpy.{name}."
    return fn


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "any", "all", "mean", "var", "std",
           "argmax", "argmin", "cumsum", "cumprod"]
