"""Reductions: each is one kernel whose following elementwise work fuses in."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core import reductions as red
from jaxlab.ir.dtypes import DType, to_dtype
from jaxlab.numpy._util import asarray_, astype_, canonical_axes
from jaxlab.numpy.shape_ops import reshape


def _keep(x: Array, out: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    if not keepdims:
        return out
    return reshape(out, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))


def _reduction(name: str, prim_name: str, sum_like: bool):
    prim = red.reduce_prims[prim_name]

    def fn(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Array:
        x = asarray_(a)
        if where is not None:
            raise NotImplementedError(f"{name}(where=...) is not supported")
        if dtype is not None:
            x = astype_(x, to_dtype(dtype))
        elif sum_like and (x.jdtype.is_bool):
            x = astype_(x, DType.int32)
        axes = canonical_axes(axis, x.ndim)
        if not sum_like and x.size == 0 and any(x.shape[i] == 0 for i in axes) \
                and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} "
                             f"which has no identity")
        out = prim.bind(x, axes=axes)
        if initial is not None:
            from jaxlab.numpy import ufuncs
            combine = {"reduce_sum": ufuncs.add, "reduce_prod": ufuncs.multiply,
                       "reduce_max": ufuncs.maximum, "reduce_min": ufuncs.minimum}[prim_name]
            out = astype_(combine(out, initial), out.jdtype)
        return _keep(x, out, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} over `axis` (all axes when None), as jax.numpy.{name}."
    return fn


sum = _reduction("sum", "reduce_sum", True)  # noqa: A001
prod = _reduction("prod", "reduce_prod", True)
max = _reduction("max", "reduce_max", False)  # noqa: A001
min = _reduction("min", "reduce_min", False)  # noqa: A001
amax, amin = max, min
