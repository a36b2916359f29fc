"""lax.reduce (any associative computation over a pytree of operands; the common
monoids go to jaxlab's reduction primitives) and reduce_and / reduce_or / reduce_xor.

Any other computation is folded pairwise along each reduced dim (log2(n) steps of
slices), then combined once with the initial value."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.elementwise import convert_element_type_p
from jaxlab.lax import ops, slicing
from jaxlab.numpy._util import asarray_, canonical_axis
from jaxlab.tree_util import tree_flatten, tree_unflatten

__all__ = ["reduce", "reduce_and", "reduce_or", "reduce_xor"]


def _monoids() -> dict:
    """computation -> (its identity for a dtype, the reduction over axes)."""
    return {
        ops.add: (lambda dt: 0, ops.reduce_sum), jnp.add: (lambda dt: 0, ops.reduce_sum),
        ops.mul: (lambda dt: 1, ops.reduce_prod), jnp.multiply: (lambda dt: 1, ops.reduce_prod),
        ops.max: (_lowest, ops.reduce_max), jnp.maximum: (_lowest, ops.reduce_max),
        ops.min: (_highest, ops.reduce_min), jnp.minimum: (_highest, ops.reduce_min),
    }


def _lowest(dt: Any) -> Any:
    return -float("inf") if dt.is_inexact else dt.bounds[0]


def _highest(dt: Any) -> Any:
    return float("inf") if dt.is_inexact else dt.bounds[1]


def _fold(trees: list[Array], treedef: Any, computation: Callable, axis: int) -> list[Array]:
    """The leaves folded pairwise along axis down to length 1 (kept), in order."""
    n = trees[0].shape[axis]
    while n > 1:
        pairs = n - n % 2

        def part(x: Array, start: int, stop: int, stride: int) -> Array:
            return slicing.slice_in_dim(x, start, stop, stride, axis)
        left = tree_unflatten(treedef, [part(x, 0, pairs, 2) for x in trees])
        right = tree_unflatten(treedef, [part(x, 1, pairs, 2) for x in trees])
        folded, _ = tree_flatten(computation(left, right))
        trees = [folded_x if n == pairs else ops.concatenate([folded_x, part(x, pairs, n, 1)],
                                                             axis)
                 for folded_x, x in zip(folded, trees)]
        n = trees[0].shape[axis]
    return trees


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """operands (a pytree of arrays of one shape) reduced over `dimensions` by an
    associative `computation` of two such pytrees, starting from init_values."""
    leaves, treedef = tree_flatten(operands)
    inits, init_def = tree_flatten(init_values)
    if init_def != treedef:
        raise ValueError(f"reduce: operands {treedef} and init_values {init_def} must have "
                         f"the same structure")
    xs = [asarray_(x) for x in leaves]
    inits = [_init_like(v, x) for v, x in zip(inits, xs)]
    if any(v.ndim for v in inits):
        raise ValueError(f"reduce found non-scalar initial value: "
                         f"{[v.shape for v in inits if v.ndim]}")
    axes = sorted({canonical_axis(d, xs[0].ndim) for d in dimensions})
    monoid = _monoids().get(computation) if len(xs) == 1 else None
    if monoid is not None and _is_identity(inits[0], monoid[0](xs[0].jdtype)):
        return tree_unflatten(treedef, [monoid[1](xs[0], axes)])
    out_shape = [n for d, n in enumerate(xs[0].shape) if d not in axes]
    if any(xs[0].shape[d] == 0 for d in axes):
        return tree_unflatten(treedef, [jnp.broadcast_to(v, out_shape) for v in inits])
    for axis in axes:
        xs = _fold(xs, treedef, computation, axis)
    xs = [ops.reshape(x, out_shape) for x in xs]
    combined = computation(tree_unflatten(treedef, inits), tree_unflatten(treedef, xs))
    return tree_unflatten(treedef, [asarray_(v) for v in tree_flatten(combined)[0]])


def _init_like(value: Any, x: Array) -> Array:
    """The initial value; a Python scalar (or weakly typed one) takes x's dtype."""
    v = asarray_(value)
    return convert_element_type_p.bind(v, new_dtype=x.jdtype, weak_type=False) \
        if v.weak_type else v


def _is_identity(init: Array, identity: Any) -> bool:
    """Whether a host initial value is the monoid's identity (a traced one may not be)."""
    try:
        return bool(init == identity)
    except Exception:   # a tracer has no concrete value
        return False


def _logical(name: str, on_bools: Callable, on_ints: Callable[[Any, Any], Array]):
    def op(operand: Any, axes: Sequence[int]) -> Array:
        x = asarray_(operand)
        if not (x.jdtype.is_bool or x.jdtype.is_int):
            raise TypeError(f"logical reduction requires operand dtype bool or int, got "
                            f"{x.jdtype}.")
        axes = tuple(canonical_axis(d, x.ndim) for d in axes)
        if x.jdtype.is_bool and on_bools is not None:
            return on_bools(x, axis=axes)
        init = {"reduce_and": ~jnp.zeros((), x.jdtype)}.get(name, jnp.zeros((), x.jdtype))
        return reduce(x, init, on_ints, axes)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"lax.{name}: bitwise over `axes` (logical for bool operands)."
    return op


reduce_and = _logical("reduce_and", jnp.all, jnp.bitwise_and)
reduce_or = _logical("reduce_or", jnp.any, jnp.bitwise_or)
reduce_xor = _logical("reduce_xor", None, jnp.bitwise_xor)
