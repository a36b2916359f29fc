"""jax.scipy.stats.beta: the beta distribution on [loc, loc + scale]."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args, xlog1py, xlogy
from jaxlab.scipy.special_gamma import betaln
from jaxlab.scipy.special_incomplete import betainc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, loc, scale = float_args(x, a, b, loc, scale)
    y = (x - loc) / scale
    value = xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - jnp.log(scale)
    return jnp.where((y < 0) | (y > 1), -math.inf, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, loc, scale = float_args(x, a, b, loc, scale)
    return betainc(a, b, jnp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, a, b, loc, scale = float_args(x, a, b, loc, scale)
    return betainc(b, a, jnp.clip(1 - (x - loc) / scale, 0.0, 1.0))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(sf(x, a, b, loc, scale))
