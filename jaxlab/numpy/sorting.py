"""sort and argsort along one axis, through the sort/argsort routine primitives."""
from __future__ import annotations

from typing import Any, Optional

from jaxlab.array import Array
from jaxlab.core.linalg import argsort_p, sort_p
from jaxlab.core.primitives import Primitive
from jaxlab.numpy._util import asarray_, canonical_axis
from jaxlab.numpy.shape_ops import ravel

__all__ = ["sort", "argsort"]


def _along(prim: Primitive, a: Any, axis: Optional[int]) -> Array:
    x = asarray_(a)
    if axis is None:   # NumPy's rule: sort the flattened array
        x, axis = ravel(x), 0
    if x.ndim == 0:
        raise ValueError(f"{prim.name}: axis {axis} is out of bounds for a 0-d array "
                         f"(use axis=None)")
    return prim.bind(x, dimension=canonical_axis(axis, x.ndim))


def sort(a: Any, axis: Optional[int] = -1) -> Array:
    """Sorted copy along `axis` (flattened when None); NaNs sort last."""
    return _along(sort_p, a, axis)


def argsort(a: Any, axis: Optional[int] = -1, stable: bool = True) -> Array:
    """int32 indices that sort `a` along `axis`. Always stable (ties keep their
    order), which also satisfies stable=False; NaNs sort last."""
    return _along(argsort_p, a, axis)
