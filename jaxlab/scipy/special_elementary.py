"""jax.scipy.special's scaled complementary error function and Box-Cox transforms."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.api import jit
from jaxlab.array import Array
from jaxlab.scipy.special import float_args

__all__ = ["erfcx", "boxcox", "boxcox1p"]

_ERFCX_DIRECT_BELOW = 2.0   # exp(x^2) erfc(x) keeps float32 accuracy up to here
_ERFCX_FRACTION_DEPTH = 40


@jit
def erfcx(x: Any) -> Array:
    """exp(x^2) erfc(x); past x = 2 by Laplace's continued fraction
    erfc(x) = exp(-x^2) / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))."""
    x = float_args(x)[0]
    direct = x < _ERFCX_DIRECT_BELOW
    xd = jnp.where(direct, x, 0.0)
    xf = jnp.where(direct, _ERFCX_DIRECT_BELOW, x)

    def fold(k: Array, tail: Array) -> Array:   # from the deepest level outward
        level = (_ERFCX_FRACTION_DEPTH - k).astype(x.dtype)
        return xf + 0.5 * level / tail
    fraction = lax.fori_loop(0, _ERFCX_FRACTION_DEPTH, fold, xf)
    return jnp.where(direct, jnp.exp(xd * xd) * lax.erfc(xd),
                     1.0 / (math.sqrt(math.pi) * fraction))


def _boxcox_of_log(log_x: Array, lmbda: Array) -> Array:
    """(exp(lmbda log x) - 1) / lmbda, and log x where lmbda == 0."""
    zero = lmbda == 0
    safe = jnp.where(zero, 1.0, lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log x at lmbda == 0."""
    x, lmbda = float_args(x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Array:
    """The Box-Cox transform of 1 + x, accurate for small x."""
    x, lmbda = float_args(x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)
