"""Concrete Arrays from host values: Python scalars, NumPy data, constants.

The one place above the engine that makes a Lazy from data: jaxlab.numpy (and the
rules in core) ask here, so no user-API module touches the engine's lazy arrays.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from jaxlab.array import Array, ArrayBase, wrap
from jaxlab.engine import lazy as lz
from jaxlab.engine.devices import current_device
from jaxlab.engine.limits import check_array
from jaxlab.ir.dtypes import DType, host_dtype, python_scalar_dtype

Scalar = (bool, int, float, complex)

def check_int(value: int, dtype: DType, message: str) -> None:
    """OverflowError (JAX's) where a Python int does not fit `dtype`."""
    lo, hi = dtype.bounds
    if not lo <= value <= hi:
        raise OverflowError(message.format(value, dtype))


def check_default_int(x: Any) -> None:
    """A Python int operand is a default int first (int32 without x64), whatever it meets."""
    if type(x) is int:
        check_int(x, python_scalar_dtype(int), "Python int {} too large to convert to {}")


def scalar(x: Any, dtype: DType, weak: bool) -> Array:
    """A Python scalar as a 0-d array whose value is a kernel argument (one kernel
    serves every value)."""
    return wrap(lz.scalar(x, dtype, current_device()), weak)


def full(shape: tuple[int, ...], value: Any, dtype: DType) -> Array:
    """A constant array (no upload: the value is in the kernel)."""
    return wrap(lz.full(shape, value, dtype, current_device()))


def zeros_like(x: Any) -> Array:
    """Zeros of x's shape and dtype (x: an array, a tracer or a Python scalar)."""
    x = asarray(x)
    return full(tuple(x.shape), 0, x.jdtype)


def ones_like(x: Any) -> Array:
    x = asarray(x)
    return full(tuple(x.shape), 1, x.jdtype)


def from_host(data: np.ndarray, dtype: DType) -> Array:
    """NumPy data uploaded (once) to the current device as `dtype`."""
    return wrap(lz.from_numpy(data.astype(dtype.np), dtype, current_device()))


def made_on_host(shape: tuple[int, ...], dtype: DType, make: Callable[[], np.ndarray]) -> Array:
    """`make()` computes the data in NumPy: only after the device said it can hold it."""
    check_array(current_device(), shape, dtype)
    return from_host(make(), dtype)


def copy(x: Array) -> Array:
    """A realized copy of x's value in a buffer of its own."""
    return wrap(lz.realize(x._lazy))


def asarray(x: Any, dtype: Optional[DType] = None) -> Array:
    """An Array from an Array, a Python scalar or anything NumPy converts (a pytree leaf).
    A Python scalar without a dtype is weakly typed (as in JAX)."""
    if isinstance(x, ArrayBase):
        if dtype is None or dtype is x.jdtype:
            return x
        from jaxlab.core.elementwise import convert_element_type_p
        return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)
    if isinstance(x, Scalar) and not isinstance(x, np.generic):
        if dtype is None:
            check_default_int(x)
            return scalar(x, python_scalar_dtype(type(x)), weak=type(x) is not bool)
        if type(x) is int and dtype.is_int:
            check_int(x, dtype, "Python integer {} out of bounds for {}")
        return scalar(x, dtype, weak=False)
    if hasattr(x, "__jax_array__"):
        x = x.__jax_array__()
    try:
        data = np.asarray(x)
    except ValueError as exc:   # ragged nesting: a value error, as in JAX
        raise ValueError(f"cannot convert {type(x).__name__} to a jaxlab array: {exc}") from exc
    except Exception as exc:
        raise TypeError(f"cannot convert {type(x).__name__} to a jaxlab array: {exc}") from exc
    if data.dtype == object:
        raise TypeError(f"cannot convert {type(x).__name__} of objects to a jaxlab array")
    dt = dtype or host_dtype(data.dtype)
    if isinstance(x, (list, tuple)) and data.dtype.kind in "iu" and data.size and dt.is_int:
        for v in (int(data.min()), int(data.max())):   # Python ints, as JAX checks them
            check_int(v, dt, "Python integer {} out of bounds for {}")
    return from_host(data, dt)
