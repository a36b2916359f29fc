"""sort and argsort along one axis, through the sort/argsort routine primitives."""
from __future__ import annotations

from typing import Any, Optional

from jaxlab.array import Array
from jaxlab.core.linalg import argsort_p, sort_p
from jaxlab.core.primitives import Primitive
from jaxlab.ir.dtypes import default_int
from jaxlab.numpy._util import asarray_, astype_, canonical_axis, refuses_lists
from jaxlab.numpy.shape_ops import flip, ravel

__all__ = ["sort", "argsort"]


def _along(prim: Primitive, a: Any, axis: Optional[int]) -> Array:
    x = asarray_(a)
    if axis is None:   # NumPy's rule: sort the flattened array
        x, axis = ravel(x), 0
    if x.ndim == 0:
        raise ValueError(f"{prim.name}: axis {axis} is out of bounds for a 0-d array "
                         f"(use axis=None)")
    return prim.bind(x, dimension=canonical_axis(axis, x.ndim))


def sort(a: Any, axis: Optional[int] = -1, *, kind: Any = None, order: Any = None,
         stable: bool = True, descending: bool = False) -> Array:
    """Sorted copy along `axis` (flattened when None); NaNs sort last (first when
    descending)."""
    if order is not None:
        raise TypeError("sort: the 'order' argument is not supported")
    out = _along(sort_p, a, axis)
    return flip(out, -1 if axis is None else axis) if descending else out


def argsort(a: Any, axis: Optional[int] = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False) -> Array:
    """Indices (the default int) that sort `a` along `axis`. Always stable (ties keep
    their order, descending too), which also satisfies stable=False; NaNs sort last."""
    if order is not None:
        raise TypeError("argsort: the 'order' argument is not supported")
    return astype_(_argsort(a, axis, descending), default_int())   # int64 under x64


def _argsort(a: Any, axis: Optional[int], descending: bool) -> Array:
    if not descending:
        return _along(argsort_p, a, axis)
    # stable descending: sort the reversed array ascending, then map the indices back
    x = asarray_(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = canonical_axis(axis, max(x.ndim, 1))
    backwards = _along(argsort_p, flip(x, axis), axis)
    return flip((x.shape[axis] - 1) - backwards, axis)


sort, argsort = refuses_lists(sort, 1), refuses_lists(argsort, 1)   # as JAX
