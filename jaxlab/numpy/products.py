"""Products: matmul, dot and friends, all lowered to dot_general (one kernel)."""
from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.core import movement
from jaxlab.core.linalg import dot_general_p
from jaxlab.core.reductions import reduce_prims
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, broadcast_shapes, broadcast_to_, canonical_axis, \
    promote_dtypes
from jaxlab.numpy.shape_ops import expand_dims, ravel, reshape, squeeze, transpose

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum"]


def _promoted(*operands: Any) -> list[Array]:
    dt = promote_dtypes(*operands)
    return [asarray_(x, dt) for x in operands]


def _contract(x: Array, y: Array, x_axes: Sequence[int], y_axes: Sequence[int],
              x_batch: Sequence[int] = (), y_batch: Sequence[int] = ()) -> Array:
    """dot_general: output axes are batch, x's free axes, y's free axes."""
    return dot_general_p.bind(x, y, dimension_numbers=((tuple(x_axes), tuple(y_axes)),
                                                       (tuple(x_batch), tuple(y_batch))))


def _check_sizes(name: str, x: Array, y: Array, x_axes: Sequence[int],
                 y_axes: Sequence[int]) -> None:
    for i, j in zip(x_axes, y_axes):
        if x.shape[i] != y.shape[j]:
            raise TypeError(f"{name}: shapes {x.shape} and {y.shape} are not aligned: "
                             f"axis {i} (size {x.shape[i]}) != axis {j} (size {y.shape[j]})")


def _scalar_product(x: Array, y: Array) -> Array:
    """dot/inner with a 0-d operand: an elementwise product (all axes batch)."""
    shape = broadcast_shapes(x.shape, y.shape)
    every = range(len(shape))
    return _contract(broadcast_to_(x, shape), broadcast_to_(y, shape), (), (), every, every)


def matmul(a: Any, b: Any) -> Array:
    x, y = _promoted(a, b)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: input operands must not be scalars (use multiply)")
    shapes = f"{x.shape} @ {y.shape}"
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = expand_dims(x, 0)
    if y1:
        y = expand_dims(y, 1)
    if x.shape[-1] != y.shape[-2]:
        raise TypeError(f"matmul: contracting dimensions differ: {shapes} "
                         f"({x.shape[-1]} != {y.shape[-2]})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = broadcast_to_(x, batch + x.shape[-2:])
    y = broadcast_to_(y, batch + y.shape[-2:])
    nb = len(batch)
    out = _contract(x, y, (nb + 1,), (nb,), range(nb), range(nb))
    if x1:
        out = squeeze(out, -2)
    if y1:
        out = squeeze(out, -1)
    return out


def dot(a: Any, b: Any) -> Array:
    """NumPy's dot: a's last axis against b's only axis, or else its second-to-last."""
    x, y = _promoted(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _scalar_product(x, y)
    xa, ya = (x.ndim - 1,), (max(y.ndim - 2, 0),)
    _check_sizes("dot", x, y, xa, ya)
    return _contract(x, y, xa, ya)


def vdot(a: Any, b: Any) -> Array:
    """The dot product of the flattened arrays, the first conjugated (as NumPy's)."""
    x, y = (ravel(v) for v in _promoted(a, b))
    if x.jdtype.is_complex:
        x = x.conj()
    _check_sizes("vdot", x, y, (0,), (0,))
    return _contract(x, y, (0,), (0,))


def inner(a: Any, b: Any) -> Array:
    x, y = _promoted(a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _scalar_product(x, y)
    xa, ya = (x.ndim - 1,), (y.ndim - 1,)
    _check_sizes("inner", x, y, xa, ya)
    return _contract(x, y, xa, ya)


def outer(a: Any, b: Any) -> Array:
    x, y = (ravel(v) for v in _promoted(a, b))
    return _contract(x, y, (), ())


def _tensordot_axes(axes: Any, x: Array, y: Array) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(axes, int):
        if not 0 <= axes <= min(x.ndim, y.ndim):
            raise ValueError(f"tensordot: axes={axes} is invalid for shapes {x.shape} and "
                             f"{y.shape}")
        return tuple(range(x.ndim - axes, x.ndim)), tuple(range(axes))
    try:
        xa, ya = axes
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences, "
                        f"got {axes!r}") from None
    xa, ya = ((v,) if isinstance(v, int) else tuple(v) for v in (xa, ya))
    if len(xa) != len(ya):
        raise ValueError(f"tensordot: axes {xa} and {ya} have different lengths")
    return (tuple(canonical_axis(i, x.ndim) for i in xa),
            tuple(canonical_axis(j, y.ndim) for j in ya))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    x, y = _promoted(a, b)
    xa, ya = _tensordot_axes(axes, x, y)
    _check_sizes("tensordot", x, y, xa, ya)
    return _contract(x, y, xa, ya)


# --- einsum -----------------------------------------------------------------
# A term is (array, labels): one label (a character) per axis. Ellipsis axes get
# private labels, right-aligned across operands so that they broadcast.

Term = tuple[Array, list[str]]
_ELLIPSIS_BASE = 0x100   # past the letters a subscript may use
_SUM_PRIM = {DType.bool: "reduce_max"}   # a sum of bools is their "or", as in dot_general


def _ellipsis_labels(count: int, total: int) -> list[str]:
    return [chr(_ELLIPSIS_BASE + k) for k in range(total - count, total)]


def _ellipsis_ndim(spec: str, ndim: int) -> int:
    """How many axes the spec's '...' stands for."""
    named = len(spec.replace("...", "", 1))
    if named > ndim or (named != ndim and "..." not in spec):
        raise ValueError(f"einsum: subscripts {spec!r} do not fit an operand of {ndim} axes")
    return ndim - named


def _expand(spec: str, count: int, total: int) -> list[str]:
    head, dots, tail = spec.partition("...")
    if "." in head + tail:
        raise ValueError(f"einsum: invalid subscripts {spec!r}")
    return list(head) + (_ellipsis_labels(count, total) if dots else []) + list(tail)


def _parse(subscripts: str, shapes: list[tuple]) -> tuple[list[list[str]], list[str]]:
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    specs = lhs.split(",")
    if len(specs) != len(shapes):
        raise ValueError(f"einsum: {len(specs)} operand subscripts in {subscripts!r} but "
                         f"{len(shapes)} operands")
    if any(not (c.isascii() and c.isalpha()) for c in lhs + rhs if c not in ",."):
        raise ValueError(f"einsum: invalid subscripts {subscripts!r}")
    counts = [_ellipsis_ndim(spec, len(s)) for spec, s in zip(specs, shapes)]
    total = max(counts)
    inputs = [_expand(spec, n, total) for spec, n in zip(specs, counts)]
    if arrow:
        output = _expand(rhs, total, total)
    else:   # NumPy's implicit output: broadcast axes, then the labels used once, sorted
        flat = [c for labels in inputs for c in labels if ord(c) < _ELLIPSIS_BASE]
        output = _ellipsis_labels(total, total) + sorted(c for c in set(flat)
                                                         if flat.count(c) == 1)
    if len(set(output)) != len(output) or not set(output) <= {c for s in inputs for c in s}:
        raise ValueError(f"einsum: output subscripts of {subscripts!r} must be distinct "
                         f"and appear in the inputs")
    return inputs, output


def _take_diagonal(x: Array, i: int, j: int) -> Array:
    """The diagonal over axes i and j, as a last axis: move the pair last, flatten
    the n*n block and take every (n+1)-th element (views only)."""
    n = x.shape[i]
    rest = [k for k in range(x.ndim) if k not in (i, j)]
    flat = reshape(transpose(x, rest + [i, j]), [x.shape[k] for k in rest] + [n * n])
    return movement.slice_p.bind(flat, start_indices=(0,) * flat.ndim,
                                 limit_indices=flat.shape,
                                 strides=(1,) * len(rest) + (n + 1,))


def _diagonal(term: Term) -> Term:
    """A label repeated within one operand reads that operand's diagonal."""
    x, labels = term
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i, j = [k for k, l in enumerate(labels) if l == c][:2]
        if x.shape[i] != x.shape[j]:
            raise ValueError(f"einsum: repeated label {c!r} has sizes {x.shape[i]} and "
                             f"{x.shape[j]} in shape {x.shape}")
        x = _take_diagonal(x, i, j)
        labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [c]
    return x, labels


def _label_sizes(terms: list[Term]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for x, labels in terms:
        for c, n in zip(labels, x.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} "
                                 f"(shapes {[t[0].shape for t in terms]})")
    return sizes


def _drop_broadcast(term: Term, sizes: dict[str, int]) -> Term:
    """Size-1 axes that broadcast against a larger size: drop them (and their label)."""
    x, labels = term
    keep = [k for k, c in enumerate(labels) if x.shape[k] == sizes[c]]
    if len(keep) == len(labels):
        return term
    return reshape(x, [x.shape[k] for k in keep]), [labels[k] for k in keep]


def _free_in_order(term: Term, free: list[str]) -> Term:
    """dot_general keeps an operand's free axes in axis order: transpose only when
    that order is not `free`'s."""
    x, labels = term
    if [c for c in labels if c in free] == free:
        return term
    order = [c for c in labels if c not in free] + free
    return transpose(x, [labels.index(c) for c in order]), order


def _extend(term: Term, labels: list[str], sizes: dict[str, int]) -> Term:
    """Broadcast the term along new trailing labels (a view)."""
    x, own = term
    if not labels:
        return term
    shape = x.shape + tuple(sizes[c] for c in labels)
    return (movement.broadcast_in_dim_p.bind(x, shape=shape,
                                             broadcast_dimensions=tuple(range(x.ndim))),
            own + labels)


def _kept(terms: list[Term], pair: tuple[int, int], output: list[str]) -> set[str]:
    """Labels still needed after contracting `pair`: the output's and the other terms'."""
    return set(output).union(*(l for k, (_, l) in enumerate(terms) if k not in pair))


def _contract_pair(a: Term, b: Term, keep: set[str], output: list[str],
                   sizes: dict[str, int]) -> Term:
    """One dot_general. A label of only one side that is not kept is summed in the
    same kernel: the other side is broadcast along it and it is contracted."""
    a = _extend(a, [c for c in b[1] if c not in a[1] and c not in keep], sizes)
    b = _extend(b, [c for c in a[1] if c not in b[1] and c not in keep], sizes)

    def rank(c: str) -> int:   # order kept axes as the output does, to spare a transpose
        return output.index(c) if c in output else len(output)

    free_a = sorted((c for c in a[1] if c not in b[1]), key=rank)
    free_b = sorted((c for c in b[1] if c not in a[1]), key=rank)
    if free_a and free_b and rank(free_b[0]) < rank(free_a[0]):
        a, b, free_a, free_b = b, a, free_b, free_a   # dot_general puts a's free axes first
    batch = sorted((c for c in a[1] if c in b[1] and c in keep), key=rank)
    summed = [c for c in a[1] if c in b[1] and c not in keep]
    (x, lx), (y, ly) = _free_in_order(a, free_a), _free_in_order(b, free_b)
    out = _contract(x, y, [lx.index(c) for c in summed], [ly.index(c) for c in summed],
                    [lx.index(c) for c in batch], [ly.index(c) for c in batch])
    return out, batch + free_a + free_b


def _greedy_pair(terms: list[Term], output: list[str], sizes: dict[str, int]) -> tuple[int, int]:
    """The pair whose contraction gives the smallest result."""
    def result_size(pair: tuple[int, int]) -> int:
        keep = _kept(terms, pair, output)
        labels = set(terms[pair[0]][1]) | set(terms[pair[1]][1])
        return math.prod(sizes[c] for c in labels & keep)
    return min(itertools.combinations(range(len(terms)), 2), key=result_size)


def _finish(term: Term, output: list[str]) -> Array:
    x, labels = term
    summed = tuple(k for k, c in enumerate(labels) if c not in output)
    if summed:
        x = reduce_prims[_SUM_PRIM.get(x.jdtype, "reduce_sum")].bind(x, axes=summed)
        labels = [c for c in labels if c in output]
    return transpose(x, [labels.index(c) for c in output]) if labels != output else x


def einsum(subscripts: str, *operands: Any) -> Array:
    """Einstein summation ('ij,jk->ik', implicit output, '...', repeated labels as
    diagonals). Operands contract pairwise, smallest result first; each pair is
    one dot_general kernel."""
    xs = _promoted(*operands)
    inputs, output = _parse(subscripts, [x.shape for x in xs])
    terms = [_diagonal(t) for t in zip(xs, inputs)]
    sizes = _label_sizes(terms)
    terms = [_drop_broadcast(t, sizes) for t in terms]
    while len(terms) > 1:
        pair = _greedy_pair(terms, output, sizes)
        merged = _contract_pair(terms[pair[0]], terms[pair[1]], _kept(terms, pair, output),
                                output, sizes)
        terms = [t for k, t in enumerate(terms) if k not in pair] + [merged]
    return _finish(terms[0], output)
