"""jax.scipy.stats.multinomial: counts x (summing to n) over categories of probability p."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.special import lgamma
from jaxlab.numpy._util import asarray_
from jaxlab.scipy.special import float_arrays, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x: Any, n: Any, p: Any) -> Array:
    """log n! - sum log x_i! + sum x_i log p_i; -inf where the counts do not sum to n."""
    x_in, n_in = asarray_(x), asarray_(n)
    if not (x_in.jdtype.is_int and n_in.jdtype.is_int):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x_in.dtype}, "
                         f"n.dtype={n_in.dtype}")
    x, n, p = float_arrays(x_in, n_in, p)
    value = lgamma(n + 1) + jnp.sum(xlogy(x, p) - lgamma(x + 1), axis=-1)
    return jnp.where(jnp.sum(x, axis=-1) == n, value, -math.inf)


def pmf(x: Any, n: Any, p: Any) -> Array:
    return jnp.exp(logpmf(x, n, p))
