"""jax.scipy.special's relative entropies and softmax (whose axis defaults to all axes)."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import nn
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.scipy.special import float_args

__all__ = ["rel_entr", "kl_div", "softmax", "log_softmax"]


def _log_ratio_terms(p: Any, q: Any) -> tuple[Array, Array, Array, Array]:
    """(p, q, p log(p / q) where both are positive, whether both are positive)."""
    p, q = float_args(p, q)
    positive = (p > 0) & (q > 0)
    ratio = jnp.where(positive, p / jnp.where(positive, q, 1.0), 1.0)
    return p, q, p * jnp.log(ratio), positive


def rel_entr(p: Any, q: Any) -> Array:
    """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere."""
    p, q, terms, positive = _log_ratio_terms(p, q)
    return jnp.where(positive, terms, jnp.where((p == 0) & (q >= 0), 0.0, math.inf))


def kl_div(p: Any, q: Any) -> Array:
    """p log(p / q) - p + q for p, q > 0; q where p == 0 and q >= 0; inf elsewhere."""
    p, q, terms, positive = _log_ratio_terms(p, q)
    return jnp.where(positive, terms - p + q, jnp.where((p == 0) & (q >= 0), q, math.inf))


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    return nn.log_softmax(x, axis=axis)
