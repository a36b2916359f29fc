"""The wasm Backend: compile each kernel's WAT once, call it once per dispatch.

Every module imports the device's one linear memory, so a dispatch passes byte
offsets (the buffer handles) as i32 arguments and nothing is copied. Modules
are cached by their text, so two kernels that generate the same code share
one compiled module. Routines are generated as WebAssembly too (routines.py) and
run like kernels; only those it does not write (sorts of 64-bit values) run with
NumPy on zero-copy views of the memory.

wasmtime releases the GIL while Wasm runs, and a shared memory can be imported
by many stores: a large kernel's outer loop is split into ranges run at once on
several threads (measured: about 1.5-1.9x on two cores). Every instance lives
alone in a store (see _KernelModule) and is taken by one call at a time, so any
number of Python threads can dispatch at once, and a trap in any part is raised
only once all parts have stopped. A routine whose one item is large (a sort of a
long row, a large matrix) can instead be shared by a team of threads that take items
from a work list in their common scratch (_dispatch_team), which helpers join only
while the work lasts.
"""
from __future__ import annotations

import ctypes
import hashlib
import math
import os
import queue
import sys
import threading
import time
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator, Mapping, Optional, Sequence

import numpy as np
import wasmtime

from jaxlab.backends import autotuning
from jaxlab.backends.base import Backend, Choice, Executable, Knob, TuningRecord
from jaxlab.backends.wasm import routines as wasm_routines
from jaxlab.backends.numpy_routines import run_routine
from jaxlab.backends.wasm.analysis import AxisForm
from jaxlab.backends.wasm.codegen import generate
from jaxlab.backends.wasm.memory import GUARD, MAX_BYTES, LinearMemory
from jaxlab.backends.wasm import rows as wasm_rows
from jaxlab.backends.wasm.tune import KNOB_DOCS, Plan, apply, current, knob_values, tune
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine
from jaxlab.ir.widen import widen
from jaxlab.ir.printer import render


class WasmTrapError(RuntimeError):
    """A kernel trapped (out-of-bounds access, unreachable, out of fuel)."""

    def __init__(self, kernel: str, reason: str) -> None:
        super().__init__(f"wasm trap in kernel {kernel}: {reason}")
        self.kernel, self.reason = kernel, reason


@dataclass(frozen=True)
class CompiledKernel:
    name: str
    module: "_KernelModule"        # keeps the module and its instances alive
    scratch_bytes: int             # per thread (a team: for all of them)
    chunks: tuple[tuple[int, int], ...]   # [lo, hi) of the outer loop, one per thread
    team: bool = False             # the threads share one item and its scratch: a chunk
                                   # is (t, T), thread t of T
    pieces: tuple[tuple[int, int], ...] = ()   # where threads pull ranges in turn instead


@dataclass(frozen=True)
class PartTime:
    """One thread's part of a split dispatch, as `WasmBackend.timing_parts` records it."""
    kernel: str
    chunk: tuple[int, int]         # the [lo, hi) it computed
    helper: bool                   # run by a pool thread (False: the dispatching thread)
    dispatched: float              # time.perf_counter() when its dispatch began
    start_s: float                 # when it started, after that
    wall_s: float
    cpu_s: float                   # CPU time of its thread meanwhile: below wall_s when
                                   # the thread waited for a core


def _i32(offset: int) -> int:
    return offset - (1 << 32) if offset >= 1 << 31 else offset


def _caller(store: wasmtime.Store, func: wasmtime.Func, nargs: int) -> Callable[..., None]:
    """A call with `nargs` i32 arguments, straight through wasmtime's C API.

    Func.__call__ looks up the function type and converts each argument on every
    call (about 30 us); the argument array of a kernel is built once here instead.
    The call is wasmtime_func_call_unchecked, which skips the per-call check of the
    argument types against the function's (half the time of the checked call on a
    small kernel): the type is checked here once instead, and raw values hold an i32
    little-endian, as this host does. Elsewhere, or if wasmtime's private bindings
    move, the public call.
    """
    try:
        from wasmtime import _ffi as ffi
        kind = func.type(store)
        if sys.byteorder != "little" or kind.results or \
                kind.params != [wasmtime.ValType.i32()] * nargs:
            raise TypeError(f"not a little-endian call of {nargs} i32 arguments: {kind}")
        values = (ffi.wasmtime_val_raw_t * nargs)()
        slots = list(values)   # views of the values; ctypes wraps each to i32 itself
        context, fref = store._context(), ctypes.byref(func._func)
        trap_type = ctypes.POINTER(ffi.wasm_trap_t)
        error_type = ctypes.POINTER(ffi.wasmtime_error_t)
        # a function pointer of our own, its arguments converted once here: the
        # bindings' wrapper and its per-call argument checks cost more than the call
        call = ffi.dll["wasmtime_func_call_unchecked"]
        call.argtypes, call.restype = None, ctypes.c_void_p
    except (ImportError, AttributeError, TypeError):
        return lambda *args: func(store, *(_i32(a) for a in args))

    trap = trap_type()   # wasmtime writes it only when the call traps
    trap_ref = ctypes.byref(trap)
    n_values = ctypes.c_size_t(nargs)

    def run(*args: int, _owners=(store, func)) -> None:   # the context needs its store alive
        for slot, a in zip(slots, args):
            slot.i32 = a
        error = call(context, fref, values, n_values, trap_ref)
        if error:
            raise wasmtime.WasmtimeError._from_ptr(ctypes.cast(error, error_type))
        if trap:
            raised = wasmtime.Trap._from_ptr(ctypes.cast(trap, trap_type))   # owns it now
            ctypes.memset(ctypes.addressof(trap), 0, ctypes.sizeof(trap))   # null again
            raise raised
    return run


class _Instance:
    """One instance of a kernel's module in a store of its own, run by one thread at a
    time (a Store is not thread-safe)."""

    __slots__ = ("store", "call")

    def __init__(self, wasm: "_Wasm", module: wasmtime.Module, nargs: int) -> None:
        self.store = wasmtime.Store(wasm.engine)
        linker = wasmtime.Linker(wasm.engine)
        wasm.memory.define(linker, self.store)
        instance = linker.instantiate(self.store, module)
        self.call = _caller(self.store, instance.exports(self.store)["kernel"], nargs)


class _KernelModule:
    """A compiled module and its idle instances. A thread takes one for a call (or a
    new one when all are busy) and gives it back after: two threads never share a
    store, and there are as many instances as calls have ever run at once.

    Why a store per instance: each instantiation in a store that imports a shared
    memory wraps that memory in a new host instance of the store, and when an
    out-of-bounds access faults, wasmtime asserts that exactly one instance of the
    store owns the faulting address, so a store with two kernels aborts the process
    (`assertion failed: fault.is_none()`). Alone in its store, a kernel traps cleanly
    on any thread. The instances go with the module (no per-store instance limit)."""

    def __init__(self, wasm: "_Wasm", wat: str, nargs: int) -> None:
        self.wasm, self.nargs = wasm, nargs
        self.module = wasmtime.Module(wasm.engine, wat)
        self.idle: list[_Instance] = [_Instance(wasm, self.module, nargs)]

    def take(self) -> _Instance:
        try:
            return self.idle.pop()   # atomic: two threads never get the same instance
        except IndexError:
            return _Instance(self.wasm, self.module, self.nargs)

    def give(self, instance: _Instance) -> None:
        self.idle.append(instance)

    def close(self) -> None:
        for instance in self.idle:
            instance.store.close()
        self.module.close()


class _Pool:
    """The device's pool threads: each takes the next job from one queue and puts its
    outcome on that job's own queue. A hand-off is a put and a get on C-level queues
    (SimpleQueue): 3.5 us of CPU time against 11-14 us with a ThreadPoolExecutor's futures
    (a no-op job, measured), and fewer switches of the GIL between the two threads while
    the dispatching one waits for the pool thread to report back. (Waiting in Wasm on a
    counter before sleeping on a queue was tried and removed: on the shared 2-core
    machine a spinning thread takes the share of a core its partner waits for; W4's
    step, best of 60 at load 9, alternated: 18.3-20.7 ms without, 21.6-27.0 spinning up
    to 30 us, 21.3-36.7 up to 200 us.)"""

    def __init__(self, threads: int, name: str) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [threading.Thread(target=_serve, args=(self._jobs,),
                                          name=f"{name}_{i}", daemon=True) for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> "_Pending":
        """Run fn(*args) on a pool thread; the handle's result() waits for its outcome."""
        pending = _Pending()
        self._jobs.put((fn, args, pending.done))
        return pending

    def shutdown(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():   # (a finalizer run by a pool thread)
                thread.join()


class _Pending:
    """A job handed to the pool: result() waits for it, and raises what it raised."""
    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done: queue.SimpleQueue = queue.SimpleQueue()

    def result(self) -> Any:
        ok, value = self.done.get()
        if not ok:
            raise value
        return value


def _serve(jobs: queue.SimpleQueue) -> None:
    """A pool thread: jobs until a None."""
    while True:
        job = jobs.get()
        if job is None:
            return
        fn, args, done = job
        try:
            done.put((True, fn(*args)))
        except BaseException as exc:   # for the waiting thread to raise, as a future would
            done.put((False, exc))


class _Wasm:
    """The wasmtime objects of one device: an engine, the shared memory, and the
    compiled modules by text (alive while an executable uses them)."""

    def __init__(self, fuel: bool, threads: int) -> None:
        config = wasmtime.Config()
        config.consume_fuel = fuel
        config.shared_memory = True
        self.engine = wasmtime.Engine(config)
        self.memory = LinearMemory(self.engine)
        self.modules: "weakref.WeakValueDictionary[str, _KernelModule]" = \
            weakref.WeakValueDictionary()
        self.pool = _Pool(threads - 1, "jaxlab-wasm") if threads > 1 else None
        weakref.finalize(self, _close, self.pool, self.modules, self.memory.memory,
                         self.engine)

    def compile(self, key: str, wat: str, nargs: int) -> tuple[_KernelModule, bool]:
        """The module of this text, compiled now unless a live executable has it;
        returns it and whether it was cached."""
        module = self.modules.get(key)
        if module is not None:
            return module, True
        return self.modules.setdefault(key, _KernelModule(self, wat, nargs)), False


MIN_THREAD_WORK = 1 << 17   # body evaluations below which one thread beats a hand-off
REDUCTION_HANDOFF = 16      # ... times this for a reduction (WasmBackend._min_work)
MAX_THREADS = 16            # by default: each part of a split kernel takes an instance
MAX_CANDIDATES = 16         # autotune timings per kernel
PIECES_PER_THREAD = 4       # ranges a thread pulls in turn, where a kernel allows it


class WasmBackend(Backend):
    name = "wasm"
    host_timed = True     # dispatch returns when every thread has finished
    max_buffer_bytes = MAX_BYTES - 2 * GUARD
    buffer_limit_reason = "the 4 GiB of a 32-bit Wasm memory"
    # 8/16-bit types are computed in 32-bit values (ir/widen.py), 64-bit ones in Wasm's
    # f64 and i64 (two lanes to a vector: tune.py)
    dtypes = frozenset(DType)
    # a reduction broadcast back over its rows is folded in the kernel that reads it
    # (rows.py: the row stays in cache between its sweeps)
    max_row_length = wasm_rows.MAX_ROW_LENGTH
    min_row_length = wasm_rows.MIN_ROW_LENGTH
    row_dtypes = wasm_rows.ROW_DTYPES
    strided_rows = False   # SIMD lanes along a row would gather a strided one

    def __init__(self, fuel: Optional[int] = None, threads: Optional[int] = None) -> None:
        """`fuel`: a budget of Wasm instructions per dispatch and thread (None: unlimited).
        `threads`: threads that share a large kernel (default: JAXLAB_WASM_THREADS or the
        CPUs this process may use, at most 16); 1 runs everything on the calling thread
        without handing work to other threads."""
        self.fuel = fuel
        self.threads = max(1, threads or int(os.environ.get("JAXLAB_WASM_THREADS", 0))
                           or min(MAX_THREADS, _cpus()))
        self.min_thread_work = MIN_THREAD_WORK
        self._started: Optional[_Wasm] = None
        self._start_lock = threading.Lock()
        self._tune_cache = autotuning.TuneCache(self.name)
        self._part_log: Optional[list[PartTime]] = None

    @contextmanager
    def timing_parts(self) -> Iterator[list[PartTime]]:
        """Record each thread's part of every split dispatch meanwhile (a profile: how the
        threads start, how long each runs and how much of that it had a core)."""
        log: list[PartTime] = []
        self._part_log = log
        try:
            yield log
        finally:
            self._part_log = None

    @property
    def wasm(self) -> _Wasm:
        """Started on first use (by one thread). wasmtime turns out-of-bounds accesses
        into traps with a signal handler installed when the first engine starts; a
        SIGSEGV handler installed after it (faulthandler, which pytest enables after
        importing conftest.py) would turn those traps into crashes. Starting late puts
        wasmtime's handler last."""
        if self._started is None:
            with self._start_lock:
                if self._started is None:
                    started = _Wasm(self.fuel is not None, self.threads)
                    # from now on the calls made on every dispatch and read-back go
                    # straight to the memory (instance attributes over the methods below)
                    memory = started.memory
                    self.allocate, self.free = memory.allocate, memory.free
                    self.read, self.read_array = memory.read, memory.read_array
                    self._started = started
        return self._started

    @property
    def memory(self) -> LinearMemory:
        return self.wasm.memory

    # --- memory -----------------------------------------------------------------
    # (these start the device; once it started, the memory's own methods serve them)
    def allocate(self, nbytes: int) -> int:
        return self.wasm.memory.allocate(nbytes)

    def free(self, handle: int) -> None:
        self.wasm.memory.free(handle)

    def write(self, handle: int, data) -> None:
        self.memory.write(handle, data)

    def read(self, handle: int, dtype: DType, count: int):
        return self.wasm.memory.read(handle, dtype, count)

    def read_array(self, handle: int, dtype: DType, shape: tuple[int, ...]):
        return self.wasm.memory.read_array(handle, dtype, shape)

    def copy(self, src: int, src_offset: int, dst: int, dst_offset: int, nbytes: int) -> None:
        self.memory.copy(src + src_offset, dst + dst_offset, nbytes)

    def binding_key(self, handles: Sequence[Any]) -> Hashable:
        return tuple(handles)   # addresses: the same address binds the same memory

    # --- programs ------------------------------------------------------------------
    def prepare_kernel(self, kernel: Kernel,
                       overrides: Optional[Mapping[str, Any]] = None) -> Executable:
        """`overrides` (see knobs()) replace the tuner's choices; without them, inside
        autotune() the choices are measured instead."""
        if overrides is None and autotuning.active():
            return self._autotuned(kernel)
        settings = dict(overrides or {})
        threads = settings.pop("threads", None)
        t0 = time.perf_counter()
        kernel = widen(kernel)
        writer = _writer(kernel)
        plan, form = writer.tune(kernel)
        plan = apply(kernel, plan, form, settings)
        wat = writer.generate(kernel, plan, form)
        t1 = time.perf_counter()
        key = hashlib.sha1(wat.text.encode()).hexdigest()
        nargs = 3 + len(kernel.inputs) + wat.takes_scratch
        module, hit = self.wasm.compile(key, wat.text, nargs)
        compile_ms = (time.perf_counter() - t1) * 1e3
        work, min_work = writer.work(kernel, form), self._min_work(kernel)
        chunks = self._chunks(wat.split, work, threads, min_work)
        pieces = self._pieces(wat.split, len(chunks)) if wat.pulled and len(chunks) > 1 else ()
        tuning = plan.record(form, self._chunks_reason(wat.split, chunks, work, threads,
                                                       min_work)
                             + (f"; they pull {len(pieces)} ranges in turn (a thread slowed by "
                                "other work on its core takes fewer)" if pieces else ""))
        scratch = max((wat.scratch_for(lo, hi) for lo, hi in chunks), default=0)
        return Executable(
            program=CompiledKernel(kernel.name, module, scratch, tuple(chunks),
                                   pieces=pieces),
            source=wat.text, language="wat", tuning=tuning,
            tuned_ir=writer.tuned_ir(kernel, form), compile_ms=compile_ms,
            extra={"module_cache_hit": hit, "codegen_ms": (t1 - t0) * 1e3},
            traced_lines=wat.text.line_marks)

    def knobs(self, kernel: Kernel) -> tuple[Knob, ...]:
        kernel = widen(kernel)
        writer = _writer(kernel)
        plan, form = writer.tune(kernel)
        now = current(plan)
        found = [Knob(name, values, now[name], KNOB_DOCS[name])
                 for name, values in knob_values(kernel, plan, form).items()]
        _, extent, unit = writer.generate(kernel, plan, form).split
        most = min(self.threads, -(-extent // unit))
        if most > 1:
            work = writer.work(kernel, form)
            default = len(self._chunks(("", extent, unit), work, None, self._min_work(kernel)))
            found.append(Knob("threads", tuple(range(1, most + 1)), default, KNOB_DOCS["threads"]))
        return tuple(found)

    def _autotuned(self, kernel: Kernel) -> Executable:
        """Every single-knob change of the tuner's plan compiled and timed (cached on disk)."""
        key = f"{self.threads}|{kernel.key}"
        return autotuning.cached_or_measured(self._tune_cache, key,
                                             lambda: self._measure(kernel),
                                             lambda o: self.prepare_kernel(kernel, o))

    def _measure(self, kernel: Kernel) -> dict[str, Any]:
        tries = [{}] + [{k.name: v} for k in self.knobs(kernel) for v in k.values
                        if v != k.current]
        inputs = [self.allocate(max(4, n * d.itemsize)) for d, n in kernel.inputs]
        outputs = [self.allocate(max(4, kernel.size * kernel.dtype.itemsize))]
        try:
            return autotuning.measure(
                kernel.name, tries[:MAX_CANDIDATES],
                lambda o: self.prepare_kernel(kernel, o),
                lambda exe: self._best_ms(exe, inputs, outputs),
                lambda exe: tuple((c.name, c.value) for c in exe.tuning.choices
                                  if c.name in KNOB_DOCS))
        finally:
            for h in inputs + outputs:
                self.free(h)

    def _best_ms(self, exe: Executable, inputs: Sequence[int], outputs: Sequence[int],
                 runs: int = 3) -> float:
        """Best wall milliseconds of `runs` dispatches after a warm-up."""
        best = math.inf
        for run in range(runs + 1):
            t0 = time.perf_counter()
            self.dispatch(exe, inputs, outputs)
            if run:
                best = min(best, (time.perf_counter() - t0) * 1e3)
        return best

    def prepare_routine(self, routine: Routine) -> Executable:
        code = wasm_routines.generate(routine)
        if code is not None:
            return self._generated_routine(routine, code)
        return Executable(program=routine, language="text",
                          source=f"{routine.text()}\nNumPy ({routine.name}) on zero-copy "
                                 "views of the wasm linear memory")

    def _generated_routine(self, routine: Routine, code: "wasm_routines.RoutineCode") \
            -> Executable:
        """A routine's module, called like a split kernel: threads take ranges of the
        batch's matrices, each with scratch of its own."""
        t0 = time.perf_counter()
        team = min(self.threads, code.team.threads) if code.team else 1
        text = code.team.text if code.team and team > 1 else code.text
        nargs = len(routine.outputs) + len(routine.inputs) + 3
        module, hit = self.wasm.compile(hashlib.sha1(text.encode()).hexdigest(), text, nargs)
        compile_ms = (time.perf_counter() - t0) * 1e3
        if code.team and team > 1:
            chunks, scratch = [(t, team) for t in range(team)], code.team.scratch_bytes
            threads = (f"{team} threads share the one item, each in its own store, taking "
                       "items from a work list in their shared scratch (helpers join while "
                       "items are left)")
        else:
            work = code.flops if code.flops is not None else code.items * self.min_thread_work
            chunks, scratch = self._chunks(("item", code.items, 1), work), code.scratch_bytes
            threads = (f"{len(chunks)} thread(s) over {code.items} item(s) of the batch: "
                       + ("each a range of them, in its own store" if len(chunks) > 1 else
                          "one item, or too little work to hand off"))
        choices = tuple(Choice(k, v, why) for k, (v, why) in code.notes.items())
        return Executable(
            program=CompiledKernel(f"{routine.name}_{'_'.join(map(str, routine.shape))}", module,
                                   scratch, tuple(chunks), team > 1),
            source=text, language="wat", compile_ms=compile_ms, flops=code.flops,
            tuning=TuningRecord(choices + (Choice("threads", len(chunks), threads),)),
            extra={"module_cache_hit": hit})

    # An evicted executable needs no release: its module lives while an executable
    # (a jit program's step too) holds it, and goes with the last one.

    def launcher(self, exe: Executable) -> Callable[[Sequence[Any], Sequence[Any]], None]:
        """The common small kernel straight to an instance's call: one thread, no
        scratch, no fuel (the rest goes through dispatch)."""
        prog = exe.program
        if isinstance(prog, Routine) or len(prog.chunks) != 1 or prog.scratch_bytes \
                or self.fuel is not None:
            return super().launcher(exe)
        module, (lo, hi), name = prog.module, prog.chunks[0], prog.name
        idle = module.idle   # take() and give() inlined: this runs on every jit dispatch

        def launch(inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
            try:
                instance = idle.pop()   # atomic: two threads never get the same instance
            except IndexError:
                instance = module.take()
            try:
                instance.call(outputs[0], *inputs, lo, hi)
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                raise WasmTrapError(name, _cause(exc)) from None   # not given back
            idle.append(instance)
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
        module, chunks = prog.module, prog.chunks
        if not chunks:   # a routine over an empty batch
            return None
        if prog.team:
            return self._dispatch_team(prog, (*outputs, *inputs))
        if prog.pieces:
            return self._dispatch_pulled(prog, (*outputs, *inputs))
        if len(chunks) == 1 and not prog.scratch_bytes and self.fuel is None:
            instance = module.take()   # the common small kernel: one call, nothing to set up
            try:
                instance.call(outputs[0], *inputs, *chunks[0])
            except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
                raise WasmTrapError(prog.name, _cause(exc)) from None   # not given back
            module.give(instance)
            return None
        parts = [self._part(module, prog, (*outputs, *inputs), chunk) for chunk in chunks]
        log = self._part_log
        run = _run if log is None else _timed(log, prog.name, time.perf_counter())
        try:
            helpers = [self.wasm.pool.submit(run, *part) for part in parts[1:]]
            errors = [run(*parts[0])] + [h.result() for h in helpers]
        finally:
            for _, _, scratch in parts:
                if scratch is not None:
                    self.memory.free(scratch)
        trap = next((e for e in errors if e is not None), None)
        for (instance, _, _), error in zip(parts, errors):
            if error is None:
                module.give(instance)
        if trap is not None:   # only now: every part has stopped
            raise WasmTrapError(prog.name, _cause(trap))
        return None

    def _dispatch_pulled(self, prog: CompiledKernel, buffers: tuple) -> None:
        """Each thread pulls the next of prog.pieces until none is left (a static split
        waits for its slowest part: on a shared machine, a core another process took).
        After a trap, the others stop at their next pull; the first trap is raised."""
        pieces, lock, traps = iter(prog.pieces), threading.Lock(), []
        log = self._part_log
        run = _run if log is None else _timed(log, prog.name, time.perf_counter())

        def pull(instance: _Instance) -> None:
            while True:
                with lock:
                    piece = None if traps else next(pieces, None)
                if piece is None:
                    return
                error = run(instance, buffers + piece, None)
                if error is not None:
                    with lock:
                        traps.append((error, instance))
                    return
        instances = [prog.module.take() for _ in prog.chunks]
        if self.fuel is not None:   # a budget per dispatch and thread
            for instance in instances:
                instance.store.set_fuel(self.fuel)
        helpers = [self.wasm.pool.submit(pull, i) for i in instances[1:]]
        pull(instances[0])
        for h in helpers:
            h.result()
        trapped = [i for _, i in traps]
        for instance in instances:
            if instance not in trapped:   # a trapped instance is not given back
                prog.module.give(instance)
        if traps:
            raise WasmTrapError(prog.name, _cause(traps[0][0]))

    def _pieces(self, split: tuple[str, int, int], threads: int) -> tuple[tuple[int, int], ...]:
        """PIECES_PER_THREAD ranges of whole units of the split per thread."""
        _, extent, unit = split
        return tuple(_ranges(extent, unit, threads * PIECES_PER_THREAD))

    def _dispatch_team(self, prog: CompiledKernel, buffers: tuple) -> None:
        """Threads that share one item and its scratch, taking items from a work list
        there (routine_text.work_list). Thread 0 waits for no helper: one that starts
        after it has finished does nothing, one still looking at the list leaves when it
        next runs, and the last to leave frees the scratch (on a loaded machine a helper
        may not run for milliseconds). A part that traps marks it in the scratch at
        once, so that the others trap at their next wait; the first trap is raised."""
        scratch = self.memory.allocate(prog.scratch_bytes)
        self.memory.write(scratch, np.zeros(4, np.int32))   # the list: nothing published
        first: list[Exception] = []
        gate = _Gate(lambda: self.memory.free(scratch))

        def part(instance: _Instance, t: int, T: int) -> None:
            if t and not gate.enter():
                prog.module.give(instance)   # the work is done: nothing to join
                return
            try:
                error = _run(instance, buffers + (scratch, t, T), None)
                if error is not None:   # not given back
                    first.append(error)
                    self.memory.write(scratch + 8, np.ones(1, np.int32))
                else:
                    prog.module.give(instance)
            finally:
                if t:
                    gate.leave()
        instances = [prog.module.take() for _ in prog.chunks]
        if self.fuel is not None:
            for instance in instances:
                instance.store.set_fuel(self.fuel)
        for instance, chunk in zip(instances[1:], prog.chunks[1:]):
            self.wasm.pool.submit(part, instance, *chunk)
        try:
            part(instances[0], *prog.chunks[0])
        finally:   # the scratch is freed once no part can run on
            gate.close()
        if first:
            raise WasmTrapError(prog.name, _cause(first[0]))

    def _part(self, module: "_KernelModule", prog: CompiledKernel, buffers: tuple,
              chunk: tuple[int, int]) -> tuple["_Instance", tuple, Optional[int]]:
        """An instance (fuelled) and the arguments for one range of the outer loop, with
        scratch memory of its own when the kernel needs some."""
        instance = module.take()
        if self.fuel is not None:
            instance.store.set_fuel(self.fuel)
        scratch = self.memory.allocate(prog.scratch_bytes) if prog.scratch_bytes else None
        return instance, buffers + ((scratch,) if scratch is not None else ()) + chunk, scratch

    def _min_work(self, kernel: Kernel) -> int:
        """Body evaluations from which a kernel is split among the threads. A reduction's
        evaluation is a lane of a multiply-add or an add, much less than an elementwise
        output's loads, math and store, while a hand-off to a pool thread that went to sleep
        costs as much for both: on these 2-core VMs, quiet, W4's pool thread started 50-70
        us after the dispatch and the join took 55-130 us more. W4's matmuls of 1.3M
        evaluations (256x10x512, 256x512x10, 512x10x256) took 0.22-0.24 ms split over two
        threads against 0.10-0.23 ms of CPU on one, its bias sums (131K) 0.11-0.13 ms
        against 0.02-0.04 (one profile each, benchmarks.wasm_contractions)."""
        return self.min_thread_work * (REDUCTION_HANDOFF if kernel.reduction is not None else 1)

    def _chunks(self, split: tuple[str, int, int], work: int, threads: Optional[int] = None,
                min_work: Optional[int] = None) -> list[tuple[int, int]]:
        """[lo, hi) per thread: whole units of the split axis, the last chunk to the end;
        `threads` overrides how many (by default: all, for at least `min_work`, else
        min_thread_work, body evaluations)."""
        min_work = self.min_thread_work if min_work is None else min_work
        _, extent, unit = split
        units = -(-extent // unit)
        if threads is not None and not 1 <= threads <= min(self.threads, units):
            raise ValueError(f"wasm tuning: threads={threads!r} is not valid: 1 to "
                             f"{min(self.threads, units)} here")
        n = threads or (min(self.threads, units) if work >= min_work else 1)
        return _ranges(extent, unit, n)

    def _chunks_reason(self, split: tuple[str, int, int], chunks: list, work: int,
                       threads: Optional[int], min_work: int) -> str:
        n = len(chunks)
        if threads is not None:
            return f"{n} thread(s): set by the caller"
        if n == 1:
            why = (f"{work} body evaluations: under {min_work}, a hand-off costs "
                   "more" if work < min_work and self.threads > 1 else
                   f"{self.threads} thread(s) available")
            return f"1 thread ({why})"
        axis, extent, unit = split
        return (f"{n} threads, each a range of {getattr(axis, 'value', axis)}s (in units of {unit} of {extent}), "
                "each in its own store over the shared memory")

    def memory_stats(self) -> dict[str, int]:
        return self.memory.stats()

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, **self.memory.stats(), "modules": len(self.wasm.modules),
                "threads": self.threads, "fuel": self.fuel}


class _Gate:
    """The helpers of one team dispatch that may still join it: open until thread 0 is
    done. The last of thread 0 and the helpers inside to leave runs `release`."""

    def __init__(self, release: Callable[[], None]) -> None:
        self._lock = threading.Lock()
        self._open, self._inside, self._release = True, 0, release

    def enter(self) -> bool:
        with self._lock:
            self._inside += self._open
            return self._open

    def leave(self) -> None:
        with self._lock:
            self._inside -= 1
            last = not self._open and self._inside == 0
        if last:
            self._release()

    def close(self) -> None:
        with self._lock:
            self._open = False
            last = self._inside == 0
        if last:
            self._release()


def _ranges(extent: int, unit: int, n: int) -> list[tuple[int, int]]:
    """[0, extent) as at most n ranges of whole units, the last to the end."""
    units = -(-extent // unit)
    n = min(n, units)
    bounds = [extent if i == n else units * i // n * unit for i in range(n + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(n) if bounds[i + 1] > bounds[i]]


def _cpus() -> int:
    """CPUs this process may run on (all of them where affinity is unknown)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _run(instance: _Instance, args: tuple, scratch: Optional[int]) -> Optional[Exception]:
    """One part of a split kernel; a trap is returned, to be raised when all stopped."""
    try:
        instance.call(*args)
    except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
        return exc
    return None


def _timed(log: list[PartTime], kernel: str, began: float) -> Callable[..., Optional[Exception]]:
    """_run, recording each part's PartTime in `log`."""
    caller = threading.get_ident()

    def run(instance: _Instance, args: tuple, scratch: Optional[int]) -> Optional[Exception]:
        t0, c0 = time.perf_counter(), time.thread_time()
        error = _run(instance, args, scratch)
        log.append(PartTime(kernel, args[-2:], threading.get_ident() != caller, began,
                            t0 - began, time.perf_counter() - t0, time.thread_time() - c0))
        return error
    return run


def _cause(exc: Exception) -> str:
    """wasmtime's message ends with the root cause ("1: wasm trap: out of bounds ...")."""
    last = str(exc).strip().splitlines()[-1].strip()
    return last.split(": ", 1)[1] if last[:1].isdigit() else last


def _close(pool: Optional[_Pool], modules: "weakref.WeakValueDictionary",
           *objects: Any) -> None:
    """Free wasmtime objects while its bindings are alive (their own __del__ runs too
    late at interpreter exit and prints errors)."""
    if pool is not None:
        pool.shutdown()
    for module in list(modules.values()):
        module.close()
    for obj in objects:
        obj.close()


def _tuned_ir(kernel: Kernel, form: AxisForm) -> str:
    """The kernel over the loop axes the code walks (gidx = row*cols + col)."""
    if form.batches > 1:
        head = (f"kernel {kernel.name}: {form.batches} batches x {form.rows} rows x {form.cols} "
                f"cols, gidx = (batch*{form.rows} + row)*{form.cols} + col")
    else:
        head = f"kernel {kernel.name}: {form.rows} rows x {form.cols} cols, gidx = row*{form.cols} + col"
    if kernel.reduction is None:
        return f"{head}\n  out[gidx] = {render(form.body)}"
    return (f"{head}\n  acc = {kernel.reduction.op.name.lower()} over ridx < {form.steps} of "
            f"{render(form.body)}\n  out[gidx] = {render(form.epilogue)}")


@dataclass(frozen=True)
class _Writer:
    """How one kind of kernel is planned and written: ordinary kernels by tune.py and
    codegen.py, row kernels (folds) by rows.py."""
    tune: Callable[[Kernel], tuple[Plan, AxisForm]]
    generate: Callable[..., Any]
    work: Callable[[Kernel, AxisForm], int]        # body evaluations: enough for threads?
    tuned_ir: Callable[[Kernel, AxisForm], str]


_PLAIN = _Writer(tune, generate, lambda k, form: k.size * max(1, form.steps), _tuned_ir)
_ROWS = _Writer(wasm_rows.tune_rows, wasm_rows.generate_rows, wasm_rows.work,
                wasm_rows.tuned_ir)


def _writer(kernel: Kernel) -> _Writer:
    return _ROWS if kernel.folds else _PLAIN
