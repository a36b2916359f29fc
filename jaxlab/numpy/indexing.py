"""x[idx], x.at[idx].get/set/add/multiply/min/max, take and take_along_axis.

NumPy's indexing rules with JAX's out-of-bounds rules. An index is parsed
into one entry per dim of x with a size-1 dim inserted for each None:
- a `range` per dim (what a slice or a static int selects; whole for the rest),
- the dims that static ints drop (when there are no index arrays),
- (dim, integer array) pairs for advanced indexing (static ints count as
  0-d arrays once any array is present, as in NumPy).
Reading selects the ranges as a view (slice + rev), then merges the advanced
dims into one and gathers them with one flat index. An update changes that
view (scatter for advanced indices, elementwise otherwise) and puts it back
with pad + select.

Out of bounds (JAX's defaults): static ints and array indices clamp when read
and are dropped when updated.
Boolean masks have a data-dependent shape: a concrete mask is read on the
host and becomes integer arrays (what JAX does outside jit); a traced mask
raises NonConcreteBooleanIndexError.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.array import Array, ArrayBase
from jaxlab.core import elementwise as ew
from jaxlab.core import indexing
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, astype_, broadcast_to_, canonical_axis, promote_args
from jaxlab.numpy.shape_ops import place_ranges, ravel, reshape, select_ranges, transpose

__all__ = ["take", "take_along_axis"]


class NonConcreteBooleanIndexError(IndexError):
    """A boolean mask whose values are not known while tracing."""


# --- parsing ---------------------------------------------------------------------

def _kind(item: Any) -> tuple[str, Any]:
    """(kind, value): kinds none, ellipsis, slice, int, array (integers), mask (bools)."""
    if item is None:
        return "none", item
    if item is Ellipsis:
        return "ellipsis", item
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, ArrayBase):
        if item.jdtype.is_bool:
            return "mask", _concrete_mask(item)
        if item.jdtype.is_float:
            raise TypeError(f"indices must be integers or booleans, got an array of {item.jdtype}")
        return "array", astype_(item, DType.int32)
    if isinstance(item, (bool, np.bool_)):
        return "mask", np.asarray(item)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, (list, np.ndarray)):
        data = np.asarray(item)
        data = data.astype(np.int64) if data.size == 0 and data.dtype.kind == "f" else data
        if data.dtype.kind == "b":
            return "mask", data
        if data.dtype.kind in "iu":
            return ("int", int(data)) if data.ndim == 0 else ("array", data)
    raise TypeError(f"invalid index {item!r}: only integers, slices, None, Ellipsis and "
                    f"integer or boolean arrays are valid indices")


def _concrete_mask(mask: ArrayBase) -> np.ndarray:
    if not isinstance(mask, Array):
        raise NonConcreteBooleanIndexError(
            f"boolean mask of shape {mask.shape} used as an index while tracing: the "
            f"result's shape would depend on the mask's values; use jnp.where(mask, x, y) "
            f"or x.at[...] with integer indices")
    return np.asarray(mask)


def _ndims_used(kind: str, value: Any) -> int:
    return value.ndim if kind == "mask" else int(kind in ("slice", "int", "array"))


def _expand_ellipsis(items: list[tuple[str, Any]], ndim: int) -> list[tuple[str, Any]]:
    used = sum(_ndims_used(k, v) for k, v in items)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {used} were indexed")
    dots = [i for i, (k, _) in enumerate(items) if k == "ellipsis"]
    if len(dots) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    at = dots[0] if dots else len(items)
    return items[:at] + [("slice", slice(None))] * (ndim - used) + items[at + 1:]


@dataclass
class _Index:
    shape: list[int]       # x's shape with the None dims inserted
    ranges: list[range]    # the positions read along each of those dims
    drop: list[int]        # dims of static ints (basic indexing only)
    arrays: list[tuple[int, Any]]   # (dim, integer indices) for advanced indexing
    out_of_bounds: bool = False     # a static int past its axis: read clamped

    def new_dim(self) -> int:
        self.shape.append(1)
        self.ranges.append(range(1))
        return len(self.shape) - 1

    def x_dim(self, n: int) -> int:
        self.shape.append(n)
        self.ranges.append(range(n))
        return len(self.shape) - 1


def _parse(shape: tuple[int, ...], idx: Any) -> _Index:
    items = _expand_ellipsis([_kind(i) for i in (idx if isinstance(idx, tuple) else (idx,))],
                             len(shape))
    advanced = any(k in ("array", "mask") for k, _ in items)
    out = _Index([], [], [], [])
    axis = 0
    for kind, value in items:
        _ENTRY[kind](out, value, shape, axis, advanced)
        axis += _ndims_used(kind, value)
    return out


def _none_entry(out: _Index, _: None, shape: tuple, axis: int, advanced: bool) -> None:
    out.new_dim()


def _slice_entry(out: _Index, s: slice, shape: tuple, axis: int, advanced: bool) -> None:
    out.ranges[out.x_dim(shape[axis])] = range(*s.indices(shape[axis]))


def _int_entry(out: _Index, i: int, shape: tuple, axis: int, advanced: bool) -> None:
    n = shape[axis]
    if n == 0:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size 0")
    d = out.x_dim(n)
    if advanced:   # a 0-d index array, which places the advanced dims as NumPy does
        out.arrays.append((d, np.asarray(i)))
        return
    out.out_of_bounds |= not -n <= i < n
    j = min(max(i + n if i < 0 else i, 0), n - 1)
    out.ranges[d] = range(j, j + 1)
    out.drop.append(d)


def _array_entry(out: _Index, a: Any, shape: tuple, axis: int, advanced: bool) -> None:
    out.arrays.append((out.x_dim(shape[axis]), a))


def _mask_entry(out: _Index, mask: np.ndarray, shape: tuple, axis: int, advanced: bool) -> None:
    if mask.ndim == 0:   # a boolean scalar: a new dim of size 1, kept (True) or emptied
        out.arrays.append((out.new_dim(), np.zeros(int(mask), np.int64)))
        return
    for k, (m, n) in enumerate(zip(mask.shape, shape[axis:axis + mask.ndim])):
        if m != n:
            raise IndexError(f"boolean index did not match indexed array along axis "
                             f"{axis + k}; size of axis is {n} but size of corresponding "
                             f"boolean axis is {m}")
    for k, nz in enumerate(np.nonzero(mask)):
        out.arrays.append((out.x_dim(shape[axis + k]), nz))


_ENTRY = {"none": _none_entry, "slice": _slice_entry, "int": _int_entry,
          "array": _array_entry, "mask": _mask_entry}


# --- advanced indices: one flat index over the merged dims ---------------------------

def _layout(dims: list[int], ndim: int) -> tuple[list[int], int]:
    """(permutation, front): the advanced dims gathered at `front`, in place when
    they are adjacent, else first (NumPy's rule)."""
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    front = dims[0] if adjacent else 0
    rest = [d for d in range(ndim) if d not in dims]
    return rest[:front] + dims + rest[front:], front


def _flat_index(arrays: list[Any], sizes: list[int]) -> tuple[Any, Any, Any]:
    """(xp, row-major flat index with each index clamped, whether all were in range).
    Host indices are combined with xp = NumPy, so they stay one small upload."""
    xp = np if all(isinstance(a, np.ndarray) for a in arrays) else jnp
    flat, valid = 0, True
    for i, n in zip(xp.broadcast_arrays(*arrays), sizes):
        i = xp.where(xp.less(i, 0), xp.add(i, n), i)
        valid = xp.logical_and(valid, xp.logical_and(xp.less(-1, i), xp.less(i, n)))
        flat = xp.add(xp.multiply(flat, n), xp.maximum(xp.minimum(i, n - 1), 0))
    return xp, flat, valid


@dataclass
class _Merged:
    """The view y with its advanced dims permuted together and merged into one."""
    z: Array
    perm: list[int]
    front: int
    unmerged: tuple[int, ...]
    xp: Any        # NumPy for host indices, else jaxlab.numpy
    flat: Any
    valid: Any

    @staticmethod
    def of(y: Array, ix: _Index) -> "_Merged":
        dims = [d for d, _ in ix.arrays]
        perm, front = _layout(dims, y.ndim)
        t = transpose(y, perm)
        k = len(dims)
        z = reshape(t, t.shape[:front] + (math.prod(t.shape[front:front + k]),)
                    + t.shape[front + k:])
        index = _flat_index([a for _, a in ix.arrays], [y.shape[d] for d in dims])
        return _Merged(z, perm, front, t.shape, *index)

    def result_shape(self) -> tuple[int, ...]:
        return self.z.shape[:self.front] + np.shape(self.flat) + self.z.shape[self.front + 1:]

    def gather(self, mode: str, fill_value: Any) -> Array:
        out = indexing.gather_p.bind(self.z, _i32(self.flat), axis=self.front)
        if mode == "clip":
            return out
        ok = reshape(asarray_(self.valid), (1,) * self.front + np.shape(self.flat)
                     + (1,) * (self.z.ndim - self.front - 1))
        fill = _fill_default(out.jdtype) if fill_value is None else fill_value
        return astype_(jnp.where(ok, out, fill), out.jdtype)

    def scatter(self, op: str, values: Array, mode: str) -> Array:
        flat = self.flat if mode == "clip" else self.xp.where(self.valid, self.flat, -1)
        values = broadcast_to_(values, self.result_shape())
        out = indexing.scatter_p.bind(self.z, _i32(flat), values, axis=self.front, mode=op)
        return transpose(reshape(out, self.unmerged), np.argsort(self.perm).tolist())


def _i32(x: Any) -> Array:
    return astype_(asarray_(x), DType.int32)


def _fill_default(dtype: DType) -> Any:
    """What an out-of-range read gives in "fill" mode (JAX's defaults): NaN, True, or
    the lowest signed / highest unsigned integer."""
    if dtype.is_float:
        return np.nan
    if dtype.is_complex:
        return complex(np.nan, np.nan)
    lowest, highest = dtype.bounds
    return True if dtype.is_bool else highest if lowest == 0 else lowest


# --- reading and updating ------------------------------------------------------------

def _get(x: ArrayBase, idx: Any, mode: str = "clip", fill_value: Any = None) -> Array:
    ix = _parse(x.shape, idx)
    y = select_ranges(reshape(x, ix.shape), ix.ranges)
    if ix.arrays:
        out = _Merged.of(y, ix).gather(mode, fill_value)
    else:
        out = reshape(y, [n for d, n in enumerate(y.shape) if d not in ix.drop])
    if ix.out_of_bounds and mode == "fill":
        return jnp.full_like(out, _fill_default(out.jdtype) if fill_value is None else fill_value)
    return out


_COMBINE = {"set": lambda old, new: new, "add": jnp.add, "multiply": jnp.multiply,
            "min": jnp.minimum, "max": jnp.maximum}


def _update(x: ArrayBase, idx: Any, op: str, values: Any, mode: str) -> Array:
    ix = _parse(x.shape, idx)
    v = astype_(asarray_(values), x.jdtype)   # JAX casts updates to x's dtype
    if ix.out_of_bounds and mode == "drop":
        return x   # the whole update falls outside x
    base = reshape(x, ix.shape)
    y = select_ranges(base, ix.ranges)
    if ix.arrays:
        new = _Merged.of(y, ix).scatter(op, v, mode)
    else:
        kept = [n for d, n in enumerate(y.shape) if d not in ix.drop]
        new = astype_(_COMBINE[op](y, reshape(broadcast_to_(v, kept), y.shape)), x.jdtype)
    return reshape(place_ranges(base, ix.ranges, new), x.shape)


_GET_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip",
              "fill": "fill", "drop": "fill"}
_UPDATE_MODES = {None: "drop", "drop": "drop", "fill": "drop",
                 "clip": "clip", "promise_in_bounds": "clip"}


def _mode(table: dict, mode: Any) -> str:
    if mode not in table:
        raise ValueError(f"invalid indexing mode {mode!r}; expected one of "
                         f"{', '.join(str(m) for m in table if m)}")
    return table[mode]


class _IndexUpdateRef:
    """x.at[idx]: get() and the functional updates set/add/multiply/min/max."""

    __slots__ = ("array", "index")

    def __init__(self, array: ArrayBase, index: Any) -> None:
        self.array, self.index = array, index

    def get(self, *, mode: str | None = None, fill_value: Any = None) -> Array:
        return _get(self.array, self.index, _mode(_GET_MODES, mode), fill_value)


def _updater(op: str):
    def update(self: _IndexUpdateRef, values: Any, *, mode: str | None = None) -> Array:
        return _update(self.array, self.index, op, values, _mode(_UPDATE_MODES, mode))
    update.__name__ = update.__qualname__ = op
    update.__doc__ = (f"A copy of the array with x[idx] {op} values (out-of-range "
                      f"updates dropped unless mode='clip').")
    return update


for _op in _COMBINE:
    setattr(_IndexUpdateRef, _op, _updater(_op))


class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array: ArrayBase) -> None:
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


def _setitem(self: ArrayBase, idx: Any, value: Any) -> None:
    raise TypeError("jaxlab arrays are immutable: instead of x[idx] = y, "
                    "use x = x.at[idx].set(y)")


ArrayBase.__getitem__ = _get
ArrayBase.__setitem__ = _setitem
ArrayBase.at = property(_IndexUpdateHelper, doc="Functional updates: x.at[idx].set(y) etc.")


# --- take ----------------------------------------------------------------------------------

def _take_indices(indices: Any, n: int, mode: Any) -> tuple[Array, str]:
    idx = asarray_(indices)
    if not idx.jdtype.is_int:
        raise TypeError(f"take: indices must be integers, got {idx.jdtype}")
    if mode == "wrap":   # (i rem n + n) rem n: a floored modulo, so negative indices wrap too
        return _rem(jnp.add(_rem(idx, n), n), n), "clip"
    return idx, _mode({None: "fill", "fill": "fill", "clip": "clip"}, mode)


def _rem(x: Array, n: int) -> Array:
    return ew.binary_prims["rem"].bind(*promote_args(x, n))


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None,
         fill_value: Any = None) -> Array:
    """a's slices at `indices` along axis (flattened when None). As in JAX,
    out-of-range indices read fill_value by default; mode 'clip' or 'wrap'."""
    a = asarray_(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    idx, mode = _take_indices(indices, a.shape[axis], mode)
    return _get(a, (slice(None),) * axis + (idx,), mode, fill_value)


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Array:
    """out[..., j, ...] = arr[..., indices[..., j, ...], ...]; other dims broadcast."""
    a = asarray_(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, a.ndim)
    idx, mode = _take_indices(indices, a.shape[axis], mode)
    if idx.ndim != a.ndim:
        raise ValueError(f"take_along_axis: indices of shape {idx.shape} and arr of shape "
                         f"{a.shape} must have the same number of dimensions")
    return _get(a, tuple(idx if d == axis else np.arange(n).reshape(
        [n if e == d else 1 for e in range(a.ndim)]) for d, n in enumerate(a.shape)),
        mode, fill_value)
