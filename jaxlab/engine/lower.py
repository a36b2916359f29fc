"""Lowering: a Lazy array becomes one Kernel over numbered input slots.

Each GlobalView leaf turns into a load at the index its tracker computes from
the flat output index `gidx` (and the reduction index `ridx`), guarded by the
tracker's validity; then the whole expression is simplified.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

from jaxlab import events
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.deferred import Deferred, shared_operand, strided_row
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy
from jaxlab.engine.scalars import scalar_buffer
from jaxlab.ir import provenance
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import (GIDX, RIDX, ROW, Kernel, KernelPipeline, Reduction, RowFold,
                              acc_variable)
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
               device: Device, folds: Optional["_Folds"] = None) -> AluExp:
    mapping: dict[AluExp, AluExp] = {}
    zero_index = AluExp.const(0, DType.int32)
    for node in exp.toposort():
        if node.op is AluOp.Param:   # a scalar argument: a one-element input
            buf = scalar_buffer(device, node.arg, node.dtype)
            mapping[node] = AluExp.load(slots.slot(buf), zero_index, node.dtype)
        elif node.op is AluOp.GlobalView:
            buf, st = node.arg
            if isinstance(buf, Deferred):
                folded = folds.value(buf, st, parts) if folds else None
                if folded is not None:
                    mapping[node] = folded
                    continue
                buf = buf.realize(folds.refusal if folds else _NO_ROWS)
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


_NO_ROWS = "a reduction broadcast into a kernel that is not laid out in its rows"


class _Folds:
    """A row kernel's folds, found while lowering: each Deferred read at a position that
    depends only on the row (not the column) is folded over that row in the kernel."""

    def __init__(self, row_length: int, slots: _Slots, device: Device) -> None:
        self.row_length, self.slots, self.device = row_length, slots, device
        self.ridx = AluExp.special(RIDX, row_length)
        self.found: list[RowFold] = []
        self._names: dict[tuple, AluExp] = {}
        self.refusal = _NO_ROWS

    def value(self, src: Deferred, st: Any, parts: Sequence[tuple[AluExp, int]]
              ) -> Optional[AluExp]:
        """The Variable that reads src's fold for this row, or None where it cannot be
        folded here (it is then realized)."""
        if src.row_length != self.row_length:
            self.refusal = (f"a reduction over {src.row_length} values broadcast into a row "
                            f"kernel over rows of {self.row_length}")
            return None
        index, valid = (e.simplify() for e in st.to_index(parts))
        specials = {n.arg[0] for n in index.toposort() if n.op is AluOp.Special}
        if not (valid.is_const and valid.arg) or RIDX in specials:
            self.refusal = "a reduction read across the rows of the kernel that uses it"
            return None
        key = (src, index)
        if key not in self._names:
            body = _lower_exp(src.body, [(index, len(src.out_shape)),
                                         (self.ridx, len(src.red_shape))],
                              self.slots, self.device, self)
            self._names[key] = self.add(src.op, body)
        return self._names[key]

    def add(self, op: AluOp, body: AluExp) -> AluExp:
        """The Variable holding the fold of `body` with `op` (one fold for equal ones)."""
        same = next((f for f in self.found if f.op is op and f.body is body), None)
        if same is None:
            same = RowFold(f"fold{len(self.found)}", op, body)
            self.found.append(same)
        return AluExp.variable(same.name, body.dtype)


def lower(lz: Lazy) -> tuple[Kernel, list[Buffer]]:
    """The kernel that computes `lz`, and its input buffers by slot; the kernel's
    `origins` say which equations each of its nodes came from."""
    with provenance.lineage(lambda n: n.origins) as found, counting_rules() as fired:
        raw, buffers = _lower(lz)
        kernel = _simplified(raw)
    roots = kernel.roots()
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
        reduction=dataclasses.replace(red, epilogue=red.epilogue.simplify()) if red else None,
        folds=tuple(dataclasses.replace(f, body=f.body.simplify()) for f in raw.folds))


def _lower(lz: Lazy) -> tuple[Kernel, list[Buffer]]:
    rows = _row_kernel(lz)
    if rows is not None:
        return rows
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


def _row_kernel(lz: Lazy) -> Optional[tuple[Kernel, list[Buffer]]]:
    """`lz` as a row kernel, where it reads Deferred reductions over rows its own layout
    has (its trailing dims, or the reduction it folds itself) and its backend holds
    them: one workgroup per row folds them all and writes the row's outputs."""
    roots = [lz.exp] + ([lz.pending.body] if lz.pending else [])
    sources = [n.arg[0] for r in roots for n in r.toposort()
               if n.op is AluOp.GlobalView and isinstance(n.arg[0], Deferred)]
    backend = lz.device.backend
    if not sources or lz.dtype not in backend.row_dtypes:
        return None
    n = sources[0].row_length
    if lz.pending is not None:   # (a contraction keeps its own kernel: deferred.py)
        if math.prod(lz.pending.red_shape) != n or shared_operand(lz.pending) or \
                (not backend.strided_rows and strided_row(lz.pending)):
            return None
        rows, out_dims = lz.size, len(lz.shape)
    elif all(src.size == lz.size for src in sources):   # a value per row of the folds
        rows, out_dims = lz.size, len(lz.shape)
    else:
        trailing = next((k for k in range(1, len(lz.shape) + 1)
                         if math.prod(lz.shape[-k:]) == n), None)
        if trailing is None:
            return None
        rows, out_dims = lz.size // n, len(lz.shape) - trailing
    slots = _Slots()
    folds = _Folds(n, slots, lz.device)
    row = AluExp.special(ROW, rows)
    if lz.pending is None:
        exp = _lower_exp(lz.exp, [(row, out_dims), (folds.ridx, len(lz.shape) - out_dims)],
                         slots, lz.device, folds)
    else:
        p = lz.pending
        body = _lower_exp(p.body, [(row, out_dims), (folds.ridx, len(p.red_shape))], slots,
                          lz.device, folds)
        fold = folds.add(p.op, body)
        exp = _lower_exp(lz.exp, [(row, out_dims)], slots, lz.device, folds)
        exp = exp.substitute({acc_variable(body.dtype): fold})
    if not folds.found or any(f.body.dtype not in backend.row_dtypes for f in folds.found) \
            or len(slots.buffers) > backend.max_kernel_inputs:
        return None   # what is not folded is realized then: the kernel is an ordinary one
    inputs = tuple((b.dtype, b.size) for b in slots.buffers)
    return Kernel(shape=tuple(d for d in lz.shape if d != 1), inputs=inputs, exp=exp,
                  folds=tuple(folds.found), rows=rows, row_length=n), slots.buffers
