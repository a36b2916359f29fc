"""lax's slicing helpers: index_in_dim / slice_in_dim (static) and the dynamic_*
family, whose start indices may be traced. A dynamic start is clamped so the
window fits (as in JAX) and read through one gather over the window's index grid;
starts known on the host take lax.slice, which fuses as a view."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.array import Array, ArrayBase
from jaxlab.lax import ops
from jaxlab.numpy._util import asarray_, canonical_axis

__all__ = ["index_in_dim", "slice_in_dim", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_index_in_dim"]


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """operand's slice at a static index along axis (negative counts from the end)."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    n = x.shape[axis]
    index = operator.index(index)
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    index %= n
    out = slice_in_dim(x, index, index + 1, axis=axis)
    return out if keepdims else ops.squeeze(out, (axis,))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Array:
    """lax.slice along one axis; None means the whole range, negative ones count back."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = (i + n if i < 0 else i for i in (start, limit))
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    if limit > n or start < 0:
        raise TypeError(f"slice start_indices must be nonnegative and limit_indices less "
                        f"than or equal to operand shape, got start_indices {tuple(starts)}, "
                        f"limit_indices {tuple(limits)} for operand shape {x.shape}.")
    return ops.slice(x, starts, limits, strides)


# --- dynamic starts ---------------------------------------------------------------------

def _is_static(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _starts(name: str, shape: tuple, start_indices: Any) -> list:
    """The start indices as a list: host ints kept, the rest int Arrays of one dtype."""
    if isinstance(start_indices, (ArrayBase, np.ndarray)):
        start_indices = [start_indices[i] for i in range(start_indices.shape[0])] \
            if np.ndim(start_indices) == 1 else start_indices
    starts = list(start_indices)
    if len(starts) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(starts)} vs {shape})")
    arrays = [asarray_(s) for s in starts]   # a Python int is weak, NumPy's are not
    kinds = {a.jdtype for a in arrays if not a.weak_type}
    if any(not a.jdtype.is_int for a in arrays) or len(kinds) > 1:
        got = ", ".join(str(asarray_(s).jdtype) for s in starts)
        raise TypeError(f"index arguments to {name} must be integers of the same type, "
                        f"got: {got}")
    return [int(s) if _is_static(s) else asarray_(s) for s in starts]


def _check_sizes(name: str, what: str, sizes: Sequence[int], shape: tuple) -> None:
    if len(sizes) != len(shape):
        raise TypeError(f"{name} {what} must have the same rank as operand, got {what} "
                        f"{tuple(sizes)} for operand shape {shape}.")
    if any(s < 0 for s in sizes):
        raise TypeError(f"{name} {what} must be greater than or equal to zero, got "
                        f"{tuple(sizes)}.")
    if any(s > n for s, n in zip(sizes, shape)):
        raise TypeError(f"{name} {what} must be less than or equal to operand shape, got "
                        f"{what} {tuple(sizes)} for operand shape {shape}.")


def _clamped(start: Any, n: int, size: int, allow_negative: bool) -> Any:
    """The start moved (negative ones counted from the end) so the window fits."""
    if isinstance(start, int):
        if start < 0 and not allow_negative:
            raise ValueError(f"Index {start} is out of bounds for dimension {n} if "
                             f"allow_negative_indices=False")
        start = start + n if start < 0 else start
        return builtins.min(builtins.max(start, 0), n - size)
    if allow_negative:
        start = jnp.where(start < 0, start + n, start)
    return jnp.clip(start, 0, n - size)


def _allow_each(allow: bool | Sequence[bool], ndim: int) -> list[bool]:
    return [bool(allow)] * ndim if isinstance(allow, (bool, np.bool_)) else list(allow)


def _window(shape: tuple, starts: list, sizes: Sequence[int],
            allow: bool | Sequence[bool]) -> tuple[list, bool]:
    """(per dim: a static start, or the window's index grid; whether all are static)."""
    clamped = [_clamped(s, n, k, a) for s, n, k, a in
               zip(starts, shape, sizes, _allow_each(allow, len(shape)))]
    if all(isinstance(s, int) for s in clamped):
        return clamped, True
    grids = []
    for d, (s, k) in enumerate(zip(clamped, sizes)):
        line = jnp.arange(k, dtype=jnp.int32) + s
        grids.append(jnp.reshape(line, [k if e == d else 1 for e in range(len(shape))]))
    return grids, False


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """operand[start : start + size] in every dim; starts may be traced, and are
    clamped so that the slice lies inside operand."""
    x = asarray_(operand)
    starts = _starts("dynamic_slice", x.shape, start_indices)
    sizes = [operator.index(k) for k in slice_sizes]
    _check_sizes("slice", "slice_sizes", sizes, x.shape)
    where, static = _window(x.shape, starts, sizes, allow_negative_indices)
    if static:
        return ops.slice(x, where, [s + k for s, k in zip(where, sizes)])
    return x.at[tuple(where)].get(mode="promise_in_bounds")


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """operand with the window at start_indices (clamped to fit) replaced by update."""
    x, u = ops._same_dtypes("dynamic_update_slice", [operand, update])
    starts = _starts("dynamic_update_slice", x.shape, start_indices)
    if u.ndim != x.ndim:
        raise TypeError(f"dynamic_update_slice update must have the same rank as operand, "
                        f"got update shape {u.shape} for operand shape {x.shape}.")
    if any(k > n for k, n in zip(u.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand "
                        f"shape, got update shape {u.shape} for operand shape {x.shape}.")
    where, static = _window(x.shape, starts, u.shape, allow_negative_indices)
    if static:
        where = tuple(builtins.slice(s, s + k) for s, k in zip(where, u.shape))
    return x.at[tuple(where)].set(u, mode="promise_in_bounds")


def _in_dim(x: Array, axis: int, at: Any, fill: Any) -> list:
    return [at if d == axis else fill(d) for d in range(x.ndim)]


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Array:
    """dynamic_slice along one axis, the others whole."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    return dynamic_slice(x, _in_dim(x, axis, start_index, lambda d: 0),
                         _in_dim(x, axis, slice_size, lambda d: x.shape[d]),
                         allow_negative_indices=_in_dim(x, axis, allow_negative_indices,
                                                        lambda d: True))


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Array:
    """The slice at a (possibly traced) index along axis."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else ops.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """dynamic_update_slice at start_index along axis, 0 along the others."""
    x = asarray_(operand)
    axis = canonical_axis(axis, x.ndim)
    return dynamic_update_slice(x, update, _in_dim(x, axis, start_index, lambda d: 0),
                                allow_negative_indices=_in_dim(
                                    x, axis, allow_negative_indices, lambda d: True))


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """operand with its slice at index along axis replaced by update (which may lack
    that axis)."""
    x, u = asarray_(operand), asarray_(update)
    axis = canonical_axis(axis, x.ndim)
    if u.ndim == x.ndim - 1:
        u = ops.expand_dims(u, (axis,))
    return dynamic_update_slice_in_dim(x, u, index, axis,
                                       allow_negative_indices=allow_negative_indices)
