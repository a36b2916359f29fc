"""Window functions of signal processing: bartlett, blackman, hamming, hanning, kaiser."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

from jaxlab.array import Array
from jaxlab.core.trace import Tracer
from jaxlab.ir.dtypes import DType
from jaxlab.numpy import ufuncs
from jaxlab.numpy.creation import arange, ones
from jaxlab.numpy.math_ufuncs import i0

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _length(name: str, M: Any) -> int:
    """M as a Python int (truncated, as JAX); a traced M has no static length."""
    if isinstance(M, Tracer):
        raise TypeError(f"M argument of jnp.{name} must be a concrete value, not a traced "
                        f"array (its length sets the output's shape).{M.provenance()}")
    return int(operator.index(M) if not isinstance(M, float) else M)


def _symmetric(name: str, shape: Callable[[Array], Array]):
    """A window whose value at n in 1-M, 3-M, ..., M-1 is shape(pi n / (M - 1))."""
    def window(M: int) -> Array:
        m = _length(name, M)
        if m <= 1:
            return ones(max(m, 0), DType.float32)
        n = arange(1 - m, m, 2, dtype=DType.float32)
        return shape(n * (math.pi / (m - 1)))
    window.__name__ = window.__qualname__ = name
    window.__doc__ = f"The {name} window of M points, as jax.numpy.{name}."
    return window


bartlett = _symmetric("bartlett", lambda t: 1.0 - ufuncs.abs(t) / math.pi)
blackman = _symmetric("blackman",
                      lambda t: 0.42 + 0.5 * ufuncs.cos(t) + 0.08 * ufuncs.cos(2.0 * t))
hamming = _symmetric("hamming", lambda t: 0.54 + 0.46 * ufuncs.cos(t))
hanning = _symmetric("hanning", lambda t: 0.5 + 0.5 * ufuncs.cos(t))


def kaiser(M: int, beta: Any) -> Array:
    """The Kaiser window of M points with shape parameter beta."""
    m = _length("kaiser", M)
    if m <= 1:
        return ones(max(m, 0), DType.float32)
    half = (m - 1) / 2.0
    offsets = (arange(0, m, dtype=DType.float32) - half) / half
    beta = ufuncs.multiply(beta, 1.0)
    return i0(beta * ufuncs.sqrt(1.0 - offsets * offsets)) / i0(beta)
