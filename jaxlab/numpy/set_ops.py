"""Set operations: unique (and the Array API's unique_*), union1d, intersect1d, setdiff1d,
setxor1d.

Each sorts (a stable argsort, lexsort for rows and complex values), marks where the sorted
values change, and gathers the marked ones into `size` slots. The result's length is
the count of marked values: read on the host when `size` is None (concrete inputs only,
as in JAX), static when given (then under jit too, padded with fill_value)."""
from __future__ import annotations

import operator
from typing import Any, NamedTuple, Optional

from jaxlab.array import Array
from jaxlab.errors import ConcretizationTypeError
from jaxlab.ir.dtypes import default_int
from jaxlab.numpy import creation, reductions, shape_ops, ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, astype_, canonical_axis, promote_dtypes
from jaxlab.numpy.array_api import flatnonzero, isin
from jaxlab.numpy.complex_functions import imag, real
from jaxlab.numpy.ordering import lexsort

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "union1d", "intersect1d", "setdiff1d", "setxor1d"]


def result_size(name: str, size: Optional[int], count: Array) -> int:
    """`size`, or the count of results when it is None: known outside jit (and under
    grad), not while tracing, where JAX raises ConcretizationTypeError too."""
    if size is not None:
        return operator.index(size)
    try:
        return int(count)
    except ConcretizationTypeError as e:
        raise ConcretizationTypeError(
            f"{name}: the length of the result depends on the values of a traced "
            f"argument. To use {name} under jit, pass a static `size` argument (and "
            f"optionally fill_value). ({e})") from None


def _row_keys(rows: Array) -> list[Array]:
    """lexsort keys ordering (n, m) rows by column 0 first (real part before imaginary)."""
    keys = []
    for c in reversed(range(rows.shape[1])):
        col = rows[:, c]
        keys += [imag(col), real(col)] if col.jdtype.is_complex else [col]
    return keys


class _Sorted(NamedTuple):
    order: Array      # the stable order of the rows
    rows: Array       # the rows in that order
    new: Array        # whether each sorted row differs from the one before it


def _sort_rows(rows: Array, equal_nan: bool) -> _Sorted:
    order = lexsort(_row_keys(rows)) if rows.shape[0] else creation.arange(0, dtype=default_int())
    s = rows[order]
    later, earlier = s[1:], s[:-1]
    differs = ufuncs.not_equal(later, earlier)
    if equal_nan and (s.jdtype.is_float or s.jdtype.is_complex):
        differs = differs & ~(ufuncs.isnan(later) & ufuncs.isnan(earlier))
    head = creation.ones((min(rows.shape[0], 1),), "bool")
    return _Sorted(order, s, shape_ops.concatenate([head, reductions.any(differs, axis=1)]))


def _padded(values: Array, valid: Array, fill_value: Any) -> Array:
    if fill_value is None:
        return values
    mask = shape_ops.reshape(valid, valid.shape + (1,) * (values.ndim - 1))
    return ufuncs.where(mask, values, asarray_(fill_value, values.jdtype))


def _counted(valid_count: Array, size: int) -> Array:
    return creation.arange(size, dtype=default_int()) < valid_count


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: Optional[int] = None, *, equal_nan: bool = True,
           size: Optional[int] = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted distinct values of ar (flattened, or its distinct slices along axis),
    with optionally the index of each one's first occurrence, the inverse map and the
    counts. With `size`, exactly that many results: padded with fill_value (default: the
    smallest value), index and counts padded with that value's index and 0."""
    x = arraylike_("unique", ar)
    if axis is None:
        moved, rest = shape_ops.ravel(x), ()
    else:
        x = shape_ops.atleast_1d(x)
        axis = canonical_axis(axis, x.ndim)
        moved = shape_ops.moveaxis(x, axis, 0)
        rest = moved.shape[1:]
    n = moved.shape[0]
    rows = shape_ops.reshape(moved, (n, -1)) if n else shape_ops.reshape(moved, (0, 1))
    s = _sort_rows(rows, equal_nan)
    count = reductions.sum(s.new, dtype=default_int())
    size = result_size("unique", size, count)
    first = flatnonzero(s.new, size=size)   # sorted positions of each value's first row
    index = s.order[first] if n else creation.zeros((size,), default_int())
    values = shape_ops.reshape(moved[index] if n else creation.zeros((size,) + rest, x.jdtype),
                               (size,) + rest)
    valid = _counted(count, size)
    values = _padded(values, valid, fill_value)
    if axis is not None:
        values = shape_ops.moveaxis(values, 0, axis)
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:
        group = reductions.cumsum(astype_(s.new, default_int())) - 1
        inverse = creation.zeros((n,), default_int()).at[s.order].set(group)
        out.append(shape_ops.reshape(inverse, x.shape) if axis is None else inverse)
    if return_counts:
        group = reductions.cumsum(astype_(s.new, default_int())) - 1
        out.append(creation.zeros((size,), default_int()).at[group].add(1, mode="drop"))
    return out[0] if len(out) == 1 else tuple(out)


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _array_api_unique(x: Any, size: Optional[int], fill_value: Any, **returns: bool) -> Any:
    """unique as the Array API standard asks: NaNs distinct, the inverse in x's shape."""
    return unique(arraylike_("unique", x), equal_nan=False, size=size, fill_value=fill_value,
                  **returns)


def unique_values(x: Any, /, *, size: Optional[int] = None, fill_value: Any = None) -> Array:
    """The distinct values of x (NaNs distinct)."""
    return _array_api_unique(x, size, fill_value)


def unique_counts(x: Any, /, *, size: Optional[int] = None,
                  fill_value: Any = None) -> UniqueCountsResult:
    """The distinct values of x and how often each occurs."""
    return UniqueCountsResult(*_array_api_unique(x, size, fill_value, return_counts=True))


def unique_inverse(x: Any, /, *, size: Optional[int] = None,
                   fill_value: Any = None) -> UniqueInverseResult:
    """The distinct values of x and, for each element of x, its value's position."""
    return UniqueInverseResult(*_array_api_unique(x, size, fill_value, return_inverse=True))


def unique_all(x: Any, /, *, size: Optional[int] = None,
               fill_value: Any = None) -> UniqueAllResult:
    """Values, first indices, inverse indices and counts of x's distinct values."""
    return UniqueAllResult(*_array_api_unique(x, size, fill_value, return_index=True,
                                              return_inverse=True, return_counts=True))


# --- two sets ---------------------------------------------------------------------------

def _flat_pair(name: str, ar1: Any, ar2: Any, promote: bool = True) -> tuple[Array, Array]:
    a, b = arraylike_(name, ar1), arraylike_(name, ar2, 1)
    dt = promote_dtypes(a, b) if promote else a.jdtype
    return shape_ops.ravel(astype_(a, dt)), shape_ops.ravel(astype_(b, dt))


def _sorted_1d(a: Array) -> _Sorted:
    return _sort_rows(shape_ops.reshape(a, (-1, 1)), equal_nan=True)


def _gather_marked(name: str, values: Array, mark: Array, size: Optional[int],
                   fill_value: Any) -> tuple[Array, Array, Array]:
    """values at the marked positions (in order) in `size` slots; the positions and
    which slots hold one. fill_value None: the first value fills the rest."""
    count = reductions.sum(mark, dtype=default_int())
    size = result_size(name, size, count)
    positions = flatnonzero(mark, size=size)
    valid = _counted(count, size)
    taken = values[positions] if values.shape[0] else creation.zeros((size,), values.jdtype)
    if fill_value is None and size and values.shape[0]:
        fill_value = taken[0]
    return _padded(taken, valid, fill_value), positions, valid


def union1d(ar1: Any, ar2: Any, *, size: Optional[int] = None, fill_value: Any = None) -> Array:
    """The sorted distinct values in either array."""
    a, b = _flat_pair("union1d", ar1, ar2)
    return unique(shape_ops.concatenate([a, b]), size=size, fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Optional[int] = None,
              fill_value: Any = None) -> Array:
    """The sorted distinct values of ar1 not in ar2 (ar1's dtype; padding 0 by default)."""
    a, b = _flat_pair("setdiff1d", ar1, ar2, promote=False)
    s = _sorted_1d(a)
    keep = s.new & isin(s.rows[:, 0], b, invert=True)
    return _gather_marked("setdiff1d", s.rows[:, 0], keep, size,
                          0 if fill_value is None else fill_value)[0]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: Optional[int] = None,
             fill_value: Any = None) -> Array:
    """The sorted distinct values in exactly one of the arrays."""
    a, b = _flat_pair("setxor1d", ar1, ar2)
    both = shape_ops.concatenate([a, b])
    s = _sorted_1d(both)
    group = reductions.cumsum(astype_(s.new, default_int())) - 1
    seen = creation.zeros((both.shape[0],), default_int())
    in_a = seen.at[group].max(astype_(s.order < a.shape[0], default_int()))
    in_b = seen.at[group].max(astype_(s.order >= a.shape[0], default_int()))
    once = s.new & ((in_a + in_b) == 1)[group]
    return _gather_marked("setxor1d", s.rows[:, 0], once, size, fill_value)[0]


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: Optional[int] = None, fill_value: Any = None) -> Any:
    """The sorted distinct values in both arrays; with return_indices, where each first
    occurs in ar1 and in ar2 (padding: the arrays' lengths)."""
    a, b = _flat_pair("intersect1d", ar1, ar2)
    s = _sorted_1d(a)
    shared = s.new & isin(s.rows[:, 0], b)
    values, positions, valid = _gather_marked("intersect1d", s.rows[:, 0], shared, size,
                                              fill_value)
    if not return_indices:
        return values
    index_a = s.order[positions] if a.shape[0] else positions
    matches = ufuncs.equal(shape_ops.expand_dims(values, 1), b)
    index_b = astype_(reductions.argmax(matches, axis=1), default_int()) if b.shape[0] \
        else positions
    return (values, ufuncs.where(valid, index_a, a.shape[0]),
            ufuncs.where(valid, index_b, b.shape[0]))
