"""jax.scipy.stats.gumbel_l: the left-skewed Gumbel (minimum) distribution."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = standardized(x, loc, scale)
    return z - jnp.exp(z) - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return -jnp.exp(standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logsf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return -jnp.expm1(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Array:
    p, loc, scale = float_args(p, loc, scale)
    return loc + scale * jnp.log(-jnp.log1p(-p))
