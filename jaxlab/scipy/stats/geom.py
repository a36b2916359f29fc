"""jax.scipy.stats.geom: the number of trials up to the first success (k >= 1)."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args, xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Array:
    k, p, loc = float_args(k, p, loc)
    x = k - loc
    return jnp.where(x < 1, -math.inf, xlog1py(x - 1, -p) + jnp.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Array:
    return jnp.exp(logpmf(k, p, loc))
