"""Shared argument handling for jaxlab.numpy: conversion, promotion, broadcasting, axes."""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any, Callable, Optional, Sequence

import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.core import movement, values
from jaxlab.core.elementwise import convert_element_type_p
from jaxlab.errors import AxisError
from jaxlab.numpy import promotion_modes
from jaxlab.ir.dtypes import (DType, _stacklevel_outside_jaxlab, host_dtype, result_is_weak,
                              result_type, to_dtype)

Scalar = values.Scalar


def asarray_(x: Any, dtype: Optional[DType] = None) -> Array:
    """An Array from an Array, a Python scalar, a nested list or a NumPy array.
    A Python scalar without a dtype is weakly typed (as in JAX)."""
    if isinstance(x, (list, tuple)) and any(isinstance(v, ArrayBase) for v in _flat(x)):
        if any(isinstance(v, ArrayBase) and not isinstance(v, Array) for v in _flat(x)):
            # traced values inside: stacked with jnp.stack (NumPy cannot read them)
            return _stack_nested(x, dtype or promote_dtypes(*_flat(x)))
        if _holds_objects(x):
            return _stack_nested(x, dtype)
    return values.asarray(x, dtype)


def _holds_objects(x: Any) -> bool:
    try:
        return np.asarray(x).dtype == object
    except ValueError:   # ragged: values.asarray says so
        return False


def refuses_lists(fn: Callable[..., Any], arrays: Optional[int] = None) -> Callable[..., Any]:
    """fn checking its array arguments as JAX's check_arraylike does: a list or tuple
    (which NumPy would convert) raises TypeError. `arrays`: how many leading positional
    arguments are arrays (None: all of them)."""
    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for position, x in enumerate(args[:arrays]):
            if isinstance(x, (list, tuple)):
                raise TypeError(f"{fn.__name__} requires ndarray or scalar arguments, got "
                                f"{type(x)} at position {position}.")
        return fn(*args, **kwargs)
    return checked


def arraylike_(name: str, x: Any, position: int = 0) -> Array:
    """asarray_ for a jnp function's array argument: as JAX, lists and tuples are
    refused (jnp.asarray/jnp.array convert them), so that a list is never silently
    turned into an array by a function that expects one."""
    if not (isinstance(x, (ArrayBase, np.ndarray, np.generic, bool, int, float, complex))
            or hasattr(x, "__jax_array__")):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        f"position {position}.")
    return asarray_(x)


def _flat(x: Any):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def _stack_nested(x: Any, dtype: Optional[DType]) -> Array:
    from jaxlab.numpy.shape_ops import stack
    if isinstance(x, (list, tuple)):
        return stack([_stack_nested(v, dtype) for v in x])
    return asarray_(x, dtype)


def astype_(x: Array, dtype: Any, weak: bool = False) -> Array:
    dt = to_dtype(dtype, "astype")
    if dt is x.jdtype:
        return x
    if x.jdtype.is_complex and not (dt.is_complex or dt.is_bool):
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=_stacklevel_outside_jaxlab())
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=weak)


def canonical_shape(shape: Any) -> tuple[int, ...]:
    """A shape argument as a tuple of ints: an int or a sequence of ints (concrete
    integer scalars such as jnp.int32(3) too). A traced value raises JAX's TypeError,
    saying which argument of the traced function the shape depends on."""
    from jaxlab.core.trace import Tracer
    dims = (shape,) if isinstance(shape, (int, np.integer, ArrayBase)) and np.ndim(shape) == 0 \
        else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    traced = [d for d in dims or () if isinstance(d, Tracer)]
    if dims is None or traced or not all(_is_integer(d) for d in dims):
        raise TypeError(
            f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
            + (" If using `jit`, try using `static_argnums` or applying `jit` to smaller "
               f"subfunctions.{traced[0].provenance()}" if traced else ""))
    return tuple(operator.index(d) for d in dims)


def static_shape(shape: Any) -> tuple[int, ...]:
    """canonical_shape for a new array: every dimension nonnegative (TypeError, as JAX)."""
    dims = canonical_shape(shape)
    if any(d < 0 for d in dims):
        raise TypeError(f"Shapes must have nonnegative dimensions, got {dims}")
    return dims


def _is_integer(d: Any) -> bool:
    if isinstance(d, ArrayBase):
        return d.ndim == 0 and d.jdtype.is_int
    return isinstance(d, (int, np.integer)) and not isinstance(d, bool)


def dtype_of(x: Any) -> Any:
    """A DType for arrays; a Python scalar for weakly typed values (for promotion)."""
    if isinstance(x, ArrayBase):
        if x.weak_type:   # promotes like a Python scalar of its kind
            d = x.jdtype
            return 0j if d.is_complex else 0.0 if d.is_float else 0 if d.is_int else x.jdtype
        return x.jdtype
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return host_dtype(x.dtype)
    if isinstance(x, Scalar):
        return x
    return host_dtype(np.asarray(x).dtype)


def promote_dtypes(*args: Any) -> DType:
    return result_type(*(dtype_of(a) for a in args))


def broadcast_shapes(*shapes: Sequence[int], op: str = "") -> tuple[int, ...]:
    """The broadcast shape. With `op` (a binary ufunc), shapes of one rank that differ
    raise TypeError as JAX's lax does for them; otherwise ValueError."""
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            listed = ' and '.join(str(tuple(s)) for s in shapes)
            if op and len({len(s) for s in shapes}) == 1:
                raise TypeError(f"{op} got incompatible shapes for broadcasting: {listed}")
            raise ValueError(f"shapes {listed} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_to_(x: Array, shape: Sequence[int]) -> Array:
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if len(shape) < x.ndim or broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape}")
    nd = len(shape)
    return movement.broadcast_in_dim_p.bind(
        x, shape=shape, broadcast_dimensions=tuple(range(nd - x.ndim, nd)))


def promote_args(*args: Any, dtype: Optional[DType] = None, op: str = "") -> list[Array]:
    """Arrays of one dtype (JAX's promotion, or `dtype`) and one broadcast shape; the
    result is weakly typed where JAX's would be (`bool_array + 1`). `op` names a binary
    ufunc for broadcast_shapes' error."""
    kinds = [dtype_of(a) for a in args]
    dt = dtype or result_type(*kinds)
    if dtype is None:
        promotion_modes.check_dtypes(kinds, dt)
    weak = dtype is None and result_is_weak(*kinds)
    return broadcast_all(*(_promoted(a, dt, weak) for a in args), op=op)


def _promoted(x: Any, dtype: DType, weak: bool) -> Array:
    if isinstance(x, ArrayBase):
        return astype_(x, dtype, weak)
    if isinstance(x, Scalar) and not isinstance(x, np.generic):
        values.check_default_int(x)
        return values.scalar(x, dtype, weak)
    return asarray_(x, dtype)


def broadcast_all(*arrays: Array, op: str = "") -> list[Array]:
    shape = broadcast_shapes(*(a.shape for a in arrays), op=op)
    if op:
        promotion_modes.check_ranks([a.shape for a in arrays], op)
    return [broadcast_to_(a, shape) for a in arrays]


def canonical_axis(axis: int, ndim: int, what: str = "axis") -> int:
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"{what} {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim


def canonical_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(canonical_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return out
