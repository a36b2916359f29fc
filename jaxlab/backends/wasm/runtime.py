"""The wasm Backend: compile each kernel's WAT once, call it once per dispatch.

Every module imports the device's one linear memory, so a dispatch passes byte
offsets (the buffer handles) as i32 arguments and nothing is copied. Modules
are cached by their text, so two kernels that generate the same code share
one compiled module. Routines run with NumPy on zero-copy views of the memory.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import wasmtime

from jaxlab.backends.base import Backend, Executable
from jaxlab.backends.numpy_routines import run_routine
from jaxlab.backends.wasm.analysis import AxisForm
from jaxlab.backends.wasm.codegen import generate
from jaxlab.backends.wasm.memory import LinearMemory
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
    call: Callable[..., None]      # call(out, *inputs[, scratch]) with byte offsets
    scratch_bytes: int = 0


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
        context, fref, call = store._context(), ctypes.byref(func._func), ffi.wasmtime_func_call
        trap_type = ctypes.POINTER(ffi.wasm_trap_t)
    except (ImportError, AttributeError):
        return lambda *args: func(store, *(_i32(a) for a in args))

    def run(*args: int, _owners=(store, func)) -> None:   # the context needs its store alive
        for p, a in zip(params, args):
            p.of.i32 = _i32(a)
        trap = trap_type()
        error = call(context, fref, params, nargs, None, 0, ctypes.byref(trap))
        if error:
            raise wasmtime.WasmtimeError._from_ptr(error)
        if trap:
            raise wasmtime.Trap._from_ptr(trap)
    return run


class _Wasm:
    """The wasmtime objects of one device: engine, store, the shared memory, a linker."""

    def __init__(self, fuel: bool) -> None:
        config = wasmtime.Config()
        config.consume_fuel = fuel
        self.engine = wasmtime.Engine(config)
        self.store = wasmtime.Store(self.engine)
        self.memory = LinearMemory(self.store)
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define(self.store, "env", "memory", self.memory.memory)
        weakref.finalize(self, _close, self.linker, self.store, self.engine)


class WasmBackend(Backend):
    name = "wasm"

    def __init__(self, fuel: Optional[int] = None) -> None:
        """`fuel`: a budget of Wasm instructions per dispatch (None: unlimited)."""
        self.fuel = fuel
        self._modules: dict[str, Callable[..., None]] = {}
        self._scratch_at = self._scratch_bytes = 0

    @functools.cached_property
    def wasm(self) -> _Wasm:
        """Started on first use. wasmtime turns out-of-bounds accesses into traps with a
        signal handler installed when the first engine starts; a SIGSEGV handler installed
        after it (faulthandler, which pytest enables after importing conftest.py) would
        turn those traps into crashes. Starting late puts wasmtime's handler last."""
        return _Wasm(self.fuel is not None)

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
        wat = generate(kernel, plan, form)
        t1 = time.perf_counter()
        call, hit = self.instantiate(wat.text, 1 + len(kernel.inputs) + (wat.scratch_bytes > 0))
        compile_ms = (time.perf_counter() - t1) * 1e3
        return Executable(
            program=CompiledKernel(kernel.name, call, wat.scratch_bytes), source=wat.text,
            language="wat",
            tuning=plan.as_dict(form), tuned_ir=_tuned_ir(kernel, form, plan),
            compile_ms=compile_ms,
            extra={"module_cache_hit": hit, "codegen_ms": (t1 - t0) * 1e3})

    def instantiate(self, wat: str, nargs: int) -> tuple[Callable[..., None], bool]:
        """The `kernel` export of the module (compiled once per distinct text)."""
        key = hashlib.sha1(wat.encode()).hexdigest()
        hit = key in self._modules
        if not hit:
            w = self.wasm
            instance = w.linker.instantiate(w.store, wasmtime.Module(w.engine, wat))
            self._modules[key] = _caller(w.store, instance.exports(w.store)["kernel"], nargs)
        return self._modules[key], hit

    def prepare_routine(self, routine: Routine) -> Executable:
        return Executable(program=routine, language="text",
                          source=f"{routine.text()}\nNumPy ({routine.name}) on zero-copy "
                                 "views of the wasm linear memory")

    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        prog = exe.program
        if isinstance(prog, Routine):
            views = [self.memory.view(h, d, math.prod(s)).reshape(s)
                     for h, (s, d) in zip(inputs, prog.inputs)]
            for h, (s, d), value in zip(outputs, prog.outputs, run_routine(prog, views)):
                self.memory.view(h, d, math.prod(s))[:] = value.reshape(-1)
            return None
        if self.fuel is not None:
            self.wasm.store.set_fuel(self.fuel)
        extra = (self._scratch(prog.scratch_bytes),) if prog.scratch_bytes else ()
        try:
            prog.call(outputs[0], *inputs, *extra)
        except (wasmtime.Trap, wasmtime.WasmtimeError) as exc:
            raise WasmTrapError(prog.name, _cause(exc)) from None
        return None

    def _scratch(self, nbytes: int) -> int:
        """One scratch block for every kernel (dispatches never overlap), grown on demand."""
        if nbytes > self._scratch_bytes:
            if self._scratch_bytes:
                self.memory.free(self._scratch_at)
            self._scratch_at, self._scratch_bytes = self.memory.allocate(nbytes), nbytes
        return self._scratch_at

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "memory_bytes": self.memory.size,
                "live_bytes": self.memory.live_bytes(), "modules": len(self._modules),
                "fuel": self.fuel}


def _cause(exc: Exception) -> str:
    """wasmtime's message ends with the root cause ("1: wasm trap: out of bounds ...")."""
    last = str(exc).strip().splitlines()[-1].strip()
    return last.split(": ", 1)[1] if last[:1].isdigit() else last


def _close(*objects: Any) -> None:
    """Free wasmtime objects while its bindings are alive (their own __del__ runs too
    late at interpreter exit and prints errors)."""
    for obj in objects:
        obj.close()


def _tuned_ir(kernel: Kernel, form: AxisForm, plan: Plan) -> str:
    """The kernel over the loop axes the code walks (gidx = row*cols + col)."""
    head = f"kernel {kernel.name}: {form.rows} rows x {form.cols} cols, gidx = row*{form.cols} + col"
    if kernel.reduction is None:
        return f"{head}\n  out[gidx] = {render(form.body)}"
    return (f"{head}\n  acc = {kernel.reduction.op.name.lower()} over ridx < {form.steps} of "
            f"{render(form.body)}\n  out[gidx] = {render(form.epilogue)}")
