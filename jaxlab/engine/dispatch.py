"""The one place kernels and routines run: cache, dispatch, time, emit events."""
from __future__ import annotations

import time
from typing import Sequence

from jaxlab import events
from jaxlab.backends.base import Executable
from jaxlab.engine import lazy as lazy_mod
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy, from_buffer
from jaxlab.engine.lower import lower
from jaxlab.ir.kernel import Kernel, Routine


def _prepare(device: Device, program: Kernel | Routine) -> tuple[Executable, bool, float]:
    exe = device.cache.get(program)
    if exe is not None:
        return exe, True, 0.0
    t0 = time.perf_counter()
    backend = device.backend
    exe = backend.prepare_kernel(program) if isinstance(program, Kernel) \
        else backend.prepare_routine(program)
    compile_ms = exe.compile_ms or (time.perf_counter() - t0) * 1e3
    device.cache[program] = exe
    return exe, False, compile_ms


def run(device: Device, program: Kernel | Routine, inputs: Sequence[Buffer]) -> list[Buffer]:
    """Prepare (or fetch from cache) and dispatch; returns the output buffers."""
    exe, hit, compile_ms = _prepare(device, program)
    outs = ([Buffer(device, program.dtype, program.size)] if isinstance(program, Kernel)
            else [Buffer(device, d, _size(s)) for s, d in program.outputs])
    t0 = time.perf_counter()
    device_ms = device.backend.dispatch(exe, [b.handle for b in inputs], [b.handle for b in outs])
    dispatch_ms = (time.perf_counter() - t0) * 1e3
    if events.listening():
        events.emit(_event(device, program, exe, inputs, outs, hit, compile_ms, dispatch_ms,
                           device_ms))
    return outs


def _size(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _event(device, program, exe, inputs, outs, hit, compile_ms, dispatch_ms, device_ms):
    is_kernel = isinstance(program, Kernel)
    nbytes = sum(b.size * b.dtype.itemsize for b in list(inputs) + list(outs))
    return events.KernelEvent(
        name=program.name if is_kernel else f"{program.name}_{'_'.join(map(str, program.shape))}",
        backend=device.platform,
        kind="kernel" if is_kernel else "routine",
        input_shapes=[(b.size,) for b in inputs] if is_kernel else [s for s, _ in program.inputs],
        input_dtypes=[str(b.dtype) for b in inputs],
        output_shapes=[program.shape] if is_kernel else [s for s, _ in program.outputs],
        output_dtypes=[str(b.dtype) for b in outs],
        ir=program.text(), tuned_ir=exe.tuned_ir or program.text(), tuning=exe.tuning,
        source=exe.source, source_language=exe.language,
        compile_ms=compile_ms, dispatch_ms=dispatch_ms, device_ms=device_ms,
        flops=program.flops() if is_kernel else 0, bytes=nbytes, cache_hit=hit,
        key=program.key,
    )


def realize_lazy(lz: Lazy) -> Lazy:
    if lz.size == 0 or getattr(lz.device.backend, "shape_only", False):
        return from_buffer(Buffer(lz.device, lz.dtype, 0), lz.shape)
    kernel, inputs = lower(lz)
    return from_buffer(run(lz.device, kernel, inputs)[0], lz.shape)


lazy_mod.set_realizer(realize_lazy)
