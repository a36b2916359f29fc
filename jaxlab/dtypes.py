"""jaxlab.dtypes: jax.dtypes, the dtype helpers JAX keeps outside jax.numpy."""
from __future__ import annotations

from typing import Any

import numpy as np
from ml_dtypes import bfloat16  # noqa: F401

from jaxlab.array import ArrayBase
from jaxlab.ir import dtypes as ir_dtypes
from jaxlab.numpy.dtype_functions import finfo, iinfo, issubdtype  # noqa: F401
from jaxlab.numpy.dtype_functions import result_type as _numpy_result_type
from jaxlab.numpy.promotion_modes import TypePromotionError  # noqa: F401

# the dtype of the gradient of an integer or boolean input (grad(..., allow_int=True))
float0 = np.dtype([("float0", np.void, 0)])


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """The dtype arrays of `dtype` get under the current x64 setting (float64 -> float32
    while x64 is off)."""
    return ir_dtypes.to_dtype(np.dtype(dtype), None).np


# a weakly typed array promotes as a Python scalar of its kind
_WEAK_STAND_INS = {"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _weak_stand_in(x: Any) -> Any:
    if isinstance(x, ArrayBase) and x.weak_type:
        return _WEAK_STAND_INS[x.jdtype.np.kind]
    return x


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """JAX's promoted dtype of arrays, dtypes and Python scalars; with
    return_weak_type_flag, (dtype, whether the result is weakly typed)."""
    args = tuple(_weak_stand_in(a) for a in args)
    dtype = _numpy_result_type(*args)
    if not return_weak_type_flag:
        return dtype
    kinds = [a if isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic)
             else ir_dtypes.to_dtype(a.dtype if isinstance(a, (ArrayBase, np.ndarray, np.generic))
                                     else a, None) for a in args]
    return dtype, ir_dtypes.result_is_weak(*kinds)


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float, complex) of x's dtype kind."""
    kind = np.dtype(x.dtype if hasattr(x, "dtype") else type(x)).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(dtype: Any) -> int:
    return np.dtype(dtype).itemsize * 8
