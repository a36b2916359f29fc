"""Weighted and paired statistics: average, ptp, cov, corrcoef."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.ir.dtypes import to_dtype, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import (arraylike_, astype_, broadcast_to_, canonical_axis,
                                promote_dtypes)
from jaxlab.numpy.complex_functions import conjugate, real
from jaxlab.numpy.creation import full
from jaxlab.numpy.linalg_products import diagonal
from jaxlab.numpy.products import matmul
from jaxlab.numpy.shape_ops import atleast_2d, concatenate, expand_dims, reshape, squeeze

__all__ = ["average", "ptp", "cov", "corrcoef"]


def _weights_along(w: Array, x: Array, axis: Any) -> Array:
    """1-D weights for `axis` reshaped to broadcast against x (JAX's checks)."""
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if isinstance(axis, tuple):
        raise ValueError("Single axis expected when shapes of a and weights differ")
    ax = canonical_axis(axis, x.ndim)
    if w.ndim != 1 or w.shape[0] != x.shape[ax]:
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
    return reshape(w, tuple(-1 if i == ax else 1 for i in range(x.ndim)))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Array | tuple[Array, Array]:
    """The mean over `axis` weighted by `weights`; with returned=True also the sum of the
    weights (broadcast to the average's shape)."""
    x = arraylike_("average", a)
    if weights is None:
        avg = reductions.mean(x, axis, keepdims=keepdims)
        count = x.size if axis is None else x.size // max(avg.size, 1)
        total = full(avg.shape, count, avg.jdtype)
    else:
        w = arraylike_("average", weights, 2)
        dt = to_inexact(promote_dtypes(x, w))
        x, w = astype_(x, dt), astype_(w, dt)
        if w.shape != x.shape:
            w = _weights_along(w, x, axis)
        total = reductions.sum(broadcast_to_(w, x.shape), axis, keepdims=keepdims)
        avg = ufuncs.true_divide(reductions.sum(x * w, axis, keepdims=keepdims), total)
    if not returned:
        return avg
    return avg, broadcast_to_(total, avg.shape)


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Array:
    """max - min over `axis` (peak to peak), in a's dtype."""
    x = arraylike_("ptp", a)
    return reductions.max(x, axis, keepdims=keepdims) - reductions.min(x, axis, keepdims=keepdims)


def _observations(name: str, m: Any, rowvar: bool) -> Array:
    x = arraylike_(name, m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = atleast_2d(x)
    return x if rowvar or x.shape[0] == 1 else x.T


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, fweights: Any = None, aweights: Any = None,
        dtype: Any = None) -> Array:
    """Covariance matrix of the variables (rows, or columns when rowvar=False), with
    frequency and reliability weights as NumPy."""
    x = _observations("cov", m, rowvar)
    if y is not None:
        other = _observations("cov", y, rowvar)
        x = concatenate([x, astype_(other, promote_dtypes(x, other))
                         if other.jdtype != x.jdtype else other], axis=0)
    out_dtype = to_inexact(x.jdtype) if dtype is None else to_dtype(dtype)
    x = astype_(x, out_dtype)
    ddof = (0 if bias else 1) if ddof is None else ddof
    n = x.shape[1]
    w = None
    for given, what in ((fweights, "fweights"), (aweights, "aweights")):
        if given is None:
            continue
        g = arraylike_("cov", given)
        if g.ndim != 1:
            raise ValueError(f"cannot handle multidimensional {what}")
        if g.shape[0] != n:
            raise ValueError(f"incompatible numbers of samples and {what}")
        g = astype_(g, out_dtype)
        w = g if w is None else w * g
    if w is None:
        centre = reductions.mean(x, axis=1, keepdims=True)
        divisor: Any = n - ddof
        weighted = x - centre
    else:
        total = reductions.sum(w)
        centre = expand_dims(ufuncs.true_divide(reductions.sum(x * w, axis=1), total), 1)
        if aweights is None:
            divisor = total - ddof
        else:
            aw = astype_(arraylike_("cov", aweights), out_dtype)
            divisor = total - ddof * ufuncs.true_divide(reductions.sum(w * aw), total)
        weighted = (x - centre) * w
    centred = x - centre
    product = matmul(centred, conjugate(weighted).T)
    return squeeze(ufuncs.true_divide(product, ufuncs.maximum(divisor, 0)))


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Array:
    """Pearson correlation coefficients: cov scaled by the standard deviations, clipped
    to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:   # one variable: 1 (or NaN), as NumPy
        return ufuncs.true_divide(c, c)
    spread = ufuncs.sqrt(real(diagonal(c)))
    scaled = ufuncs.true_divide(ufuncs.true_divide(c, expand_dims(spread, 1)),
                                expand_dims(spread, 0))
    return ufuncs.clip(scaled, -1, 1) if not scaled.jdtype.is_complex else scaled
