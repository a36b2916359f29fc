"""jnp.float32 and friends: usable wherever a NumPy dtype or scalar type is, as in JAX.

Each is a class whose `.dtype` is the NumPy dtype (so np.dtype(jnp.float32) and
`x.dtype == jnp.float32` work), which compares and hashes like the NumPy scalar
type, and whose call makes a 0-d (or n-d) jaxlab array of that dtype.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np


class _ScalarMeta(type):
    dtype: np.dtype

    def __call__(cls, value: Any) -> Any:
        from jaxlab.numpy.creation import asarray
        return asarray(value, dtype=cls.dtype)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'jaxlab.numpy.{cls.__name__}'>"


def _scalar_type(name: str, numpy_type: type) -> _ScalarMeta:
    return _ScalarMeta(name, (), {"dtype": np.dtype(numpy_type), "__module__": "jaxlab.numpy"})


# every dtype JAX names (64-bit ones narrow to 32 bits without x64, as in JAX)
SCALAR_TYPES = {name: _scalar_type(name, getattr(np, name)) for name in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}
SCALAR_TYPES["bfloat16"] = _scalar_type("bfloat16", ml_dtypes.bfloat16)
SCALAR_TYPES["bool"] = SCALAR_TYPES["bool_"] = _scalar_type("bool", np.bool_)
# NumPy's aliases, with JAX's (64-bit) meaning
SCALAR_TYPES.update({alias: SCALAR_TYPES[name] for alias, name in (
    ("int_", "int64"), ("uint", "uint64"), ("float_", "float64"), ("complex_", "complex128"),
    ("double", "float64"), ("single", "float32"), ("csingle", "complex64"),
    ("cdouble", "complex128"))})
