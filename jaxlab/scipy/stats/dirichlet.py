"""jax.scipy.stats.dirichlet: densities on the simplex; x's first axis is the category."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.scipy.special import float_arrays, xlogy

__all__ = ["logpdf", "pdf"]

_SUM_TOLERANCE = 1e-6    # how far from 1 x's entries may sum


def logpdf(x: Any, alpha: Any) -> Array:
    """sum (alpha_i - 1) log x_i - log B(alpha); with one entry fewer than alpha, the last
    is 1 minus the others' sum; -inf off the simplex."""
    x, alpha = float_arrays(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    k = alpha.shape[0]
    if x.shape[0] not in (k, k - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    a = alpha.reshape((k,) + (1,) * (x.ndim - 1))
    log_beta = jnp.sum(lgamma(alpha)) - lgamma(jnp.sum(alpha))
    value = jnp.sum(xlogy(a - 1, x), axis=0) - log_beta
    on_simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) <= _SUM_TOLERANCE)
    return jnp.where(on_simplex, value, -math.inf)


def pdf(x: Any, alpha: Any) -> Array:
    return jnp.exp(logpdf(x, alpha))
