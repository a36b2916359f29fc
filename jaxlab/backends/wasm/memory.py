"""One Wasm linear memory for every buffer of the wasm device.

Handles are byte offsets into the memory, so growing it never invalidates a
live array (a pointer into host memory would). Blocks come in size classes
(multiples of 64 bytes up to 1 KiB, then four classes per power of two, so at
most 25% is wasted); a freed block goes on its class's free list and is
reused by the next allocation of that class. NumPy reads and writes through
a zero-copy view of the memory, taken again whenever the memory has grown.

A shared memory (the Wasm threads proposal) can be imported by instances in
several stores, so that several threads run kernels over the same buffers.
"""
from __future__ import annotations

import ctypes
from typing import Union

import numpy as np
import wasmtime

from jaxlab.backends.wasm.codegen import MEMORY_PAGES
from jaxlab.ir.dtypes import DType

ALIGN = 64                 # every block starts on a cache line (and a v128 boundary)
PAGE = 65536               # Wasm page size
MAX_BYTES = 1 << 32        # memory32 addresses
GUARD = 64                 # bytes kept readable past the last block and before the first


def size_class(nbytes: int) -> int:
    """The block size that serves a request of `nbytes`."""
    n = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
    if n <= 1024:
        return n
    quarter = 1 << (n.bit_length() - 3)   # a quarter of the power of two below n
    return -(-n // quarter) * quarter


class LinearMemory:
    """The device memory: a wasmtime Memory (or SharedMemory) plus a size-class allocator."""

    def __init__(self, engine: wasmtime.Engine, store: wasmtime.Store, shared: bool,
                 initial_pages: int = 16) -> None:
        self.store, self.shared = store, shared
        self.memory: Union[wasmtime.Memory, wasmtime.SharedMemory]
        if shared:
            self.memory = wasmtime.SharedMemory(engine, wasmtime.MemoryType(
                wasmtime.Limits(initial_pages, MEMORY_PAGES), shared=True))
        else:
            self.memory = wasmtime.Memory(store, wasmtime.MemoryType(
                wasmtime.Limits(initial_pages, None)))
        self._top = GUARD                       # bump pointer: the first never-used byte
        self._free: dict[int, list[int]] = {}   # size class -> offsets of free blocks
        self._class: dict[int, int] = {}        # live offset -> its size class
        self._bytes = -1
        self._u8 = np.zeros(0, np.uint8)
        self._refresh()

    # --- allocation ---------------------------------------------------------
    def allocate(self, nbytes: int) -> int:
        cls = size_class(nbytes)
        free = self._free.get(cls)
        offset = free.pop() if free else None
        if offset is None:
            offset = self._top
            self._ensure(offset + cls + GUARD)
            self._top = offset + cls
        self._class[offset] = cls
        return offset

    def free(self, offset: int) -> None:
        cls = self._class.pop(offset)
        self._free.setdefault(cls, []).append(offset)

    def live_bytes(self) -> int:
        return sum(self._class.values())

    @property
    def size(self) -> int:
        """Bytes of linear memory now."""
        return self._bytes

    def _ensure(self, end: int) -> None:
        if end <= self._bytes:
            return
        if end > MAX_BYTES:
            raise MemoryError(f"wasm device: {end} bytes exceed the 4 GiB of a 32-bit memory")
        have = self._bytes // PAGE
        # at least double, so that n allocations cost O(log n) grows
        want = min(max(-(-end // PAGE), 2 * have), MAX_BYTES // PAGE)
        if self.shared:
            self.memory.grow(want - have)
        else:
            self.memory.grow(self.store, want - have)
        self._refresh()

    def _refresh(self) -> None:
        if self.shared:
            self._bytes = self.memory.data_len()
            base = ctypes.addressof(self.memory.data_ptr().contents)
            raw = (ctypes.c_ubyte * self._bytes).from_address(base)
        else:
            self._bytes = self.memory.data_len(self.store)
            raw = self.memory.get_buffer_ptr(self.store, self._bytes)
        self._u8 = np.frombuffer(raw, np.uint8)

    def define(self, linker: wasmtime.Linker, store: wasmtime.Store) -> None:
        """Make the memory the "env" "memory" import of modules linked in `store`."""
        if not self.shared:
            linker.define(store, "env", "memory", self.memory)
            return
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
        """Zero-copy: `count` elements of `dtype` at `offset` (valid until the next grow)."""
        return self._u8[offset:offset + count * dtype.itemsize].view(dtype.np)

    def write(self, offset: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        self._u8[offset:offset + raw.size] = raw

    def read(self, offset: int, dtype: DType, count: int) -> np.ndarray:
        return self.view(offset, dtype, count).copy()
