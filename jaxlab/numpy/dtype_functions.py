"""Dtype queries as jax.numpy has them: answers are NumPy dtypes and info objects,
computed with JAX's promotion lattice (x64 off: 64-bit types narrow to 32 bits)."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.ir.dtypes import DType, result_type as _result_type, to_dtype
from jaxlab.numpy._util import Scalar, astype_, asarray_
from jaxlab.numpy.scalar_types import _ScalarMeta

dtype = np.dtype   # jnp.dtype is NumPy's class, as in JAX

# NumPy's abstract scalar classes, for issubdtype (JAX re-exports the same)
from numpy import (character, complexfloating, flexible, floating,  # noqa: E402,F401
                   generic, inexact, integer, number, object_, signedinteger,
                   unsignedinteger)


def _stored(x: Any) -> DType:
    """The stored dtype of an array, a dtype-like, or a NumPy scalar."""
    if isinstance(x, ArrayBase):
        return x.jdtype
    if isinstance(x, (np.ndarray, np.generic)):
        return to_dtype(x.dtype, None)
    return to_dtype(x, None)


def _operand(x: Any) -> Any:
    """What ir.dtypes.result_type takes: a DType, or a Python scalar (weakly typed)."""
    if isinstance(x, Scalar) and not isinstance(x, np.generic):
        return x
    return _stored(x)


def result_type(*args: Any) -> np.dtype:
    """The dtype JAX's promotion gives for these arrays, dtypes and Python scalars."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    return _result_type(*(_operand(a) for a in args)).np


def promote_types(a: Any, b: Any) -> np.dtype:
    """The promoted dtype of two dtypes (no weak types: both count fully)."""
    return _result_type(_stored(a), _stored(b)).np


def _np_dtype(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, (ArrayBase, np.ndarray, np.generic)) else np.dtype(x)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    return bool(np.can_cast(_np_dtype(from_), _np_dtype(to), casting=casting))


def _kind(k: Any) -> Any:
    return k if isinstance(k, str) else tuple(map(_kind, k)) if isinstance(k, tuple) \
        else np.dtype(k)


def isdtype(dtype: Any, kind: Any) -> bool:
    """The Array API's dtype test: kind is a dtype, a kind name ('real floating',
    'integral', ...) or a tuple of them."""
    return bool(np.isdtype(np.dtype(dtype), _kind(kind)))


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """np.issubdtype that also takes jnp.float32 and friends on either side."""
    if isinstance(arg1, _ScalarMeta):
        arg1 = arg1.dtype
    if isinstance(arg2, _ScalarMeta):
        arg2 = arg2.dtype.type
    return bool(np.issubdtype(arg1, arg2))


def finfo(x: Any) -> np.finfo:
    return np.finfo(_stored(x).np)


def iinfo(x: Any) -> np.iinfo:
    return np.iinfo(_stored(x).np)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Array:
    """x converted to dtype (a new array when it differs; `copy` has no other effect on
    immutable arrays), placed on `device` when given."""
    out = astype_(asarray_(x), dtype)
    if device is not None:
        from jaxlab.device_put import device_put
        out = device_put(out, device)
    return out


__all__ = ["dtype", "result_type", "promote_types", "can_cast", "isdtype", "issubdtype",
           "finfo", "iinfo", "astype", "character", "complexfloating", "flexible", "floating",
           "generic", "inexact", "integer", "number", "object_", "signedinteger",
           "unsignedinteger"]
