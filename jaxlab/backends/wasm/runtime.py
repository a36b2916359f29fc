"""The wasm Backend: compile each kernel's WAT once, call it once per dispatch.

Every module imports the device's one linear memory, so a dispatch passes byte
offsets (the buffer handles) as i32 arguments and nothing is copied. Modules
are cached by their text, so two kernels that generate the same code share
one compiled module. Routines run with NumPy on zero-copy views of the memory.

wasmtime releases the GIL while Wasm runs, and a shared memory can be imported
by stores on several threads: a large kernel's outer loop is split into ranges
run at once by a store per thread (measured: about 1.5-1.9x on two cores).
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import wasmtime

from jaxlab.backends.base import Backend, Executable
from jaxlab.backends.numpy_routines import run_routine
from jaxlab.backends.wasm.analysis import AxisForm
from jaxlab.backends.wasm.codegen import generate
from jaxlab.backends.wasm.memory import GUARD, MAX_BYTES, LinearMemory
from jaxlab.backends.wasm.tune import Plan, tune
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine
from jaxlab.ir.printer import render


class WasmTrapError(RuntimeError):
    """A kernel trapped (out-of-bounds access, unreachable, out of fuel)."""

    def __init__(self, kernel: str, reason: str) -> None:
        super().__init__(f"wasm trap in kernel {kernel}: {reason}")
        self.kernel, self.reason = kernel, reason


@dataclass(frozen=True)
class CompiledKernel:
    name: str
    key: str                       # the module's cache key
    nargs: int                     # out, inputs, [scratch], lo, hi
    scratch_bytes: int             # per thread
    chunks: tuple[tuple[int, int], ...]   # [lo, hi) of the outer loop, one per thread
    call: Callable[..., None]      # the kernel in the calling thread's store


def _i32(offset: int) -> int:
    return offset - (1 << 32) if offset >= 1 << 31 else offset


def _caller(store: wasmtime.Store, func: wasmtime.Func, nargs: int) -> Callable[..., None]:
    """A call with `nargs` i32 arguments, straight through wasmtime's C API.

    Func.__call__ looks up the function type and converts each argument on every
    call (about 30 us); the argument array of a kernel is built once here instead
    (about 3 us a call). If wasmtime's private bindings move, use the public call.
    """
    try:
        from wasmtime import _ffi as ffi
        params = (ffi.wasmtime_val_t * nargs)()
        for p in params:
            p.kind = ffi.WASMTIME_I32
        slots = [p.of for p in params]   # views of the values; ctypes wraps to i32 itself
        context, fref, call = store._context(), ctypes.byref(func._func), ffi.wasmtime_func_call
        trap_type = ctypes.POINTER(ffi.wasm_trap_t)
    except (ImportError, AttributeError):
        return lambda *args: func(store, *(_i32(a) for a in args))

    trap = trap_type()   # wasmtime writes it only when the call traps
    trap_ref = ctypes.byref(trap)

    def run(*args: int, _owners=(store, func)) -> None:   # the context needs its store alive
        for slot, a in zip(slots, args):
            slot.i32 = a
        error = call(context, fref, params, nargs, None, 0, trap_ref)
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)
        if trap:
            raised = wasmtime.Trap._from_ptr(ctypes.cast(trap, trap_type))   # owns it now
            ctypes.memset(ctypes.addressof(trap), 0, ctypes.sizeof(trap))   # null again
            raise raised
    return run


class _Wasm:
    """The wasmtime objects of one device: an engine, the memory, and a store with its
    own instances for each thread that runs kernels (a store runs on one thread at a
    time; with a shared memory every store sees the same buffers)."""

    def __init__(self, fuel: bool, threads: int) -> None:
        config = wasmtime.Config()
        config.consume_fuel = fuel
        config.shared_memory = threads > 1
        self.engine = wasmtime.Engine(config)
        self.stores = [wasmtime.Store(self.engine) for _ in range(threads)]
        self.memory = LinearMemory(self.engine, self.stores[0], shared=threads > 1)
        self.linkers = [wasmtime.Linker(self.engine) for _ in range(threads)]
        for linker, store in zip(self.linkers, self.stores):
            self.memory.define(linker, store)
        self.modules: dict[str, wasmtime.Module] = {}
        self.users: dict[str, int] = {}   # executables sharing each module
        self.callers: list[dict[str, Callable[..., None]]] = [{} for _ in range(threads)]
        self.pool = ThreadPoolExecutor(threads - 1, "jaxlab-wasm") if threads > 1 else None
        weakref.finalize(self, _close, self.pool, self.modules, *self.linkers, *self.stores,
                         self.memory.memory, self.engine)

    def compile(self, key: str, wat: str, nargs: int) -> bool:
        """Compile once per text (and instantiate for the calling thread); returns
        whether the module was cached."""
        if key in self.modules:
            return True
        self.modules[key] = wasmtime.Module(self.engine, wat)
        self.caller(0, key, nargs)
        return False

    def release(self, key: str) -> None:
        """One executable of this module left the compile cache; the last one drops the
        module and its callers (an executable still held keeps its own caller)."""
        self.users[key] = self.users.get(key, 1) - 1
        if self.users[key] <= 0:
            self.users.pop(key)
            self.modules.pop(key, None)
            for callers in self.callers:
                callers.pop(key, None)

    def caller(self, thread: int, key: str, nargs: int) -> Callable[..., None]:
        """The kernel in `thread`'s store (instantiated there on first use)."""
        callers = self.callers[thread]
        if key not in callers:
            store = self.stores[thread]
            instance = self.linkers[thread].instantiate(store, self.modules[key])
            callers[key] = _caller(store, instance.exports(store)["kernel"], nargs)
        return callers[key]


MIN_THREAD_WORK = 1 << 17   # body evaluations below which one thread beats a hand-off
MAX_THREADS = 16            # by default: each thread has its own store and instances


class WasmBackend(Backend):
    name = "wasm"
    max_buffer_bytes = MAX_BYTES - 2 * GUARD
    buffer_limit_reason = "the 4 GiB of a 32-bit Wasm memory"

    def __init__(self, fuel: Optional[int] = None, threads: Optional[int] = None) -> None:
        """`fuel`: a budget of Wasm instructions per dispatch and thread (None: unlimited).
        `threads`: threads that share a large kernel (default: JAXLAB_WASM_THREADS or the
        CPUs this process may use, at most 16); 1 runs everything on the calling thread
        over an unshared memory."""
        self.fuel = fuel
        self.threads = max(1, threads or int(os.environ.get("JAXLAB_WASM_THREADS", 0))
                           or min(MAX_THREADS, _cpus()))
        self.min_thread_work = MIN_THREAD_WORK
        self._scratch: list[tuple[int, int]] = [(0, 0)] * self.threads   # (offset, bytes)

    @functools.cached_property
    def wasm(self) -> _Wasm:
        """Started on first use. wasmtime turns out-of-bounds accesses into traps with a
        signal handler installed when the first engine starts; a SIGSEGV handler installed
        after it (faulthandler, which pytest enables after importing conftest.py) would
        turn those traps into crashes. Starting late puts wasmtime's handler last."""
        return _Wasm(self.fuel is not None, self.threads)

    @property
    def memory(self) -> LinearMemory:
        return self.wasm.memory

    # --- memory -----------------------------------------------------------------
    def allocate(self, nbytes: int) -> int:
        return self.memory.allocate(nbytes)

    def free(self, handle: int) -> None:
        self.memory.free(handle)

    def write(self, handle: int, data) -> None:
        self.memory.write(handle, data)

    def read(self, handle: int, dtype: DType, count: int):
        return self.memory.read(handle, dtype, count)

    # --- programs ------------------------------------------------------------------
    def prepare_kernel(self, kernel: Kernel) -> Executable:
        t0 = time.perf_counter()
        plan, form = tune(kernel)
        wat = generate(kernel, plan, form, shared=self.threads > 1)
        t1 = time.perf_counter()
        key = hashlib.sha1(wat.text.encode()).hexdigest()
        nargs = 3 + len(kernel.inputs) + (wat.scratch_bytes > 0)
        hit = self.wasm.compile(key, wat.text, nargs)
        self.wasm.users[key] = self.wasm.users.get(key, 0) + 1
        compile_ms = (time.perf_counter() - t1) * 1e3
        work = kernel.size * max(1, form.steps)
        chunks = self._chunks(wat.split, work)
        tuning = plan.as_dict(form)
        tuning["threads"] = self._chunks_reason(wat.split, chunks, work)
        call = self.wasm.caller(0, key, nargs)
        return Executable(
            program=CompiledKernel(kernel.name, key, nargs, wat.scratch_bytes, tuple(chunks),
                                   call),
            source=wat.text, language="wat", tuning=tuning,
            tuned_ir=_tuned_ir(kernel, form, plan), compile_ms=compile_ms,
            extra={"module_cache_hit": hit, "codegen_ms": (t1 - t0) * 1e3})

    def prepare_routine(self, routine: Routine) -> Executable:
        return Executable(program=routine, language="text",
                          source=f"{routine.text()}\nNumPy ({routine.name}) on zero-copy "
                                 "views of the wasm linear memory")

    def release(self, exe: Executable) -> None:
        if isinstance(exe.program, CompiledKernel):
            self.wasm.release(exe.program.key)

    def launcher(self, exe: Executable) -> Callable[[Sequence[Any], Sequence[Any]], None]:
        """The common small kernel straight to its wasm call: one thread, no scratch, no
        fuel (the rest goes through dispatch)."""
        prog = exe.program
        if isinstance(prog, Routine) or len(prog.chunks) != 1 or prog.scratch_bytes \
                or self.fuel is not None:
            return super().launcher(exe)
        call, (lo, hi), name = prog.call, prog.chunks[0], prog.name

        def launch(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
            try:
                call(outputs[0], *inputs, lo, hi)
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                raise WasmTrapError(name, _cause(exc)) from None
        return launch

    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        prog = exe.program
        if isinstance(prog, Routine):
            views = [self.memory.view(h, d, math.prod(s)).reshape(s)
                     for h, (s, d) in zip(inputs, prog.inputs)]
            for h, (s, d), value in zip(outputs, prog.outputs, run_routine(prog, views)):
                self.memory.view(h, d, math.prod(s))[:] = value.reshape(-1)
            return None
        chunks = prog.chunks
        if len(chunks) == 1 and not prog.scratch_bytes and self.fuel is None:
            try:   # the common small kernel: one call, nothing to set up
                prog.call(outputs[0], *inputs, *chunks[0])
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                raise WasmTrapError(prog.name, _cause(exc)) from None
            return None
        args = [(outputs[0], *inputs) + ((self._scratch_for(t, prog.scratch_bytes),)
                                         if prog.scratch_bytes else ()) + chunk
                for t, chunk in enumerate(chunks)]
        w = self.wasm
        if self.fuel is not None:
            for store in w.stores[:len(chunks)]:
                store.set_fuel(self.fuel)
        helpers = [w.pool.submit(self._run, t, prog, a) for t, a in enumerate(args) if t]
        errors = [self._run(0, prog, args[0])] + [h.result() for h in helpers]
        trap = next((e for e in errors if e is not None), None)
        if trap is not None:   # only now: every thread's store is idle again
            raise WasmTrapError(prog.name, _cause(trap))
        return None

    def _run(self, thread: int, prog: CompiledKernel, args: tuple) -> Optional[Exception]:
        try:
            self.wasm.caller(thread, prog.key, prog.nargs)(*args)
        except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
            return exc
        return None

    def _chunks(self, split: tuple[str, int, int], work: int) -> list[tuple[int, int]]:
        """[lo, hi) per thread: whole units of the split axis, the last chunk to the end."""
        _, extent, unit = split
        units = -(-extent // unit)
        n = min(self.threads, units) if work >= self.min_thread_work else 1
        bounds = [extent if i == n else units * i // n * unit for i in range(n + 1)]
        return [(bounds[i], bounds[i + 1]) for i in range(n) if bounds[i + 1] > bounds[i]]

    def _chunks_reason(self, split: tuple[str, int, int], chunks: list, work: int) -> str:
        n = len(chunks)
        if n == 1:
            why = (f"{work} body evaluations: under {self.min_thread_work}, a hand-off costs "
                   "more" if work < self.min_thread_work and self.threads > 1 else
                   f"{self.threads} thread(s) available")
            return f"1 thread ({why})"
        axis, extent, unit = split
        return (f"{n} threads, each a range of {axis}s (in units of {unit} of {extent}), "
                "each in its own store over the shared memory")

    def _scratch_for(self, thread: int, nbytes: int) -> int:
        """A scratch block per thread, kept across kernels, grown on demand."""
        at, size = self._scratch[thread]
        if nbytes > size:
            if size:
                self.memory.free(at)
            at, size = self.memory.allocate(nbytes), nbytes
            self._scratch[thread] = (at, size)
        return at

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "memory_bytes": self.memory.size,
                "live_bytes": self.memory.live_bytes(), "modules": len(self.wasm.modules),
                "threads": self.threads, "fuel": self.fuel}


def _cpus() -> int:
    """CPUs this process may run on (all of them where affinity is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _cause(exc: Exception) -> str:
    """wasmtime's message ends with the root cause ("1: wasm trap: out of bounds ...")."""
    last = str(exc).strip().splitlines()[-1].strip()
    return last.split(": ", 1)[1] if last[:1].isdigit() else last


def _close(pool: Optional[ThreadPoolExecutor], modules: dict, *objects: Any) -> None:
    """Free wasmtime objects while its bindings are alive (their own __del__ runs too
    late at interpreter exit and prints errors)."""
    if pool is not None:
        pool.shutdown()
    for obj in [*modules.values(), *objects]:
        if hasattr(obj, "close"):   # a plain Memory belongs to its store
            obj.close()


def _tuned_ir(kernel: Kernel, form: AxisForm, plan: Plan) -> str:
    """The kernel over the loop axes the code walks (gidx = row*cols + col)."""
    head = f"kernel {kernel.name}: {form.rows} rows x {form.cols} cols, gidx = row*{form.cols} + col"
    if kernel.reduction is None:
        return f"{head}\n  out[gidx] = {render(form.body)}"
    return (f"{head}\n  acc = {kernel.reduction.op.name.lower()} over ridx < {form.steps} of "
            f"{render(form.body)}\n  out[gidx] = {render(form.epilogue)}")
