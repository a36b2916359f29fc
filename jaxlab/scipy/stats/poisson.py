"""jax.scipy.stats.poisson: the Poisson distribution with mean mu."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args, xlogy
from jaxlab.scipy.special_incomplete import gammaincc

__all__ = ["logpmf", "pmf", "cdf", "entropy"]

_ENTROPY_TERMS = 64         # k summed around mu (+-32: over 5.8 sd while mu <= 30)
_ENTROPY_SUM_UP_TO = 30.0   # past it, the asymptotic series in 1 / mu


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """k log mu - mu - log k!, -inf off the non-negative integers."""
    k, mu, loc = float_args(k, mu, loc)
    x = k - loc
    value = xlogy(x, mu) - mu - lgamma(x + 1)
    return jnp.where((x < 0) | (x != jnp.round(x)), -math.inf, value)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Array:
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Array:
    """P(K <= k) = Q(floor(k) + 1, mu), the regularized upper incomplete gamma."""
    k, mu, loc = float_args(k, mu, loc)
    x = jnp.floor(k - loc)
    return jnp.where(x < 0, 0.0, gammaincc(jnp.maximum(x, 0.0) + 1, mu))


def entropy(mu: Any, loc: Any = 0) -> Array:
    """-sum_k p(k) log p(k) over the k around mu; for large mu
    log(2 pi e mu) / 2 - 1 / (12 mu) - 1 / (24 mu^2) - 19 / (360 mu^3)."""
    mu = float_args(mu, loc)[0]
    k = jnp.arange(_ENTROPY_TERMS, dtype=mu.dtype).reshape((-1,) + (1,) * mu.ndim)
    small = jnp.minimum(mu, _ENTROPY_SUM_UP_TO)
    log_p = logpmf(jnp.maximum(jnp.floor(small) - _ENTROPY_TERMS // 2, 0.0) + k, small)
    summed = -jnp.sum(jnp.where(jnp.isfinite(log_p), jnp.exp(log_p) * log_p, 0.0), axis=0)
    inv = 1.0 / jnp.maximum(mu, _ENTROPY_SUM_UP_TO)
    series = 0.5 * jnp.log(2 * math.pi * math.e / inv) - inv * (
        1 / 12 + inv * (1 / 24 + inv * 19 / 360))
    value = jnp.where(mu <= _ENTROPY_SUM_UP_TO, summed, series)
    return jnp.where(mu > 0, value, jnp.where(mu == 0, 0.0, math.nan))
