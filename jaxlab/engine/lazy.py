"""Lazy arrays: an expression over views of realized buffers, run on demand.

A `Lazy` is (shape, dtype, device, exp[, pending]). Its `exp` is an AluExp
whose leaves are GlobalView(buffer, tracker) and Valid(tracker) nodes with
trackers of the array's own shape, so

- an elementwise op just builds a bigger expression (fusion),
- a movement op rewrites the trackers at the leaves (no copy),
- a reduction becomes `pending`: a body over shape out+reduced, whose folded
  value appears in `exp` as Variable('acc'). Elementwise work after it grows
  `exp`, which becomes the kernel's epilogue.

Realization (lower.py + dispatch.py) turns this into one Kernel.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from jaxlab.engine.buffer import Buffer
from jaxlab.engine.deferred import Deferred, can_defer, defer, refusal
from jaxlab.engine.devices import Device
from jaxlab.engine.fusion import READ_TEXT, Break, Reason
from jaxlab.ir.alu import COMPARE, UNARY_FLOAT, VIEW_LEAVES, AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir import provenance
from jaxlab.ir.kernel import acc_variable, reduce_identity
from jaxlab.ir.provenance import Origin
from jaxlab.ir.shape import ShapeTracker

# Past these, operands are realized before fusing more work onto them.
MAX_FUSED_NODES = 400
_EXPENSIVE = UNARY_FLOAT | {AluOp.Div, AluOp.Threefry2x32, AluOp.Idiv, AluOp.Mod}
_CHEAP_EXPAND_NODES = 12   # an expression broadcast wider is recomputed per copy


class Pending:
    """A reduction not yet run: fold `body` (shape out+red) over the red dims."""

    __slots__ = ("op", "body", "out_shape", "red_shape", "origin")

    def __init__(self, op: AluOp, body: AluExp, out_shape: tuple, red_shape: tuple,
                 origin: Optional[Origin] = None) -> None:
        self.op, self.body, self.out_shape, self.red_shape = op, body, out_shape, red_shape
        self.origin = origin   # the equation that asked for the fold


class Lazy:
    __slots__ = ("shape", "dtype", "device", "_exp", "_buf", "pending", "origin")

    def __init__(self, shape: tuple, dtype: DType, device: Device, exp: Optional[AluExp],
                 pending: Optional[Pending] = None, origin: tuple = (),
                 buffer: Optional[Buffer] = None) -> None:
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self._exp, self._buf, self.pending = exp, buffer, pending
        self.origin = origin   # the jaxpr equations (Origin) fused into this value so far

    @property
    def exp(self) -> AluExp:
        """The expression; for a realized array, built only when someone looks
        (realized arrays are made on every dispatch and most are never fused)."""
        if self._exp is None:
            self._exp = AluExp.view(self._buf, ShapeTracker.contiguous(self.shape), self.dtype)
        return self._exp

    @exp.setter
    def exp(self, value: AluExp) -> None:
        self._exp, self._buf = value, None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def buffer(self) -> Optional[Buffer]:
        """The buffer when this array is exactly one realized contiguous buffer."""
        if self._buf is not None:
            return self._buf
        e = self._exp
        if self.pending is None and e.op is AluOp.GlobalView:
            buf, st = e.arg
            if isinstance(buf, Buffer) and st.is_contiguous and buf.size == self.size and \
                    buf.dtype is self.dtype:
                return buf
        return None

    def buffers(self) -> list[Buffer]:
        return [x for x in self._inputs().values() if isinstance(x, Buffer)]

    def input_keys(self) -> set:
        """What the kernel of this value reads as inputs: its buffers and its scalar
        arguments (each Param becomes a one-element input when lowered)."""
        return set(self._inputs())

    def _inputs(self) -> dict:
        roots = [self.exp] + ([self.pending.body] if self.pending else [])
        seen: dict = {}
        for root in roots:
            for n in root.toposort():
                if n.op is AluOp.GlobalView and isinstance(n.arg[0], Deferred):
                    # stored where it is not folded, what it folds read where it is
                    seen.setdefault(id(n.arg[0]), n.arg[0])
                    seen.update(n.arg[0].inputs())
                elif n.op is AluOp.GlobalView:
                    seen.setdefault(id(n.arg[0]), n.arg[0])
                elif n.op is AluOp.GlobalIndex and isinstance(n.arg, Buffer):
                    seen.setdefault(id(n.arg), n.arg)
                elif n.op is AluOp.Param:
                    seen.setdefault(n, n)
        return seen

    def node_count(self) -> int:
        """Operations (non-leaf nodes) in the expression and the pending reduction's body."""
        roots = [self.exp] + ([self.pending.body] if self.pending else [])
        return sum(1 for r in roots for n in r.toposort() if n.src)

    def __repr__(self) -> str:
        return f"Lazy({self.dtype.short}{list(self.shape)} on {self.device})"


# --- construction -----------------------------------------------------------

def from_buffer(buf: Buffer, shape: Sequence[int], dtype: Optional[DType] = None) -> Lazy:
    """The array of `shape` stored in buf; `dtype` says when it is complex (stored as
    its real parts: engine/complex.py)."""
    if dtype is not None and dtype.is_complex:
        from jaxlab.engine import complex as cx   # complex values are built on this module
        return cx.from_buffer(buf, shape, dtype)
    return Lazy(shape, buf.dtype, buf.device, None, buffer=buf)


def from_numpy(data: np.ndarray, dtype: DType, device: Device) -> Lazy:
    if dtype.is_complex:
        from jaxlab.engine import complex as cx
        return cx.from_numpy(data, dtype, device)
    return from_buffer(Buffer.from_numpy(device, np.asarray(data), dtype), np.shape(data))


def full(shape: Sequence[int], value: Any, dtype: DType, device: Device) -> Lazy:
    if dtype.is_complex:
        from jaxlab.engine import complex as cx
        return cx.full(shape, complex(value), dtype, device)
    return Lazy(tuple(shape), dtype, device, AluExp.const(value, dtype))


def scalar(value: Any, dtype: DType, device: Device) -> Lazy:
    """A 0-d value that changes between calls (a Python scalar operand): a kernel
    argument, never folded into kernel text."""
    if dtype.is_complex:
        from jaxlab.engine import complex as cx
        return cx.scalar(complex(value), dtype, device)
    return Lazy((), dtype, device, AluExp.param(value, dtype))


def pad_mask(shape: Sequence[int], pads: Sequence[tuple[int, int]], device: Device) -> Lazy:
    """Bool array: True where a `pads` padding of `shape` holds original elements."""
    st = ShapeTracker.contiguous(tuple(shape)).pad(tuple(pads))
    return Lazy(st.shape, DType.bool, device, AluExp.valid(st))


# --- realization: dispatch.py lowers the expression to a kernel and runs it --------

# Threads that read one lazy array at once run its kernel once: the second waits
# for the first (a lock per stripe of arrays; realizing never realizes another
# array, so a thread holds at most one of these).
_REALIZING = [threading.RLock() for _ in range(64)]


def realize(lz: Lazy, reason: str | Reason = READ_TEXT) -> Lazy:
    """Run the kernel that computes lz; `reason` says why it must exist in memory (a
    Reason where the fuser decides; free text where an op needs its input stored).

    lz itself becomes the realized value (same value, new representation), so
    every array and every later consumer holding it reads the buffer instead
    of recomputing: a matmul feeding three softmax steps runs once."""
    if not isinstance(lz, Lazy):   # a complex value realizes its interleaved storage
        return lz.realize(reason)
    if lz.buffer is not None:
        return lz
    with _REALIZING[id(lz) % len(_REALIZING)]:
        if lz.buffer is None:
            from jaxlab.engine.dispatch import realize_lazy   # it builds on this module
            out = realize_lazy(lz, reason)
            lz._buf = out.buffer   # first: a reader that sees the buffer needs nothing else
            lz._exp, lz.pending, lz.origin = None, None, ()
    return lz


def merge_origins(*lazies: Lazy) -> tuple:
    return tuple(dict.fromkeys(o for x in lazies for o in x.origin))


# --- elementwise ------------------------------------------------------------

def _result_dtype(op: AluOp, srcs: Sequence[Lazy], dtype: Optional[DType]) -> DType:
    if dtype is not None:
        return dtype
    if op in COMPARE:
        return DType.bool
    return srcs[-1].dtype if op is AluOp.Where else srcs[0].dtype


def elementwise(op: AluOp, srcs: Sequence[Lazy], dtype: Optional[DType] = None,
                arg: Any = None) -> Lazy:
    """Apply one ALU op to same-shape lazy arrays, fusing it into their expressions."""
    shape = srcs[0].shape
    # a constant (no buffers) goes wherever the data is, e.g. `cpu_array * 2`
    device = next((s.device for s in srcs if not is_constant(s)), srcs[0].device)
    srcs = [on_device(s, device) if s.device is not device and is_constant(s) else s
            for s in srcs]
    for s in srcs:
        if s.shape != shape:
            raise ValueError(f"{op.name}: shapes {[x.shape for x in srcs]} differ (broadcast first)")
        if s.device is not device:
            raise ValueError(f"{op.name}: arrays on {s.device} and {device}: use device_put")
    srcs = _one_pending(list(srcs))
    if _more_nodes_than(srcs, MAX_FUSED_NODES) or \
            _more_inputs_than(srcs, device.backend.max_kernel_inputs - 1):
        srcs = [realize(s, Reason(Break.SIZE_LIMIT, "kernel size or input-count limit"))
                for s in srcs]
    elif max(s.exp.depth for s in srcs) >= device.backend.max_fused_depth:
        srcs = [realize(s, Reason(Break.DEPTH_LIMIT, f"{device.platform} fuses at most "
                                  f"{device.backend.max_fused_depth} nested ops"))
                if s.exp.depth > 1 else s for s in srcs]
    out_dtype = _result_dtype(op, srcs, dtype)
    exp = AluExp(op, out_dtype, tuple(s.exp for s in srcs), arg)
    if all(s.exp.is_const for s in srcs):   # constants fold now, never become kernels
        exp = exp.simplify()
    elif all(s.exp.op in _KNOWN for s in srcs):   # scalar arguments too, into an argument
        exp = _fold_params(exp)
    pending = next((s.pending for s in srcs if s.pending is not None), None)
    if exp.loads:   # (a node without loads is index math or a constant, shared by all)
        exp.tag(provenance.current())
    return Lazy(shape, out_dtype, device, exp, pending, merge_origins(*srcs))


_KNOWN = (AluOp.Const, AluOp.Param)


def _fold_params(exp: AluExp) -> AluExp:
    """An op on values all known now (`2.0 * 3.0` from Python) computes here; with a
    scalar argument among them the result stays an argument, never kernel text."""
    consts = {s: AluExp.const(s.arg, s.dtype) for s in exp.src if s.op is AluOp.Param}
    folded = exp.substitute(consts).simplify()
    return AluExp.param(folded.arg, folded.dtype) if folded.is_const else exp


def is_constant(lz: Lazy) -> bool:
    """No buffers behind it (constants and scalar arguments): it can go to any device."""
    return lz.pending is None and lz._buf is None and lz.exp.loads == 0


def _more_nodes_than(srcs: Sequence[Lazy], limit: int) -> bool:
    """Exact (a walk of every expression) only when the per-path bound says it may be."""
    bound = sum(s.exp.tree_size + (s.pending.body.tree_size if s.pending else 0) for s in srcs)
    return bound > limit and sum(s.node_count() for s in srcs) > limit


def _more_inputs_than(srcs: Sequence[Lazy], limit: int) -> bool:
    """Kernel inputs: buffers, and scalar arguments (each a one-element input)."""
    bound = sum(s.exp.loads + s.exp.params +
                (s.pending.body.loads + s.pending.body.params if s.pending else 0)
                for s in srcs)
    return bound > limit and len(set().union(*(s.input_keys() for s in srcs))) > limit


def on_device(lz: Lazy, device: Device) -> Lazy:
    """A constant lazy value on another device (the expression holds no buffers)."""
    if not isinstance(lz, Lazy):
        return lz.on_device(device)
    return Lazy(lz.shape, lz.dtype, device, lz.exp, origin=lz.origin)


def _one_pending(srcs: list[Lazy]) -> list[Lazy]:
    """At most one distinct pending reduction can be fused into an epilogue."""
    first = None
    out = []
    for s in srcs:
        if s.pending is not None:
            if first is None:
                first = s.pending
            elif s.pending is not first:
                s = realize(s, Reason(Break.SECOND_EPILOGUE,
                                      "a second reduction meets this one's epilogue"))
        out.append(s)
    return out


def cast(lz: Lazy, dtype: DType) -> Lazy:
    return lz if dtype is lz.dtype else elementwise(AluOp.Cast, [lz], dtype)


# --- movement ---------------------------------------------------------------

def _push(lz: Lazy, fn: Callable[[ShapeTracker], ShapeTracker], shape: tuple) -> Lazy:
    """Rewrite the tracker of every view leaf; the expression commutes with views."""
    mapping = {}
    for leaf in lz.exp.leaves(VIEW_LEAVES):
        if leaf.op is AluOp.GlobalView:
            buf, st = leaf.arg
            mapping[leaf] = AluExp.view(buf, fn(st), leaf.dtype)
        else:
            mapping[leaf] = AluExp.valid(fn(leaf.arg))
    return Lazy(shape, lz.dtype, lz.device, lz.exp.substitute(mapping), origin=lz.origin)


def broadcast(lz: Lazy, shape: tuple) -> Lazy:
    """expand without realizing first: for a caller that reads each copy only once
    (complex storage reads a part in one of its two lanes)."""
    return _push(lz, lambda st: st.expand(shape), tuple(shape))


def is_cheap(lz: Lazy) -> bool:
    """Small and free of transcendental ops, or computed from deferred folds alone (a row
    kernel computes it per value it writes: arithmetic, no memory): recomputing it per
    use costs little."""
    nodes = lz.exp.toposort()
    loads = [n for n in nodes if n.op in (AluOp.GlobalView, AluOp.GlobalIndex)]
    if lz.pending is None and loads and all(
            n.op is AluOp.GlobalView and isinstance(n.arg[0], Deferred) for n in loads):
        return len(nodes) <= MAX_FUSED_NODES // 4
    return len(nodes) <= _CHEAP_EXPAND_NODES and not any(n.op in _EXPENSIVE for n in nodes)


def share(lz: Lazy, reason: Reason) -> Lazy:
    """A value several equations use: a pending reduction the device can fold where it is
    used stays deferred (each kernel reading it folds its rows), anything else is stored."""
    p = lz.pending
    if p is not None and can_defer(lz.device, p):
        return defer(lz)
    return realize(lz, reason)


def movement(lz: Lazy, method: str, *args: Any) -> Lazy:
    """reshape/permute/expand/pad/shrink/flip/step, by ShapeTracker method name."""
    if lz.pending is not None and method in ("permute", "reshape"):
        return _move_pending(lz, method, args)
    refused = lz.pending is not None and method == "expand" and \
        refusal(lz.device, lz.pending)
    if lz.pending is not None and method == "expand" and not refused:
        lz = defer(lz)   # folded where it is used, when the consumer can hold the rows
    elif lz.pending is not None:
        kind = Break.REDUCE_THEN_BROADCAST if method == "expand" else Break.REDUCE_THEN_MOVE
        lz = realize(lz, Reason(kind, f"end of a reduction's epilogue ({method} follows)" +
                                (f"; not folded where it is used: {refused}"
                                 if lz.device.backend.max_row_length else "")))
    probe = getattr(ShapeTracker.contiguous(lz.shape), method)(*args)
    if method == "expand" and probe.size > lz.size and not is_cheap(lz):
        lz = realize(lz, Reason(Break.EXPENSIVE_BROADCAST,
                                "broadcast into a wider op (recomputing it per copy would "
                                "multiply work)"))
    out = _push(lz, lambda st: getattr(st, method)(*args), probe.shape)
    if method == "pad" and lz.exp.op is not AluOp.GlobalView:
        # a bare load reads 0 in the padding; any other expression must be masked
        out.exp = AluExp.valid(probe).where(out.exp, AluExp.const(0, lz.dtype))
    return out


def _move_pending(lz: Lazy, method: str, args: tuple) -> Lazy:
    """Permute/reshape only the output dims of a pending reduction: move the body's
    leading dims and the epilogue alike, so the kernel writes the new layout."""
    p = lz.pending
    nout, nred = len(p.out_shape), len(p.red_shape)
    if method == "permute":
        (axes,) = args
        body_args = (tuple(axes) + tuple(range(nout, nout + nred)),)
    else:
        (shape,) = args
        body_args = (tuple(shape) + p.red_shape,)
    body_shape = p.out_shape + p.red_shape
    body = _push(Lazy(body_shape, lz.dtype, lz.device, p.body),
                 lambda st: getattr(st, method)(*body_args), ())
    epi = _push(Lazy(lz.shape, lz.dtype, lz.device, lz.exp), lambda st: getattr(st, method)(*args),
                ())
    out_shape = getattr(ShapeTracker.contiguous(lz.shape), method)(*args).shape
    pending = Pending(p.op, body.exp, out_shape, p.red_shape, p.origin)
    return Lazy(out_shape, lz.dtype, lz.device, epi.exp, pending, lz.origin)


# --- reductions -------------------------------------------------------------

def reduce(lz: Lazy, op: AluOp, axes: Sequence[int]) -> Lazy:
    """Fold `axes` with op (Add/Mul/Max/Min); the result is pending until realized."""
    axes = sorted(set(axes))
    keep = [d for d in range(len(lz.shape)) if d not in axes]
    out_shape = tuple(lz.shape[d] for d in keep)
    red_shape = tuple(lz.shape[d] for d in axes)
    if not axes:
        return lz
    if math.prod(red_shape) == 0:
        return full(out_shape, reduce_identity(op, lz.dtype), lz.dtype, lz.device)
    if lz.pending is not None:
        lz = realize(lz, Reason(Break.TWO_REDUCTIONS,
                                "end of a reduction's epilogue (another reduction follows)"))
    body = movement(lz, "permute", keep + axes) if keep + axes != list(range(len(lz.shape))) else lz
    pending = Pending(op, body.exp, out_shape, red_shape, provenance.current())
    return Lazy(out_shape, lz.dtype, lz.device, acc_variable(lz.dtype), pending, lz.origin)
