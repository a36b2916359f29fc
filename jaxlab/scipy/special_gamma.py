"""jax.scipy.special's gamma family: gamma, beta and their logs, factorials, binomials,
Pochhammer symbols, the multivariate log-gamma, Hurwitz zeta and polygamma."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import digamma, lgamma
from jaxlab.numpy._util import asarray_
from jaxlab.scipy.special import float_args

__all__ = ["gammasgn", "gamma", "loggamma", "betaln", "beta", "factorial", "comb", "poch",
           "multigammaln", "zeta", "polygamma"]


def gammasgn(x: Any) -> Array:
    """The sign of Gamma(x): -1 on (-1, 0), (-3, -2), ...; NaN at the poles."""
    x = float_args(x)[0]
    floor = jnp.floor(x)
    odd = jnp.remainder(floor, 2.0) == 1.0
    pole = (x < 0) & (x == floor)
    return jnp.where(pole | jnp.isnan(x), math.nan, jnp.where((x < 0) & odd, -1.0, 1.0))


def gamma(x: Any) -> Array:
    x = float_args(x)[0]
    return gammasgn(x) * jnp.exp(lgamma(x))


def loggamma(x: Any) -> Array:
    """log Gamma(x) for real x > 0; NaN at and below 0, as JAX for real input."""
    x = float_args(x)[0]
    return jnp.where(x > 0, lgamma(x), math.nan)


def betaln(a: Any, b: Any) -> Array:
    a, b = float_args(a, b)
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def beta(a: Any, b: Any) -> Array:
    a, b = float_args(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def factorial(n: Any, exact: bool = False) -> Array:
    """Gamma(n + 1), and 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n = float_args(n)[0]
    return jnp.where(n < 0, 0.0, jnp.exp(lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Array:
    """N choose k (with repetition: N + k - 1 choose k); 0 outside 0 <= k <= N."""
    N, k = float_args(N, k)
    if repetition:
        N = N + k - 1
    valid = (k >= 0) & (k <= N) & (N >= 0)
    safe_n, safe_k = jnp.where(valid, N, 1.0), jnp.where(valid, k, 0.0)
    value = jnp.exp(lgamma(safe_n + 1) - lgamma(safe_k + 1) - lgamma(safe_n - safe_k + 1))
    return jnp.where(valid, value, 0.0)


def poch(z: Any, m: Any) -> Array:
    """The rising factorial Gamma(z + m) / Gamma(z)."""
    z, m = float_args(z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    return sign * jnp.exp(lgamma(z + m) - lgamma(z))


def multigammaln(a: Any, d: Any) -> Array:
    """log of the multivariate gamma function of dimension d (a static integer)."""
    d = _static_int("multigammaln", "d", d)
    a = float_args(a)[0]
    terms = sum(lgamma(a - 0.5 * j) for j in range(d))
    return terms + 0.25 * d * (d - 1) * math.log(math.pi)


def _static_int(fun: str, name: str, value: Any) -> int:
    try:
        return int(value)
    except TypeError:
        raise TypeError(f"{fun}: `{name}` must be a concrete integer, got {value!r}") from None


# Euler-Maclaurin for the Hurwitz zeta: N terms summed directly, then the tail's integral,
# half its first term and Bernoulli corrections B_2j / (2j)! (as float32 needs)
_ZETA_TERMS = 12
_ZETA_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def zeta(x: Any, q: Any = None) -> Array:
    """The Hurwitz zeta function sum_k (k + q)^-x (q = 1: Riemann's); NaN for x < 1."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None "
                                  "to compute the Hurwitz Zeta function.")
    s, q = float_args(x, q)
    total = sum(jnp.power(q + k, -s) for k in range(_ZETA_TERMS))
    a = q + _ZETA_TERMS
    total = total + jnp.power(a, 1 - s) / (s - 1) + 0.5 * jnp.power(a, -s)
    rising, power = s, jnp.power(a, -s - 1)    # s (s+1) ... (s+2j-2), a^(-s-2j+1)
    for j, b2j in enumerate(_ZETA_BERNOULLI, start=1):
        total = total + b2j / math.factorial(2 * j) * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (a * a)
    nan = (s < 1) | ((q <= 0) & (q == jnp.floor(q)))
    return jnp.where(s == 1, math.inf, jnp.where(nan, math.nan, total))


def polygamma(n: Any, x: Any) -> Array:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
    n_arr = asarray_(n)
    if not n_arr.jdtype.is_int:
        raise ValueError(f"Argument `n` to polygamma must be of integer type. "
                         f"Got dtype {n_arr.dtype}.")
    n, x = float_args(n_arr, x)
    higher = jnp.where(n >= 1, n, 1.0)
    sign = jnp.where(jnp.remainder(higher, 2.0) == 1.0, 1.0, -1.0)
    value = sign * jnp.exp(lgamma(higher + 1)) * zeta(higher + 1, x)
    return jnp.where(n == 0, digamma(x), jnp.where(n < 0, math.nan, value))
