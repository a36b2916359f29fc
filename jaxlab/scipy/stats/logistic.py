"""jax.scipy.stats.logistic: the logistic distribution."""
from __future__ import annotations


from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab import nn
from jaxlab.scipy import special
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, scale = standardized(x, loc, scale)
    return -z - 2 * nn.softplus(-z) - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.expit(standardized(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return special.expit(-standardized(x, loc, scale)[0])


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = special.float_args(x, loc, scale)
    return loc + scale * special.logit(q)


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = special.float_args(x, loc, scale)
    return loc - scale * special.logit(q)
