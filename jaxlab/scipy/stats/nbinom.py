"""jax.scipy.stats.nbinom: failures before the n-th success, success probability p."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    k, n, p, loc = float_args(k, n, p, loc)
    x = k - loc
    value = lgamma(x + n) - lgamma(x + 1) - lgamma(n) + xlogy(n, p) + xlog1py(x, -p)
    return jnp.where(x < 0, -math.inf, value)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Array:
    return jnp.exp(logpmf(k, n, p, loc))
