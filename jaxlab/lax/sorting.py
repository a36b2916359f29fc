"""lax.top_k and lax.sort_key_val: a stable argsort, then the operands gathered in
its order (so gradients reach the values through the gather)."""
from __future__ import annotations

import operator
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, canonical_axis

__all__ = ["top_k", "sort_key_val"]


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """(the k largest values along axis, largest first, and their int32 indices); ties
    list the lower index first, NaN counts as the largest."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > x.shape[axis]:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={list(x.shape)} and axis={axis}")
    order = jnp.argsort(x, axis=axis, descending=True, stable=True)
    first = jnp.take(order, jnp.arange(k), axis=axis)
    return jnp.take_along_axis(x, first, axis), first.astype(DType.int32)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Array, Array]:
    """(keys sorted along dimension, values permuted the same way)."""
    k, v = asarray_(keys), asarray_(values)
    if k.shape != v.shape:
        raise TypeError(f"Arguments to sort must have equal shapes, got: {k.shape} {v.shape}")
    order = jnp.argsort(k, axis=dimension, stable=True)
    return jnp.take_along_axis(k, order, dimension), jnp.take_along_axis(v, order, dimension)
