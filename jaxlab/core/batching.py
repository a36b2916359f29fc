"""Vectorising map: tracers carrying a value and the axis that is batched."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from jaxlab.core.avals import ShapedArray
from jaxlab.core.primitives import Primitive, batch_rules
from jaxlab.core.trace import Trace, Tracer, full_raise, get_aval, new_main

BatchDim = Optional[int]   # None: the value is the same for every batch element


def move_axis(x: Any, src: int, dst: int) -> Any:
    from jaxlab.core.movement import transpose_p
    dst %= x.ndim
    if src == dst:
        return x
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


def move_to(x: Any, bdim: BatchDim, dst: int, size: int) -> Any:
    """x with its batch axis at dst; an unbatched x is broadcast to `size` there."""
    from jaxlab.core.movement import broadcast_in_dim_p
    if bdim is not None:
        return move_axis(x, bdim, dst)
    dst %= x.ndim + 1
    shape = list(x.shape)
    shape.insert(dst, size)
    dims = tuple(d for d in range(len(shape)) if d != dst)
    return broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=dims)


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: Trace, val: Any, batch_dim: BatchDim) -> None:
        self._trace, self.val, self.batch_dim = trace, val, batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.batch_dim is None:
            return aval
        shape = list(aval.shape)
        del shape[self.batch_dim]
        return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)

    def full_lower(self) -> Any:
        return self.val if self.batch_dim is None else self


class BatchTrace(Trace):
    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, None)

    lift = pure

    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        if all(d is None for d in dims):
            from jaxlab.core.trace import bind
            out = bind(prim, *vals, **params)
            outs = out if prim.multiple_results else [out]
            return [BatchTracer(self, o, None) for o in outs]
        if prim not in batch_rules:
            raise NotImplementedError(f"vmap of {prim.name} is not supported")
        outs, out_dims = batch_rules[prim](self.axis_size, vals, dims, **params)
        return [BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]


def vmap_flat(f: Callable, in_axes: Sequence[BatchDim],
              out_axes: Callable[[], Sequence[BatchDim]], args: Sequence[Any]) -> list:
    """out_axes() is asked after f ran (the number of outputs is known only then)."""
    sizes = {x.shape[ax] for x, ax in zip(args, in_axes) if ax is not None}
    if len(sizes) != 1:
        raise ValueError(f"vmap got inconsistent sizes for the mapped axes: "
                         f"{[(tuple(x.shape), ax) for x, ax in zip(args, in_axes)]}")
    (size,) = sizes
    with new_main(BatchTrace, size) as main:
        trace = BatchTrace(main)
        tracers_in = [BatchTracer(trace, x, ax) if ax is not None else x
                      for x, ax in zip(args, in_axes)]
        outs = f(*tracers_in)
        tracers_out = [full_raise(trace, o) for o in outs]
        return [move_to(t.val, t.batch_dim, _out_axis(ax, t), size) if ax is not None else
                _unbatched(t) for t, ax in zip(tracers_out, out_axes())]


def _out_axis(ax: int, t: BatchTracer) -> int:
    """out_axes must name an axis of the batched output (one more than the value's)."""
    ndim = len(t.aval.shape) + 1
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax


def _unbatched(t: BatchTracer) -> Any:
    if t.batch_dim is not None:
        raise ValueError("vmap out_axes=None needs an output that does not vary over the batch")
    return t.val
