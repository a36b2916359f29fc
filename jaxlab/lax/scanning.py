"""lax.associative_scan (a parallel prefix over a pytree: combine neighbours, scan the
half-length result recursively, fill in the rest; O(log n) steps of slices) and
lax.cumlogsumexp through it."""
from __future__ import annotations

from typing import Any, Callable

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax import ops, slicing
from jaxlab.numpy._util import asarray_, canonical_axis
from jaxlab.tree_util import tree_flatten, tree_unflatten

__all__ = ["associative_scan", "cumlogsumexp"]


def _interleave(evens: Array, odds: Array, axis: int) -> Array:
    """e0 o0 e1 o1 ... along axis (evens may hold one more than odds)."""
    n = evens.shape[axis] + odds.shape[axis]
    if odds.shape[axis] < evens.shape[axis]:
        odds = ops.concatenate([odds, slicing.slice_in_dim(evens, 0, 1, axis=axis)], axis)
    pairs = jnp.stack([evens, odds], axis=axis + 1)
    merged = ops.reshape(pairs, evens.shape[:axis] + (2 * evens.shape[axis],)
                         + evens.shape[axis + 1:])
    return slicing.slice_in_dim(merged, 0, n, axis=axis)


def _prefix(fn: Callable, leaves: list[Array], treedef: Any, axis: int) -> list[Array]:
    n = leaves[0].shape[axis]
    if n < 2:
        return leaves

    def part(start: int, stop: int | None, of: list[Array]) -> list[Array]:
        return [slicing.slice_in_dim(x, start, stop, 2, axis) for x in of]

    def combine(a: list[Array], b: list[Array]) -> list[Array]:
        out = fn(tree_unflatten(treedef, a), tree_unflatten(treedef, b))
        return [asarray_(v) for v in tree_flatten(out)[0]]
    pairs = n - n % 2
    # prefix results at the odd positions: the scan of the neighbours' combinations
    odds = _prefix(fn, combine(part(0, pairs, leaves), part(1, pairs, leaves)), treedef, axis)
    # at the even positions after the first: the previous odd prefix with the element
    later_evens = part(2, None, leaves)
    k = later_evens[0].shape[axis]
    evens = combine([slicing.slice_in_dim(o, 0, k, axis=axis) for o in odds], later_evens)
    evens = [ops.concatenate([slicing.slice_in_dim(x, 0, 1, axis=axis), e], axis)
             for x, e in zip(leaves, evens)]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds)]


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations fn(... fn(fn(e0, e1), e2) ..., ek) along axis of a pytree
    of arrays, for an associative fn (applied to whole slices at once)."""
    leaves, treedef = tree_flatten(elems)
    xs = [asarray_(x) for x in leaves]
    if not xs:
        return elems
    axis = canonical_axis(axis, xs[0].ndim)
    lengths = [x.shape[axis] for x in xs]
    if len(set(lengths)) > 1:
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[x.shape for x in xs]})")
    if reverse:
        xs = [ops.rev(x, (axis,)) for x in xs]
        out = _prefix(lambda a, b: fn(b, a), xs, treedef, axis)
        return tree_unflatten(treedef, [ops.rev(x, (axis,)) for x in out])
    return tree_unflatten(treedef, _prefix(fn, xs, treedef, axis))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Array:
    """log(cumsum(exp(operand))) along axis, without overflow."""
    x = asarray_(operand)
    if not x.jdtype.is_float:
        raise TypeError(f"cumlogsumexp does not accept dtype {x.jdtype}. Accepted dtypes are "
                        f"subtypes of floating.")
    return associative_scan(jnp.logaddexp, x, reverse=reverse, axis=axis)
