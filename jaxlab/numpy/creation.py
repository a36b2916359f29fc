"""Array creation: from data (uploaded once) or constants (no upload at all)."""
from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Callable, Optional

import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.core import values
from jaxlab.engine.devices import current_device, default_device
from jaxlab.engine.limits import check_array
from jaxlab.ir.dtypes import DType, default_float, default_int, python_scalar_dtype, to_dtype
from jaxlab.numpy._util import asarray_, dtype_of, refuses_lists, static_shape

Shape = Any


def _dt(dtype: Any, where: str, default: DType | None = None) -> DType:
    if dtype is not None:
        return to_dtype(dtype, where)
    return default or default_float()


def array(object: Any, dtype: Any = None, copy: bool = True) -> Array:  # noqa: A002
    """A new array from data (copied to the default device)."""
    if isinstance(object, ArrayBase):
        out = asarray_(object, _dt(dtype, "array", object.jdtype))
        # a traced value is already a new value of the program: only a concrete one is copied
        return values.copy(out) if copy and out is object and isinstance(out, Array) else out
    return asarray_(object, None if dtype is None else to_dtype(dtype, "array"))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: Any = None) -> Array:
    """a as an array (no copy when it is one of this dtype, unless copy=True)."""
    if copy:
        return array(a, dtype)
    return asarray_(a, None if dtype is None else to_dtype(dtype, "asarray"))


def full(shape: Shape, fill_value: Any, dtype: Any = None) -> Array:
    if isinstance(fill_value, ArrayBase) or np.ndim(fill_value):
        from jaxlab.numpy._util import broadcast_to_
        return broadcast_to_(asarray_(fill_value, None if dtype is None else to_dtype(dtype, "full")),
                             static_shape(shape))
    dt = to_dtype(dtype, "full") if dtype is not None else (
        python_scalar_dtype(type(fill_value)) if isinstance(fill_value, (bool, int, float, complex))
        else dtype_of(fill_value))
    return values.full(static_shape(shape), fill_value, dt)


def zeros(shape: Shape, dtype: Any = None) -> Array:
    return full(shape, 0, _dt(dtype, "zeros"))


def ones(shape: Shape, dtype: Any = None) -> Array:
    return full(shape, 1, _dt(dtype, "ones"))


def empty(shape: Shape, dtype: Any = None) -> Array:
    return zeros(shape, dtype)


def _like(a: Any, dtype: Any, shape: Optional[Shape]) -> tuple[tuple[int, ...], DType]:
    a = asarray_(a)
    return (a.shape if shape is None else static_shape(shape)), _dt(dtype, "full_like", a.jdtype)


def zeros_like(a: Any, dtype: Any = None, shape: Optional[Shape] = None) -> Array:
    s, d = _like(a, dtype, shape)
    return full(s, 0, d)


def ones_like(a: Any, dtype: Any = None, shape: Optional[Shape] = None) -> Array:
    s, d = _like(a, dtype, shape)
    return full(s, 1, d)


def full_like(a: Any, fill_value: Any, dtype: Any = None,
              shape: Optional[Shape] = None) -> Array:
    s, d = _like(a, dtype, shape)
    return full(s, fill_value, d)


def empty_like(a: Any, dtype: Any = None, shape: Optional[Shape] = None) -> Array:
    return zeros_like(a, dtype, shape)


def _arange_length(start: Any, stop: Any, step: Any) -> int:
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        return len(range(int(start), int(stop), int(step)))
    return max(0, math.ceil((stop - start) / step))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("arange: step must not be zero")
    bounds = (start, stop, step)
    default = default_float() if any(isinstance(v, float) for v in bounds) else default_int()
    dt = _dt(dtype, "arange", default)
    return values.made_on_host((_arange_length(start, stop, step),), dt,
                         lambda: np.arange(start, stop, step))


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    dt = _dt(dtype, "linspace")
    check_array(current_device(), (num,), dt)   # per start/stop element
    data, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, axis=axis)
    out = values.from_host(data, dt)
    return (out, step) if retstep else out


def eye(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> Array:
    return values.made_on_host((N, N if M is None else M), _dt(dtype, "eye"), lambda: np.eye(N, M, k))


def identity(n: int, dtype: Any = None) -> Array:
    return eye(n, dtype=dtype)


def tri(N: int, M: Optional[int] = None, k: int = 0, dtype: Any = None) -> Array:
    return values.made_on_host((N, N if M is None else M), _dt(dtype, "tri"), lambda: np.tri(N, M, k))


def _triangle(m: Any, k: int, lower: bool) -> Array:
    from jaxlab.numpy.ufuncs import where
    m = asarray_(m)
    if m.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'} needs at least 2 dims, got {m.shape}")
    rows, cols = m.shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return where(values.from_host(keep, DType.bool), m, 0)


def tril(m: Any, k: int = 0) -> Array:
    """The lower triangle (below and on diagonal k) of the last two axes."""
    return _triangle(m, k, True)


def triu(m: Any, k: int = 0) -> Array:
    """The upper triangle (above and on diagonal k) of the last two axes."""
    return _triangle(m, k, False)


def _placed(fn: Callable[..., Array]) -> Callable[..., Array]:
    """fn with the `device=` keyword of JAX and the Array API: the array is made
    on that device (moved there when fn returns an existing array)."""
    @functools.wraps(fn)
    def placed(*args: Any, device: Any = None, **kwargs: Any) -> Array:
        if device is None:
            return fn(*args, **kwargs)
        from jaxlab.device_put import device_put
        with default_device(device) as target:
            out = fn(*args, **kwargs)
        if isinstance(out, tuple):   # linspace(retstep=True): (array, step)
            return (device_put(out[0], target),) + out[1:]
        return device_put(out, target)
    signature = inspect.signature(fn)   # fn's, with the keyword (the Array API checks it)
    placed.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return placed


_MADE_ON_A_DEVICE = ["array", "asarray", "full", "zeros", "ones", "empty", "zeros_like",
                     "ones_like", "full_like", "empty_like", "arange", "linspace", "eye",
                     "identity", "tri"]
globals().update({name: refuses_lists(globals()[name], 1)   # as JAX: a list is no array
                  for name in ("zeros_like", "ones_like", "full_like", "empty_like")})
globals().update({name: _placed(globals()[name]) for name in _MADE_ON_A_DEVICE})

__all__ = ["tril", "triu", "array", "asarray", "full", "zeros", "ones", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity", "tri"]

