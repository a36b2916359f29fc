"""lax's special functions that jax.scipy.special is built on in JAX (bessel_i0e/i1e,
igamma/igammac, betainc, zeta, polygamma): lax's dtype rules (floats of one dtype, no
promotion) in front of jaxlab.scipy.special's implementations, so there is one of each.
(jaxlab.scipy imports jaxlab.lax, hence the imports inside the functions.)"""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax import ops
from jaxlab.lax.dtype_rules import FLOAT, accepted

__all__ = ["bessel_i0e", "bessel_i1e", "igamma", "igammac", "betainc", "zeta", "polygamma"]


def _floats(name: str, *xs: Any) -> list[Array]:
    """Float operands of one dtype and shape (0-d ones broadcast), as lax wants."""
    return ops._lax_args(name, *accepted(name, xs, FLOAT))


def bessel_i0e(x: Any) -> Array:
    """exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0."""
    from jaxlab.scipy import special
    return special.i0e(*_floats("bessel_i0e", x))


def bessel_i1e(x: Any) -> Array:
    """exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1."""
    from jaxlab.scipy import special
    return special.i1e(*_floats("bessel_i1e", x))


def igamma(a: Any, x: Any) -> Array:
    """The regularized lower incomplete gamma function P(a, x)."""
    from jaxlab.scipy import special
    return special.gammainc(*_floats("igamma", a, x))


def igammac(a: Any, x: Any) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    from jaxlab.scipy import special
    return special.gammaincc(*_floats("igammac", a, x))


def betainc(a: Any, b: Any, x: Any) -> Array:
    """The regularized incomplete beta function I_x(a, b)."""
    from jaxlab.scipy import special
    return special.betainc(*_floats("betainc", a, b, x))


def zeta(x: Any, q: Any) -> Array:
    """The Hurwitz zeta function sum_k (k + q)^-x."""
    from jaxlab.scipy import special
    return special.zeta(*_floats("zeta", x, q))


def polygamma(m: Any, x: Any) -> Array:
    """The m-th derivative of digamma at x; m is a float array here (NaN where it is not
    a whole number), as lax's operands are."""
    from jaxlab.scipy import special
    m, x = _floats("polygamma", m, x)
    whole = m == jnp.floor(m)
    order = jnp.where(whole, m, 0.0).astype(jnp.int32)
    return jnp.where(whole, special.polygamma(order, x), jnp.nan).astype(x.dtype)
