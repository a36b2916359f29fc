"""jax.scipy.stats.gamma: the gamma distribution with shape a."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args, xlogy
from jaxlab.scipy.special_incomplete import gammainc, gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, loc, scale = float_args(x, a, loc, scale)
    y = (x - loc) / scale
    value = xlogy(a - 1, y) - y - lgamma(a) - jnp.log(scale)
    return jnp.where(y < 0, -math.inf, value)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, loc, scale = float_args(x, a, loc, scale)
    return gammainc(a, jnp.maximum((x - loc) / scale, 0.0))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, loc, scale = float_args(x, a, loc, scale)
    return gammaincc(a, jnp.maximum((x - loc) / scale, 0.0))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(sf(x, a, loc, scale))
