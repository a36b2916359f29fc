"""jax.scipy.special's modified Bessel functions of the first kind, orders 0 and 1, plain
and exponentially scaled: the power series up to |x| = 15, Hankel's asymptotic series past
it (both summed in jitted fori_loops, so eager calls compile once)."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.api import jit
from jaxlab.array import Array
from jaxlab.scipy.special import float_args

__all__ = ["i0e", "i1e", "i0", "i1"]

_SERIES_LIMIT = 15.0
_SERIES_TERMS = 40        # (x/2)^2k / (k! (k+nu)!) is below float32's epsilon by then
_ASYMPTOTIC_TERMS = 10


def _scaled(order: int, x: Array) -> Array:
    """exp(-|x|) I_order(x) for order 0 or 1 (odd for 1: its series starts at x / 2)."""
    ax = jnp.abs(x)
    small = ax <= _SERIES_LIMIT
    xs = jnp.where(small, x, 1.0)
    quarter = 0.25 * xs * xs

    def series_term(k: Array, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        term, total = carry
        kf = k.astype(x.dtype)
        term = term * quarter / (kf * (kf + order))
        return term, total + term
    first = jnp.ones_like(xs) if order == 0 else 0.5 * xs
    _, series = lax.fori_loop(1, _SERIES_TERMS, series_term, (first, first))
    series = series * jnp.exp(-jnp.abs(xs))

    xl = jnp.where(small, 2 * _SERIES_LIMIT, ax)
    mu = 4.0 * order * order

    def hankel_term(k: Array, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        term, total = carry
        kf = k.astype(x.dtype)
        term = -term * (mu - (2 * kf - 1) ** 2) / (8 * kf * xl)
        return term, total + term
    one = jnp.ones_like(xl)
    _, hankel = lax.fori_loop(1, _ASYMPTOTIC_TERMS, hankel_term, (one, one))
    hankel = hankel / jnp.sqrt(2 * math.pi * xl)
    if order == 1:
        hankel = jnp.sign(x) * hankel
    return jnp.where(small, series, hankel)


@jit
def i0e(x: Any) -> Array:
    """exp(-|x|) I0(x)."""
    return _scaled(0, float_args(x)[0])


@jit
def i1e(x: Any) -> Array:
    """exp(-|x|) I1(x)."""
    return _scaled(1, float_args(x)[0])


@jit
def i0(x: Any) -> Array:
    """The modified Bessel function of the first kind, order 0."""
    x = float_args(x)[0]
    return jnp.exp(jnp.abs(x)) * _scaled(0, x)


@jit
def i1(x: Any) -> Array:
    """The modified Bessel function of the first kind, order 1."""
    x = float_args(x)[0]
    return jnp.exp(jnp.abs(x)) * _scaled(1, x)
