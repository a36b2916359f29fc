"""jax.scipy.special's regularized incomplete gamma and beta functions, by a power series
or a continued fraction (whichever converges fast where x is), summed in a fori_loop of
fixed length (a scan: it differentiates through in every argument, forward and reverse).
Each is jitted so an eager call compiles the loop once, not one dispatch per step."""
from __future__ import annotations

import math
from typing import Any, Callable

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.api import jit
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args

__all__ = ["gammainc", "gammaincc", "betainc"]

_SERIES_TERMS = 48       # enough for float32 where x < a + 1 and a <~ 100
_FRACTION_STEPS = 32     # Lentz steps; the fractions converge fast in their regions
_TINY = 1e-30            # Lentz's guard against a zero denominator


def _lower_series(a: Array, x: Array) -> Array:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))."""
    def add_term(n: Array, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        term, total = carry
        term = term * x / (a + n.astype(x.dtype))
        return term, total + term
    _, total = lax.fori_loop(1, _SERIES_TERMS, add_term, (jnp.ones_like(x), jnp.ones_like(x)))
    return jnp.exp(a * jnp.log(x) - x - lgamma(a + 1)) * total


def _nonzero(v: Array) -> Array:
    return jnp.where(jnp.abs(v) < _TINY, _TINY, v)


def _lentz(first: Array, part: Callable[[Array], tuple[Array, Array]], steps: int) -> Array:
    """b0 + a1 / (b1 + a2 / (b2 + ...)) by modified Lentz, (a_k, b_k) = part(k) for
    k = 1 .. steps - 1."""
    def step(k: Array, carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        f, c, d = carry
        a_k, b_k = part(k.astype(first.dtype))
        d = 1.0 / _nonzero(b_k + a_k * d)
        c = _nonzero(b_k + a_k / c)
        return f * c * d, c, d
    f = _nonzero(first)
    return lax.fori_loop(1, steps, step, (f, f, jnp.zeros_like(f)))[0]


def _upper_fraction(a: Array, x: Array) -> Array:
    """Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))."""
    fraction = _lentz(x + 1 - a, lambda k: (-k * (k - a), x + 2 * k + 1 - a), _FRACTION_STEPS)
    return jnp.exp(a * jnp.log(x) - x - lgamma(a)) / fraction


def _incomplete_gamma(a: Any, x: Any) -> tuple[Array, ...]:
    """(series P where x < a + 1, fraction Q elsewhere, the series' mask, invalid mask);
    each branch sees safe stand-in values where the other one is used."""
    a, x = float_args(a, x)
    use_series = x < a + 1
    invalid = (a < 0) | (x < 0) | jnp.isnan(a) | jnp.isnan(x)
    safe_a = jnp.where(invalid | (a == 0), 1.0, a)
    series_x = jnp.where(use_series & (x > 0), x, 0.5 * safe_a)
    fraction_x = jnp.where(use_series, safe_a + 2.0, x)
    return (_lower_series(safe_a, series_x), _upper_fraction(safe_a, fraction_x),
            use_series, invalid, a, x)


@jit
def gammainc(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma P(a, x); NaN for a < 0 or x < 0."""
    lower, upper, use_series, invalid, a, x = _incomplete_gamma(a, x)
    p = jnp.where(x == 0, 0.0, jnp.where(use_series, lower, 1.0 - upper))
    return jnp.where(invalid, math.nan, jnp.where(a == 0, jnp.where(x > 0, 1.0, math.nan), p))


@jit
def gammaincc(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    lower, upper, use_series, invalid, a, x = _incomplete_gamma(a, x)
    q = jnp.where(x == 0, 1.0, jnp.where(use_series, 1.0 - lower, upper))
    return jnp.where(invalid, math.nan, jnp.where(a == 0, jnp.where(x > 0, 0.0, math.nan), q))


def _beta_fraction(a: Array, b: Array, x: Array) -> Array:
    """I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / (1 + d1 / (1 + d2 / (1 + ...)))."""
    def part(k: Array) -> tuple[Array, Array]:
        m = jnp.floor(0.5 * k)      # k = 2m + 1: d_2m+1 (negative); k = 2m: d_2m
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        return jnp.where(k == 2 * m, even, odd), jnp.ones_like(x)
    fraction = _lentz(jnp.ones_like(x), part, 2 * _FRACTION_STEPS)
    log_front = a * jnp.log(x) + b * jnp.log1p(-x) - jnp.log(a) \
        - (lgamma(a) + lgamma(b) - lgamma(a + b))
    return jnp.exp(log_front) / fraction


@jit
def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta I_x(a, b); by symmetry 1 - I_(1-x)(b, a) where
    x is past the mean (a + 1) / (a + b + 2), where the fraction converges slowly."""
    a, b, x = float_args(a, b, x)
    invalid = (a < 0) | (b < 0) | (x < 0) | (x > 1) | ((a == 0) & (b == 0))
    edge = (a == 0) | (b == 0) | (x == 0) | (x == 1)
    edge_value = jnp.where((a == 0) | (x == 1), 1.0, 0.0)
    safe = ~(invalid | edge)
    a_s, b_s = jnp.where(safe, a, 1.0), jnp.where(safe, b, 1.0)
    x_s = jnp.where(safe, x, 0.5)
    flip = x_s > (a_s + 1) / (a_s + b_s + 2)
    direct = _beta_fraction(jnp.where(flip, b_s, a_s), jnp.where(flip, a_s, b_s),
                            jnp.where(flip, 1 - x_s, x_s))
    value = jnp.where(flip, 1.0 - direct, direct)
    return jnp.where(invalid, math.nan, jnp.where(edge, edge_value, value))
