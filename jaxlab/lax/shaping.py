"""lax's shape functions beyond its primitives: full_like, broadcasted_iota,
broadcast_to_rank / broadcast_like / broadcast_shapes, collapse, tile, split,
stack / unstack, and optimization_barrier (an identity here: jaxlab's fuser keeps
no cross-value reordering for a barrier to prevent)."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.elementwise import convert_element_type_p
from jaxlab.lax import ops, slicing
from jaxlab.numpy._util import asarray_, canonical_axis
from jaxlab.tree_util import tree_map

__all__ = ["full_like", "broadcasted_iota", "broadcast_to_rank", "broadcast_like",
           "broadcast_shapes", "collapse", "tile", "split", "stack", "unstack",
           "optimization_barrier"]


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Array:
    """An array like x (its dtype and shape unless given) filled with fill_value."""
    out = jnp.full_like(x, fill_value, dtype, shape)
    weak = dtype is None and getattr(x, "weak_type", isinstance(x, (bool, int, float, complex)))
    return convert_element_type_p.bind(out, new_dtype=out.jdtype, weak_type=True) if weak else out


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Array:
    """0, 1, 2, ... along `dimension`, repeated along the others."""
    shape = tuple(operator.index(n) for n in shape)
    if not (isinstance(dimension, int) and 0 <= dimension < len(shape)):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape={shape}")
    line = ops.iota(dtype, shape[dimension])
    return ops.broadcast_in_dim(line, shape, (dimension,))


def broadcast_to_rank(x: Any, rank: int) -> Array:
    """x with leading unit dims added up to `rank` (unchanged when it has more)."""
    x = asarray_(x)
    return x if x.ndim >= rank else ops.broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr: Any, like_arr: Any) -> Array:
    return jnp.broadcast_to(arr, asarray_(like_arr).shape)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(jnp.broadcast_shapes(*shapes))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """operand with dims [start_dimension, stop_dimension) merged into one."""
    x = asarray_(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(x.ndim)
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: "
                         f"{x.shape}[{start_dimension}:{stop_dimension}]")
    merged = math.prod(x.shape[lo:hi])
    return ops.reshape(x, x.shape[:lo] + (merged,) + x.shape[hi:])


def tile(operand: Any, reps: Sequence[int]) -> Array:
    """operand repeated reps[d] times along each dim d (one rep per dim)."""
    x = asarray_(operand)
    reps = tuple(reps)
    if len(reps) != x.ndim:
        raise TypeError(f"reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}.")
    return jnp.tile(x, reps)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """operand cut along axis into consecutive pieces of the given sizes."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    sizes = [operator.index(n) for n in sizes]
    if any(n < 0 for n in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [slicing.slice_in_dim(x, s, s + n, axis=axis) for s, n in zip(starts, sizes)]


def stack(operands: Sequence[Any], axis: int = 0) -> Array:
    """The operands (one dtype and shape) stacked along a new axis."""
    xs = ops._same_dtypes("stack", operands)
    shapes = [x.shape for x in xs]
    if len(set(shapes)) > 1:
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(map(str, shapes))}.")
    return jnp.stack(xs, axis)


def unstack(x: Any, axis: int = 0) -> tuple[Array, ...]:
    """x's slices along axis, as a tuple."""
    x = asarray_(x)
    axis = canonical_axis(axis, x.ndim)
    return tuple(slicing.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def optimization_barrier(operand: Any, /) -> Any:
    """operand (a pytree) as arrays, unchanged."""
    return tree_map(asarray_, operand)
