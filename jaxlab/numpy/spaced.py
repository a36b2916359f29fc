"""Geometrically spaced samples: logspace and geomspace (powers of linspace)."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.ir.dtypes import to_dtype
from jaxlab.numpy import ufuncs
from jaxlab.numpy._util import asarray_, astype_, promote_dtypes
from jaxlab.numpy.creation import linspace
from jaxlab.numpy.shape_ops import expand_dims, moveaxis

__all__ = ["logspace", "geomspace"]


def _along(value: Array, samples: Array, axis: int) -> Array:
    """value (start/stop-shaped) broadcast against samples laid out along `axis`."""
    return moveaxis(expand_dims(value, 0), 0, axis) if value.ndim else value


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Array:
    """base ** linspace(start, stop, num): num samples spaced evenly on a log scale."""
    exponents = linspace(start, stop, num, endpoint, dtype=None, axis=axis)
    base = asarray_(base)
    out = ufuncs.power(_along(base, exponents, axis), exponents)
    return out if dtype is None else astype_(out, to_dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Array:
    """num samples from start to stop in a geometric progression (start and stop of one
    sign; negative ones give negative samples)."""
    first = asarray_(start, to_dtype(promote_dtypes(start, stop, 1.0)))
    last = asarray_(stop, first.jdtype)
    sign = ufuncs.sign(first)
    out = logspace(ufuncs.log10(first * sign), ufuncs.log10(last * sign), num, endpoint,
                   10.0, None, axis)
    out = out * _along(sign, out, axis)
    return out if dtype is None else astype_(out, to_dtype(dtype))
