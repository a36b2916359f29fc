"""jax.scipy.stats.truncnorm: the standard normal truncated to [a, b] (in standard units),
then shifted by loc and scaled by scale."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy import special
from jaxlab.scipy.stats import norm

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _parts(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple[Array, ...]:
    """(z, a, b, scale, log of the mass between a and b)."""
    x, a, b, loc, scale = special.float_args(x, a, b, loc, scale)
    mass = special.ndtr(b) - special.ndtr(a)
    return (x - loc) / scale, a, b, scale, jnp.log(mass)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, a, b, scale, log_mass = _parts(x, a, b, loc, scale)
    value = norm.logpdf(z) - log_mass - jnp.log(scale)
    return jnp.where((z < a) | (z > b), -math.inf, value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, a, b, _, log_mass = _parts(x, a, b, loc, scale)
    inside = (special.ndtr(jnp.clip(z, a, b)) - special.ndtr(a)) / jnp.exp(log_mass)
    return jnp.clip(inside, 0.0, 1.0)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return 1.0 - cdf(x, a, b, loc, scale)


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.log(sf(x, a, b, loc, scale))
