"""Complex arrays as pairs of real lazy arrays over interleaved real storage.

A complex array of shape S is stored as one real buffer of shape S + (2,):
(re, im) interleaved, exactly NumPy's complex64 layout, so uploads and reads
are plain byte copies (a read is `.view(complex64)`). At the lowering level a
`ComplexLazy` holds the two parts as real `Lazy` arrays: complex arithmetic is
real arithmetic on the parts, which fuses like any elementwise work, and the
renderers (WAT, WGSL) never see a complex type.

Two views of one value, each built from the other when asked:
- `re`, `im`: real expressions (of shape S) -- what elementwise rules use;
- `pair`: a real Lazy of shape S + (2,) -- what realization, reductions and
  gathers use. Realizing writes the pair in ONE kernel: lane 0 of the last
  axis computes the real expression, lane 1 the imaginary one. A reduction
  of the pair (sum, matmul) is one kernel that folds both lanes at once.
"""
from __future__ import annotations

import math
import threading
from typing import Optional, Sequence

import numpy as np

from jaxlab.engine import lazy as lz
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType, complex_dtype

_BUILDING = threading.Lock()   # one pair per value, even when two threads ask at once


class ComplexLazy:
    """A complex value for the lowering rules: parts (`re`, `im`) or the interleaved
    `pair`. It answers the questions the engine asks of a Lazy (buffer, pending,
    exp, realize) through its pair."""

    __slots__ = ("shape", "dtype", "device", "_parts", "_pair", "origin")

    def __init__(self, shape: tuple, dtype: DType, device: Device,
                 parts: Optional[tuple[Lazy, Lazy]] = None, pair: Optional[Lazy] = None,
                 origin: tuple = ()) -> None:
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self._parts, self._pair, self.origin = parts, pair, origin

    # --- the two views ---
    @property
    def re(self) -> Lazy:
        return self._part(0)

    @property
    def im(self) -> Lazy:
        return self._part(1)

    def _part(self, lane: int) -> Lazy:
        pair = self._pair
        if self._parts is not None and (pair is None or pair.buffer is None):
            return self._parts[lane]
        if pair.pending is not None:   # a reduction's lanes are read from its result
            pair = lz.realize(pair, "complex parts of a reduction are read")
        bounds = tuple((0, d) for d in self.shape) + ((lane, lane + 1),)
        return lz.movement(lz.movement(pair, "shrink", bounds), "reshape", self.shape)

    @property
    def pair(self) -> Lazy:
        if self._pair is None:
            with _BUILDING:
                if self._pair is None:
                    self._pair = interleave(*self._parts)
                    self._pair.origin = self.origin
        return self._pair

    # --- what the engine asks of any lazy value ---
    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def buffer(self) -> Optional[Buffer]:
        return self.pair.buffer

    @property
    def _buf(self) -> Optional[Buffer]:
        return self.pair._buf

    @property
    def pending(self):
        return self.pair.pending

    @property
    def exp(self):
        return self.pair.exp

    def realize(self, reason: str) -> "ComplexLazy":
        lz.realize(self.pair, reason)
        return self

    def on_device(self, device: Device) -> "ComplexLazy":
        return from_parts(lz.on_device(self.re, device), lz.on_device(self.im, device))

    def to_numpy(self) -> np.ndarray:
        """The values as a NumPy complex array (the storage, viewed: no conversion)."""
        data = self.realize("its value is read").buffer.to_numpy()
        return data.view(self.dtype.np).reshape(self.shape)

    def __repr__(self) -> str:
        return f"ComplexLazy({self.dtype.short}{list(self.shape)} on {self.device})"


def is_complex(x) -> bool:
    return isinstance(x, ComplexLazy)


def from_parts(re: Lazy, im: Lazy) -> ComplexLazy:
    """The complex value re + i*im (parts of one real dtype and shape)."""
    if re.dtype is not im.dtype or re.shape != im.shape:
        raise TypeError(f"complex parts differ: {re} and {im}")
    return ComplexLazy(re.shape, complex_dtype(re.dtype), re.device, parts=(re, im),
                       origin=lz.merge_origins(re, im))


def from_pair(pair: Lazy, dtype: DType) -> ComplexLazy:
    """A complex value whose interleaved storage (shape S + (2,)) is `pair`."""
    return ComplexLazy(pair.shape[:-1], dtype, pair.device, pair=pair, origin=pair.origin)


def from_buffer(buf: Buffer, shape: Sequence[int], dtype: DType) -> ComplexLazy:
    """A complex array over a real buffer holding 2 * size interleaved parts."""
    return from_pair(lz.from_buffer(buf, tuple(shape) + (2,)), dtype)


def from_numpy(data: np.ndarray, dtype: DType, device: Device) -> ComplexLazy:
    """Upload NumPy complex data as its interleaved real parts (one byte copy)."""
    parts = np.ascontiguousarray(data, dtype.np).view(dtype.real_dtype.np)
    pair = lz.from_numpy(parts.reshape(np.shape(data) + (2,)), dtype.real_dtype, device)
    return from_pair(pair, dtype)


def full(shape: Sequence[int], value: complex, dtype: DType, device: Device) -> ComplexLazy:
    real = dtype.real_dtype
    return from_parts(lz.full(shape, value.real, real, device),
                      lz.full(shape, value.imag, real, device))


def scalar(value: complex, dtype: DType, device: Device) -> ComplexLazy:
    """A complex Python scalar operand: two kernel arguments, never kernel text."""
    real = dtype.real_dtype
    return from_parts(lz.scalar(value.real, real, device), lz.scalar(value.imag, real, device))


def interleave(re: Lazy, im: Lazy) -> Lazy:
    """The real array of shape S + (2,) with re in lane 0 and im in lane 1: one kernel,
    out = where(lane == 0, re, im) over the parts' expressions."""
    shape = re.shape + (2,)
    lanes = []
    for part in (re, im):
        if part.pending is not None:   # a partwise reduction: its value, then the lane
            part = lz.realize(part, "a complex part computed by a reduction")
        lanes.append(lz.broadcast(lz.movement(part, "reshape", re.shape + (1,)), shape))
    lane0 = lz.pad_mask(re.shape + (1,), ((0, 0),) * len(re.shape) + ((0, 1),), re.device)
    return lz.elementwise(AluOp.Where, [lane0] + lanes)
