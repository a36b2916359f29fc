"""One-element device buffers that carry scalar arguments (Param leaves) into kernels.

A Python scalar operand is a kernel input, not kernel text, so `x * float(i)` compiles
one kernel for every i. Recently used values keep their buffer (buffers are immutable),
so a loop that multiplies by the same constant uploads it once.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from jaxlab import state
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.ir.dtypes import DType

KEEP = 256   # scalar buffers kept per device

_buffers = state.scalar_buffers


def scalar_buffer(device: Device, value: Any, dtype: DType) -> Buffer:
    """A buffer holding `value` (already canonical for dtype) on device."""
    # repr: 0.0 and -0.0 differ, nan finds itself; the sign tells -nan from nan
    key = (dtype, repr(value), np.signbit(value))
    with _buffers.lock:
        kept = _buffers.kept.setdefault(id(device), OrderedDict())
        buf = kept.get(key)
        if buf is not None:
            kept.move_to_end(key)
            return buf
    buf = Buffer.from_numpy(device, np.array([value], dtype=dtype.np), dtype)
    with _buffers.lock:
        kept[key] = buf
        if len(kept) > KEEP:
            kept.popitem(last=False)
    return buf
