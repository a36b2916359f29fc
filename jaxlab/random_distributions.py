"""The samplers of jax.random that transform uniform or normal draws (exponential,
laplace, logistic, cauchy, rademacher, truncated_normal, multivariate_normal, choice,
lognormal, pareto, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald,
triangular, geometric, orthogonal): each follows JAX's formula so that the same key
gives JAX's values."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, default_float, default_int, to_dtype
from jaxlab.numpy._util import asarray_, broadcast_shapes, canonical_axis, static_shape
from jaxlab.random import (Shape, _check_key, _check_shape, _float_dtype, _param_shape,
                           bernoulli, normal, split, uniform)

__all__ = ["exponential", "laplace", "logistic", "cauchy", "rademacher", "truncated_normal",
           "multivariate_normal", "choice", "lognormal", "pareto", "maxwell",
           "double_sided_maxwell", "weibull_min", "rayleigh", "wald", "triangular",
           "geometric", "orthogonal"]


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


def _float_sampler(name: str, key: Any, shape: Shape | None, dtype: Any,
                   *params: Any) -> tuple:
    """(raw key, shape, dtype, the params as arrays of dtype broadcast to shape)."""
    key = _check_key(name, key)
    dt = _float_dtype(name, dtype)
    arrays = [asarray_(p).astype(dt) for p in params]
    shape = _param_shape(name, shape, *arrays)
    return (key, shape, dt, *(jnp.broadcast_to(a, shape) for a in arrays))


def lognormal(key: Any, sigma: Any = 1.0, shape: Shape | None = None,
              dtype: Any = None) -> Array:
    """exp(sigma z) for z standard normal."""
    key, shape, dt, sigma = _float_sampler("lognormal", key, shape, dtype, sigma)
    return jnp.exp(normal(key, shape, dt) * sigma)


def pareto(key: Any, b: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Pareto with shape b (support [1, inf)): exp(e / b) for e standard exponential."""
    key, shape, dt, b = _float_sampler("pareto", key, shape, dtype, b)
    return jnp.exp(exponential(key, shape, dt) / b)


def maxwell(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """The length of a 3-vector of standard normals."""
    key = _check_key("maxwell", key)
    dt = _float_dtype("maxwell", dtype)
    z = normal(key, static_shape(shape) + (3,), dt)
    return jnp.sqrt(jnp.sum(z * z, axis=-1))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Shape = (),
                         dtype: Any = None) -> Array:
    """A Maxwell draw with a random sign, scaled and shifted. As JAX, the parameters'
    shape is appended to `shape` (and is the whole shape when shape is empty)."""
    key = _check_key("double_sided_maxwell", key)
    dt = _float_dtype("double_sided_maxwell", dtype)
    loc, scale = asarray_(loc), asarray_(scale)
    param_shape = broadcast_shapes(loc.shape, scale.shape)
    shape = static_shape(shape)
    shape = (shape or param_shape) + param_shape
    key_m, key_sign = split(key)
    return rademacher(key_sign, shape, dt) * maxwell(key_m, shape, dt) * scale + loc


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Shape = (),
                dtype: Any = None) -> Array:
    """The inverse Weibull CDF of a uniform draw: scale (-log(1 - u))^(1/concentration)."""
    key = _check_key("weibull_min", key)
    u = uniform(key, static_shape(shape), _float_dtype("weibull_min", dtype), 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key: Any, scale: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """scale sqrt(-2 log u) for u uniform."""
    key, shape, dt, scale = _float_sampler("rayleigh", key, shape, dtype, scale)
    return scale * jnp.sqrt(jnp.log(uniform(key, shape, dt)) * -2)


def wald(key: Any, mean: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Inverse Gaussian (unit shape) by Michael, Schucany and Haas' transformation:
    a root from a chi-square(1) draw, picked by a uniform draw."""
    key, shape, dt, mean = _float_sampler("wald", key, shape, dtype, mean)
    key_v, key_z = split(key)
    v = normal(key_v, shape, dt)
    z = uniform(key_z, shape, dt)
    y = lax.integer_pow(v, 2)
    mean_sq = lax.integer_pow(mean, 2)
    root = jnp.sqrt(4 * mean * y + mean_sq * lax.integer_pow(y, 2))
    x = mean + mean_sq * y / 2 - mean / 2 * root
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Shape | None = None,
               dtype: Any = None) -> Array:
    """The inverse CDF of the triangular distribution at a uniform draw."""
    key, shape, dt, left, mode, right = _float_sampler("triangular", key, shape, dtype,
                                                       left, mode, right)
    width = right - left
    u = uniform(key, shape, dt)
    rising = left + jnp.sqrt(u * width * (mode - left))
    falling = right - jnp.sqrt((1 - u) * width * (right - mode))
    return jnp.where(u < (mode - left) / width, rising, falling)


def geometric(key: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """The number of Bernoulli(p) trials up to the first success: 1 + floor(log u /
    log(1 - p)), with u = 0 taken as 1 (as JAX, keeping its samples)."""
    key = _check_key("geometric", key)
    dt = default_int() if dtype is None else to_dtype(dtype, "random.geometric")
    if not dt.is_int:
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    p = asarray_(p)
    p = p if p.jdtype.is_float else p.astype(default_float())
    shape = _param_shape("geometric", shape, p)
    u = uniform(key, shape, p.jdtype)
    log_u = jnp.log(jnp.where(u == 0, 1, u))
    trials = jnp.floor(log_u / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1
    return trials.astype(dt)


def orthogonal(key: Any, n: int, shape: Shape = (), dtype: Any = None,
               m: int | None = None) -> Array:
    """Haar-random n x m matrices with orthonormal columns (rows when n < m): the Q of
    a normal matrix's QR, its columns' signs fixed by R's diagonal."""
    key = _check_key("orthogonal", key)
    dt = _float_dtype("orthogonal", dtype)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = normal(key, static_shape(shape) + (max(n, m), min(n, m)), dt)
    q, r = jnp.linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x
