"""jax.scipy.stats.wrapcauchy: the wrapped Cauchy distribution on [0, 2 pi]."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Array:
    x, c = float_args(x, c)
    value = jnp.log1p(-c * c) - math.log(2 * math.pi) - jnp.log1p(c * c - 2 * c * jnp.cos(x))
    inside = (x >= 0) & (x <= 2 * math.pi) & (c > 0) & (c < 1)
    return jnp.where(inside, value, jnp.where((c > 0) & (c < 1), -math.inf, math.nan))


def pdf(x: Any, c: Any) -> Array:
    return jnp.exp(logpdf(x, c))
