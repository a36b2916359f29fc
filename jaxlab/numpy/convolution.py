"""1-D convolve and correlate: each output element is a dot product of a window of
the zero-padded input with the kernel, so it fuses into one gather and one matmul."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlab.array import Array
from jaxlab.numpy._util import asarray_, promote_dtypes

# mode -> (left pad, right pad) for a signal of length n >= kernel length m
_PADS = {"full": lambda m: (m - 1, m - 1), "same": lambda m: (m // 2, m - 1 - m // 2),
         "valid": lambda m: (0, 0)}


def _promoted(a: Any, v: Any) -> tuple[Array, Array]:
    dt = promote_dtypes(a, v)
    return asarray_(a, dt), asarray_(v, dt)


def _sliding_dot(name: str, a: Any, v: Any, mode: str) -> Array:
    """out[k] = sum_j a_padded[k + j] * v[j]."""
    from jaxlab.numpy.shape_ops import pad
    a, v = _promoted(a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only supports 1-dimensional inputs, got shapes "
                         f"{a.shape} and {v.shape}")
    if a.size == 0 or v.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}")
    if mode not in _PADS:
        raise ValueError(f"{name}: mode must be one of {sorted(_PADS)}, got {mode!r}")
    left, right = _PADS[mode](v.size)
    padded = pad(a, (left, right))
    n_out = padded.size - v.size + 1
    windows = padded[np.arange(n_out)[:, None] + np.arange(v.size)[None, :]]
    return windows @ v


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Array:
    """Cross-correlation of two 1-D arrays (NumPy's definition, kernel not flipped)."""
    from jaxlab.numpy.shape_ops import flip
    a, v = _promoted(a, v)
    if a.ndim == v.ndim == 1 and v.size > a.size:   # NumPy swaps, reversing the result
        return flip(_sliding_dot("correlate", v, a, mode), 0)
    return _sliding_dot("correlate", a, v, mode)


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Array:
    """Discrete linear convolution of two 1-D arrays (the kernel flipped)."""
    from jaxlab.numpy.shape_ops import flip
    a, v = _promoted(a, v)
    if a.ndim == v.ndim == 1 and v.size > a.size:   # convolution commutes
        a, v = v, a
    return _sliding_dot("convolve", a, flip(v, 0) if v.ndim == 1 else v, mode)


__all__ = ["convolve", "correlate"]
