"""apply_along_axis and apply_over_axes: a function of 1-D slices vmapped over the other
axes, and a reduction applied axis after axis."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.api import vmap
from jaxlab.array import Array
from jaxlab.numpy._util import arraylike_, asarray_, canonical_axis
from jaxlab.numpy.shape_ops import expand_dims, moveaxis, transpose

__all__ = ["apply_along_axis", "apply_over_axes"]


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Array:
    """func1d applied to each 1-D slice of arr along `axis`; its result's axes take
    `axis`'s place."""
    x = arraylike_("apply_along_axis", arr, 2)
    axis = canonical_axis(axis, x.ndim)
    fn: Callable[[Any], Any] = lambda v: asarray_(func1d(v, *args, **kwargs))  # noqa: E731
    for _ in range(x.ndim - 1):
        fn = vmap(fn)
    out = fn(moveaxis(x, axis, -1))   # the other axes lead, the result's axes follow
    lead = x.ndim - 1
    order = list(range(axis)) + list(range(lead, out.ndim)) + list(range(axis, lead))
    return transpose(out, order)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Array:
    """func(a, axis) for each axis in turn, a dropped axis put back with length 1."""
    out = arraylike_("apply_over_axes", a, 1)
    for axis in axes:
        result = asarray_(func(out, axis))
        if result.ndim == out.ndim - 1:
            result = expand_dims(result, axis)
        elif result.ndim != out.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        out = result
    return out
