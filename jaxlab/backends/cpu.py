"""cpu: the reference backend. Kernels whose loads are all affine run on strided
NumPy views (cpu_strided.py); the rest gather every load at its computed index,
over all output indices at once in chunks that bound memory. Routines run in NumPy."""
from __future__ import annotations

import math
import os
import threading
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from jaxlab.backends.base import Backend, Choice, Executable, TuningRecord, no_overrides
from jaxlab.backends.cpu_strided import plan_strided, reduce_axes, run_strided
from jaxlab.backends.numpy_routines import run_routine
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.kernel import ACC, GIDX, RIDX, Kernel, Routine, reduce_identity

_CHUNK_ELEMENTS = 1 << 20   # body values materialised at once


def _half_the_memory() -> int:
    """Half the host's RAM: a sane bound for one array, as evaluating it in NumPy
    needs temporaries of its size (past it NumPy only thrashes or gets killed)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (AttributeError, ValueError, OSError):   # not POSIX: no bound beyond the default
        return Backend.max_buffer_bytes


class CpuBackend(Backend):
    name = "cpu"
    host_timed = True     # NumPy runs as dispatch is called
    max_buffer_bytes = _half_the_memory()
    buffer_limit_reason = "half the host's physical memory"

    def __init__(self) -> None:
        # NumPy memory goes with its last reference; these only count it. A free runs
        # in __del__ on any thread, even inside allocate: it queues, never waits.
        self._lock = threading.Lock()
        self._freed: list[int] = []
        self._live = self._peak = 0

    def allocate(self, nbytes: int) -> np.ndarray:
        with self._lock:
            self._settle()
            self._live += nbytes
            self._peak = max(self._peak, self._live)
        return np.zeros(nbytes, dtype=np.uint8)

    def free(self, handle: Any) -> None:
        self._freed.append(handle.nbytes)   # list.append is atomic

    def _settle(self) -> None:
        while self._freed:
            self._live -= self._freed.pop()

    def memory_stats(self) -> dict[str, int]:
        with self._lock:
            self._settle()
            return {"live_bytes": self._live, "pooled_bytes": 0, "peak_bytes": self._peak}

    def write(self, handle: np.ndarray, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        handle[:raw.size] = raw   # allocations are at least 4 bytes: 3 bools fill part

    def read(self, handle: np.ndarray, dtype: DType, count: int) -> np.ndarray:
        return handle.view(dtype.np)[:count].copy()

    def copy(self, src: np.ndarray, src_offset: int, dst: np.ndarray, dst_offset: int,
             nbytes: int) -> None:
        dst[dst_offset:dst_offset + nbytes] = src[src_offset:src_offset + nbytes]

    def prepare_kernel(self, kernel: Kernel,
                       overrides: Optional[Mapping[str, Any]] = None) -> Executable:
        no_overrides(self, overrides)
        strided, reason = plan_strided(kernel)
        if strided is not None:
            return Executable(program=kernel, source=strided.describe(), language="text",
                              tuning=TuningRecord((Choice("path", strided.path, reason),)),
                              extra={"strided": strided})
        plan = "NumPy: gather every load over all output indices"
        if kernel.reduction is not None:
            plan += (f", {kernel.reduction.op.name.lower()}-reduce {kernel.reduction.size} "
                     "values per output along an axis, then the epilogue")
        return Executable(program=kernel, source=plan, language="text",
                          tuning=TuningRecord((Choice("path", "gather", reason),)))

    def prepare_routine(self, routine: Routine) -> Executable:
        return Executable(program=routine, source=f"NumPy routine: {routine.name}",
                          language="text")

    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        prog = exe.program
        if isinstance(prog, Routine):
            arrays = [h.view(d.np)[:math.prod(s)].reshape(s)
                      for h, (s, d) in zip(inputs, prog.inputs)]
            for h, (s, d), value in zip(outputs, prog.outputs, run_routine(prog, arrays)):
                h.view(d.np)[:math.prod(s)] = value.reshape(-1)
            return None
        bufs = [h.view(d.np)[:n] for h, (d, n) in zip(inputs, prog.inputs)]
        out = outputs[0].view(prog.dtype.np)[:prog.size]
        strided = exe.extra.get("strided")
        if strided is not None:
            run_strided(strided, bufs, out)
        else:
            run_kernel_numpy(prog, bufs, out)
        return None


def run_kernel_numpy(kernel: Kernel, bufs: Sequence[np.ndarray], out: np.ndarray) -> None:
    """The gather path: evaluate `kernel` into `out` chunk by chunk, each chunk fully
    vectorised, every load an np.take at its computed index (any kernel)."""
    red = kernel.reduction
    steps = red.size if red else 1
    chunk = max(1, _CHUNK_ELEMENTS // max(steps, 1))
    for start in range(0, kernel.size, chunk):
        stop = min(kernel.size, start + chunk)
        gidx = np.arange(start, stop, dtype=np.int32)
        if red is None:
            value = evaluate(kernel.exp, {GIDX: gidx}, bufs)
        else:
            value = evaluate(red.epilogue, {GIDX: gidx, ACC: _reduce(kernel, gidx, bufs)}, bufs)
        out[start:stop] = np.broadcast_to(value, gidx.shape)


def _reduce(kernel: Kernel, gidx: np.ndarray, bufs: Sequence[np.ndarray]) -> np.ndarray:
    red = kernel.reduction
    dtype = kernel.exp.dtype
    if red.size == 0:
        return np.full(gidx.shape, reduce_identity(red.op, dtype), dtype.np)
    ridx = np.arange(red.size, dtype=np.int32)[None, :]
    body = evaluate(kernel.exp, {GIDX: gidx[:, None], RIDX: ridx}, bufs)
    return reduce_axes(red.op, np.broadcast_to(body, (gidx.size, red.size)), 1, dtype)
