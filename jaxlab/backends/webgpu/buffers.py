"""Device memory handles and the pool that recycles them."""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

POOL_LIMIT_BYTES = 512 << 20   # free memory kept for reuse; older buffers beyond it go


@dataclass(eq=False)
class GpuBuffer:
    """An engine allocation: `nbytes` inside a wgpu buffer of `capacity` bytes."""
    buffer: Any
    nbytes: int
    capacity: int
    generation: int          # which device (a lost device's buffers are dead)


def bucket(nbytes: int, cap: int) -> int:
    """Round a size up so that freed buffers fit later requests: 256 B steps up to
    64 KiB, then eighths of a power of two (at most 12.5% slack)."""
    n = max(4, nbytes)
    step = 256 if n <= 65536 else 1 << (n.bit_length() - 4)
    return min(cap, -(-n // step) * step)


class BufferPool:
    """Freed wgpu buffers by capacity, the least recently freed dropped first."""

    def __init__(self, destroy: Callable[[Any], None], limit: int = POOL_LIMIT_BYTES) -> None:
        self._free: "OrderedDict[int, list[Any]]" = OrderedDict()
        self._bytes = 0
        self._destroy, self._limit = destroy, limit

    def take(self, capacity: int) -> Any:
        """A free buffer of exactly `capacity` bytes, or None."""
        bufs = self._free.get(capacity)
        if not bufs:
            return None
        self._bytes -= capacity
        buf = bufs.pop()
        if not bufs:
            del self._free[capacity]
        return buf

    def give(self, capacity: int, buffer: Any) -> None:
        self._free.setdefault(capacity, []).append(buffer)
        self._free.move_to_end(capacity)
        self._bytes += capacity
        while self._bytes > self._limit and self._free:
            size, bufs = next(iter(self._free.items()))
            self._destroy(bufs.pop(0))
            self._bytes -= size
            if not bufs:
                del self._free[size]

    @property
    def bytes(self) -> int:
        """Bytes of the free buffers kept."""
        return self._bytes

    def clear(self) -> None:
        """Forget every buffer (their device is gone or going)."""
        self._free.clear()
        self._bytes = 0
