"""Buffer: device memory owned by Python's reference counting."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxlab.engine import limits
from jaxlab.engine.devices import Device
from jaxlab.ir.dtypes import DType


def storage(dtype: DType, size: int) -> tuple[DType, int]:
    """What holds `size` elements of dtype: a complex array is its real parts,
    interleaved (engine/complex.py); buffers and kernels are always real."""
    return (dtype.real_dtype, 2 * size) if dtype.is_complex else (dtype, size)


class Buffer:
    """`size` elements of `dtype` on `device`; freed when the last reference goes."""

    __slots__ = ("device", "dtype", "size", "handle", "__weakref__")

    def __init__(self, device: Device, dtype: DType, size: int) -> None:
        dtype, size = storage(dtype, size)
        if size * dtype.itemsize > device.backend.max_buffer_bytes or \
                size > device.backend.max_elements:
            limits.check_array(device, (size,), dtype)
        self.device, self.dtype, self.size = device, dtype, size
        # at least 4 bytes: zero-sized allocations are invalid on some backends
        self.handle = device.backend.allocate(max(4, size * dtype.itemsize))

    @classmethod
    def planned_many(cls, device: Device, specs: Sequence[tuple[DType, int, int]]) \
            -> list["Buffer"]:
        """A buffer of each (dtype, size, nbytes) whose size a compiled program checked
        already (its `nbytes` too), the memory taken in one backend call."""
        handles = device.backend.allocate_many([nbytes for _, _, nbytes in specs])
        bufs = []
        for (dtype, size, _), handle in zip(specs, handles):
            buf = cls.__new__(cls)
            buf.device, buf.dtype, buf.size, buf.handle = device, dtype, size, handle
            bufs.append(buf)
        return bufs

    @classmethod
    def placeholder(cls, device: Device, dtype: DType, size: int) -> "Buffer":
        """A buffer that will exist when a compiled program runs (no memory yet)."""
        buf = cls.__new__(cls)
        buf.device, (buf.dtype, buf.size), buf.handle = device, storage(dtype, size), None
        return buf

    @staticmethod
    def from_numpy(device: Device, data: np.ndarray, dtype: DType) -> "Buffer":
        buf = Buffer(device, dtype, data.size)
        if data.size:
            device.backend.write(buf.handle, np.ascontiguousarray(data, dtype=dtype.np))
        return buf

    def to_numpy(self) -> np.ndarray:
        if self.size == 0:
            return np.zeros(0, self.dtype.np)
        return self.device.backend.read(self.handle, self.dtype, self.size)

    @property
    def name(self) -> str:
        return f"buf{id(self) % 10000:04d}"

    def __del__(self) -> None:
        handle = getattr(self, "handle", None)
        if handle is not None:
            try:
                self.device.backend.free(handle)
            except Exception:  # interpreter shutdown: the device may be gone first
                pass
