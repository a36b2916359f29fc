"""Device memory handles and the pool that recycles them."""
from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

POOL_LIMIT_BYTES = 512 << 20   # free memory kept for reuse; older buffers beyond it go


@dataclass(eq=False, slots=True)
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


@functools.lru_cache(maxsize=1024)
def buckets(sizes: tuple[int, ...], cap: int) -> Optional[tuple[int, ...]]:
    """`bucket` of each size (a jit program's outputs: the same sizes every call), or
    None where one is over `cap`."""
    if any(n > cap for n in sizes):
        return None
    return tuple(bucket(n, cap) for n in sizes)


class BufferPool:
    """Freed wgpu buffers by capacity, the least recently freed dropped first."""

    def __init__(self, destroy: Callable[[Any], None], limit: int = POOL_LIMIT_BYTES) -> None:
        self._free: "OrderedDict[int, list[Any]]" = OrderedDict()
        self._bytes = 0
        self._destroy, self._limit = destroy, limit

    def take(self, capacity: int) -> Any:
        """A free buffer of exactly `capacity` bytes, or None."""
        return self.take_many((capacity,))[0]

    def take_many(self, capacities: Sequence[int]) -> list[Any]:
        """`take` of each capacity, in order (None where there is none). An emptied list
        stays: a jit call's outputs come back to it."""
        got = []
        free = self._free
        for capacity in capacities:
            bufs = free.get(capacity)
            if bufs:
                self._bytes -= capacity
                got.append(bufs.pop())
            else:
                got.append(None)
        return got

    def give(self, capacity: int, buffer: Any) -> None:
        bufs = self._free.get(capacity)
        if bufs is None:
            self._free[capacity] = [buffer]
        else:
            bufs.append(buffer)
            self._free.move_to_end(capacity)
        self._bytes += capacity
        if self._bytes > self._limit:
            self._trim()

    def _trim(self) -> None:
        """Destroy the least recently freed buffers until the pool is under its limit."""
        free = self._free
        while self._bytes > self._limit and free:
            size, bufs = next(iter(free.items()))
            if bufs:
                self._destroy(bufs.pop(0))
                self._bytes -= size
            if not bufs:
                del free[size]

    @property
    def bytes(self) -> int:
        """Bytes of the free buffers kept."""
        return self._bytes

    def clear(self) -> None:
        """Forget every buffer (their device is gone or going)."""
        self._free.clear()
        self._bytes = 0
