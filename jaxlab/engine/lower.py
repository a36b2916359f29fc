"""Lowering: a Lazy array becomes one Kernel over numbered input slots.

Each GlobalView leaf turns into a load at the index its tracker computes from
the flat output index `gidx` (and the reduction index `ridx`), guarded by the
tracker's validity; then the whole expression is simplified.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from jaxlab import events
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy
from jaxlab.engine.scalars import scalar_buffer
from jaxlab.ir import provenance
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, RIDX, Kernel, KernelPipeline, Reduction
from jaxlab.ir.provenance import KernelOrigins
from jaxlab.ir.simplify import counting_rules


class _Slots:
    """Input buffers in first-use order; the same buffer always gets the same slot."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self._index: dict[int, int] = {}

    def slot(self, buf: Buffer) -> int:
        if id(buf) not in self._index:
            self._index[id(buf)] = len(self.buffers)
            self.buffers.append(buf)
        return self._index[id(buf)]


def _lower_exp(exp: AluExp, parts: Sequence[tuple[AluExp, int]], slots: _Slots,
               device: Device) -> AluExp:
    mapping: dict[AluExp, AluExp] = {}
    zero_index = AluExp.const(0, DType.int32)
    for node in exp.toposort():
        if node.op is AluOp.Param:   # a scalar argument: a one-element input
            buf = scalar_buffer(device, node.arg, node.dtype)
            mapping[node] = AluExp.load(slots.slot(buf), zero_index, node.dtype)
        elif node.op is AluOp.GlobalView:
            buf, st = node.arg
            index, valid = (e.simplify() for e in st.to_index(parts))
            if buf.size == 0 or (valid.is_const and not valid.arg):
                mapping[node] = AluExp.const(0, node.dtype)
            elif valid.is_const:
                mapping[node] = AluExp.load(slots.slot(buf), index, node.dtype)
            else:   # never read out of bounds, even where the value is discarded
                load = AluExp.load(slots.slot(buf), valid.where(index, zero_index), node.dtype)
                mapping[node] = valid.where(load, AluExp.const(0, node.dtype))
        elif node.op is AluOp.Valid:
            mapping[node] = node.arg.to_index(parts)[1]
    lowered = exp.substitute(mapping)
    gathers: dict[AluExp, AluExp] = {}
    for n in lowered.toposort():   # inner gathers first: an index may read another gather
        if n.op is AluOp.GlobalIndex and isinstance(n.arg, Buffer):
            index = n.src[0].substitute(gathers) if gathers else n.src[0]
            gathers[n] = AluExp.load(slots.slot(n.arg), index, n.dtype)
    return lowered.substitute(gathers) if gathers else lowered


def lower(lz: Lazy) -> tuple[Kernel, list[Buffer]]:
    """The kernel that computes `lz`, and its input buffers by slot; the kernel's
    `origins` say which equations each of its nodes came from."""
    with provenance.lineage(lambda n: n.origins) as found, counting_rules() as fired:
        raw, buffers = _lower(lz)
        kernel = _simplified(raw)
    roots = [kernel.exp] + ([kernel.reduction.epilogue] if kernel.reduction else [])
    nodes = {n: found.of(n) for r in roots for n in r.toposort() if n.src}
    fold = frozenset([lz.pending.origin]) if lz.pending and lz.pending.origin else frozenset()
    origins = KernelOrigins({n: o for n, o in nodes.items() if o}, fold)
    pipeline = KernelPipeline(raw.text(), tuple(sorted(fired.items(), key=lambda kv: -kv[1]))) \
        if events.listening() else None   # (the lab shows it; printing costs)
    return dataclasses.replace(kernel, origins=origins, pipeline=pipeline), buffers


def _simplified(raw: Kernel) -> Kernel:
    """The kernel with its expressions simplified."""
    red = raw.reduction
    return dataclasses.replace(
        raw, exp=raw.exp.simplify(),
        reduction=dataclasses.replace(red, epilogue=red.epilogue.simplify()) if red else None)


def _lower(lz: Lazy) -> tuple[Kernel, list[Buffer]]:
    slots = _Slots()
    gidx = AluExp.special(GIDX, lz.size)
    out_parts = [(gidx, len(lz.shape))]
    if lz.pending is None:
        exp = _lower_exp(lz.exp, out_parts, slots, lz.device)
        kernel_args = dict(exp=exp)
    else:
        p = lz.pending
        red_size = math.prod(p.red_shape)
        ridx = AluExp.special(RIDX, red_size)
        body = _lower_exp(p.body, out_parts + [(ridx, len(p.red_shape))], slots, lz.device)
        epilogue = _lower_exp(lz.exp, out_parts, slots, lz.device)
        kernel_args = dict(exp=body, reduction=Reduction(p.op, red_size, epilogue),
                           reduce_shape=p.red_shape)
    inputs = tuple((b.dtype, b.size) for b in slots.buffers)
    # size-1 dims do not change the loop nest: leave them out of the kernel's shape
    shape = tuple(d for d in lz.shape if d != 1)
    if "reduce_shape" in kernel_args:
        kernel_args["reduce_shape"] = tuple(d for d in kernel_args["reduce_shape"] if d != 1)
    return Kernel(shape=shape, inputs=inputs, **kernel_args), slots.buffers
