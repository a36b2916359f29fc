"""Differences, integrals and interpolation of sampled functions: gradient, trapezoid,
ediff1d, unwrap, interp."""
from __future__ import annotations

import math
from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.ir.dtypes import default_int, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import (arraylike_, asarray_, astype_, canonical_axes,
                                canonical_axis, promote_dtypes)
from jaxlab.numpy.array_api import diff, searchsorted
from jaxlab.numpy.indexing import take
from jaxlab.numpy.shape_ops import concatenate, ravel, reshape
from jaxlab.numpy.sorting import argsort

__all__ = ["gradient", "trapezoid", "ediff1d", "unwrap", "interp"]


def _inexact(name: str, a: Any) -> Array:
    x = arraylike_(name, a)
    return astype_(x, to_inexact(x.jdtype))


def _slab(x: Array, axis: int, start: int | None, stop: int | None) -> Array:
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def _along(v: Array, axis: int, ndim: int) -> Array:
    """A 1-D v shaped to broadcast along `axis` of an ndim-array."""
    return reshape(v, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _derivative(f: Array, axis: int, spacing: Array) -> Array:
    """Second-order central differences inside, first-order ones at the two ends."""
    if f.shape[axis] < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    first = (_slab(f, axis, 1, 2) - _slab(f, axis, 0, 1))
    last = (_slab(f, axis, -1, None) - _slab(f, axis, -2, -1))
    if spacing.ndim == 0:
        inner = (_slab(f, axis, 2, None) - _slab(f, axis, None, -2)) / (2.0 * spacing)
        return concatenate([first / spacing, inner, last / spacing], axis)
    if spacing.shape[0] != f.shape[axis]:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    steps = _along(diff(spacing), axis, f.ndim)
    before, after = _slab(steps, axis, None, -1), _slab(steps, axis, 1, None)
    # the unequal-step central formula: weights of f[i-1], f[i], f[i+1]
    w_prev = -after / (before * (before + after))
    w_here = (after - before) / (before * after)
    w_next = before / (after * (before + after))
    inner = (w_prev * _slab(f, axis, None, -2) + w_here * _slab(f, axis, 1, -1)
             + w_next * _slab(f, axis, 2, None))
    return concatenate([first / _slab(steps, axis, 0, 1), inner,
                        last / _slab(steps, axis, -1, None)], axis)


def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Array | list[Array]:
    """The gradient of sampled f along each of `axis` (all when None): one array for one
    axis, a list otherwise. varargs: one spacing for all axes, or one per axis (a scalar
    step or the 1-D sample coordinates)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    x = _inexact("gradient", f)
    axes = canonical_axes(axis, x.ndim)
    if not varargs:
        spacings = [asarray_(1.0, x.jdtype)] * len(axes)
    elif len(varargs) == 1 and asarray_(varargs[0]).ndim == 0:
        spacings = [asarray_(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        spacings = [asarray_(v) for v in varargs]
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for "
                        f"axis={axis}")
    out = [_derivative(x, ax, astype_(s, x.jdtype)) for ax, s in zip(axes, spacings)]
    return out[0] if len(out) == 1 else out


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    """The integral of sampled y along `axis` by the trapezoidal rule (samples at x, or
    dx apart)."""
    v = _inexact("trapezoid", y)
    axis = canonical_axis(axis, v.ndim)
    pairs = (_slab(v, axis, 1, None) + _slab(v, axis, None, -1)) * 0.5
    if x is None:
        return reductions.sum(pairs, axis) * dx
    where = arraylike_("trapezoid", x, 1)
    steps = diff(where) if where.ndim == 1 else diff(where, axis=axis)
    if where.ndim == 1:
        steps = _along(steps, axis, v.ndim)
    return reductions.sum(pairs * steps, axis)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Array:
    """Differences of consecutive elements of the flattened array, with to_begin before
    and to_end after."""
    x = ravel(arraylike_("ediff1d", ary))
    steps = diff(x)
    parts = [ravel(astype_(asarray_(v), steps.jdtype)) for v in (to_begin,) if v is not None]
    parts.append(steps)
    parts += [ravel(astype_(asarray_(to_end), steps.jdtype))] if to_end is not None else []
    return concatenate(parts) if len(parts) > 1 else steps


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi) -> Array:
    """p with its jumps larger than max(discont, period / 2) along `axis` replaced by their
    complement modulo period (phase unwrapping)."""
    x = _inexact("unwrap", p)
    axis = canonical_axis(axis, x.ndim)
    steps = diff(x, axis=axis)
    half = ufuncs.true_divide(period, 2)
    limit = half if discont is None else ufuncs.maximum(discont, half)
    wrapped = ufuncs.remainder(steps + half, period) - half
    # a jump of exactly +period/2 stays +period/2 (remainder would make it -period/2)
    wrapped = ufuncs.where((wrapped == -half) & (steps > 0), half, wrapped)
    correction = ufuncs.where(ufuncs.abs(steps) < limit, 0, wrapped - steps)
    running = reductions.cumsum(correction, axis=axis)
    return concatenate([_slab(x, axis, 0, 1), _slab(x, axis, 1, None) + running], axis)


def _periodic(xp: Array, fp: Array, period: Any) -> tuple[Array, Array]:
    """xp reduced modulo period and sorted, one wrapped sample added at each end."""
    xp = ufuncs.remainder(xp, period)
    order = argsort(xp)
    xp, fp = take(xp, order), take(fp, order)
    xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
    return xp, concatenate([fp[-1:], fp, fp[:1]])


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Array:
    """Piecewise-linear interpolation of the samples (xp increasing, fp) at x; `left`/
    `right` beyond the ends (fp's end values by default, "extrapolate" continues the end
    segments); with `period`, xp and x are taken modulo period."""
    dt = to_inexact(promote_dtypes(x, xp, fp))
    at = astype_(arraylike_("interp", x), dt)
    xs = astype_(arraylike_("interp", xp, 1), dt)
    fs = astype_(arraylike_("interp", fp, 2), dt)
    if xs.ndim != 1 or fs.ndim != 1 or xs.shape != fs.shape:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    if period is not None:
        if asarray_(period).ndim != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        at = ufuncs.remainder(at, period)
        xs, fs = _periodic(xs, fs, period)
    hi = ufuncs.clip(searchsorted(xs, at, side="right"), 1, xs.shape[0] - 1)
    hi = astype_(hi, default_int())
    x0, x1, y0, y1 = take(xs, hi - 1), take(xs, hi), take(fs, hi - 1), take(fs, hi)
    width = x1 - x0
    flat = width == 0
    out = ufuncs.where(flat, y1, y0 + (at - x0) * (y1 - y0) / ufuncs.where(flat, 1, width))
    if period is not None:
        return out
    for bound, value, outside in ((left, fs[0], at < xs[0]), (right, fs[-1], at > xs[-1])):
        if isinstance(bound, str):
            if bound != "extrapolate":
                raise ValueError(f"{bound!r} is not a valid value for left or right; "
                                 f"use a number or 'extrapolate'")
            continue   # the end segment's line already continues past the end
        out = ufuncs.where(outside, value if bound is None else bound, out)
    return out
