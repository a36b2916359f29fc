"""One Wasm linear memory for every buffer of the wasm device.

Handles are byte offsets into the memory, so growing it never invalidates a
live array (a pointer into host memory would). The memory is a shared one
(the Wasm threads proposal): every kernel instance lives in a store of its
own (runtime.py) and imports it, and its reservation never moves.

Blocks come in size classes (multiples of 64 bytes up to 1 KiB, then four
classes per power of two, so at most 25% is wasted). A freed block merges
with its free neighbours; a free span that reaches the top of the used region
lowers the top instead of waiting in a list. Pages above the top stay
committed up to RETAIN_BYTES (a loop that frees and allocates big arrays
does not fault them in again each step); beyond that they go back to the
operating system, their addresses still reserved. An allocation takes a free
span of the smallest size class that fits, splitting off the rest, and only
then grows the used region.

One lock guards the allocator. `free` runs in `__del__` on any thread, even
inside `allocate` on the same thread (a garbage collection there): it never
waits for the lock, and when it cannot take it the offset waits in a list
that the next holder of the lock drains.
"""
from __future__ import annotations

import bisect
import ctypes
import mmap
import sys
import threading

import numpy as np
import wasmtime

from jaxlab.backends.wasm.codegen import MEMORY_PAGES
from jaxlab.ir.dtypes import DType

ALIGN = 64                 # every block starts on a cache line (and a v128 boundary)
PAGE = 65536               # Wasm page size
MAX_BYTES = 1 << 32        # memory32 addresses
GUARD = 64                 # bytes kept readable past the last block and before the first
RETAIN_BYTES = 64 << 20    # memory above the used region kept committed for reuse
_NUMPY_DTYPES = {d: d.np for d in DType}   # a dict lookup, not DType.np's Python call


def size_class(nbytes: int) -> int:
    """The block size that serves a request of `nbytes`."""
    n = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
    if n <= 1024:
        return n
    quarter = 1 << (n.bit_length() - 3)   # a quarter of the power of two below n
    return -(-n // quarter) * quarter


def _floor_class(nbytes: int) -> int:
    """The largest size class not above `nbytes` (a multiple of ALIGN)."""
    if nbytes <= 1024:
        return nbytes
    quarter = 1 << (nbytes.bit_length() - 3)
    return nbytes // quarter * quarter


class LinearMemory:
    """The device memory: a wasmtime SharedMemory plus a coalescing allocator."""

    def __init__(self, engine: wasmtime.Engine, initial_pages: int = 16) -> None:
        self.memory = wasmtime.SharedMemory(engine, wasmtime.MemoryType(
            wasmtime.Limits(initial_pages, MEMORY_PAGES), shared=True))
        self._lock = threading.Lock()
        self._deferred: list[int] = []          # frees that found the lock taken
        self._top = GUARD                       # the first byte never handed out
        self._touched = GUARD                   # pages below this may be committed
        self._live: dict[int, int] = {}         # live offset -> its block size
        self._spans: dict[int, int] = {}        # free span start -> bytes (below _top)
        self._span_ends: dict[int, int] = {}    # free span end -> start
        self._bins: dict[int, set[int]] = {}    # floor size class -> span starts
        self._bin_keys: list[int] = []          # sorted keys of _bins
        self._live_bytes = 0
        self._span_bytes = 0                    # in free spans below the top
        self._peak_bytes = 0                    # the most live bytes at once
        self._bytes = -1
        self._u8 = np.zeros(0, np.uint8)
        self._bytes_view = memoryview(self._u8)
        self._refresh()

    # --- allocation ---------------------------------------------------------
    def allocate(self, nbytes: int) -> int:
        # size_class inlined for small blocks: this runs on every dispatch
        cls = max(ALIGN, (nbytes + ALIGN - 1) & -ALIGN) if nbytes <= 1024 else size_class(nbytes)
        with self._lock:
            if self._deferred:
                self._drain()
            offset = self._take_span(cls) if self._bin_keys else None
            if offset is None:
                offset = self._top
                end = offset + cls
                if end + GUARD > self._bytes:
                    self._ensure(end + GUARD)
                self._top = end
                if end + GUARD > self._touched:
                    self._touched = end + GUARD
            self._live[offset] = cls
            live = self._live_bytes = self._live_bytes + cls
            if live > self._peak_bytes:
                self._peak_bytes = live
        return offset

    def free(self, offset: int) -> None:
        if not self._lock.acquire(blocking=False):
            self._deferred.append(offset)   # list.append is atomic: no lock needed
            return
        try:
            self._release(offset)
            if self._deferred:
                self._drain()
        finally:
            self._lock.release()

    def stats(self) -> dict[str, int]:
        """Live bytes, pooled bytes (free and kept for reuse: spans below the top and
        committed pages above it), the peak of live bytes, and the memory's size."""
        with self._lock:
            self._drain()
            above = max(0, self._touched - self._top - GUARD)
            return {"live_bytes": self._live_bytes, "pooled_bytes": self._span_bytes + above,
                    "peak_bytes": self._peak_bytes, "memory_bytes": self._bytes,
                    "used_top": self._top}

    @property
    def size(self) -> int:
        """Bytes of linear memory now."""
        return self._bytes

    def _drain(self) -> None:
        while self._deferred:
            self._release(self._deferred.pop())

    def _release(self, offset: int) -> None:
        size = self._live.pop(offset)
        self._live_bytes -= size
        start, end = offset, offset + size
        if end == self._top and start not in self._span_ends and \
                self._touched <= start + GUARD + RETAIN_BYTES:
            self._top = start   # the common case: the newest block, nothing free below it
            return
        below = self._span_ends.get(start)
        if below is not None:
            start = below
            self._drop_span(below)
        if end in self._spans:
            above = end
            end += self._spans[above]
            self._drop_span(above)
        if end != self._top:
            self._add_span(start, end - start)
            return
        self._top = start
        keep = self._top + GUARD + RETAIN_BYTES
        if self._touched > keep:
            _give_back_pages(self._base(), keep, self._touched)
            self._touched = keep

    def _take_span(self, cls: int) -> int | None:
        """The start of a free span of at least `cls` bytes (its rest stays free)."""
        i = bisect.bisect_left(self._bin_keys, cls)
        if i == len(self._bin_keys):
            return None
        start = next(iter(self._bins[self._bin_keys[i]]))
        size = self._spans[start]
        self._drop_span(start)
        if size > cls:
            self._add_span(start + cls, size - cls)
        return start

    def _add_span(self, start: int, size: int) -> None:
        self._spans[start] = size
        self._span_ends[start + size] = start
        self._span_bytes += size
        key = _floor_class(size)
        if key not in self._bins:
            self._bins[key] = set()
            bisect.insort(self._bin_keys, key)
        self._bins[key].add(start)

    def _drop_span(self, start: int) -> None:
        size = self._spans.pop(start)
        del self._span_ends[start + size]
        self._span_bytes -= size
        key = _floor_class(size)
        starts = self._bins[key]
        starts.discard(start)
        if not starts:
            del self._bins[key]
            self._bin_keys.remove(key)

    def _ensure(self, end: int) -> None:
        if end <= self._bytes:
            return
        if end > MAX_BYTES:
            raise MemoryError(f"wasm device: {end} bytes exceed the 4 GiB of a 32-bit memory")
        have = self._bytes // PAGE
        # at least double, so that n allocations cost O(log n) grows
        want = min(max(-(-end // PAGE), 2 * have), MAX_BYTES // PAGE)
        self.memory.grow(want - have)
        self._refresh()

    def _base(self) -> int:
        return ctypes.addressof(self.memory.data_ptr().contents)

    def _refresh(self) -> None:
        self._bytes = self.memory.data_len()
        raw = (ctypes.c_ubyte * self._bytes).from_address(self._base())
        self._u8 = np.frombuffer(raw, np.uint8)
        self._bytes_view = memoryview(self._u8)   # what NumPy reads fastest from

    def define(self, linker: wasmtime.Linker, store: wasmtime.Store) -> None:
        """Make the memory the "env" "memory" import of modules linked in `store`."""
        # wasmtime-py 50's SharedMemory._as_extern wraps its pointer once too often
        # (a ctypes TypeError), so the extern is built here from the same parts.
        from wasmtime import _ffi as ffi
        ext = ffi.wasmtime_extern_t(ffi.WASMTIME_EXTERN_SHAREDMEMORY,
                                    ffi.wasmtime_extern_union(sharedmemory=self.memory.ptr()))
        module, name = b"env", b"memory"
        error = ffi.wasmtime_linker_define(linker.ptr(), store._context(),
                                           ctypes.create_string_buffer(module), len(module),
                                           ctypes.create_string_buffer(name), len(name),
                                           ctypes.byref(ext))
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)

    # --- NumPy views (kernels never grow the memory: only _ensure does) ------
    def view(self, offset: int, dtype: DType, count: int) -> np.ndarray:
        """Zero-copy: `count` elements of `dtype` at `offset`."""
        return self._u8[offset:offset + count * dtype.itemsize].view(dtype.np)

    def write(self, offset: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._u8[offset:offset + raw.size] = raw

    def read(self, offset: int, dtype: DType, count: int) -> np.ndarray:
        return self.view(offset, dtype, count).copy()

    def read_array(self, offset: int, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
        """A copy of the array of `shape` at `offset`, made in one step (a read-back)."""
        return np.ndarray(shape, _NUMPY_DTYPES[dtype], self._bytes_view, offset).copy()

    def copy(self, src: int, dst: int, nbytes: int) -> None:
        u8 = self._u8
        u8[dst:dst + nbytes] = u8[src:src + nbytes]


def _madvise() -> object:
    """libc's madvise where freed pages can be dropped (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return fn


_MADVISE = _madvise()
_MADV_DONTNEED = 4


def _give_back_pages(base: int, start: int, end: int) -> None:
    """Drop the whole pages of [start, end): they read as zeros when touched again,
    and their memory goes back to the system meanwhile."""
    lo = -(-(base + start) // mmap.PAGESIZE) * mmap.PAGESIZE
    hi = (base + end) // mmap.PAGESIZE * mmap.PAGESIZE
    if _MADVISE is not None and hi > lo:
        _MADVISE(lo, hi - lo, _MADV_DONTNEED)
