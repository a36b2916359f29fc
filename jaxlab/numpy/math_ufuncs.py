"""Elementwise functions composed from the basic ones: NaN-ignoring fmax/fmin, rint,
sinc, heaviside, float_power, logaddexp2, isposinf/isneginf, i0, fabs."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, to_inexact
from jaxlab.numpy import ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, promote_args, promote_dtypes
from jaxlab.numpy.creation import full

__all__ = ["fmax", "fmin", "rint", "sinc", "heaviside", "float_power", "logaddexp2",
           "isposinf", "isneginf", "i0", "fabs"]


def _inexact(name: str, *xs: Any) -> list[Array]:
    arrays = [arraylike_(name, x, i) for i, x in enumerate(xs)]
    return promote_args(*arrays, dtype=to_inexact(promote_dtypes(*arrays)))


def _real(name: str, x: Array) -> None:
    if x.jdtype.is_complex:
        raise TypeError(f"ufunc '{name}' does not support complex dtypes")


def fmax(x1: Any, x2: Any) -> Array:
    """Elementwise maximum where a NaN loses to a number (NaN only when both are)."""
    a, b = promote_args(arraylike_("fmax", x1), arraylike_("fmax", x2, 1))
    return ufuncs.where(ufuncs.isnan(b) | (a > b), a, b)


def fmin(x1: Any, x2: Any) -> Array:
    """Elementwise minimum where a NaN loses to a number (NaN only when both are)."""
    a, b = promote_args(arraylike_("fmin", x1), arraylike_("fmin", x2, 1))
    return ufuncs.where(ufuncs.isnan(b) | (a < b), a, b)


def rint(x: Any, /) -> Array:
    """Round to the nearest integer, halves to even; integers become floats."""
    (x,) = _inexact("rint", x)
    return ufuncs.round(x)


# below this |pi x|, sinc is its Taylor polynomial: exact to the dtype and with the
# right derivatives at 0 (the quotient's are NaN there)
_SINC_SERIES_BELOW = 1e-2


def sinc(x: Any, /) -> Array:
    """sin(pi x) / (pi x), 1 at 0."""
    (x,) = _inexact("sinc", x)
    px = x * math.pi
    near_zero = ufuncs.abs(px) < _SINC_SERIES_BELOW
    safe = ufuncs.where(near_zero, 1.0, px)
    squared = px * px
    series = 1.0 - squared / 6.0 * (1.0 - squared / 20.0)
    return ufuncs.where(near_zero, series, ufuncs.sin(safe) / safe)


def heaviside(x1: Any, x2: Any, /) -> Array:
    """0 for x1 < 0, x2 for x1 == 0, 1 for x1 > 0 (NaN stays NaN)."""
    x, at_zero = _inexact("heaviside", x1, x2)
    _real("heaviside", x)
    sign_step = ufuncs.where(x < 0, 0.0, ufuncs.where(x > 0, 1.0, x))
    return ufuncs.where(x == 0, at_zero, sign_step)


def float_power(x: Any, y: Any, /) -> Array:
    """x ** y computed in the inexact type of the operands."""
    return ufuncs.power(*_inexact("float_power", x, y))


_LN2 = math.log(2.0)


def logaddexp2(x1: Any, x2: Any, /) -> Array:
    """log2(2**x1 + 2**x2) without overflow."""
    x, y = _inexact("logaddexp2", x1, x2)
    return ufuncs.logaddexp(x * _LN2, y * _LN2) / _LN2


def _is_signed_inf(name: str, x: Any, infinity: float) -> Array:
    x = asarray_(x)
    if x.jdtype.is_complex:
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if not x.jdtype.is_float:
        return full(x.shape, False, DType.bool)
    return ufuncs.equal(x, infinity)


def isposinf(x: Any, /, out: None = None) -> Array:
    """Whether each element is +inf."""
    return _is_signed_inf("isposinf", x, math.inf)


def isneginf(x: Any, /, out: None = None) -> Array:
    """Whether each element is -inf."""
    return _is_signed_inf("isneginf", x, -math.inf)


@dataclass(frozen=True)
class _I0Plan:
    """I0 is its power series sum (x/2)^2k / (k!)^2 up to |x| = series_up_to (all terms
    positive, so it is accurate), e^x / sqrt(2 pi x) times its asymptotic series above;
    the term counts reach the dtype's precision."""
    series_up_to: float
    series_terms: int
    asymptotic_terms: int


_I0_PLANS = {DType.float64: _I0Plan(30.0, 60, 16)}
_I0_SINGLE = _I0Plan(15.0, 30, 10)   # float32 and narrower


def _i0_series(x: Array, terms: int) -> Array:
    t = ufuncs.square(x * 0.5)
    total: Any = 1.0
    for k in range(terms, 0, -1):   # Horner: 1 + t/1^2 (1 + t/2^2 (1 + ...))
        total = 1.0 + t / float(k * k) * total
    return total


def _i0_asymptotic(x: Array, terms: int) -> Array:
    total, term = 1.0, 1.0
    for k in range(1, terms):
        term = term * ((2 * k - 1) ** 2 / (8.0 * k)) / x
        total = total + term
    return ufuncs.exp(x) / ufuncs.sqrt(2.0 * math.pi * x) * total


def i0(x: Any) -> Array:
    """The modified Bessel function of the first kind, order 0."""
    (x,) = _inexact("i0", x)
    _real("i0", x)
    plan = _I0_PLANS.get(x.jdtype, _I0_SINGLE)
    magnitude = ufuncs.abs(x)
    small = magnitude <= plan.series_up_to
    # each branch sees only arguments it is accurate for, so neither's gradient is NaN
    series = _i0_series(ufuncs.where(small, magnitude, 0.0), plan.series_terms)
    asymptotic = _i0_asymptotic(ufuncs.where(small, 2 * plan.series_up_to, magnitude),
                                plan.asymptotic_terms)
    return ufuncs.where(small, series, asymptotic)


def fabs(x: Any, /) -> Array:
    """|x| as a float (integers become floats)."""
    (x,) = _inexact("fabs", x)
    _real("fabs", x)
    return ufuncs.abs(x)

