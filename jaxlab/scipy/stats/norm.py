"""jax.scipy.stats.norm: the normal distribution's densities, CDFs and quantile."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy import special
from jaxlab.scipy.stats._standard import standardized as _standardized

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = _standardized(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.ndtr(_standardized(x, loc, scale)[0])


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.log_ndtr(_standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.ndtr(-_standardized(x, loc, scale)[0])


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.log_ndtr(-_standardized(x, loc, scale)[0])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = special.float_args(q, loc, scale)
    return loc + scale * special.ndtri(q)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The inverse survival function: ppf(1 - q)."""
    q, loc, scale = special.float_args(q, loc, scale)
    return loc - scale * special.ndtri(q)
