"""jax.scipy.stats.vonmises: the von Mises (circular normal) distribution."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args
from jaxlab.scipy.special_bessel import i0e

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Array:
    """kappa cos x - log(2 pi I0(kappa)), with I0 scaled so large kappa cannot overflow."""
    x, kappa = float_args(x, kappa)
    value = kappa * (jnp.cos(x) - 1) - math.log(2 * math.pi) - jnp.log(i0e(kappa))
    return jnp.where(kappa > 0, value, math.nan)


def pdf(x: Any, kappa: Any) -> Array:
    return jnp.exp(logpdf(x, kappa))
