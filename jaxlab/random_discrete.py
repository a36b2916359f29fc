"""Counting samplers of jax.random (poisson, binomial, multinomial), with JAX's
algorithms and key use so that a key gives JAX's counts.

Each is a while_loop over the whole sample array that draws fresh uniforms every
round until every element has its count: Knuth's product of uniforms for small
means, transformed rejection (Hormann's PTRS for Poisson, BTRS for binomial) for
large ones; both run and the mean picks, as JAX does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.api import jit
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, default_float, default_int, to_dtype
from jaxlab.numpy._util import asarray_, static_shape
from jaxlab.random import Shape, _check_key, _float_dtype, _param_shape, split, uniform

__all__ = ["poisson", "binomial", "multinomial"]


# --- poisson ---------------------------------------------------------------------------

def _poisson_knuth(key: Array, lam: Array, dt: DType, max_iters: int) -> Array:
    """Counts of uniforms multiplied (summed in logs) before the product drops below
    exp(-lam), one uniform per element per round."""
    def running(state: tuple) -> Array:
        i, _, _, log_prod = state
        return jnp.any(log_prod > -lam) & (i < max_iters)

    def step(state: tuple) -> tuple:
        i, k, key, log_prod = state
        key, sub = split(key)
        k = jnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, key, log_prod + jnp.log(uniform(sub, lam.shape, DType.float32))

    init = (jnp.zeros((), DType.int32), jnp.zeros(lam.shape, dt), key,
            jnp.zeros(lam.shape, DType.float32))
    return (lax.while_loop(running, step, init)[1] - 1).astype(dt)


def _rejection_loop(key: Array, like: Array, propose: Callable, dt: DType,
                    max_iters: Any) -> Array:
    """The loop of a transformed-rejection sampler, as JAX runs it: each round splits
    the key three ways, draws u - 1/2 and v uniform for every element, and each
    element keeps the first k that `propose(u, v) -> (k, accepted)` accepts."""
    def running(state: tuple) -> Array:
        i, _, accepted, _ = state
        return jnp.any(~accepted) & (i < max_iters)

    def step(state: tuple) -> tuple:
        i, k_out, accepted, key = state
        key, key_u, key_v = split(key, 3)
        u = uniform(key_u, like.shape, like.jdtype) - 0.5
        k, accept = propose(u, uniform(key_v, like.shape, like.jdtype))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

    init = (jnp.zeros((), DType.int32), jnp.full(like.shape, -1, like.jdtype),
            jnp.zeros(like.shape, DType.bool), key)
    return lax.while_loop(running, step, init)[1].astype(dt)


def _poisson_rejection(key: Array, lam: Array, dt: DType, max_iters: int) -> Array:
    """Hormann's transformed rejection with squeeze (PTRS), for lam >= 10."""
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(u: Array, v: Array) -> tuple[Array, Array]:
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (us * us) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        quick = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        return k, quick | (~reject & (s <= t))

    return _rejection_loop(key, lam, propose, dt, max_iters)


def poisson(key: Any, lam: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Poisson(lam) counts of an integer dtype (shape defaults to lam's)."""
    key = _check_key("poisson", key)
    dt = default_int() if dtype is None else to_dtype(dtype, "random.poisson")
    if not dt.is_int:
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {dt}")
    lam = asarray_(lam)
    shape = lam.shape if shape is None else static_shape(shape)
    return _poisson_counts(key, jnp.broadcast_to(lam, shape).astype(DType.float32), dt)


def _poisson(key: Array, lam: Array, dt: DType) -> Array:
    """As JAX: each algorithm runs on every element, the other's elements given a mean
    it handles quickly; the iteration cap is the dtype's maximum."""
    small = jnp.isnan(lam) | (lam < 10)
    max_iters = dt.bounds[1]
    counts = jnp.where(small, _poisson_knuth(key, jnp.where(small, lam, 0.0), dt, max_iters),
                       _poisson_rejection(key, jnp.where(small, 1e5, lam), dt, max_iters))
    return jnp.where(lam == 0, 0, counts).astype(dt)


# --- binomial --------------------------------------------------------------------------

# log k! - Stirling's approximation of it, exactly for k = 0..9
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: Array) -> Array:
    """The error of Stirling's formula for log k!: the table below 10, its series above."""
    table = jnp.asarray(np.array(_STIRLING_TAIL), k.jdtype)
    clipped = jnp.clip(k, 0.0, 9.0)
    kp1_sq = (clipped + 1) * (clipped + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1_sq) / kp1_sq) / (clipped + 1)
    return jnp.where(k <= 9, table[jnp.floor(clipped).astype(DType.int32)], series)


def _binomial_inversion(key: Array, count: Array, prob: Array, dt: DType,
                        max_iters: float) -> Array:
    """Counts of geometric waiting times summed before they pass `count` (small n p)."""
    log_q = jnp.log1p(-prob)

    def running(state: tuple) -> Array:
        i, _, geom_sum, _ = state
        return jnp.any(geom_sum <= count) & (i < max_iters)

    def step(state: tuple) -> tuple:
        i, num_geom, geom_sum, key = state
        sub, key = split(key)
        num_geom = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        geom = jnp.ceil(jnp.log(uniform(sub, prob.shape, prob.jdtype)) / log_q)
        return i + 1, num_geom, geom_sum + geom, key

    zeros = jnp.zeros(prob.shape, prob.jdtype)
    init = (jnp.zeros((), DType.int32), zeros, zeros, key)
    return (lax.while_loop(running, step, init)[1] - 1).astype(dt)


def _binomial_btrs(key: Array, count: Array, prob: Array, dt: DType,
                   max_iters: float) -> Array:
    """Hormann's BTRS transformed rejection (large n p)."""
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def propose(u: Array, v: Array) -> tuple[Array, Array]:
        us = 0.5 - jnp.abs(u)
        quick = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        log_v = jnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        return k, quick | (~reject & (log_v <= bound))

    return _rejection_loop(key, prob, propose, dt, max_iters)


def binomial(key: Any, n: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Binomial(n, p) counts as floats (NaN for p outside [0, 1] or n < 0 or NaN, inf
    for infinite n); sampled with q = min(p, 1 - p) and reflected, as JAX."""
    key = _check_key("binomial", key)
    dt = _float_dtype("binomial", dtype)
    p = asarray_(p)
    p = p if p.jdtype.is_float else p.astype(default_float())
    count = asarray_(n).astype(p.jdtype)
    shape = _param_shape("binomial", shape, count, p)
    return _binomial_counts(key, jnp.broadcast_to(count, shape), jnp.broadcast_to(p, shape), dt)


def _binomial(key: Array, count: Array, p: Array, dt: DType) -> Array:
    """binomial() on parameters of the sample shape."""
    below_half = p < 0.5
    q = jnp.where(below_half, p, 1.0 - p)
    bad_count = jnp.isnan(count) | (count < 0.0)
    infinite = jnp.isinf(count)
    q_nan, q_negative = jnp.isnan(q), q < 0.0
    q = jnp.where(q_nan | q_negative, 0.01, q)
    by_inversion = bad_count | (count * q <= 10.0)
    count = jnp.floor(count)
    max_iters = float(np.finfo(dt.np).max)
    samples = jnp.where(
        by_inversion,
        _binomial_inversion(key, jnp.where(by_inversion, count, 0.0), q, dt, max_iters),
        _binomial_btrs(key, jnp.where(by_inversion, 1e4, count),
                       jnp.where(by_inversion, 0.5, q), dt, max_iters))
    invalid = q_negative | q_nan | bad_count
    samples = jnp.where(invalid, np.nan, samples)
    samples = jnp.where(infinite & ~invalid, np.inf, samples)
    kept = below_half | bad_count | q_nan | infinite
    return jnp.where(kept, samples, count.astype(dt) - samples).astype(dt)


# compiled once per shape, dtype and device, as JAX jits its samplers: the loops then
# replay prepared kernels instead of being traced and dispatched step by step
_poisson_counts = jit(_poisson, static_argnums=2)
_binomial_counts = jit(_binomial, static_argnums=3)


def multinomial(key: Any, n: Any, p: Any, *, shape: Shape | None = None, dtype: Any = None,
                unroll: int | bool = 1) -> Array:
    """Counts of n draws over the categories of p's last axis: a scan over categories,
    each a binomial of what remains with p_i / (p_i + ... + p_last)."""
    key = _check_key("multinomial", key)
    dt = default_float() if dtype is None else to_dtype(dtype, "random.multinomial")
    n, p = asarray_(n), asarray_(p)
    work = to_dtype(jnp.result_type(n, p))    # promoted to inexact, as JAX
    work = work if work.is_float else default_float()
    n, p = n.astype(work), p.astype(work)
    shape = p.shape if shape is None else static_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p, 0), axis=0), 0)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])

    def category(left: Array, ratio_key: tuple) -> tuple:
        ratio, k = ratio_key
        drawn = binomial(k, left, jnp.clip(ratio, 0, 1), dtype=left.dtype)
        return left - drawn, drawn

    _, counts = lax.scan(category, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dt)
