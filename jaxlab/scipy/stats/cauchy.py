"""jax.scipy.stats.cauchy: the Cauchy distribution."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = standardized(x, loc, scale)
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(z * z)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return 0.5 + jnp.arctan(z) / math.pi


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return 0.5 - jnp.arctan(z) / math.pi


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = float_args(q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (q - 0.5))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = float_args(q, loc, scale)
    return loc - scale * jnp.tan(math.pi * (q - 0.5))
