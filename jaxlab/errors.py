"""The exceptions jaxlab raises beyond Python's own, named as JAX names them."""
from __future__ import annotations

import numpy as np

# An axis out of range: NumPy's AxisError, both a ValueError and an IndexError
# (JAX raises one or the other depending on the function).
AxisError = np.exceptions.AxisError


class ConcretizationTypeError(TypeError):
    """A traced value was used where a concrete Python value is needed."""


class ResourceExhaustedError(MemoryError):
    """An array no device memory or kernel index can hold: JAX's RESOURCE_EXHAUSTED.

    Raised before any code is generated or memory allocated, and the device stays usable."""


__all__ = ["AxisError", "ConcretizationTypeError", "ResourceExhaustedError"]
