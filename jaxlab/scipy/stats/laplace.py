"""jax.scipy.stats.laplace: the Laplace (double exponential) distribution."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = standardized(x, loc, scale)
    return -jnp.abs(z) - jnp.log(2 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return jnp.where(z < 0, 0.5 * jnp.exp(jnp.minimum(z, 0.0)),
                     1.0 - 0.5 * jnp.exp(-jnp.maximum(z, 0.0)))
