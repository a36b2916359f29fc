"""Histograms: bin edges from the data's range, bin numbers by searchsorted, counts by a
scatter-add (so they trace; the bin count must be static)."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.ir.dtypes import default_int, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, astype_, promote_dtypes
from jaxlab.numpy.array_api import diff, searchsorted
from jaxlab.numpy.creation import arange, ones, zeros
from jaxlab.numpy.shape_ops import ravel, reshape, stack

__all__ = ["histogram_bin_edges", "histogram", "histogram2d", "histogramdd"]


def _range_of(x: Array, range: Any) -> tuple[Array, Array]:   # noqa: A002
    """(low, high) of the bins: `range`, or the data's; an empty span widens by 1/2."""
    if range is None:
        low, high = reductions.min(x), reductions.max(x)
    else:
        low, high = (astype_(asarray_(v), x.jdtype) for v in range)
    same = low == high
    return ufuncs.where(same, low - 0.5, low), ufuncs.where(same, high + 0.5, high)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Array:
    """The edges of the bins: `bins` itself when it is an array, else bins + 1 evenly
    spaced edges over `range` (the data's min and max by default)."""
    x = arraylike_("histogram_bin_edges", a)
    dt = to_inexact(x.jdtype)
    if asarray_(bins).ndim == 1:
        return astype_(asarray_(bins), to_inexact(promote_dtypes(bins, x)))
    count = operator.index(bins)
    if count < 1:
        raise ValueError(f"`bins` must be positive, when an integer, got {count}")
    low, high = _range_of(astype_(ravel(x), dt), range)
    steps = arange(count + 1, dtype=dt)
    edges = low + steps * ((high - low) / count)
    return ufuncs.where(steps == count, high, edges)   # the last edge exactly high


def _bin_numbers(values: Array, edges: Array) -> Array:
    """0 below the first edge, len(edges) above the last, else 1 + the bin (the last
    bin closed on the right, as NumPy)."""
    found = searchsorted(edges, values, side="right")
    last = edges.shape[0]
    return astype_(ufuncs.where(values == edges[-1], last - 1, found), default_int())


def _counted(index: Array, weights: Array, size: int) -> Array:
    return zeros(size, weights.jdtype).at[index].add(weights)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool | None = None) -> tuple[Array, Array]:
    """(counts, edges): how many values (or how much weight) fall in each bin; density=True
    scales the counts so that they integrate to 1."""
    x = ravel(arraylike_("histogram", a))
    edges = histogram_bin_edges(x, bins, range)
    dt = to_inexact(promote_dtypes(x, edges) if weights is None
                    else promote_dtypes(x, edges, weights))
    w = ones(x.shape, dt) if weights is None else \
        astype_(ravel(arraylike_("histogram", weights, 3)), dt)
    counts = _counted(_bin_numbers(astype_(x, edges.jdtype), edges), w,
                      edges.shape[0] + 1)[1:-1]
    if density:
        counts = counts / (diff(edges) * reductions.sum(counts))
    return counts, edges


def _per_dimension(value: Any, dims: int) -> list[Any]:
    if isinstance(value, (list, tuple)) and len(value) == dims:
        return list(value)
    return [value] * dims


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Array, list[Array]]:
    """(counts, edges per dimension) of N points in D dimensions (sample of shape (N, D))."""
    points = arraylike_("histogramdd", sample)
    if points.ndim != 2:
        raise ValueError(f"histogramdd: sample must be of shape (N, D), got {points.shape}")
    dims = points.shape[1]
    bin_specs = _per_dimension(bins, dims) if not (hasattr(bins, "ndim") and bins.ndim == 1) \
        else [bins] * dims
    ranges = [None] * dims if range is None else list(range)
    if len(ranges) != dims:
        raise ValueError(f"histogramdd: range needs one entry per dimension ({dims})")
    columns = [points[:, d] for d in builtins.range(dims)]
    edges = [histogram_bin_edges(c, b, r) for c, b, r in zip(columns, bin_specs, ranges)]
    sizes = [e.shape[0] + 1 for e in edges]
    flat = zeros(points.shape[0], default_int())
    for column, e, size in zip(columns, edges, sizes):
        flat = flat * size + _bin_numbers(astype_(column, e.jdtype), e)
    dt = default_int() if weights is None else \
        to_inexact(promote_dtypes(*edges, weights))
    w = ones(points.shape[0], dt) if weights is None else \
        astype_(arraylike_("histogramdd", weights, 3), dt)
    counts = reshape(_counted(flat, w, math.prod(sizes)), tuple(sizes))
    counts = counts[tuple(slice(1, -1) for _ in sizes)]
    if density:
        widths = [diff(e) for e in edges]
        volume = widths[0]
        for width in widths[1:]:
            volume = volume[..., None] * width
        counts = counts / (volume * reductions.sum(counts))
    return counts, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Array, Array, Array]:
    """(counts, x edges, y edges) of the points (x[i], y[i])."""
    xs, ys = arraylike_("histogram2d", x), arraylike_("histogram2d", y, 1)
    dt = promote_dtypes(xs, ys)
    points = stack([astype_(xs, dt), astype_(ys, dt)], axis=1)
    counts, (x_edges, y_edges) = histogramdd(points, bins, range, weights, density)
    return counts, x_edges, y_edges

