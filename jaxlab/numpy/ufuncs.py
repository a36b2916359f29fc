"""Elementwise functions of jaxlab.numpy, with JAX's dtype rules.

Each function promotes its operands (float32 default float, int32 default
int, Python scalars weakly typed), broadcasts them and binds primitives; the
functions without a primitive of their own are composed from the others, and
all of it fuses into one kernel.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from jaxlab.array import Array
from jaxlab.core import math_functions as mf
from jaxlab.core import complex_rules as cr
from jaxlab.core import elementwise as ew
from jaxlab.core.primitives import Primitive
from jaxlab.ir.dtypes import DType, default_int, to_inexact
from jaxlab.numpy._util import (asarray_, astype_, broadcast_all, promote_args, promote_dtypes,
                                refuses_lists)
from jaxlab.numpy.creation import full

_LN2 = math.log(2.0)


# --- argument handling ----------------------------------------------------------

_UFUNC = "an elementwise op"   # names the op in same-rank broadcasting errors


def _float_args(*xs: Any) -> list[Array]:
    """Promoted to an inexact dtype: integers and booleans become float32 (float64
    from 64-bit integers)."""
    dt = promote_dtypes(*xs)
    return promote_args(*xs, dtype=to_inexact(dt), op=_UFUNC)


def _numeric_args(*xs: Any) -> list[Array]:
    """Promoted to a numeric dtype: booleans become the default int."""
    dt = promote_dtypes(*xs)
    return promote_args(*xs, dtype=default_int() if dt.is_bool else dt, op=_UFUNC)


# kind -> (accepts the dtype?, what to say when not)
_KINDS: dict[str, tuple[Callable[[DType], bool], str]] = {
    "any": (lambda d: True, ""),
    "numeric": (lambda d: not d.is_bool, "numbers (not booleans)"),
    "bitwise": (lambda d: not d.is_float, "integers or booleans"),
    "integer": (lambda d: d.is_int, "integers"),
}


def _require(name: str, x: Array, kind: str) -> None:
    ok, what = _KINDS[kind]
    if not ok(x.jdtype):
        raise TypeError(f"{name} needs {what}, got {x.jdtype} operands")


def _unary_float(prim: Primitive, name: str) -> Callable[[Any], Array]:
    def fn(x: Any) -> Array:
        (x,) = _float_args(x)
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (integers are promoted to float32), as jax.numpy.{name}."
    return fn


def _binary(prim: Primitive, name: str, kind: str = "any",
            on_bool: Primitive | None = None) -> Callable[[Any, Any], Array]:
    """A broadcasting binary ufunc; `on_bool` replaces prim for booleans (as JAX's add is or)."""
    def fn(x: Any, y: Any) -> Array:
        x, y = promote_args(x, y, op=name)
        _require(name, x, kind)
        return (on_bool if on_bool is not None and x.jdtype.is_bool else prim).bind(x, y)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting and JAX's dtype promotion."
    return fn


def _on_floats(body: Callable[..., Array]) -> Callable[..., Array]:
    """A ufunc computed by `body` on operands promoted to a float dtype."""
    @functools.wraps(body)
    def fn(*xs: Any) -> Array:
        xs = _float_args(*xs)
        if xs[0].jdtype in (DType.float16, DType.bfloat16):   # compute in float32 and
            half = xs[0].jdtype                                  # round once, as XLA does
            return astype_(body(*(astype_(x, DType.float32) for x in xs)), half)
        return body(*xs)
    return fn


def _complex_by_primitive(name: str) -> Callable[[Callable[[Array], Array]],
                                                 Callable[[Any], Array]]:
    """A float ufunc whose complex operands bind the primitive of the complex function
    (core/math_functions.py); real ones run the body."""
    prim = mf.prims[name]

    def wrap(body: Callable[[Array], Array]) -> Callable[[Any], Array]:
        @functools.wraps(body)
        def fn(x: Any) -> Array:
            (x,) = _float_args(x)
            return prim.bind(x) if x.jdtype.is_complex else body(x)
        return fn
    return wrap


# --- one primitive each ---------------------------------------------------------

sin = _unary_float(ew.unary_prims["sin"], "sin")
cos = _unary_float(ew.unary_prims["cos"], "cos")
arcsin = _unary_float(ew.unary_prims["asin"], "arcsin")
arctan = _unary_float(ew.unary_prims["atan"], "arctan")
exp = _unary_float(ew.unary_prims["exp"], "exp")
log = _unary_float(ew.unary_prims["log"], "log")
sqrt = _unary_float(ew.unary_prims["sqrt"], "sqrt")
tanh = _unary_float(ew.unary_prims["tanh"], "tanh")
reciprocal = _unary_float(ew.unary_prims["reciprocal"], "reciprocal")

_or, _and = ew.binary_prims["or"], ew.binary_prims["and"]
add = _binary(ew.binary_prims["add"], "add", on_bool=_or)
subtract = _binary(ew.binary_prims["sub"], "subtract", "numeric")
multiply = _binary(ew.binary_prims["mul"], "multiply", on_bool=_and)
maximum = _binary(ew.binary_prims["max"], "maximum")
minimum = _binary(ew.binary_prims["min"], "minimum")
less = _binary(ew.binary_prims["lt"], "less")
not_equal = _binary(ew.binary_prims["ne"], "not_equal")
equal = _binary(ew.eq_p, "equal")
less_equal = _binary(ew.le_p, "less_equal")
bitwise_and = _binary(_and, "bitwise_and", "bitwise")
bitwise_or = _binary(_or, "bitwise_or", "bitwise")
bitwise_xor = _binary(ew.binary_prims["xor"], "bitwise_xor", "bitwise")


def greater(x: Any, y: Any) -> Array:
    return less(y, x)


def greater_equal(x: Any, y: Any) -> Array:
    return less_equal(y, x)


_shl, _shr = ew.binary_prims["shift_left"], ew.binary_prims["shift_right"]


def _shift_args(name: str, x: Any, y: Any) -> list[Array]:
    x, y = _numeric_args(x, y)
    _require(name, x, "integer")
    return [x, y]


def left_shift(x: Any, y: Any) -> Array:
    x, y = _shift_args("left_shift", x, y)
    # amounts outside [0, width) shift every bit out, as in JAX (the primitive uses the
    # amount's low 5 bits, 6 for 64-bit values; narrower ones shift in 32 bits and wrap)
    width = _shift_width(x)
    return where((y >= 0) & (y < width), _shl.bind(x, y), 0)


def right_shift(x: Any, y: Any) -> Array:
    """Arithmetic for signed integers, logical for unsigned ones, as in JAX."""
    x, y = _shift_args("right_shift", x, y)
    width = _shift_width(x)
    if not x.jdtype.is_signed:
        return where(y < width, _shr.bind(x, y), 0)
    # an amount outside [0, width) leaves only copies of the sign bit, as width - 1 does
    return _shr.bind(x, where((y >= 0) & (y < width), y, width - 1))


def _shift_width(x: Array) -> int:
    """The bits a shift acts on: 64 for 64-bit values, else the 32 of the primitive."""
    return 64 if x.jdtype.itemsize == 8 else 32


def true_divide(x: Any, y: Any) -> Array:
    return ew.div_p.bind(*_float_args(x, y))


divide = true_divide


def negative(x: Any) -> Array:
    x = asarray_(x)
    _require("negative", x, "numeric")
    return ew.neg_p.bind(x)


def positive(x: Any) -> Array:
    return asarray_(x)


def abs(x: Any) -> Array:  # noqa: A001  (numpy's name)
    return ew.abs_p.bind(asarray_(x))


absolute = abs


def sign(x: Any) -> Array:
    x = asarray_(x)
    _require("sign", x, "numeric")
    return ew.sign_p.bind(x)


def invert(x: Any) -> Array:
    x = asarray_(x)
    _require("invert", x, "bitwise")
    return ew.not_p.bind(x)


bitwise_not = invert


def logical_not(x: Any) -> Array:
    return ew.not_p.bind(astype_(asarray_(x), DType.bool))


def _logical(name: str, fn: Callable[[Any, Any], Array]) -> Callable[[Any, Any], Array]:
    def logical(x: Any, y: Any) -> Array:
        return fn(astype_(asarray_(x), DType.bool), astype_(asarray_(y), DType.bool))
    logical.__name__ = logical.__qualname__ = name
    return logical


logical_and = _logical("logical_and", bitwise_and)
logical_or = _logical("logical_or", bitwise_or)
logical_xor = _logical("logical_xor", bitwise_xor)


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Array | tuple[Array, ...]:
    """x where condition holds, else y; with the condition alone, its nonzero indices
    (as jnp.nonzero: the count decides the shape unless `size` is given)."""
    if x is None and y is None:
        from jaxlab.numpy.array_api import nonzero   # that module builds on this one
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError(f"where requires ndarray or scalar arguments, got NoneType at "
                        f"position {1 if x is None else 2}: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value are only for the one-argument where(condition)")
    cond = astype_(asarray_(condition), DType.bool)
    dt = promote_dtypes(x, y)
    c, a, b = broadcast_all(cond, asarray_(x, dt), asarray_(y, dt))
    return ew.select_n_p.bind(c, b, a)


# --- powers ---------------------------------------------------------------------

def power(x: Any, y: Any) -> Array:
    """x ** y; a Python int exponent uses exact repeated squaring, as in JAX."""
    if isinstance(y, (int, np.integer)):
        (x,) = _numeric_args(x)
        return ew.integer_pow_p.bind(x, y=int(y))
    return ew.pow_p.bind(*_numeric_args(x, y))


def square(x: Any) -> Array:
    return power(x, 2)


@_on_floats
def exp2(x: Array) -> Array:
    return exp(x * _LN2)


@_on_floats
def expm1(x: Array) -> Array:
    return mf.prims["expm1"].bind(x)


@_on_floats
def log1p(x: Array) -> Array:
    return mf.prims["log1p"].bind(x)


def _log_base(x: Array, log_of_base: float) -> Array:
    """log(x) / log(base); a complex log is divided part by part (dividing by
    log(base) + 0j would turn an infinite part's inf * 0 into NaN)."""
    out = log(x)
    if out.jdtype.is_complex:
        return cr.complex_p.bind(cr.real_p.bind(out) / log_of_base,
                                 cr.imag_p.bind(out) / log_of_base)
    return out / log_of_base


@_on_floats
def log2(x: Array) -> Array:
    return _log_base(x, _LN2)


@_on_floats
def log10(x: Array) -> Array:
    return _log_base(x, math.log(10.0))


@_on_floats
def logaddexp(x: Array, y: Array) -> Array:
    delta = x - y
    # delta is nan when both are the same infinity: then x + y is the answer
    return where(delta != delta, x + y, maximum(x, y) + log1p(exp(-abs(delta))))


@_on_floats
def cbrt(x: Array) -> Array:
    return copysign(exp(log(abs(x)) / 3.0), x)


# --- trigonometric and hyperbolic ------------------------------------------------

@_complex_by_primitive("tan")
@_on_floats
def tan(x: Array) -> Array:
    return sin(x) / cos(x)


@_complex_by_primitive("acos")
@_on_floats
def arccos(x: Array) -> Array:
    # acos(x) = 2 atan(sqrt((1-x)/(1+x))): no cancellation near +-1, unlike pi/2 - asin
    return 2.0 * arctan(sqrt((1.0 - x) / (1.0 + x)))


@_on_floats
def arctan2(y: Array, x: Array) -> Array:
    return ew.atan2_p.bind(y, x)


@_on_floats
def sinh(x: Array) -> Array:
    return mf.prims["sinh"].bind(x)


@_on_floats
def cosh(x: Array) -> Array:
    return mf.prims["cosh"].bind(x)


_LARGE = 1e4  # beyond it, sqrt(x*x - 1) == x in float32 and x*x may overflow


@_on_floats
def arcsinh(x: Array) -> Array:
    return mf.prims["asinh"].bind(x)


@_complex_by_primitive("acosh")
@_on_floats
def arccosh(x: Array) -> Array:
    t = x - 1.0
    # acosh(x) = log1p(t + sqrt(t) sqrt(x+1)): t is exact near 1, and x < 1 gives NaN
    return where(x > _LARGE, log(x) + _LN2, log1p(t + sqrt(t) * sqrt(x + 1.0)))


@_complex_by_primitive("atanh")
@_on_floats
def arctanh(x: Array) -> Array:
    return 0.5 * log1p(2.0 * x / (1.0 - x))


@_on_floats
def deg2rad(x: Array) -> Array:
    return x * (math.pi / 180.0)


@_on_floats
def rad2deg(x: Array) -> Array:
    return x * (180.0 / math.pi)


radians, degrees = deg2rad, rad2deg


@_on_floats
def hypot(x: Array, y: Array) -> Array:
    """sqrt(x^2 + y^2) without overflow: big * sqrt(1 + (small/big)^2), as JAX."""
    x, y = abs(x), abs(y)
    big, small = maximum(x, y), minimum(x, y)
    safe = where(big == 0.0, 1.0, big)
    out = where(big == 0.0, big, big * sqrt(1.0 + square(small / safe)))
    return where((x == math.inf) | (y == math.inf), math.inf, out)


# --- signs, rounding and classification -------------------------------------------

def signbit(x: Any) -> Array:
    """True where the sign bit is set (also for -0.0 and negative NaNs)."""
    x = asarray_(x)
    if not x.jdtype.is_float:
        return less(x, 0)
    # float16 -> float32 is exact, sign bit included
    bits = ew.bitcast_convert_type_p.bind(astype_(x, DType.float32), new_dtype=DType.int32)
    return less(bits, 0)


@_on_floats
def copysign(x: Array, y: Array) -> Array:
    return where(signbit(y), -abs(x), abs(x))


def _refuse_complex(name: str, x: Array) -> None:
    if x.jdtype.is_complex:   # JAX's words
        raise TypeError(f"{name} does not accept dtype {x.jdtype}. Accepted dtypes are "
                        f"subtypes of floating.")


def _float_rounding(prim: Primitive, name: str) -> Callable[[Any], Array]:
    def fn(x: Any) -> Array:
        x = asarray_(x)
        _refuse_complex(name, x)
        return prim.bind(x) if x.jdtype.is_float else x   # integers are already whole
    fn.__name__ = fn.__qualname__ = name
    return fn


floor = _float_rounding(ew.unary_prims["floor"], "floor")
ceil = _float_rounding(ew.unary_prims["ceil"], "ceil")


def trunc(x: Any) -> Array:
    x = asarray_(x)
    _refuse_complex("trunc", x)
    return where(x < 0, ceil(x), floor(x)) if x.jdtype.is_float else x



def round(x: Any, decimals: int = 0) -> Array:  # noqa: A001
    """Round half to even at `decimals` digits, as jnp.round."""
    x = asarray_(x)
    if not x.jdtype.is_float:
        if decimals < 0:
            raise NotImplementedError("round of integers with decimals < 0 is not supported")
        return x
    if decimals == 0:
        return ew.round_p.bind(x)
    scale = 10.0 ** decimals
    return ew.round_p.bind(x * scale) / scale


around = round


def clip(a: Any, min: Any = None, max: Any = None) -> Array:  # noqa: A002
    """Clamp to [min, max] (either may be None); NaN stays NaN."""
    out = asarray_(a)
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return out


def isnan(x: Any) -> Array:
    x = asarray_(x)
    if x.jdtype.is_complex:   # either part
        return isnan(cr.real_p.bind(x)) | isnan(cr.imag_p.bind(x))
    return not_equal(x, x) if x.jdtype.is_float else full(x.shape, False, DType.bool)


def isinf(x: Any) -> Array:
    x = asarray_(x)
    if x.jdtype.is_complex:
        return isinf(cr.real_p.bind(x)) | isinf(cr.imag_p.bind(x))
    return equal(abs(x), math.inf) if x.jdtype.is_float else full(x.shape, False, DType.bool)


def isfinite(x: Any) -> Array:
    x = asarray_(x)
    return ew.is_finite_p.bind(x) if x.jdtype.is_inexact else full(x.shape, True, DType.bool)


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN -> `nan`, +-inf -> `posinf`/`neginf` (default: the dtype's largest finite)."""
    x = asarray_(x)
    if not x.jdtype.is_float:
        return x
    info = np.finfo(x.dtype)   # Python floats below stay weakly typed
    x = where(isnan(x), nan, x)
    x = where(x == math.inf, float(info.max) if posinf is None else posinf, x)
    return where(x == -math.inf, float(info.min) if neginf is None else neginf, x)


# --- division ---------------------------------------------------------------------

_rem = ew.binary_prims["rem"]


def _float_divmod(x: Array, y: Array) -> tuple[Array, Array]:
    """Python's float divmod (CPython's float_divmod, as JAX)."""
    mod = _rem.bind(x, y)
    div = true_divide(where(y == 0.0, x, x - mod), y)
    fix_up = (mod != 0.0) & (sign(y) != sign(mod))
    return ew.round_p.bind(where(fix_up, div - 1.0, div)), where(fix_up, mod + y, mod)


def floor_divide(x: Any, y: Any) -> Array:
    """x // y rounding toward -inf, for integers and floats."""
    x, y = _numeric_args(x, y)
    if x.jdtype.is_float:
        return _float_divmod(x, y)[0]
    q = ew.div_p.bind(x, y)   # truncates
    if not x.jdtype.is_signed:   # as JAX: no sign fix-up (x // 0 stays all ones)
        return q
    return where((sign(x) != sign(y)) & (_rem.bind(x, y) != 0), q - 1, q)


def remainder(x: Any, y: Any) -> Array:
    """x % y with the sign of y, as Python and NumPy."""
    x, y = _numeric_args(x, y)
    if not x.jdtype.is_float:
        y = where(y == 0, 1, y)   # x % 0 == 0 for integers, as JAX
    trunc_mod = _rem.bind(x, y)
    fix_up = (trunc_mod != 0) & ((trunc_mod < 0) != (y < 0))
    return where(fix_up, trunc_mod + y, trunc_mod)


mod = remainder


def divmod(x: Any, y: Any) -> tuple[Array, Array]:  # noqa: A001
    x, y = _numeric_args(x, y)
    if x.jdtype.is_float:
        return _float_divmod(x, y)
    return floor_divide(x, y), remainder(x, y)


def fmod(x: Any, y: Any) -> Array:
    """Remainder with the sign of x (C's fmod)."""
    x, y = _numeric_args(x, y)
    if not x.jdtype.is_float:
        y = where(y == 0, 1, y)
    return _rem.bind(x, y)


__all__ = [
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "radians", "degrees", "hypot",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "sqrt", "cbrt",
    "reciprocal", "power", "square",
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "fmod", "divmod", "negative", "positive", "abs", "absolute", "sign", "signbit",
    "copysign", "maximum", "minimum", "clip", "floor", "ceil", "trunc", "round",
    "around", "isnan", "isinf", "isfinite", "nan_to_num", "where",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "left_shift", "right_shift",
]

# as JAX: lists and tuples are not arrays here (jnp.asarray converts them)
globals().update({name: refuses_lists(globals()[name]) for name in __all__})
