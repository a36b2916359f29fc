"""The samplers of jax.random that transform uniform or normal draws (exponential,
laplace, logistic, cauchy, rademacher, truncated_normal, multivariate_normal, choice):
each follows JAX's formula so that the same key gives JAX's values."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, to_dtype
from jaxlab.numpy._util import asarray_, broadcast_shapes, canonical_axis, static_shape
from jaxlab.random import Shape, _check_shape, _float_dtype, bernoulli, normal, uniform

__all__ = ["exponential", "laplace", "logistic", "cauchy", "rademacher", "truncated_normal",
           "multivariate_normal", "choice"]


def exponential(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """-log(1 - u) for u uniform in [0, 1)."""
    u = uniform(key, shape, _float_dtype("exponential", dtype))
    return -jnp.log1p(-u)


def laplace(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """sign(u) log(1 - |u|) for u uniform in (-1, 1)."""
    dt = _float_dtype("laplace", dtype)
    u = uniform(key, shape, dt, -1.0 + float(np.finfo(dt.np).epsneg), 1.0)
    return jnp.sign(u) * jnp.log1p(-jnp.abs(u))


def logistic(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """log(u) - log(1 - u) for u uniform in [tiny, 1)."""
    dt = _float_dtype("logistic", dtype)
    u = uniform(key, shape, dt, float(np.finfo(dt.np).tiny), 1.0)
    return jnp.log(u) - jnp.log1p(-u)


def cauchy(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """tan(pi (u - 1/2)) for u uniform in [eps, 1)."""
    dt = _float_dtype("cauchy", dtype)
    u = uniform(key, shape, dt, float(np.finfo(dt.np).eps), 1.0)
    return lax.tan(math.pi * (u - 0.5))


def rademacher(key: Any, shape: Shape = (), dtype: Any = DType.int32) -> Array:
    """-1 or +1 with equal probability."""
    dt = to_dtype(dtype, "random.rademacher")
    return (2 * bernoulli(key, 0.5, shape).astype(dt) - 1).astype(dt)


def _next_toward_zero_inf(x: Array, up: bool) -> Array:
    """The float next to x toward +inf (up) or -inf, by stepping its bit pattern."""
    bits = lax.bitcast_convert_type(x, DType.int32)
    grows = (x >= 0) if up else (x <= 0)     # moving away from zero in magnitude
    stepped = jnp.where(grows, bits + 1, bits - 1)
    smallest = np.float32(np.nextafter(np.float32(0), np.float32(1 if up else -1)))
    out = lax.bitcast_convert_type(stepped, DType.float32)
    out = jnp.where(x == 0, smallest, out)
    return jnp.where(jnp.isinf(x) | jnp.isnan(x), x, out)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Shape | None = None,
                     dtype: Any = None) -> Array:
    """Normal samples within (lower, upper): the inverse CDF of a uniform draw between
    the bounds' CDFs, clamped to the open interval against rounding."""
    dt = _float_dtype("truncated_normal", dtype)
    lower, upper = asarray_(lower, dt), asarray_(upper, dt)
    shape = broadcast_shapes(lower.shape, upper.shape) if shape is None else static_shape(shape)
    _check_shape("truncated_normal", shape, lower.shape, upper.shape)
    sqrt2 = np.float32(np.sqrt(2))
    a, b = lax.erf(lower / sqrt2), lax.erf(upper / sqrt2)
    out = sqrt2 * lax.erf_inv(uniform(key, shape, dt, a, b))
    low = _next_toward_zero_inf(lax.stop_gradient(lower), up=True)
    high = _next_toward_zero_inf(lax.stop_gradient(upper), up=False)
    return jnp.clip(out, low, high)


def _eigh_factor(cov: Array) -> Array:
    w, v = jnp.linalg.eigh(cov)
    return v * jnp.sqrt(jnp.expand_dims(w, -2))


def _svd_factor(cov: Array) -> Array:
    u, s, _ = jnp.linalg.svd(cov)
    return u * jnp.sqrt(jnp.expand_dims(s, -2))


_COV_FACTORS = {"cholesky": jnp.linalg.cholesky, "eigh": _eigh_factor, "svd": _svd_factor}


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Shape | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Array:
    """mean + F z with F F^T = cov and z standard normal; F from `method`: 'cholesky'
    (L), 'eigh' (V sqrt(w)) or 'svd' (U sqrt(s)), as JAX."""
    if method not in _COV_FACTORS:
        raise ValueError(f"method must be one of {set(_COV_FACTORS)}, got {method!r}")
    dt = _float_dtype("multivariate_normal", dtype)
    mean, cov = asarray_(mean, dt), asarray_(cov, dt)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    batch = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    shape = batch if shape is None else static_shape(shape)
    _check_shape("multivariate_normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = _COV_FACTORS[method](cov)
    samples = normal(key, shape + (n,), dt)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def choice(key: Any, a: Any, shape: Shape = (), replace: bool = True, p: Any = None,
           axis: int = 0) -> Array:
    """Draws from a (an integer n: arange(n)) along axis, as JAX draws them: randint
    or a permutation without p; with p, inverse-CDF sampling (replace) or the Gumbel
    top-k trick (without replacement)."""
    from jaxlab.random import gumbel, permutation, randint
    arr = asarray_(a)
    shape = static_shape(shape)
    if arr.ndim == 0:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"random.choice: a must be an integer or an array, got {a!r}")
        n_inputs = int(a)
    else:
        axis = canonical_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            population = n_inputs if arr.ndim == 0 else arr
            result = permutation(key, population, axis)[(slice(None),) * axis +
                                                        (slice(n_draws),)]
    else:
        p_arr = asarray_(p)
        p_arr = p_arr if p_arr.jdtype.is_float else p_arr.astype(DType.float32)
        if p_arr.shape != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] "
                             f"is {n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r)
        else:   # top-k of Gumbel-perturbed log-probabilities (ties: lower index first)
            g = gumbel(key, (n_inputs,), p_arr.dtype) + jnp.log(p_arr)
            ind = jnp.argsort(-g, stable=True)[:n_draws]
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:])
