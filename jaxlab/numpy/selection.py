"""Choosing and placing values by conditions and positions: select, piecewise, choose,
compress, extract, place, put, put_along_axis, argwhere, and counting into bins:
bincount, digitize."""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional, Sequence

import numpy as np

from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, default_int
from jaxlab.numpy import creation, reductions, shape_ops, ufuncs
from jaxlab.numpy._util import (arraylike_, asarray_, astype_, broadcast_all, canonical_axis,
                                promote_dtypes)
from jaxlab.numpy.array_api import flatnonzero, nonzero, searchsorted
from jaxlab.numpy.indexing import take_along_axis
from jaxlab.numpy.set_ops import result_size

__all__ = ["select", "piecewise", "choose", "compress", "extract", "place", "put",
           "put_along_axis", "argwhere", "bincount", "digitize"]


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Array:
    """choicelist[i] where condlist[i] is the first true condition, default elsewhere."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    out = arraylike_("select", default, 2)
    dt = promote_dtypes(out, *choicelist)
    out = astype_(out, dt)
    # the last condition first, so that earlier true ones win
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        cond = arraylike_("select", cond)
        if cond.jdtype is not DType.bool:
            raise TypeError(f"condlist must be boolean arrays, got {cond.jdtype}")
        out = ufuncs.where(cond, astype_(arraylike_("select", choice, 1), dt), out)
    return out


def piecewise(x: Any, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Array:
    """funclist[i] (a function of x, or a value) where condlist[i] holds (a later true
    condition wins), 0 elsewhere, or funclist[-1] there when it has one more entry."""
    x = arraylike_("piecewise", x)
    conds = [condlist] if not isinstance(condlist, (list, tuple)) and \
        np.ndim(condlist) == x.ndim else list(condlist)
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"funclist must have len(condlist) or len(condlist) + 1 entries, "
                         f"got {len(funclist)} for {len(conds)} conditions")

    def value(f: Any) -> Array:
        return astype_(asarray_(f(x, *args, **kw) if callable(f) else f), x.jdtype)

    out = shape_ops.broadcast_to(value(funclist[-1]) if len(funclist) > len(conds)
                                 else creation.zeros((), x.jdtype), x.shape)
    for cond, f in zip(conds, funclist):
        out = ufuncs.where(asarray_(cond), value(f), out)
    return out


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Array:
    """choices[a[i]][i] for every i (all broadcast together). mode 'raise' checks a
    (concrete only), 'wrap' and 'clip' fix it."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    index = arraylike_("choose", a)
    if not index.jdtype.is_int:
        raise TypeError(f"choose: a must be integers, got {index.jdtype}")
    options = [arraylike_("choose", c, 1) for c in choices]
    n = len(options)
    if mode == "raise":
        if not isinstance(index, Array):
            raise ValueError("The error occurred because jnp.choose was jit-compiled with "
                             "mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if bool(reductions.any((index < 0) | (index >= n))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        index = ufuncs.remainder(index, n)
    elif mode == "clip":
        index = ufuncs.clip(index, 0, n - 1)
    else:
        raise ValueError(f"invalid mode argument: {mode!r}")
    index, *options = broadcast_all(index, *(astype_(o, promote_dtypes(*options))
                                             for o in options))
    picked = take_along_axis(shape_ops.stack(options), shape_ops.expand_dims(index, 0), 0)
    return picked[0]


def compress(condition: Any, a: Any, axis: Optional[int] = None, *, size: Optional[int] = None,
             fill_value: Any = 0, out: None = None) -> Array:
    """The slices of a along axis (flattened when None) where condition is true; with
    `size`, exactly that many (padded with fill_value), under jit too."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    cond = arraylike_("compress", condition)
    x = arraylike_("compress", a, 1)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        x, axis = shape_ops.ravel(x), 0
    axis = canonical_axis(axis, x.ndim)
    n = x.shape[axis]
    mask = cond != 0
    if mask.shape[0] > n:   # extra entries must be false (concrete conditions only)
        if bool(reductions.any(mask[n:])):
            raise ValueError(f"condition contains entries that are out of bounds for axis "
                             f"{axis} of size {n}")
        mask = mask[:n]
    elif mask.shape[0] < n:
        mask = shape_ops.pad(mask, (0, n - mask.shape[0]))
    count = reductions.sum(mask, dtype=default_int())
    size = result_size("compress", size, count)
    picked = shape_ops.moveaxis(x, axis, 0)[flatnonzero(mask, size=size)]
    valid = creation.arange(size) < count
    picked = ufuncs.where(shape_ops.reshape(valid, (size,) + (1,) * (x.ndim - 1)), picked,
                          asarray_(fill_value, x.jdtype))
    return shape_ops.moveaxis(picked, 0, axis)


def extract(condition: Any, arr: Any, *, size: Optional[int] = None,
            fill_value: Any = 0) -> Array:
    """The elements of arr (flattened) where condition (flattened) is true."""
    return compress(shape_ops.ravel(arraylike_("extract", condition)),
                    shape_ops.ravel(arraylike_("extract", arr, 1)), size=size,
                    fill_value=fill_value)


def _immutable(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays "
                         f"are immutable. Pass inplace=False to instead return an updated "
                         f"array.")


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Array:
    """arr with the positions where mask is true taking vals in turn (repeated when
    shorter)."""
    _immutable("place", inplace)
    x = arraylike_("place", arr)
    m = shape_ops.ravel(arraylike_("place", mask, 1) != 0)
    v = shape_ops.ravel(astype_(arraylike_("place", vals, 2), x.jdtype))
    if v.size == 0:
        raise ValueError("Cannot place an empty array of values")
    turn = ufuncs.remainder(reductions.cumsum(astype_(m, default_int())) - 1, v.size)
    return shape_ops.reshape(ufuncs.where(m, v[turn], shape_ops.ravel(x)), x.shape)


_INDEX_MODES: dict[Optional[str], Callable[[Array, int], Array]] = {
    None: lambda i, n: ufuncs.clip(i, 0, n - 1),
    "clip": lambda i, n: ufuncs.clip(i, 0, n - 1),
    "wrap": lambda i, n: ufuncs.remainder(i, n),
}


def put(a: Any, ind: Any, v: Any, mode: Optional[str] = None, *, inplace: bool = True) -> Array:
    """a (flattened) with the positions ind set to v (repeated when shorter); out-of-range
    positions are clipped (mode None or 'clip') or wrapped ('wrap')."""
    _immutable("put", inplace)
    if mode not in _INDEX_MODES:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    x = arraylike_("put", a)
    index = shape_ops.ravel(arraylike_("put", ind, 1))
    values = shape_ops.ravel(astype_(arraylike_("put", v, 2), x.jdtype))
    if index.size == 0 or x.size == 0:
        return x
    if values.size != index.size:
        values = shape_ops.tile(values, -(-index.size // values.size))[:index.size]
    flat = shape_ops.ravel(x).at[_INDEX_MODES[mode](index, x.size)].set(values)
    return shape_ops.reshape(flat, x.shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Optional[int],
                   inplace: bool = True, *, mode: Optional[str] = None) -> Array:
    """arr with arr[..., indices[..., j, ...], ...] = values along axis (the other dims
    broadcast), as take_along_axis reads them."""
    _immutable("put_along_axis", inplace)
    x = arraylike_("put_along_axis", arr)
    shape = x.shape
    if axis is None:
        x, axis = shape_ops.ravel(x), 0
    axis = canonical_axis(axis, x.ndim)
    idx = arraylike_("put_along_axis", indices, 1)
    if idx.ndim != x.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{idx.ndim} vs. {x.ndim}")
    positions = tuple(idx if d == axis else creation.arange(n).reshape(
        tuple(n if e == d else 1 for e in range(x.ndim))) for d, n in enumerate(x.shape))
    out = x.at[positions].set(astype_(arraylike_("put_along_axis", values, 2), x.jdtype),
                              mode="drop" if mode in (None, "drop", "fill") else mode)
    return shape_ops.reshape(out, shape)


def argwhere(a: Any, *, size: Optional[int] = None, fill_value: Any = None) -> Array:
    """The indices of a's nonzero elements, one row each ((count, a.ndim))."""
    x = arraylike_("argwhere", a)
    if x.ndim == 0:
        count = astype_(x != 0, default_int())
        rows = result_size("argwhere", size, count)
        return creation.zeros((rows, 0), default_int())
    return shape_ops.stack(nonzero(x, size=size, fill_value=fill_value), axis=1)


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: Optional[int] = None) -> Array:
    """How often each value 0, 1, ... occurs in the 1-D integer array x (summing weights
    when given); negative values count as 0. `length` (static) fixes the bins under jit;
    without it the bins are max(x) + 1 (at least minlength), read on the host."""
    values = arraylike_("bincount", x)
    if not values.jdtype.is_int and values.jdtype is not DType.bool:
        raise TypeError(f"x argument to bincount must have an integer type; got "
                        f"{values.jdtype}")
    if values.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("minlength must not be negative")
    if length is None:
        top = reductions.max(values) if values.size else asarray_(-1)
        length = max(minlength, result_size("bincount", None, top) + 1)
    w = creation.ones(values.shape, default_int()) if weights is None else \
        arraylike_("bincount", weights, 1)
    if w.shape != values.shape:
        raise ValueError(f"shape of weights {w.shape} does not match shape of x "
                         f"{values.shape}")
    bins = ufuncs.maximum(astype_(values, default_int()), 0)
    return creation.zeros((operator.index(length),), w.jdtype).at[bins].add(w, mode="drop")


def digitize(x: Any, bins: Any, right: bool = False, *, method: Optional[str] = None) -> Array:
    """The bin of each value of x: i with bins[i-1] <= x < bins[i] (right=False), for
    increasing or decreasing 1-D bins."""
    values, edges = arraylike_("digitize", x), arraylike_("digitize", bins, 1)
    if edges.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {bins!r}")
    if edges.shape[0] == 0:
        return creation.zeros(values.shape, DType.int32)
    side = "left" if right else "right"
    rising = searchsorted(edges, values, side=side)
    falling = edges.shape[0] - searchsorted(shape_ops.flip(edges), values, side=side)
    return ufuncs.where(edges[-1] >= edges[0], rising, falling)
