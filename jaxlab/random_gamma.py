"""Gamma samples and the samplers built on them (loggamma, beta, dirichlet, t,
chisquare, f, generalized_normal, ball), with JAX's key use so that a key gives
JAX's values.

Gamma(a) is Marsaglia and Tsang's rejection method run per element, as JAX runs it:
the key splits into one key per element, and each element loops with its own key
until it accepts. Here the per-element loop is a while_loop under vmap (the batched
while runs while any element still loops and freezes those done), so it runs on
every device, under jit and under vmap. The derivative with respect to `a` is the
implicit reparameterisation gradient (lax.random_gamma_grad), as in JAX.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.api import jit, vmap
from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.lax.gamma_sample_grad import random_gamma_grad
from jaxlab.numpy._util import asarray_, static_shape
from jaxlab.random import (Shape, _check_key, _check_shape, _float_dtype, _fma, _param_shape,
                           normal, split, uniform)
from jaxlab.random_distributions import exponential, rademacher

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball"]

_SQUEEZE = 0.0331   # Marsaglia and Tsang's quick-acceptance constant


def _each(draw: Callable[[Array], Any]) -> Callable[[Array], Any]:
    """draw(key) for each key of a (n, 2) batch (straight-line code: vmap traces it once)."""
    return vmap(draw)


def _marsaglia_tsang(keys: Array, alpha: Array, log_space: bool) -> Array:
    """Gamma(alpha) samples (their logs when log_space), one per key and alpha (both
    flat), with JAX's key use per element: split off a key for the boost, then per
    attempt split three ways (next attempt, normal draws, acceptance uniform); the
    normal draws repeat, each from a fresh split, until 1 + c x > 0. The loops run
    over all elements at once, each element frozen once it is done, which is what
    JAX's vmap of its per-element loop computes."""
    dt = alpha.jdtype
    zeros, ones = jnp.zeros(alpha.shape, dt), jnp.ones(alpha.shape, dt)
    boosted = alpha < 1     # Gamma(a) = Gamma(a + 1) * U^(1/a)
    d = jnp.where(boosted, alpha + 1, alpha) - 1 / 3
    c = (1 / 3) / jnp.sqrt(d)
    split_in = {n: _each(lambda k, n=n: split(k, n)) for n in (2, 3)}
    normal_each = _each(lambda k: normal(k, (), dt))
    uniform_each = _each(lambda k: uniform(k, (), dt))

    def rejected(x2: Array, v: Array, u: Array) -> Array:
        return (u >= 1 - _SQUEEZE * (x2 * x2)) & \
            (jnp.log(u) >= x2 * 0.5 + d * ((1 - v) + jnp.log(v)))

    def redraw_v(state: tuple) -> tuple:
        keys, x, v = state
        again = v <= 0
        parts = split_in[2](keys)
        x_new = normal_each(parts[:, 1])
        return (jnp.where(again[:, None], parts[:, 0], keys), jnp.where(again, x_new, x),
                jnp.where(again, _fma(x_new, c, ones), v))

    def attempt(state: tuple) -> tuple:
        keys, x2, v, u = state
        again = rejected(x2, v, u)
        parts = split_in[3](keys)
        _, x, v_new = lax.while_loop(lambda s: jnp.any(s[2] <= 0), redraw_v,
                                     (parts[:, 1], zeros, -ones))
        new = (parts[:, 0], x * x, v_new * v_new * v_new, uniform_each(parts[:, 2]))
        old = (keys, x2, v, u)
        return tuple(jnp.where(again[:, None] if n.ndim == 2 else again, n, o)
                     for n, o in zip(new, old))

    parts = split_in[2](keys)
    _, _, v, _ = lax.while_loop(lambda s: jnp.any(rejected(*s[1:])), attempt,
                                (parts[:, 0], zeros, ones, ones + 1))
    boost_keys = parts[:, 1]
    if log_space:
        log_u = -_each(lambda k: exponential(k, (), dt))(boost_keys)
        log_boost = jnp.where(~boosted | (log_u == 0), zeros, log_u * (1 / alpha))
        return jnp.log(d) + jnp.log(v) + log_boost
    u = 1 - uniform_each(boost_keys)
    return d * v * jnp.where(boosted, u ** (1 / alpha), ones)


def _draw_flat(key: Array, a: Array, log_space: bool) -> Array:
    return _marsaglia_tsang(split(key, a.size), a, log_space)


# compiled once per size, dtype and device, as JAX jits its samplers: the loops then
# replay prepared kernels instead of being traced and dispatched step by step
_compiled_draw = jit(_draw_flat, static_argnums=2)


def _draw(key: Array, a: Array, log_space: bool) -> Array:
    """Samples for every element of `a` (already of the sample's shape and dtype)."""
    if a.size == 0:
        return jnp.zeros(a.shape, a.jdtype)
    return _compiled_draw(key, a.reshape(-1), log_space).reshape(a.shape)


@custom_jvp
def _gamma_draw(key: Array, a: Array) -> Array:
    return _draw(key, a, log_space=False)


@custom_jvp
def _loggamma_draw(key: Array, a: Array) -> Array:
    return _draw(key, a, log_space=True)


def _log_sample_grad(sample: Array, a: Array) -> Array:
    """d log(x) / da = (dx/da) / x, with x = exp(log x) kept off zero (JAX's tiny)."""
    x = jnp.exp(sample)
    x = jnp.where(x == 0, float(np.finfo(x.jdtype.np).tiny), x)
    return random_gamma_grad(a, x) / x


_gamma_draw.defjvps(None, lambda t, sample, key, a: t * random_gamma_grad(a, sample))
_loggamma_draw.defjvps(None, lambda t, sample, key, a: t * _log_sample_grad(sample, a))


def _gamma_like(name: str, draw: custom_jvp, key: Any, a: Any, shape: Shape | None,
                dtype: Any) -> Array:
    key = _check_key(name, key)
    dt = _float_dtype(name, dtype)
    a = asarray_(a).astype(dt)
    shape = _param_shape(name, shape, a)
    return draw(key, jnp.broadcast_to(a, shape))


def gamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Gamma(a, 1) samples (shape defaults to a's); differentiable in `a`."""
    return _gamma_like("gamma", _gamma_draw, key, a, shape, dtype)


def loggamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """log of Gamma(a, 1) samples, computed in log space (accurate for small a)."""
    return _gamma_like("loggamma", _loggamma_draw, key, a, shape, dtype)


def beta(key: Any, a: Any, b: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Beta(a, b) as Ga / (Ga + Gb) from two log-gamma draws, scaled by their max."""
    key = _check_key("beta", key)
    dt = _float_dtype("beta", dtype)
    a, b = asarray_(a).astype(dt), asarray_(b).astype(dt)
    shape = _param_shape("beta", shape, a, b)
    key_a, key_b = split(key)
    log_a = loggamma(key_a, jnp.broadcast_to(a, shape), shape, dt)
    log_b = loggamma(key_b, jnp.broadcast_to(b, shape), shape, dt)
    top = jnp.maximum(log_a, log_b)
    ga, gb = jnp.exp(log_a - top), jnp.exp(log_b - top)
    return ga / (ga + gb)


def dirichlet(key: Any, alpha: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Dirichlet(alpha) over alpha's last axis: the softmax of log-gamma draws."""
    from jaxlab.nn import softmax
    key = _check_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    alpha = asarray_(alpha)
    if alpha.ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {alpha.ndim}")
    batch = alpha.shape[:-1] if shape is None else static_shape(shape)
    _check_shape("dirichlet", batch, alpha.shape[:-1])
    return softmax(loggamma(key, alpha.astype(dt), batch + alpha.shape[-1:], dt), -1)


def t(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Student's t with df degrees of freedom: n sqrt((df/2) / g), n normal, g Gamma(df/2)."""
    key = _check_key("t", key)
    dt = _float_dtype("t", dtype)
    df = asarray_(df).astype(dt)
    shape = _param_shape("t", shape, df)
    key_n, key_g = split(key)
    n = normal(key_n, shape, dt)
    half_df = df / 2
    return n * jnp.sqrt(half_df / gamma(key_g, half_df, shape, dt))


def chisquare(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None) -> Array:
    """Chi-square with df degrees of freedom: 2 Gamma(df/2), drawn in log space."""
    key = _check_key("chisquare", key)
    dt = _float_dtype("chisquare", dtype)
    df = asarray_(df).astype(dt)
    shape = _param_shape("chisquare", shape, df)
    return jnp.exp(loggamma(key, df / 2, shape, dt)) * 2


def f(key: Any, dfnum: Any, dfden: Any, shape: Shape | None = None,
      dtype: Any = None) -> Array:
    """F(dfnum, dfden): the ratio of two chi-squares, each over its degrees of freedom."""
    key = _check_key("f", key)
    dt = _float_dtype("f", dtype)
    dfnum, dfden = asarray_(dfnum).astype(dt), asarray_(dfden).astype(dt)
    shape = _param_shape("f", shape, dfnum, dfden)
    key_den, key_num = split(key)
    num = chisquare(key_num, dfnum, shape, dt) / dfnum
    return num / (chisquare(key_den, dfden, shape, dt) / dfden)


def generalized_normal(key: Any, p: float, shape: Shape = (), dtype: Any = None) -> Array:
    """Density proportional to exp(-|x|^p): a random sign times Gamma(1/p)^(1/p)."""
    key = _check_key("generalized_normal", key)
    dt = _float_dtype("generalized_normal", dtype)
    shape = static_shape(shape)
    key_g, key_sign = split(key)
    g = gamma(key_g, 1 / p, shape, dt)
    return rademacher(key_sign, shape, dt) * g ** (1 / p)


def ball(key: Any, d: int, p: float = 2, shape: Shape = (), dtype: Any = None) -> Array:
    """Uniform points in the d-dimensional unit p-norm ball (shape + (d,))."""
    key = _check_key("ball", key)
    dt = _float_dtype("ball", dtype)
    shape = static_shape(shape)
    d = operator.index(d)
    key_g, key_e = split(key)
    g = generalized_normal(key_g, p, shape + (d,), dt)
    e = exponential(key_e, shape, dt)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
