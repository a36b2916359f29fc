"""The wasm device: kernels compiled to WebAssembly and run by wasmtime.

tune.py plans a kernel's loops (analysis.py: its indices over row, col, ridx),
codegen.py writes the loops as WAT and scope.py the values inside them, with
optable.py's text per op and mathlib.py's math functions (none of these needs
wasmtime); memory.py is the one linear memory every buffer lives in, and
runtime.py the Backend that compiles, caches and calls modules. wasmtime is imported only when the device starts, so a
machine without it simply has no wasm device.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxlab.backends.wasm.runtime import WasmBackend


def create() -> "WasmBackend":
    from jaxlab.backends.wasm.runtime import WasmBackend
    return WasmBackend()
