"""jax.scipy.stats.multivariate_normal: the normal density in d dimensions (last axis)."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy import linalg
from jaxlab.scipy.special import float_arrays

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Array:
    """-(d log 2 pi + log det cov + (x - mean)^T cov^-1 (x - mean)) / 2, through cov's
    Cholesky factor; a scalar cov is cov times the identity."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = float_arrays(x, mean, cov)
    if mean.ndim == 0:
        return -0.5 * (math.log(2 * math.pi) + jnp.log(cov) + (x - mean) ** 2 / cov)
    d = mean.shape[-1]
    if cov.ndim == 0:
        quad = jnp.sum((x - mean) ** 2, axis=-1) / cov
        return -0.5 * (d * (math.log(2 * math.pi) + jnp.log(cov)) + quad)
    if cov.ndim < 2 or cov.shape[-2:] != (d, d):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    factor = linalg.cholesky(cov, lower=True)
    diff = jnp.broadcast_to(x - mean, jnp.broadcast_shapes(x.shape, mean.shape))
    batch = jnp.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
    factor = jnp.broadcast_to(factor, batch + (d, d))
    white = linalg.solve_triangular(factor, jnp.broadcast_to(diff, batch + (d,))[..., None],
                                    lower=True)[..., 0]
    log_det = 2 * jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (d * math.log(2 * math.pi) + log_det + jnp.sum(white * white, axis=-1))


def pdf(x: Any, mean: Any, cov: Any) -> Array:
    return jnp.exp(logpdf(x, mean, cov))
