"""jax.nn's log-domain helpers beyond logsumexp: log1mexp and logmeanexp."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, canonical_axes

Axis = int | tuple[int, ...] | None


def _inexact(x: Any) -> Array:
    x = asarray_(x)
    return x if x.jdtype.is_float else x.astype(DType.float32)


@custom_jvp
def log1mexp(x: Any) -> Array:
    """log(1 - exp(-x)), accurate both near 0 (through expm1) and for large x
    (through log1p), switching at log(2) (Maechler's rule)."""
    x = _inexact(x)
    return jnp.where(x < math.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


@log1mexp.defjvp
def _log1mexp_jvp(primals: tuple, tangents: tuple) -> tuple[Array, Array]:
    # d/dx log(1 - exp(-x)) = exp(-x) / (1 - exp(-x)) = 1 / expm1(x)
    x, = primals
    t, = tangents
    return log1mexp(x), t / jnp.expm1(_inexact(x))


def logmeanexp(x: Any, axis: Axis = None, where: Any = None, keepdims: bool = False) -> Array:
    """log(mean(exp(x))) along axis: logsumexp minus the log of the count; `where`
    picks the elements that take part."""
    from jaxlab.nn import logsumexp
    x = _inexact(x)
    axes = canonical_axes(axis, x.ndim)
    if where is None:
        count = math.prod(x.shape[a] for a in axes)
        return logsumexp(x, axes, keepdims) - math.log(count)
    mask = jnp.broadcast_to(asarray_(where), x.shape)
    lse = logsumexp(jnp.where(mask, x, -jnp.inf), axes, keepdims)
    return lse - jnp.log(jnp.sum(mask, axes, keepdims=keepdims).astype(lse.jdtype))
