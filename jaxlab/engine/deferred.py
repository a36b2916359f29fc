"""Deferred reductions: a fold whose result is broadcast back over the values it folded
(softmax's max and sum of exp, a layer norm's mean and variance) need not be stored.

Where a backend holds whole rows in one workgroup (`Backend.max_row_length`), a pending
reduction broadcast into a wider op becomes a view of a `Deferred` source instead of a
stored value: a virtual buffer of the reduction's output shape that movement and
elementwise ops treat like any other. engine/lower.py decides when a kernel reading it
is lowered: a Deferred whose position depends only on the kernel's row becomes one of
the row kernel's folds (the row is read once, folded, and used by the epilogue);
otherwise it is realized as the reduction kernel it would have been.
"""
from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, Optional

from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.fusion import Break, Reason, unfused
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import acc_variable
from jaxlab.ir.provenance import current
from jaxlab.ir.shape import ShapeTracker

if TYPE_CHECKING:
    from jaxlab.engine.lazy import Lazy, Pending


class Deferred:
    """A reduction not yet run, read through views like a buffer of `out_shape`:
    fold `body` (shape out_shape + red_shape) over its trailing red_shape dims."""

    __slots__ = ("op", "body", "out_shape", "red_shape", "dtype", "device", "origin",
                 "consumer", "_buf", "_lock", "__weakref__")

    def __init__(self, op: AluOp, body: AluExp, out_shape: tuple, red_shape: tuple,
                 device: Device, origin: tuple) -> None:
        self.op, self.body, self.out_shape, self.red_shape = op, body, out_shape, red_shape
        self.dtype: DType = body.dtype
        self.device, self.origin = device, origin
        # the equation that broadcast it (a realization happens later, while lowering the
        # kernel that reads it: the fusion story names this one as what wanted it)
        self.consumer = current()
        self._buf: Optional[Buffer] = None
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return math.prod(self.out_shape)

    @property
    def row_length(self) -> int:
        return math.prod(self.red_shape)

    @property
    def name(self) -> str:
        return f"{self.op.name.lower()}{id(self) % 10000:04d}"

    def inputs(self) -> dict:
        """What a kernel that folds this reads: the body's buffers and scalar arguments."""
        from jaxlab.engine.lazy import Lazy   # lazy.py builds on this module
        return Lazy(self.out_shape + self.red_shape, self.dtype, self.device,
                    self.body)._inputs()

    def realize(self, why: str) -> Buffer:
        """The reduction computed into a buffer (once), for a kernel that cannot fold it."""
        with self._lock:
            if self._buf is None:
                from jaxlab.engine.dispatch import realize_lazy
                from jaxlab.engine.lazy import Lazy, Pending
                pending = Pending(self.op, self.body, self.out_shape, self.red_shape)
                lz = Lazy(self.out_shape, self.dtype, self.device, acc_variable(self.dtype),
                          pending, self.origin)
                self._buf = realize_lazy(lz, unfused(Reason(Break.REDUCE_THEN_BROADCAST, why),
                                                     self.origin, self.consumer)).buffer
        return self._buf


def can_defer(device: Device, pending: "Pending") -> bool:
    """Could a row kernel of this device fold this reduction?"""
    return not refusal(device, pending)


def refusal(device: Device, pending: "Pending") -> str:
    """Why a row kernel of this device cannot fold this reduction ("" where it can)."""
    backend, n = device.backend, math.prod(pending.red_shape)
    if not backend.max_row_length:
        return f"{device.platform} has no row kernels"
    if n > backend.max_row_length:
        return f"rows of {n} values are longer than one workgroup holds " \
               f"({backend.max_row_length})"
    if n < backend.min_row_length:
        return f"rows of {n} values would leave most of a workgroup idle (from " \
               f"{backend.min_row_length})"
    if pending.body.dtype not in backend.row_dtypes:
        return f"row kernels fold 32-bit values, not {pending.body.dtype.name}"
    if not backend.strided_rows and strided_row(pending):
        return f"its rows are read with a stride (down columns): {device.platform} row " \
               "kernels read rows that lie in a line"
    if shared_operand(pending):
        return "an operand is shared by several outputs (a contraction): its own kernel " \
               "reuses it"
    return "" if n else "an empty row"


def strided_row(pending: "Pending") -> bool:
    """Does the body read a row's consecutive values from memory that is not consecutive
    (a stride other than 0 or 1 along the innermost folded dim)?"""
    return any(node.arg[1].views[-1].strides[-1] not in (0, 1)
               for node in pending.body.toposort()
               if node.op is AluOp.GlobalView and not isinstance(node.arg[0], Deferred))


def shared_operand(pending: "Pending") -> bool:
    """Does the body read a value for several outputs (an operand of a matmul or conv,
    which a tiled kernel reuses; a row kernel would read it once per row)?"""
    spread = [i for i, d in enumerate(pending.out_shape) if d > 1]
    return any(node.arg[1].views[-1].strides[i] == 0 for node in pending.body.toposort()
               if node.op is AluOp.GlobalView and not isinstance(node.arg[0], Deferred)
               for i in spread)


def defer(lz: "Lazy") -> "Lazy":
    """`lz` (a pending reduction) with its fold read through a view of a Deferred."""
    from jaxlab.engine.lazy import Lazy
    p = lz.pending
    src = Deferred(p.op, p.body, p.out_shape, p.red_shape, lz.device, lz.origin)
    view = AluExp.view(src, ShapeTracker.contiguous(p.out_shape), src.dtype)
    exp = lz.exp.substitute({acc_variable(src.dtype): view})
    return Lazy(lz.shape, lz.dtype, lz.device, exp, origin=lz.origin)
