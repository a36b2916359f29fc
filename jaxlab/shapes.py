"""ShapeDtypeStruct and eval_shape: a function's output shapes and dtypes, found by
tracing it on abstract values (nothing is computed)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlab.core.avals import ShapedArray
from jaxlab.core.jaxpr import trace_to_jaxpr
from jaxlab.core.trace import get_aval
from jaxlab.ir.dtypes import to_dtype
from jaxlab.shaped import Shaped
from jaxlab.tree_util import tree_flatten


class ShapeDtypeStruct(Shaped):
    """A shape and a dtype standing in for an array (eval_shape's arguments and results)."""
    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Any, dtype: Any, *, sharding: Any = None,
                 weak_type: bool = False) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)


    def _key(self) -> tuple:
        return self.shape, self.dtype, self.sharding, self.weak_type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _aval(x: Any) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, to_dtype(x.dtype), x.weak_type)
    from jaxlab.api import _as_array
    return get_aval(_as_array(x))


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """fun's result as a pytree of ShapeDtypeStructs, for arguments that are arrays,
    ShapeDtypeStructs or anything with .shape and .dtype; fun is traced, not run."""
    from jaxlab.api import flatten_fun
    leaves, in_tree = tree_flatten((args, kwargs))
    avals = [_aval(ShapeDtypeStruct(x.shape, x.dtype) if _shaped_stand_in(x) else x)
             for x in leaves]
    flat, out_tree = flatten_fun(lambda a, kw: fun(*a, **kw), in_tree)
    closed = trace_to_jaxpr(flat, avals)
    outs = [ShapeDtypeStruct(a.shape, a.dtype.np, weak_type=a.weak_type)
            for a in closed.out_avals]
    return out_tree[0].unflatten(outs)


def _shaped_stand_in(x: Any) -> bool:
    """Another library's abstract value (jax.ShapeDtypeStruct): has .shape and .dtype but
    is not an array this library converts."""
    from jaxlab.array import ArrayBase
    return not isinstance(x, (ShapeDtypeStruct, ArrayBase, np.ndarray, np.generic)) and \
        hasattr(x, "shape") and hasattr(x, "dtype")
