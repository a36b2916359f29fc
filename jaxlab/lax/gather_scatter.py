"""lax.gather and the lax.scatter family with XLA's dimension numbers, lowered to
jaxlab's indexing: every operand dim gets an index grid over (batch dims of the
indices, then the window dims), so one advanced index x[grid_0, ..., grid_n] reads
(or x.at[...] updates) the whole set of windows, and the result's window dims are
then moved to where the dimension numbers put them."""
from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax import ops
from jaxlab.numpy._util import asarray_

__all__ = ["GatherScatterMode", "GatherDimensionNumbers", "ScatterDimensionNumbers", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max", "index_take"]


class GatherScatterMode(enum.Enum):
    """What an out-of-bounds window does: CLIP moves it inside, FILL_OR_DROP reads
    fill_value (gather) or skips the update (scatter); PROMISE_IN_BOUNDS does what JAX
    does on CPU: a gather clips, a scatter skips."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        named = {"clip": GatherScatterMode.CLIP, "one_hot": GatherScatterMode.ONE_HOT,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if s not in named:
            raise ValueError(f'Unknown gather mode "{s}"')
        return named[s]


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class _Windows(NamedTuple):
    """Where each window of a gather or scatter lies in the operand."""
    window_sizes: tuple[int, ...]   # per operand dim (1 for dims without a window dim)
    kept: tuple[int, ...]           # operand dims with a window dim in the result
    index_map: tuple[int, ...]      # operand dim of each entry of an index vector
    operand_batching: tuple[int, ...]
    indices_batching: tuple[int, ...]


def _indices(name: str, indices: Any) -> Array:
    idx = asarray_(indices)
    if not idx.jdtype.is_int:
        raise ValueError("indices must have an integer type")
    return idx


def _grids(shape: tuple, idx: Array, w: _Windows, mode: GatherScatterMode
           ) -> tuple[list[Array], Array]:
    """(per operand dim an index grid of shape idx.shape[:-1] + the kept window sizes,
    whether each window lies inside the operand), starts clamped to fit."""
    if mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("lax.gather/scatter: mode ONE_HOT is not supported in jaxlab")
    batch = idx.shape[:-1]
    nb, nk = len(batch), len(w.kept)
    inside = jnp.ones(batch, bool)
    grids = []
    for d, n in enumerate(shape):
        size = w.window_sizes[d]
        if d in w.index_map:
            start = idx[..., w.index_map.index(d)].astype(jnp.int32)
            inside = inside & (start >= 0) & (start <= n - size)
            start = jnp.clip(start, 0, n - size)
        elif d in w.operand_batching:
            along = w.indices_batching[w.operand_batching.index(d)]
            start = jnp.reshape(jnp.arange(batch[along], dtype=jnp.int32),
                                [batch[along] if e == along else 1 for e in range(nb)])
        else:
            start = jnp.zeros((1,) * nb, jnp.int32)
        start = jnp.reshape(start, start.shape + (1,) * nk)
        if d in w.kept:
            at = w.kept.index(d)
            start = start + jnp.reshape(jnp.arange(size, dtype=jnp.int32),
                                        (1,) * nb + tuple(size if e == at else 1
                                                          for e in range(nk)))
        grids.append(start)
    return grids, inside


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value: Any = None) -> Array:
    """XLA's gather: a slice of slice_sizes at each index vector (the last dim of
    start_indices); collapsed dims dropped, window dims placed at offset_dims."""
    x, idx = asarray_(operand), _indices("gather", start_indices)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                      else mode)
    sizes = tuple(int(s) for s in slice_sizes)
    if len(sizes) != x.ndim:
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(sizes)}, input_shape.rank={x.ndim}")
    for i, (s, n) in enumerate(zip(sizes, x.shape)):
        if not 0 <= s <= n:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {n} + 1), got {s}.")
    for pos, d in enumerate(dn.collapsed_slice_dims):
        if sizes[d] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {sizes[d]} for index {d} at position {pos}.")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    kept = tuple(d for d in range(x.ndim) if d not in dropped)
    w = _Windows(sizes, kept, tuple(dn.start_index_map), tuple(dn.operand_batching_dims),
                 tuple(dn.start_indices_batching_dims))
    grids, inside = _grids(x.shape, idx, w, mode)
    out = x.at[tuple(grids)].get(mode="promise_in_bounds")
    if mode is GatherScatterMode.FILL_OR_DROP:
        fill = jnp.asarray(np.nan if fill_value is None and x.jdtype.is_inexact else
                           _int_fill(x) if fill_value is None else fill_value, x.jdtype)
        out = jnp.where(jnp.reshape(inside, inside.shape + (1,) * len(kept)), out, fill)
    return _move_window_dims(out, len(idx.shape) - 1, tuple(dn.offset_dims))


def _int_fill(x: Array) -> Any:
    lowest, highest = x.jdtype.bounds
    return True if x.jdtype.is_bool else highest if lowest == 0 else lowest


def _move_window_dims(y: Array, nb: int, window_dims: tuple[int, ...]) -> Array:
    """y (batch dims, then window dims) with the window dims at window_dims."""
    rank = y.ndim
    batch_at = [d for d in range(rank) if d not in window_dims]
    source = [0] * rank
    for i, d in enumerate(batch_at):
        source[d] = i
    for i, d in enumerate(window_dims):
        source[d] = nb + i
    return ops.transpose(y, source)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Array:
    """src at the index arrays idxs along axes (ascending): the indices' broadcast dims
    first, then src's other dims."""
    x = asarray_(src)
    axes = tuple(int(a) for a in axes)
    if list(axes) != sorted(axes):
        raise TypeError(f"collapsed_slice_dims in gather op must be sorted; got {axes}")
    front = ops.transpose(x, axes + tuple(d for d in range(x.ndim) if d not in axes))
    return front.at[tuple(asarray_(i) for i in idxs)].get(mode="promise_in_bounds")


# --- scatter -----------------------------------------------------------------------------

def _scatter(name: str, combine: str, negate: bool = False
             ) -> Callable[..., Array]:
    def scatter_op(operand: Any, scatter_indices: Any, updates: Any,
                   dimension_numbers: ScatterDimensionNumbers, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: str | GatherScatterMode | None = None) -> Array:
        x, u = ops._same_dtypes("scatter", [operand, updates])
        idx = _indices(name, scatter_indices)
        dn = dimension_numbers
        mode = GatherScatterMode.from_any(mode)
        window_dims = tuple(dn.update_window_dims)
        rank = len(idx.shape) - 1 + len(window_dims)
        if u.ndim != rank:
            raise TypeError(f"Updates tensor must be of rank {rank}; got {u.ndim}.")
        dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        kept = tuple(d for d in range(x.ndim) if d not in dropped)
        sizes = [1] * x.ndim
        for d, ud in zip(kept, window_dims):
            if u.shape[ud] > x.shape[d]:
                raise TypeError(f"Bounds of the window dimensions of updates must not exceed "
                                f"the bounds of the corresponding dimensions of operand. For "
                                f"dimension {ud}, updates bound is {u.shape[ud]}, operand "
                                f"bound is {x.shape[d]}.")
            sizes[d] = u.shape[ud]
        w = _Windows(tuple(sizes), kept, tuple(dn.scatter_dims_to_operand_dims),
                     tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims))
        grids, inside = _grids(x.shape, idx, w, mode)
        if mode is not GatherScatterMode.CLIP:   # a window partly outside is skipped (as
            # XLA does with a promise broken too)
            outside = jnp.reshape(~inside, inside.shape + (1,) * len(kept))
            grids = [jnp.where(outside, n, g) for g, n in zip(grids, x.shape)]
        batch_at = [d for d in range(rank) if d not in window_dims]
        u = ops.transpose(u, batch_at + list(window_dims))
        ref = x.at[tuple(grids)]
        return getattr(ref, combine)(-u if negate else u, mode="drop")
    scatter_op.__name__ = scatter_op.__qualname__ = name
    scatter_op.__doc__ = (f"XLA's scatter, combining with '{combine}'"
                          f"{' of the negated updates' if negate else ''}: each update "
                          f"window goes to the operand window at its index vector.")
    return scatter_op


scatter = _scatter("scatter", "set")
scatter_add = _scatter("scatter_add", "add")
scatter_sub = _scatter("scatter_sub", "add", negate=True)
scatter_mul = _scatter("scatter_mul", "multiply")
scatter_min = _scatter("scatter_min", "min")
scatter_max = _scatter("scatter_max", "max")
