"""jax.scipy.stats.uniform: the uniform distribution on [loc, loc + scale]."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.stats._standard import standardized

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, loc, scale = float_args(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), -math.inf)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Array:
    z, _ = standardized(x, loc, scale)
    return jnp.clip(z, 0.0, 1.0)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Array:
    q, loc, scale = float_args(q, loc, scale)
    return jnp.where((q >= 0) & (q <= 1), loc + q * scale, math.nan)
