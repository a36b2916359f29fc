"""jax.scipy.stats.t: Student's t distribution."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_args

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    x, df, loc, scale = float_args(x, df, loc, scale)
    z = (x - loc) / scale
    norm = lgamma(0.5 * (df + 1)) - lgamma(0.5 * df) - 0.5 * jnp.log(df * math.pi)
    return norm - jnp.log(scale) - 0.5 * (df + 1) * jnp.log1p(z * z / df)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    return jnp.exp(logpdf(x, df, loc, scale))
