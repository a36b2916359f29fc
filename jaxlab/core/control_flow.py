"""cond, while and scan: primitives holding closed jaxprs (JAX's control flow).

Operands follow JAX's layout:
  cond   index, *operands                        branches=(jaxpr, ...)
  while  *cond_consts, *body_consts, *carry      cond_jaxpr, body_jaxpr, *_nconsts
  scan   *consts, *carry, *xs                    jaxpr, length, reverse, num_consts,
                                                 num_carry, unroll
Every jaxpr parameter is closed with no constants of its own (they are hoisted
into operands), so a rule sees all of a body's inputs as operands.

Evaluated eagerly (no jit), a loop runs its body step by step on realized
arrays: the carry is computed each step, never an unrolled expression. The
row of xs a scan step reads and the row of ys it writes are picked by an
index held in a device buffer, so every step runs the same kernels; the ys row is
copied into its preallocated stacked buffer in place. Under
jit, core/program_steps.py compiles the bodies once into sub-programs.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from jaxlab.array import wrap
from jaxlab.core.avals import ShapedArray
from jaxlab.core.jaxpr import ClosedJaxpr, eval_closed
from jaxlab.core.primitives import abstract_evals, lowerings, primitive, weak_results
from jaxlab.engine import complex as cx
from jaxlab.engine import dispatch
from jaxlab.engine import lazy as lz
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import default_device
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType

cond_p = primitive("cond", multiple_results=True)
while_p = primitive("while", multiple_results=True)
scan_p = primitive("scan", multiple_results=True)


# --- operand layout ------------------------------------------------------------

def split_scan(args: Sequence[Any], num_consts: int, num_carry: int) -> tuple[list, list, list]:
    return (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
            list(args[num_consts + num_carry:]))


def split_while(args: Sequence[Any], cond_nconsts: int, body_nconsts: int) \
        -> tuple[list, list, list]:
    return (list(args[:cond_nconsts]), list(args[cond_nconsts:cond_nconsts + body_nconsts]),
            list(args[cond_nconsts + body_nconsts:]))


# --- shapes --------------------------------------------------------------------

def _scan_avals(*avals: ShapedArray, jaxpr: ClosedJaxpr, length: int, num_carry: int,
                **_: Any) -> list[ShapedArray]:
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [ShapedArray((length,) + a.shape, a.dtype)
                                     for a in outs[num_carry:]]


def _while_avals(*avals: ShapedArray, body_jaxpr: ClosedJaxpr, **_: Any) -> list[ShapedArray]:
    return list(body_jaxpr.out_avals)


def _cond_avals(*avals: ShapedArray, branches: tuple) -> list[ShapedArray]:
    return list(branches[0].out_avals)


abstract_evals.update({scan_p: _scan_avals, while_p: _while_avals, cond_p: _cond_avals})


# --- weak types (JAX's: a result is weak where the body's output is; a branch
# result only where every branch's is) ---------------------------------------------

def _scan_weak(*, jaxpr: ClosedJaxpr, **_: Any) -> list[bool]:
    return [a.weak_type for a in jaxpr.out_avals]


def _while_weak(*, body_jaxpr: ClosedJaxpr, **_: Any) -> list[bool]:
    return [a.weak_type for a in body_jaxpr.out_avals]


def _cond_weak(*, branches: tuple) -> list[bool]:
    return [all(w) for w in zip(*([a.weak_type for a in b.out_avals] for b in branches))]


weak_results.update({scan_p: _scan_weak, while_p: _while_weak, cond_p: _cond_weak})


# --- rows of stacked arrays, picked by an index in a buffer --------------------

def row_index(counter: Lazy, length: int, reverse: bool) -> Lazy:
    """The row a scan step touches: the step counter, or length-1-counter."""
    if not reverse:
        return counter
    last = lz.full((), length - 1, DType.int32, counter.device)
    return lz.elementwise(AluOp.Sub, [last, counter])


def read_row(xs: Lazy, index: Lazy) -> Lazy:
    """xs[index] for a scalar int32 index array: a load that fuses into its consumers."""
    if cx.is_complex(xs):   # the row of the interleaved storage
        return cx.from_pair(read_row(xs.pair, index), xs.dtype)
    src = lz.realize(xs, "scanned over")
    row = int(np.prod(xs.shape[1:]))
    shape = xs.shape[1:]
    cols = lz.from_numpy(np.arange(row, dtype=np.int32).reshape(shape), DType.int32, xs.device) \
        if row > 1 else lz.full(shape, 0, DType.int32, xs.device)
    base = lz.movement(lz.movement(index, "reshape", (1,) * len(shape)), "expand", shape) \
        if shape else index
    scaled = lz.elementwise(AluOp.Mul, [base, lz.full(shape, row, DType.int32, xs.device)])
    flat = lz.elementwise(AluOp.Add, [scaled, cols])
    load = AluExp(AluOp.GlobalIndex, xs.dtype, (flat.exp,), src.buffer)
    return Lazy(shape, xs.dtype, xs.device, load, flat.pending)


def fresh_copy(x: Lazy) -> Lazy:
    """x in a buffer of its own (a kernel that loads it element by element)."""
    if cx.is_complex(x):   # a copy of the interleaved storage
        return cx.from_pair(fresh_copy(x.pair), x.dtype)
    from jaxlab.core.reductions import iota
    src = lz.realize(x, "copied")
    if x.size == 0:
        return src
    flat = lz.movement(iota((x.size,), 0, DType.int32, x.device), "reshape", x.shape)
    load = AluExp(AluOp.GlobalIndex, x.dtype, (flat.exp,), src.buffer)
    return lz.realize(Lazy(x.shape, x.dtype, x.device, load, flat.pending),
                      "a carry moved to another carry's place")


def stacked_buffers(avals: Sequence[ShapedArray], length: int, device: Any) -> list[Buffer]:
    """Preallocated stacked outputs of a scan: each step writes its row in place."""
    return [Buffer(device, a.dtype, length * int(np.prod(a.shape))) for a in avals]


def row_of(step: int, length: int, reverse: bool) -> int:
    return length - 1 - step if reverse else step


def scalar_int(value: int, device: Any) -> Lazy:
    """A realized int32 scalar (an upload: the kernels reading it stay the same)."""
    return lz.from_numpy(np.array(value, dtype=np.int32), DType.int32, device)


def read_scalar(x: Lazy) -> Any:
    """The host value of a 0-d array: one small read from the device."""
    return lz.realize(x, "control flow reads it on the host").buffer.to_numpy()[0]


# --- eager evaluation ------------------------------------------------------------

def _run(closed: ClosedJaxpr, args: Sequence[Lazy]) -> list[Lazy]:
    return [o._lazy for o in eval_closed(closed, [wrap(a) for a in args])]


def _settle(xs: Sequence[Lazy], why: str) -> list[Lazy]:
    return [lz.realize(x, why) for x in xs]


def _scan_eager(*args: Lazy, jaxpr: ClosedJaxpr, length: int, reverse: bool, num_consts: int,
                num_carry: int, unroll: int = 1) -> list[Lazy]:
    consts, carry, xs = split_scan(args, num_consts, num_carry)
    device = args[0].device if args else default_device()
    ys_avals = jaxpr.out_avals[num_carry:]
    ys = stacked_buffers(ys_avals, length, device)
    for step in range(length):
        row = row_of(step, length, reverse)
        index = scalar_int(row, device)
        outs = _run(jaxpr, consts + carry + [read_row(x, index) for x in xs])
        carry = _settle(outs[:num_carry], "loop carry")
        for acc, y, a in zip(ys, outs[num_carry:], ys_avals):
            dispatch.write_row(acc, row, lz.realize(lz.cast(y, a.dtype), "a row of a scan output")
                               .buffer)
    return carry + [lz.from_buffer(b, (length,) + a.shape, a.dtype) for b, a in zip(ys, ys_avals)]


def _while_eager(*args: Lazy, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                 cond_nconsts: int, body_nconsts: int) -> list[Lazy]:
    cconsts, bconsts, carry = split_while(args, cond_nconsts, body_nconsts)
    while read_scalar(_run(cond_jaxpr, cconsts + carry)[0]):
        carry = _settle(_run(body_jaxpr, bconsts + carry), "loop carry")
    return carry


def clamp_index(value: Any, n: int) -> int:
    return min(max(int(value), 0), n - 1)


def _cond_eager(index: Lazy, *operands: Lazy, branches: tuple) -> list[Lazy]:
    taken = branches[clamp_index(read_scalar(index), len(branches))]
    return _run(taken, operands)


lowerings.update({scan_p: _scan_eager, while_p: _while_eager, cond_p: _cond_eager})
