"""jax.scipy.stats.expon: the exponential distribution."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = standardized(x, loc, scale)
    return jnp.where(z < 0, -math.inf, -z - jnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 0.0, -jnp.expm1(-z))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 0.0, -z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logsf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = float_args(q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    return jnp.where(inside, loc - scale * jnp.log1p(-q), math.nan)
