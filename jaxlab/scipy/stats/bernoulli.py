"""jax.scipy.stats.bernoulli: one trial with success probability p."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args, xlog1py, xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    """k log p + (1 - k) log(1 - p) on [0, 1] (as JAX, between 0 and 1 too)."""
    k, p, loc = float_args(k, p, loc)
    x = k - loc
    return jnp.where((x < 0) | (x > 1), -math.inf, xlogy(x, p) + xlog1py(1 - x, -p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Array:
    k, p = float_args(k, p)
    value = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(k), math.nan, value)


def ppf(q: Any, p: Any) -> Array:
    q, p = float_args(q, p)
    value = jnp.where(q <= 1 - p, 0.0, 1.0)
    return jnp.where((q < 0) | (q > 1) | (p < 0) | (p > 1), math.nan, value)
