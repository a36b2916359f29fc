"""jax.scipy.stats.gennorm: the generalized normal distribution exp(-|x|^beta)."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args
from jaxlab.scipy.special_incomplete import gammainc

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x: Any, beta: Any) -> Array:
    x, beta = float_args(x, beta)
    return jnp.log(0.5 * beta) - lgamma(1 / beta) - jnp.power(jnp.abs(x), beta)


def pdf(x: Any, beta: Any) -> Array:
    return jnp.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Array:
    x, beta = float_args(x, beta)
    return 0.5 + 0.5 * jnp.sign(x) * gammainc(1 / beta, jnp.power(jnp.abs(x), beta))
