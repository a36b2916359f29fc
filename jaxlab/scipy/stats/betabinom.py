"""jax.scipy.stats.betabinom: a binomial whose p is drawn from beta(a, b)."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args
from jaxlab.scipy.special_gamma import betaln

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    k, n, a, b, loc = float_args(k, n, a, b, loc)
    x = k - loc
    log_comb = lgamma(n + 1) - lgamma(x + 1) - lgamma(n - x + 1)
    value = log_comb + betaln(x + a, n - x + b) - betaln(a, b)
    return jnp.where((x < 0) | (x > n), -math.inf, value)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Array:
    return jnp.exp(logpmf(k, n, a, b, loc))
