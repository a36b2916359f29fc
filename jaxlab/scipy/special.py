"""jax.scipy.special: log-sum-exp, error and gamma functions, logistic and friends."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.nn import sigmoid as expit  # noqa: F401
from jaxlab.numpy._util import asarray_, canonical_axes, promote_args, promote_dtypes
from jaxlab.lax.special import digamma, lgamma as gammaln  # noqa: F401

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "expit", "logit",
           "xlogy", "xlog1py", "ndtr", "ndtri", "log_ndtr", "entr"]


def float_args(*xs: Any) -> list[Array]:
    out = promote_args(*xs)
    return [x if x.jdtype.is_float else x.astype(jnp.float32) for x in out]


def float_arrays(*xs: Any) -> list[Array]:
    """xs in their promoted float dtype, each keeping its own shape."""
    dtype = promote_dtypes(*xs)
    return [asarray_(x, dtype if dtype.is_float else jnp.float32) for x in xs]


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) along axis, shifted by the max; with return_sign, the
    log of the absolute value and the sign (needed when b has negative weights)."""
    a = float_args(a)[0] if b is None else float_args(a, b)[0]
    axes = canonical_axes(axis, a.ndim)
    amax = jnp.max(a, axes, keepdims=True)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    terms = jnp.exp(a - amax)
    if b is not None:
        terms = terms * float_args(a, b)[1]
    total = jnp.sum(terms, axes, keepdims=True)
    sign = jnp.sign(total)
    out = jnp.log(jnp.abs(total)) + amax
    if not keepdims:
        out, sign = jnp.squeeze(out, axes), jnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    return jnp.where(sign < 0, math.nan, out)


def erf(x: Any) -> Array:
    return lax.erf(float_args(x)[0])


def erfc(x: Any) -> Array:
    return lax.erfc(float_args(x)[0])


def erfinv(x: Any) -> Array:
    return lax.erf_inv(x)


def logit(x: Any) -> Array:
    x = float_args(x)[0]
    return jnp.log(x / (1 - x))


def xlogy(x: Any, y: Any) -> Array:
    """x * log(y), and 0 where x is 0 (even where log(y) is infinite)."""
    x, y = float_args(x, y)
    safe_y = jnp.where(x == 0, 1.0, y)
    return jnp.where(x == 0, 0.0, x * jnp.log(safe_y))


def xlog1py(x: Any, y: Any) -> Array:
    """x * log1p(y), and 0 where x is 0."""
    x, y = float_args(x, y)
    safe_y = jnp.where(x == 0, 0.0, y)
    return jnp.where(x == 0, 0.0, x * jnp.log1p(safe_y))


def entr(x: Any) -> Array:
    """-x log x for x > 0, 0 at 0, -inf below."""
    x = float_args(x)[0]
    safe = jnp.where(x > 0, x, 1.0)
    return jnp.where(x > 0, -x * jnp.log(safe), jnp.where(x == 0, 0.0, -math.inf))


def ndtr(x: Any) -> Array:
    """The standard normal CDF."""
    x = float_args(x)[0]
    return 0.5 * lax.erfc(-x * math.sqrt(0.5))


def log_ndtr(x: Any) -> Array:
    return jnp.log(ndtr(x))


def ndtri(p: Any) -> Array:
    """The standard normal quantile: sqrt(2) erf_inv(2p - 1)."""
    p = float_args(p)[0]
    return math.sqrt(2.0) * lax.erf_inv(2 * p - 1)


# the rest of jax.scipy.special, one family a module (imported last: they use float_args)
from jaxlab.scipy.special_gamma import *  # noqa: E402,F401,F403
from jaxlab.scipy.special_incomplete import *  # noqa: E402,F401,F403
from jaxlab.scipy.special_bessel import *  # noqa: E402,F401,F403
from jaxlab.scipy.special_entropy import *  # noqa: E402,F401,F403
from jaxlab.scipy.special_elementary import *  # noqa: E402,F401,F403
