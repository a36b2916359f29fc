"""jaxlab.typing: the annotations of jax.typing, for code that types its arguments."""
from __future__ import annotations

from typing import Any, Union

import numpy as np

from jaxlab.array import Array

# what jnp functions accept as an array: an Array, a NumPy array or scalar, a Python scalar
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]

# what they accept as a dtype: a name, a scalar type (jnp.float32, float), a NumPy dtype,
# or anything with a `.dtype`
DTypeLike = Union[str, type[Any], np.dtype, Any]

__all__ = ["ArrayLike", "DTypeLike"]
