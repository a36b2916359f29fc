"""The one place kernels and routines run: cache, dispatch, time, emit events."""
from __future__ import annotations

import contextlib
import math
import time
from typing import Iterator, Sequence

import numpy as np

from jaxlab import events, state
from jaxlab.backends.base import Executable
from jaxlab.engine import limits
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy, from_buffer
from jaxlab.engine.lower import lower
from jaxlab.ir.alu import AluOp
from jaxlab.ir.kernel import Kernel, Routine


def _prepare(device: Device, program: Kernel | Routine) -> tuple[Executable, bool, float]:
    exe = device.cache.get(program)
    if exe is not None:
        return exe, True, 0.0
    t0 = time.perf_counter()
    backend = device.backend
    if isinstance(program, Kernel):
        limits.check_kernel_dtypes(device, program)
    exe = backend.prepare_kernel(program) if isinstance(program, Kernel) \
        else backend.prepare_routine(program)
    exe.compile_ms = exe.compile_ms or (time.perf_counter() - t0) * 1e3
    device.cache[program] = exe
    return exe, False, exe.compile_ms


class Recorder:
    """While active, kernels are prepared and recorded instead of run (jit)."""

    def __init__(self) -> None:
        # (program, exe, inputs, outputs, reason, origin, cache hit, compile ms)
        self.steps: list[tuple] = []


@contextlib.contextmanager
def recording() -> Iterator[Recorder]:
    """Inside (in this context only), kernels are recorded into the Recorder."""
    with state.recorder.scoped(Recorder()) as rec:
        yield rec


def output_buffers(device: Device, program: Kernel | Routine, make=Buffer) -> list[Buffer]:
    if isinstance(program, Kernel):
        return [make(device, program.dtype, program.size)]
    return [make(device, d, math.prod(s)) for s, d in program.outputs]


def run(device: Device, program: Kernel | Routine, inputs: Sequence[Buffer],
        reason: str = "", origin: tuple = ()) -> list[Buffer]:
    """Prepare (or fetch from cache) and dispatch; returns the output buffers."""
    exe, hit, compile_ms = _prepare(device, program)
    rec = state.recorder.get()
    if rec is not None:
        outs = output_buffers(device, program, Buffer.placeholder)
        rec.steps.append((program, exe, list(inputs), outs, reason, origin, hit, compile_ms))
        return outs
    outs = output_buffers(device, program)
    t0 = time.perf_counter()
    device_ms = device.backend.dispatch(exe, [b.handle for b in inputs], [b.handle for b in outs])
    dispatch_ms = (time.perf_counter() - t0) * 1e3
    if events.listening():
        events.emit(make_event(device, program, exe, inputs, outs, hit, compile_ms, dispatch_ms,
                               device_ms, reason, origin))
    return outs


def write_row(dst: Buffer, row: int, src: Buffer) -> None:
    """Row `row` of `dst` (rows of `src`'s size) becomes `src`, in place: a scan writes
    each step's output into its preallocated stacked buffer, never rewriting the rest."""
    nbytes = src.size * src.dtype.itemsize
    dst.device.backend.copy(src.handle, 0, dst.handle, row * nbytes, nbytes)


def make_event(device, program, exe, inputs, outs, hit, compile_ms, dispatch_ms, device_ms,
               reason, origin) -> events.KernelEvent:
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
        flops=program.flops() if is_kernel else (exe.flops or program.flops()), bytes=nbytes, cache_hit=hit,
        key=program.key, reason=reason, equations=list(origin),
    )


def realize_lazy(lz: Lazy, reason: str) -> Lazy:
    if lz.size == 0 or getattr(lz.device.backend, "shape_only", False):
        return from_buffer(Buffer(lz.device, lz.dtype, lz.size), lz.shape)
    if lz.shape == () and lz.pending is None and lz.exp.op is AluOp.Param:
        # a scalar argument (a jit call's Python scalar): uploaded, no kernel
        data = np.array(lz.exp.arg, lz.dtype.np)
        return from_buffer(Buffer.from_numpy(lz.device, data, lz.dtype), lz.shape)
    limits.check_array(lz.device, lz.shape, lz.dtype)
    kernel, inputs = lower(lz)
    limits.check_kernel(lz.device, kernel)
    return from_buffer(run(lz.device, kernel, inputs, reason, lz.origin)[0], lz.shape)

