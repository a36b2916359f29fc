"""Dtype queries as jax.numpy has them: answers are NumPy dtypes and info objects,
computed with JAX's promotion lattice (x64 off: 64-bit types narrow to 32 bits)."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.ir import dtypes as ir_dtypes
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
    """The promoted dtype of two dtypes (no weak types: both count fully), 64-bit
    ones kept as JAX's promote_types keeps them."""
    return ir_dtypes.promote_types(*(ir_dtypes.uncanonical(_np_dtype(d)) for d in (a, b))).np


def _np_dtype(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, (ArrayBase, np.ndarray, np.generic)) else np.dtype(x)


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    return bool(np.can_cast(_np_dtype(from_), _np_dtype(to), casting=casting))


_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def _numpy_kin(d: np.dtype) -> np.dtype:
    """NumPy's own dtype of the same kind, for kind questions NumPy cannot answer about
    ml_dtypes' bfloat16 (a floating type to JAX)."""
    return np.dtype(np.float16) if d == _BFLOAT16 else d


def isdtype(dtype: Any, kind: Any) -> bool:
    """The Array API's dtype test: kind is a dtype, a kind name ('real floating',
    'integral', ...) or a tuple of them."""
    d = np.dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        return bool(np.isdtype(_numpy_kin(d), kind))
    return d == np.dtype(kind)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """np.issubdtype that also takes jnp.float32 and friends on either side, and
    counts bfloat16 as floating."""
    if isinstance(arg1, _ScalarMeta):
        arg1 = arg1.dtype
    if isinstance(arg2, _ScalarMeta):
        arg2 = arg2.dtype.type
    if np.dtype(arg1) == _BFLOAT16 and isinstance(arg2, type) and arg2 in _ABSTRACT:
        arg1 = _numpy_kin(np.dtype(arg1))
    return bool(np.issubdtype(arg1, arg2))


_ABSTRACT = (generic, number, inexact, floating)


def finfo(x: Any) -> Any:
    """Float limits; ml_dtypes' finfo, which also knows bfloat16 (as JAX's does)."""
    return ml_dtypes.finfo(_stored(x).np)


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
