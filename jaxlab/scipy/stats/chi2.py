"""jax.scipy.stats.chi2: the chi-squared distribution, a gamma with shape df/2, scale 2."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.stats import gamma

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _as_gamma(df: Any, loc: Any, scale: Any) -> tuple[Array, Array, Array]:
    df, loc, scale = float_args(df, loc, scale)
    return 0.5 * df, loc, 2 * scale


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return gamma.logpdf(x, *_as_gamma(df, loc, scale))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return gamma.cdf(x, *_as_gamma(df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return gamma.logcdf(x, *_as_gamma(df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return gamma.sf(x, *_as_gamma(df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return gamma.logsf(x, *_as_gamma(df, loc, scale))
