"""The array operations that rules in core (jvp, transpose, batching) compose, written
with primitives' `bind`, as Autodidax writes its rules: never through jaxlab.numpy.

Operands already share a dtype (a rule sees a primal and its tangent); a Python scalar
operand becomes a constant of the other operand's dtype, weakly typed where that one is
(what jnp's promotion gives for the same call), broadcast to its shape.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlab.array import ArrayBase
from jaxlab.core import values
from jaxlab.core.elementwise import binary_prims, eq_p, select_n_p
from jaxlab.core.movement import broadcast_in_dim_p, reshape_p, slice_p, transpose_p
from jaxlab.ir.dtypes import DType


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """x broadcast to `shape`, its axes aligned at the end (NumPy's rule)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = len(shape) - len(x.shape)
    return broadcast_in_dim_p.bind(x, shape=shape,
                                   broadcast_dimensions=tuple(range(lead, len(shape))))


def _operand(v: Any, like: Any) -> Any:
    """v as an array of like's dtype and shape (a Python scalar becomes a constant)."""
    if not isinstance(v, ArrayBase):
        v = values.scalar(v, like.jdtype, weak=like.weak_type)
    return broadcast_to(v, like.shape)


def equal(x: Any, y: Any) -> Any:
    return eq_p.bind(x, _operand(y, x))


def less(x: Any, y: Any) -> Any:
    return binary_prims["lt"].bind(x, _operand(y, x))


def greater(x: Any, y: Any) -> Any:
    return binary_prims["lt"].bind(_operand(y, x), x)


def add(x: Any, y: Any) -> Any:
    return binary_prims["add"].bind(x, y)


def where(condition: Any, x: Any, y: Any) -> Any:
    """x where condition holds, else y; one of x, y may be a Python scalar."""
    like = x if isinstance(x, ArrayBase) else y
    condition = broadcast_to(condition, like.shape)
    return select_n_p.bind(condition, _operand(y, like), _operand(x, like))


def clip(x: Any, low: Any, high: Any) -> Any:
    out = binary_prims["max"].bind(_operand(low, x), x)
    return binary_prims["min"].bind(_operand(high, x), out)


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    return transpose_p.bind(x, permutation=tuple(permutation))


def moveaxis(x: Any, source: int, destination: int) -> Any:
    source, destination = source % x.ndim, destination % x.ndim
    order = [d for d in range(x.ndim) if d != source]
    order.insert(destination, source)
    return transpose(x, order)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    order = list(range(x.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return transpose(x, order)


def expand_dims(x: Any, axis: int) -> Any:
    """x with a new axis of size 1 at `axis` (negative: counted in the result)."""
    shape = list(x.shape)
    shape.insert(axis % (x.ndim + 1), 1)
    return reshape_p.bind(x, new_sizes=tuple(shape))


def diagonal(x: Any) -> Any:
    """The diagonal of the last two (equal) axes: every (n+1)-th element of each matrix."""
    n = x.shape[-1]
    flat = reshape_p.bind(x, new_sizes=tuple(x.shape[:-2]) + (n * n,))
    lead = tuple(flat.shape[:-1])
    return slice_p.bind(flat, start_indices=(0,) * flat.ndim, limit_indices=lead + (n * n,),
                        strides=(1,) * len(lead) + (n + 1,))


def iota(n: int) -> Any:
    """0, 1, ..., n-1 as int32."""
    return values.made_on_host((n,), DType.int32, lambda: np.arange(n))


def eye(n: int, dtype: DType) -> Any:
    return values.made_on_host((n, n), dtype, lambda: np.eye(n))


def triangle(x: Any, k: int, lower: bool) -> Any:
    """The lower (or upper) triangle of the last two axes from diagonal k, zeros elsewhere."""
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return where(values.from_host(keep, DType.bool), x, 0)
