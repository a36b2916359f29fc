"""Backends register here; each one that starts becomes a jaxlab device."""
from jaxlab.backends import wasm, webgpu
from jaxlab.backends.cpu import CpuBackend
from jaxlab.engine.devices import register_backend

register_backend("cpu", CpuBackend, priority=0)
register_backend("wasm", wasm.create, priority=10)   # the default CPU device (needs wasmtime)
# 20 on a hardware GPU, else 5 (lavapipe: below wasm); unavailable without an adapter
register_backend("webgpu", webgpu.create_backend, priority=webgpu.priority())
