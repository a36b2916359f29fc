"""The one place kernels and routines run: cache, dispatch, time, emit events."""
from __future__ import annotations

import contextlib
import math
import time
from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from jaxlab import events, state
from jaxlab.backends.base import Backend, Executable
from jaxlab.engine import limits
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.fusion import Reason, Unfused, unfused
from jaxlab.engine.lazy import Lazy, from_buffer
from jaxlab.engine.lower import lower
from jaxlab.ir.alu import AluOp
from jaxlab.ir import provenance
from jaxlab.ir.kernel import Kernel, Routine
from jaxlab.ir.provenance import FOLD, LineOrigins


def _prepare(device: Device, program: Kernel | Routine) -> tuple[Executable, bool, float]:
    exe = device.cache.get(program)
    if exe is not None:
        return exe, True, 0.0
    t0 = time.perf_counter()
    backend = device.backend
    if isinstance(program, Kernel):
        limits.check_kernel_dtypes(device, program)
    else:
        limits.check_routine_dtypes(device, program)
    exe = backend.prepare_kernel(program) if isinstance(program, Kernel) \
        else backend.prepare_routine(program)
    exe.compile_ms = exe.compile_ms or (time.perf_counter() - t0) * 1e3
    device.cache[program] = exe
    return exe, False, exe.compile_ms


@contextlib.contextmanager
def _tracing(kernel: Kernel) -> Iterator[Callable[[Executable], None]]:
    """Inside, preparing `kernel` traces the tuned nodes each generated line computes back
    to the kernel's own nodes (tuning rewrites them: upcasts, unrolls, contraction
    indices); the callable yielded then sets an executable's `line_marks`."""
    roots = kernel.roots()
    own = {n for r in roots for n in r.toposort() if n.src}
    with provenance.lineage(lambda n: frozenset([n]) if n in own else frozenset()) as found:
        def mark(exe: Executable) -> None:
            exe.line_marks = tuple(
                frozenset().union(*(frozenset([m]) if m == FOLD else found.of(m) for m in marks))
                for marks in exe.traced_lines)
        yield mark


def _prepare_traced(device: Device, program: Kernel | Routine) -> tuple[Executable, bool, float]:
    """_prepare, with each generated line traced to the kernel's nodes when it compiles."""
    if not isinstance(program, Kernel):
        return _prepare(device, program)
    with _tracing(program) as mark:
        exe, hit, compile_ms = _prepare(device, program)
        if not hit:
            mark(exe)
    return exe, hit, compile_ms


def prepare_traced(backend: Backend, kernel: Kernel,
                   overrides: Optional[dict] = None) -> Executable:
    """backend.prepare_kernel(kernel, overrides), its generated lines traced (the lab's
    recompile with other tuning knobs)."""
    with _tracing(kernel) as mark:
        exe = backend.prepare_kernel(kernel, overrides)
        mark(exe)
    return exe


def _line_origins(program: Kernel | Routine, exe: Executable) -> Optional[LineOrigins]:
    if not isinstance(program, Kernel) or program.origins is None or not exe.line_marks:
        return None
    return LineOrigins(exe.line_marks, program.origins)


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
        reason: str | Unfused = "", origin: tuple = ()) -> list[Buffer]:
    """Prepare (or fetch from cache) and dispatch; returns the output buffers. `reason`
    (why the result is stored) becomes the fuser's Unfused record, with `origin`."""
    reason = reason if isinstance(reason, Unfused) else unfused(reason, origin)
    exe, hit, compile_ms = _prepare_traced(device, program)
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
        flops=program.flops() if is_kernel else (exe.flops or program.flops()), bytes=nbytes,
        cache_hit=hit, key=program.key, reason=str(reason),
        pipeline=program.pipeline if is_kernel else None,
        unfused=reason if isinstance(reason, Unfused) else None,
        equations=[o.equation for o in origin],
        origins=list(origin), line_origins=_line_origins(program, exe),
    )


def realize_lazy(lz: Lazy, reason: str | Reason) -> Lazy:
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

