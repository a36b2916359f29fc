"""jax.scipy.integrate: the trapezoidal rule."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.numpy._util import asarray_, canonical_axis
from jaxlab.scipy.special import float_arrays

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    """The sum of (y[i] + y[i+1]) / 2 times the spacing, along axis (x's differences when
    x is given, dx otherwise)."""
    y = asarray_(y)
    axis = canonical_axis(axis, y.ndim)
    y = jnp.moveaxis(y, axis, -1)
    if x is None:
        y, dx = float_arrays(y, dx)
        spacing = dx
    else:
        y, x = float_arrays(y, x)
        x = jnp.moveaxis(x, axis, -1) if x.ndim == y.ndim else x
        spacing = x[..., 1:] - x[..., :-1]
    return jnp.sum(0.5 * (y[..., 1:] + y[..., :-1]) * spacing, axis=-1)
