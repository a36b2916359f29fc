"""The wasm device: kernels compiled to WebAssembly and run by wasmtime.

codegen.py writes WAT from a kernel and tune.py's plan (no wasmtime needed),
mathlib.py holds the math functions kernels call, memory.py the one linear
memory every buffer lives in, runtime.py the Backend that compiles, caches
and calls modules. wasmtime is imported only when the device starts, so a
machine without it simply has no wasm device.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxlab.backends.wasm.runtime import WasmBackend


def create() -> "WasmBackend":
    from jaxlab.backends.wasm.runtime import WasmBackend
    return WasmBackend()
