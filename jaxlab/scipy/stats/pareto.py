"""jax.scipy.stats.pareto: the Pareto distribution with shape b, support x >= loc + scale."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _scaled(x: Any, b: Any, loc: Any, scale: Any) -> tuple[Array, Array, Array]:
    x, b, loc, scale = float_args(x, b, loc, scale)
    return (x - loc) / scale, b, scale


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    y, b, scale = _scaled(x, b, loc, scale)
    value = jnp.log(b) - (b + 1) * jnp.log(jnp.maximum(y, 1.0)) - jnp.log(scale)
    return jnp.where(y < 1, -math.inf, value)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    y, b, _ = _scaled(x, b, loc, scale)
    return jnp.where(y < 1, 0.0, -b * jnp.log(jnp.maximum(y, 1.0)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logsf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return -jnp.expm1(logsf(x, b, loc, scale))


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, b, loc, scale = float_args(q, b, loc, scale)
    value = loc + scale * jnp.power(1 - q, -1 / b)
    return jnp.where((q >= 0) & (q <= 1), value, math.nan)
