"""WebGpuBackend: device, memory, pipelines and submission through wgpu-py.

Dispatches are recorded into command buffers and submitted in batches without
waiting; only a read (or synchronize) waits for the GPU. While someone listens
for events (jaxlab.capture) and the adapter has 'timestamp-query', each
dispatch is timed on the device and waited for, so its event carries device ms.
Errors become Python exceptions and the backend stays usable: a lost device is
replaced by a fresh one at the next call.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator, Mapping, Optional, Sequence, TypeVar

import numpy as np

from jaxlab import events
from jaxlab.backends import autotuning
from jaxlab.backends.base import Backend, Choice, DeviceSpan, Executable, Knob, TuningRecord
from jaxlab.backends.webgpu import fastpass, routines
from jaxlab.backends.webgpu.autotuning import candidates
from jaxlab.backends.webgpu.adapter import describe, is_hardware, select_adapter
from jaxlab.backends.webgpu.buffers import BufferPool, GpuBuffer, bucket, buckets
from jaxlab.backends.webgpu.errors import (DeviceLostError, WebGpuError, WebGpuMemoryError,
                                           WgslCompileError)
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.plan import Pass, Plan, kernel_plan
from jaxlab.backends.webgpu.replay import ProgramReplay
from jaxlab.backends.webgpu.shader_modules import (LOOP_BOUNDING_ENV, RuntimeChecks,
                                                   create_module, wanted_checks)
from jaxlab.backends.webgpu.tune import (Limits, Tuning, knobs, max_row_length, min_row_length,
                                         tune)
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine
from jaxlab.ir.widen import widen
from jaxlab.ir.printer import render

FLUSH_EVERY = 16   # command buffers recorded before a submit without waiting
BIND_GROUPS = 4096   # bind groups kept, by pipeline layout and the buffers bound
# Dispatches of a batch (a jit call) recorded before a submit: 0 submits once per call;
# N > 0 lets the GPU start on the first N while the host records the rest.
SUBMIT_EVERY = int(os.environ.get("JAXLAB_WEBGPU_SUBMIT_EVERY", "0") or 0)
# Microseconds a wait for the device spins (polling) before it sleeps in the driver
# (None: HARDWARE_SPIN_US on a GPU, none on a software adapter, whose work runs on the
# cores a spin would take). An H200 measured (benchmarks/gpu_latency.py): a blocked
# wait returns 20-55 us after the work is done, a spinning one ~35 us after the submit.
_SPIN_ENV = os.environ.get("JAXLAB_WEBGPU_SPIN_US", "")
SPIN_US: Optional[float] = float(_SPIN_ENV) if _SPIN_ENV else None
HARDWARE_SPIN_US = 2000.0

# Limits we ask for at their adapter maximum (WebGPU's defaults are far lower).
_LIMITS = ("max-storage-buffers-per-shader-stage", "max-storage-buffer-binding-size",
           "max-buffer-size", "max-compute-workgroup-storage-size",
           "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
           "max-compute-workgroups-per-dimension")


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _locked(method: _Method) -> _Method:
    """Run under the device's lock: the queue of recorded commands, the buffer pool and
    the caches are one device's state, changed by one thread at a time (two devices
    never wait for each other)."""
    @functools.wraps(method)
    def run(self: "WebGpuBackend", *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)
    return run  # type: ignore[return-value]


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


class WebGpuBackend(Backend):
    name = "webgpu"
    # a deeper chain of ops makes the shader compiler's time grow much faster than
    # the shader (lavapipe: 40 nested sin+add compile in seconds, 80 in minutes)
    max_fused_depth = 64
    # lavapipe compiles a shader (LLVM) at its first submission: 64 sin+add pairs with
    # distinct constants took 22-36 s as kernels of depth 64, 12-14 s at 32, 6-10 s at
    # 16 (benchmarks/chains.py); 16 would split composites (logaddexp, arcsinh) that
    # one kernel should hold
    software_fused_depth = 32
    # 8/16-bit types are packed in u32 words and computed in 32-bit values (ir/widen.py)
    # int64/uint64 are pairs of u32 words (int64.py); float64 (and complex128) are refused
    dtypes = frozenset(d for d in DType if d.real_dtype is not DType.float64)
    dtype_limit_reason = "WGSL has no float64, and jaxlab does not emulate it"
    row_dtypes = frozenset({DType.float32, DType.int32, DType.uint32})   # 32-bit registers
    narrow_sorts = True   # routines.py makes keys of every width

    def __init__(self, adapter: Any = None, *, f16: Optional[bool] = None,
                 subgroups: Optional[bool] = None, spin_us: Optional[float] = None) -> None:
        """`adapter`: a wgpu adapter (default: adapter.select_adapter()); `f16=False`
        computes float16 in f32 even where the adapter has shader-f16; `subgroups=False`
        reduces through shared memory only even where it has subgroup operations;
        `spin_us`: how long a wait for the device polls before it sleeps (default
        JAXLAB_WEBGPU_SPIN_US, else 2 ms on a GPU and none on a software adapter)."""
        self._adapter = adapter if adapter is not None else select_adapter()
        self._choice = "hardware" if is_hardware(self._adapter) else "software"
        if self._choice == "software":
            self.max_fused_depth = self.software_fused_depth
        # lavapipe keeps subnormals (measured); a GPU's driver may flush them
        self.may_flush_subnormals = self._choice == "hardware"
        self._want_f16 = f16
        self._want_subgroups = subgroups
        if spin_us is None:
            spin_us = SPIN_US if SPIN_US is not None else \
                HARDWARE_SPIN_US if self._choice == "hardware" else 0.0
        self._spin_s = spin_us / 1e6
        self._generation = 0
        self._lock = threading.RLock()
        self._freed: list[GpuBuffer] = []   # freed on any thread, recycled under the lock
        self._open()

    # --- the device ---------------------------------------------------------
    def _open(self) -> None:
        import wgpu
        self._wgpu = wgpu
        adapter = self._adapter
        features = set(adapter.features)
        wanted = [f for f in ("timestamp-query", "shader-f16", "subgroup") if f in features
                  and (f != "shader-f16" or self._want_f16 is not False)
                  and (f != "subgroup" or self._want_subgroups is not False)]
        limits = {k: adapter.limits[k] for k in _LIMITS if k in adapter.limits}
        self.device = adapter.request_device_sync(required_features=wanted,
                                                  required_limits=limits)
        got = self.device.limits
        self.runtime_checks = wanted_checks()   # wgpu's checks in the shaders made from now
        self.lang = Lang(f16="shader-f16" in wanted, subgroups="subgroup" in wanted,
                         loop_counters=self.runtime_checks is RuntimeChecks.BOUNDS_AND_LOOPS)
        self.limits = Limits(
            max_threads=min(got["max-compute-invocations-per-workgroup"],
                            got["max-compute-workgroup-size-x"]),
            max_groups_per_dim=got["max-compute-workgroups-per-dimension"],
            max_shared_bytes=got["max-compute-workgroup-storage-size"],
            hardware=is_hardware(adapter),
            max_buffer_bytes=min(got["max-storage-buffer-binding-size"], got["max-buffer-size"]))
        self.max_kernel_inputs = got["max-storage-buffers-per-shader-stage"] - 1
        self.max_row_length = max_row_length(self.limits)
        self.min_row_length = min_row_length(self.limits)
        self.max_binding = min(got["max-storage-buffer-binding-size"], got["max-buffer-size"])
        self.max_buffer_bytes = self.max_binding
        self.buffer_limit_reason = "the adapter's largest storage buffer binding"
        self.timestamps = "timestamp-query" in wanted
        self._tune_cache = autotuning.TuneCache(self.name)
        self._generation += 1
        self._pipelines: dict[tuple, tuple[Any, Any]] = {}
        self._pipeline_users: dict[tuple, int] = {}   # executables using each pipeline
        self._bind_groups: "OrderedDict[tuple, tuple[Any, tuple]]" = OrderedDict()
        self._layouts: dict[tuple, Any] = {}
        self._uniforms: dict[bytes, Any] = {}
        # Every wgpu buffer stays referenced here until the pool destroys it: an engine
        # Buffer collected in a reference cycle is finalized together with what it
        # references, and wgpu-py would release a buffer our pool still hands out.
        self._owned: dict[int, Any] = {}
        self._pool = BufferPool(self._destroy)
        self._live_bytes = self._peak_bytes = 0
        self._queued: list[Any] = []       # finished command buffers not yet submitted
        self._encoder: Any = None          # the open encoder and compute pass, if any
        self._pass: Any = None
        self._batch_depth = 0
        self._in_pass = 0                  # dispatches recorded in the open pass
        self._recorded: list[Any] = []   # pipelines and groups the open encoder uses
        self._recorder: Optional[fastpass.Recorder] = None
        self._unfinished = False           # work submitted since the last wait
        self._deferred: list[GpuBuffer] = []   # freed while a queued command uses them
        self._query = None
        self._span_query: Optional[tuple[Any, Any]] = None
        self._fence: Optional[GpuBuffer] = None
        self._wait = fastpass.waiter(self.device, self._spin_s)

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, **describe(self._adapter),
                "features": sorted(self.device.features),
                "f16": self.lang.f16, "timestamps": self.timestamps,
                "max_kernel_inputs": self.max_kernel_inputs,
                "max_binding": self.max_binding, "limits": vars(self.limits),
                "runtime_checks": self.runtime_checks.value}

    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """wgpu errors become our exceptions; the backend stays usable."""
        try:
            yield
        except self._wgpu.GPUError as exc:
            raise self._translate(exc, what) from exc

    def _translate(self, exc: Exception, what: str) -> Exception:
        message = (getattr(exc, "message", "") or str(exc)).strip()
        if "lost" in message.lower():
            self._adapter = select_adapter(self._choice)   # a used adapter may not serve again
            self._open()
            return DeviceLostError(f"webgpu: the device was lost during {what}; arrays on "
                                   "it are gone, new work runs on a fresh device")
        if isinstance(exc, self._wgpu.GPUOutOfMemoryError):
            return WebGpuMemoryError(f"webgpu: out of device memory during {what}")
        return WebGpuError(f"webgpu: {what} failed:\n{message}")

    def _live(self, handles: Sequence[GpuBuffer]) -> None:
        if any(h.generation != self._generation for h in handles):
            raise DeviceLostError("webgpu: this array was on a device that has been lost; "
                                  "compute it again")

    # --- memory -------------------------------------------------------------
    @_locked
    def allocate(self, nbytes: int) -> GpuBuffer:
        self._recycle()
        return self._take(nbytes)

    @_locked
    def allocate_many(self, sizes: Sequence[int]) -> list[GpuBuffer]:
        self._recycle()
        capacities = buckets(tuple(sizes), self.max_binding)
        if capacities is None:   # one is too large: _take raises it
            return [self._take(n) for n in sizes]
        generation, handles = self._generation, []
        for nbytes, capacity, buf in zip(sizes, capacities, self._pool.take_many(capacities)):
            if buf is None:
                buf = self._create(capacity)
            handles.append(GpuBuffer(buf, nbytes, capacity, generation))
        self._count_live(sum(capacities))
        return handles

    def _take(self, nbytes: int) -> GpuBuffer:
        """A buffer from the pool, or a new one (under the lock)."""
        if nbytes > self.max_binding:
            raise WebGpuMemoryError(
                f"webgpu: cannot allocate {_gib(nbytes)}: this adapter binds at most "
                f"{_gib(self.max_binding)} per storage buffer")
        capacity = bucket(nbytes, self.max_binding)
        buf = self._pool.take(capacity)
        if buf is None:
            buf = self._create(capacity)
        self._count_live(capacity)
        return GpuBuffer(buf, nbytes, capacity, self._generation)

    def _count_live(self, nbytes: int) -> None:
        """Bytes taken from the pool or made: the live count and its peak."""
        self._live_bytes += nbytes
        if self._live_bytes > self._peak_bytes:
            self._peak_bytes = self._live_bytes

    def _create(self, capacity: int) -> Any:
        usage = self._wgpu.BufferUsage
        with self._guard(f"allocating {_gib(capacity)}"):
            buf = self.device.create_buffer(
                size=capacity, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)
        self._owned[id(buf)] = buf
        return buf

    def free(self, handle: GpuBuffer) -> None:
        """Called from `__del__` on any thread, even inside a locked method of this one
        (a garbage collection there): it neither waits for the lock nor touches the pool."""
        self._freed.append(handle)   # list.append is atomic

    def _recycle(self) -> None:
        """Freed buffers into the pool, or to wait for the submit of recorded commands
        that may still read them (under the lock)."""
        freed = self._freed
        if not freed:
            return
        later = self._deferred if self._queued or self._encoder is not None else None
        give, generation = self._pool.give, self._generation
        while freed:
            handle = freed.pop()
            if handle.generation != generation:
                continue   # its device is gone, and the memory with it
            self._live_bytes -= handle.capacity
            if later is not None:
                later.append(handle)
            else:
                give(handle.capacity, handle.buffer)

    def _destroy(self, buf: Any) -> None:
        self._owned.pop(id(buf), None)
        self._bind_groups.clear()   # rare (the pool is over its limit); none may bind it
        buf.destroy()

    @_locked
    def memory_stats(self) -> dict[str, int]:
        self._recycle()
        waiting = sum(h.capacity for h in self._deferred)
        return {"live_bytes": self._live_bytes, "pooled_bytes": self._pool.bytes + waiting,
                "peak_bytes": self._peak_bytes}

    @_locked
    def write(self, handle: GpuBuffer, data: np.ndarray) -> None:
        self._live([handle])
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if raw.size % 4:
            raw = np.concatenate([raw, np.zeros(4 - raw.size % 4, np.uint8)])
        with self._guard("writing to a buffer"):
            self.device.queue.write_buffer(handle.buffer, 0, raw)

    @_locked
    def read(self, handle: GpuBuffer, dtype: DType, count: int) -> np.ndarray:
        self._live([handle])
        nbytes = count * dtype.itemsize
        self._flush()
        with self._guard("reading a buffer"):
            # measured on an H200: faster than reading through a kept mappable buffer
            data = self.device.queue.read_buffer(handle.buffer, 0, -(-nbytes // 4) * 4)
        self._unfinished = False   # the read waited for every earlier submission
        return np.frombuffer(data, np.uint8)[:nbytes].view(dtype.np).copy()

    # --- compiling ----------------------------------------------------------
    def prepare_kernel(self, kernel: Kernel, overrides: Optional[Mapping[str, Any]] = None) \
            -> Executable:
        """`overrides` replace the tuner's choices (see tune.tune); without them, inside
        autotune() the choices are measured instead."""
        if overrides is None and autotuning.active():
            return self._autotuned(kernel)
        t0 = time.perf_counter()
        kernel = widen(kernel)
        tuned = tune(kernel, self.lang, self.limits, overrides)
        plan = kernel_plan(kernel, tuned, self.lang, self.limits)
        self._compile_plan(plan)
        # a second pass's lines follow the first's and the separator line of Plan.source
        marks = tuple(m for i, p in enumerate(plan.passes)
                      for m in ((frozenset(),) * 2 if i else ()) + p.program.line_marks)
        return Executable(plan, source=plan.source, language="wgsl",
                          tuning=self._with_checks(tuned.record()),
                          tuned_ir=_tuned_text(kernel, tuned),
                          compile_ms=(time.perf_counter() - t0) * 1e3,
                          traced_lines=marks)

    def knobs(self, kernel: Kernel) -> tuple[Knob, ...]:
        return knobs(widen(kernel), self.lang, self.limits)

    def _autotuned(self, kernel: Kernel) -> Executable:
        info = describe(self._adapter)
        key = f"{info['device']}|{info['backend_type']}|{self.lang.f16}|{kernel.key}"
        return autotuning.cached_or_measured(self._tune_cache, key,
                                             lambda: self._measure(kernel),
                                             lambda overrides: self.prepare_kernel(kernel,
                                                                                   overrides))

    def _measure(self, kernel: Kernel) -> dict[str, Any]:
        """Every candidate tuning compiled and timed on scratch buffers, the float inputs
        filled with normal samples: times on zero-filled buffers need not hold for data
        (an H200 timed one matmul layout at 4.2 ms on them, 8.5 ms in the workload)."""
        inputs = [self.allocate(max(4, n * d.itemsize)) for d, n in kernel.inputs]
        samples = np.random.default_rng(0)
        for handle, (dtype, n) in zip(inputs, kernel.inputs):
            if dtype in (DType.float32, DType.float16) and n:
                self.write(handle, samples.standard_normal(n, np.float32).astype(dtype.np))
        outputs = [self.allocate(max(4, kernel.size * kernel.dtype.itemsize))]
        try:
            return autotuning.measure(
                kernel.name, candidates(widen(kernel), self.lang, self.limits),
                lambda overrides: self.prepare_kernel(kernel, overrides),
                lambda exe: self._time(exe, inputs, outputs),
                lambda exe: tuple((c.name, c.value) for c in exe.tuning.choices))
        finally:
            for h in inputs + outputs:
                self.free(h)

    def _time(self, exe: Executable, inputs: Sequence[GpuBuffer],
              outputs: Sequence[GpuBuffer], runs: int = 3) -> float:
        """Best device milliseconds of `runs` after a warm-up (wall time without
        timestamp queries)."""
        best = float("inf")
        for run in range(runs + 1):
            t0 = time.perf_counter()
            ms = self._run(exe, inputs, outputs, timed=self.timestamps)
            if ms is None:
                self.synchronize()
                ms = (time.perf_counter() - t0) * 1e3
            if run:
                best = min(best, ms)
        return best

    def prepare_routine(self, routine: Routine) -> Executable:
        t0 = time.perf_counter()
        plan, record = routines.plan_routine(routine, self.lang, self.limits)
        self._compile_plan(plan)
        return Executable(plan, source=plan.source, language="wgsl",
                          tuning=self._with_checks(record),
                          compile_ms=(time.perf_counter() - t0) * 1e3)

    def _with_checks(self, record: TuningRecord) -> TuningRecord:
        """`record` and the runtime checks wgpu compiled into the shaders."""
        why = (f"what wgpu compiled into the shaders to guard them; {LOOP_BOUNDING_ENV}=1 "
               "keeps its loop counters, which cost time (every loop here ends)")
        return TuningRecord(record.choices + (Choice("runtime_checks", self.runtime_checks.value,
                                                     why),), record.autotuned)

    def compile_wgsl(self, source: str, label: str = "") -> Any:
        """A shader module from WGSL; WgslCompileError shows the faulty lines."""
        try:
            module, self.runtime_checks = create_module(self.device, source, label,
                                                        self.runtime_checks)
            return module
        except self._wgpu.GPUError as exc:
            error = self._translate(exc, f"compiling {label}")
            if isinstance(error, DeviceLostError):
                raise error from exc
            raise WgslCompileError(label, getattr(exc, "message", "") or str(exc),
                                   source) from None

    def _compile_plan(self, plan: Plan) -> None:
        for p in plan.passes:
            self._pipeline(p)
            key = _pipeline_key(p)
            self._pipeline_users[key] = self._pipeline_users.get(key, 0) + 1

    def release(self, exe: Executable) -> None:
        """The last executable using a pipeline drops it (one still held recompiles it
        on its next dispatch)."""
        if not isinstance(exe.program, Plan):
            return
        for p in exe.program.passes:
            key = _pipeline_key(p)
            self._pipeline_users[key] = self._pipeline_users.get(key, 1) - 1
            if self._pipeline_users[key] <= 0:
                self._pipeline_users.pop(key)
                self._pipelines.pop(key, None)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Every dispatch inside goes into one compute pass, submitted once at the end.
        The batch holds the device's lock: another thread's work waits for its end."""
        with self._lock:
            self._batch_depth += 1
            try:
                yield
            finally:
                self._batch_depth -= 1
                if not self._batch_depth:
                    self._flush()

    @contextlib.contextmanager
    def device_span(self) -> Iterator[DeviceSpan]:
        """Empty compute passes before and after the work carry its two timestamps, so
        the span is what the device spent on everything recorded between them, in
        order, with the pipelining a jit call gets (kernels timed one at a time, as
        events do, idle the GPU in between and read longer). Its own query set: a
        kernel timed inside (someone listening) keeps its own two stamps."""
        span = DeviceSpan()
        if not self.timestamps:
            yield span
            return
        with self._lock, self.batch():
            if self._span_query is None:
                self._span_query = self._query_pair()
            self._stamped_pass({"beginning_of_pass_write_index": 0})
            try:
                yield span
            finally:
                self._stamped_pass({"end_of_pass_write_index": 1})
                self._encoder.resolve_query_set(self._span_query[0], 0, 2,
                                                self._span_query[1], 0)
                span.ms = self._read_timestamps(self._span_query)

    def _stamped_pass(self, index: dict[str, int]) -> None:
        self._end_pass()
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        with self._guard("recording a timestamp"):
            self._encoder.begin_compute_pass(
                timestamp_writes={"query_set": self._span_query[0], **index}).end()

    @_locked
    def _pipeline(self, p: Pass) -> tuple[Any, Any]:
        key = _pipeline_key(p)
        if key not in self._pipelines:
            module = self.compile_wgsl(p.program.source, p.program.label)
            layout = self._layout(len(p.args), p.writable, bool(p.params))
            with self._guard(f"creating the pipeline of {p.program.label}"):
                pipeline = self.device.create_compute_pipeline(
                    layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
                    compute={"module": module, "entry_point": "main"})
            self._pipelines[key] = (pipeline, layout)
        return self._pipelines[key]

    def _layout(self, count: int, writable: frozenset, uniform: bool) -> Any:
        key = (count, writable, uniform)
        if key not in self._layouts:
            w = self._wgpu
            entries = [{"binding": i, "visibility": w.ShaderStage.COMPUTE,
                        "buffer": {"type": w.BufferBindingType.storage if i in writable
                                   else w.BufferBindingType.read_only_storage}}
                       for i in range(count)]
            if uniform:
                entries.append({"binding": count, "visibility": w.ShaderStage.COMPUTE,
                                "buffer": {"type": w.BufferBindingType.uniform}})
            self._layouts[key] = self.device.create_bind_group_layout(entries=entries)
        return self._layouts[key]

    # --- running ------------------------------------------------------------
    def launcher(self, exe: Executable) -> Callable[[Sequence[Any], Sequence[Any]], Any]:
        """A kernel inside a batch (a jit call) goes straight into the open compute pass:
        pipelines and bind groups from the caches, three commands per pass recorded
        through fastpass, scratch from the pool (given back once the commands that use
        it are submitted). Timed (someone listening) or outside a batch: dispatch()."""
        plan = exe.program
        if not plan.passes:
            return super().launcher(exe)
        passes = [(p, _pipeline_key(p), p.program.grid) for p in plan.passes]
        scratch, generation = plan.scratch, self._generation
        label = plan.passes[0].program.label

        def launch(inputs: Sequence[Any], outputs: Sequence[Any]) -> Optional[float]:
            handles = inputs + outputs
            if not self._batch_depth or generation != self._generation or \
                    any(h.generation != generation for h in handles) or \
                    (self.timestamps and events.listening()):
                return self.dispatch(exe, inputs, outputs)
            temps = [self.allocate(n) for n in scratch] if scratch else []
            bound = handles + temps if temps else handles
            try:
                # pipelines and bind groups first: what can fail does so before recording
                work = []
                for p, key, grid in passes:
                    pipeline, layout = self._pipelines.get(key) or self._pipeline(p)
                    work.append((pipeline, self._bind_group(layout, p, bound), grid))
                self._record_work(work)
            except self._wgpu.GPUError as exc:
                raise self._translate(exc, f"dispatching {label}") from exc
            finally:
                for h in temps:
                    self.free(h)
            return None
        return launch

    def binding_key(self, handles: Sequence[Any]) -> Hashable:
        # the wgpu buffers: a handle is new each allocation, a pooled buffer comes back
        return tuple([h.buffer for h in handles])

    def program_replay(self, launches: Sequence[tuple[Executable, list, list]],
                       table: Sequence[Any]) -> Optional[ProgramReplay]:
        """A jit program of kernels only, bound once per set of buffers (replay.py)."""
        plans = [exe.program for exe, _, _ in launches]
        if not all(isinstance(plan, Plan) and plan.passes for plan in plans):
            return None
        return ProgramReplay(self, [(plan, ins, outs) for plan, (_, ins, outs)
                                    in zip(plans, launches)], table)

    def _pack(self, work: Sequence[tuple[Any, Any, tuple[int, int, int]]]) -> list:
        """(pipeline, bind group, grid) launches in the form `_replay` records."""
        if self._recorder is None:
            self._pass or self._open_pass()   # the recorder is chosen on a real pass
        pack = self._recorder.pack
        return [pack(*launch) for launch in work]

    def _replay(self, packed: list, keep: list, ahead: Any = None) -> bool:
        """Packed launches (`_pack`) run after everything recorded before them (under
        the lock). Where nothing is open (a warm jit call outside any batch) they go
        into a command buffer of their own, made and submitted at once with bare C
        calls (fastpass.Commands); `ahead` is that buffer when it was recorded before
        (`_record_ahead`, these very launches), submitted as it is. Else into the open
        pass, `keep` (what they use) held until the encoder finishes, submitted when
        the batch ends; with SUBMIT_EVERY, that many at a time. True when they went
        alone (a replay may then record its next call ahead)."""
        commands = self._recorder.commands
        if commands is not None and self._encoder is None and not self._batch_depth and \
                not SUBMIT_EVERY:
            if self._queued:
                self._flush()   # eager work recorded before it goes first
            try:   # _guard's work without a generator's cost, on every warm call
                commands.submit(commands.record(packed) if ahead is None else ahead)
            except self._wgpu.GPUError as exc:
                raise self._translate(exc, "submitting work") from exc
            self._unfinished = True
            return True
        if ahead is not None:
            commands.drop(ahead)
        with self.batch():
            self._play(packed, keep)
        return False

    def _record_ahead(self, packed: list) -> Optional[tuple[Any, Callable[[Any], None]]]:
        """(a command buffer of `packed`, what releases it unsubmitted), recorded now for
        a later `_replay`: after a call's submit, while the GPU runs it, so that the next
        call only submits. None where it cannot be (an error: the call that would have
        used it records again and raises it there)."""
        commands = self._recorder.commands
        try:
            return commands.record(packed), commands.drop
        except self._wgpu.GPUError:
            return None

    def _play(self, packed: list, keep: list) -> None:
        chunk = SUBMIT_EVERY or len(packed) or 1
        for start in range(0, len(packed), chunk):
            cpass = self._pass or self._open_pass()
            self._recorded.append(keep)
            part = packed if chunk == len(packed) else packed[start:start + chunk]
            self._recorder.play(cpass, part)
            self._in_pass += len(part)
            if SUBMIT_EVERY and self._in_pass >= SUBMIT_EVERY:
                self._flush()

    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        return self._run(exe, inputs, outputs, timed=self.timestamps and events.listening())

    @_locked
    def _run(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any],
             timed: bool) -> Optional[float]:
        plan: Plan = exe.program
        self._live([*inputs, *outputs])
        if not plan.passes:
            return None   # an empty routine
        scratch = [self.allocate(n) for n in plan.scratch]
        handles = [*inputs, *outputs, *scratch]
        if not timed:
            with self._guard(f"dispatching {plan.passes[0].program.label}"), \
                    self._freeing(scratch):
                self._record(plan, handles)
            return None
        self._close_pass()   # a timed dispatch runs alone, after what was recorded
        with self._guard(f"dispatching {plan.passes[0].program.label}"), \
                self._freeing(scratch):
            encoder = self.device.create_command_encoder()
            for i, p in enumerate(plan.passes):
                pipeline, layout = self._pipeline(p)
                stamps = self._stamps(i == 0, i == len(plan.passes) - 1) if timed else None
                cpass = encoder.begin_compute_pass(timestamp_writes=stamps)
                cpass.set_pipeline(pipeline)
                cpass.set_bind_group(0, self._bind_group(layout, p, handles))
                cpass.dispatch_workgroups(*p.program.grid)
                cpass.end()
            encoder.resolve_query_set(self._query[0], 0, 2, self._query[1], 0)
            self._queued.append(encoder.finish())
        ms = self._read_timestamps()
        exe.extra["device_ms"] = ms
        return ms

    @_locked
    def pass_times(self, exe: Executable, inputs: Sequence[GpuBuffer],
                   outputs: Sequence[GpuBuffer]) -> list[tuple[str, float]]:
        """(label, device ms) of each pass of a plan, each in a compute pass of its own
        between two timestamps, all in one submission: where a routine spends its time.
        Empty without timestamp queries."""
        plan: Plan = exe.program
        if not self.timestamps or not plan.passes:
            return []
        self._live([*inputs, *outputs])
        self._flush()
        w, count = self._wgpu, 2 * len(plan.passes)
        scratch = [self.allocate(n) for n in plan.scratch]
        handles = [*inputs, *outputs, *scratch]
        with self._guard("timing passes"), self._freeing(scratch):
            queries = self.device.create_query_set(type=w.QueryType.timestamp, count=count)
            resolved = self.device.create_buffer(
                size=8 * count, usage=w.BufferUsage.QUERY_RESOLVE | w.BufferUsage.COPY_SRC)
            encoder = self.device.create_command_encoder()
            for i, p in enumerate(plan.passes):
                pipeline, layout = self._pipeline(p)
                cpass = encoder.begin_compute_pass(timestamp_writes={
                    "query_set": queries, "beginning_of_pass_write_index": 2 * i,
                    "end_of_pass_write_index": 2 * i + 1})
                cpass.set_pipeline(pipeline)
                cpass.set_bind_group(0, self._bind_group(layout, p, handles))
                cpass.dispatch_workgroups(*p.program.grid)
                cpass.end()
            encoder.resolve_query_set(queries, 0, count, resolved, 0)
            self.device.queue.submit([encoder.finish()])
            ns = np.frombuffer(self.device.queue.read_buffer(resolved), np.uint64)
        return [(p.program.label, float(int(ns[2 * i + 1]) - int(ns[2 * i])) / 1e6)
                for i, p in enumerate(plan.passes)]

    def _record(self, plan: Plan, handles: Sequence[GpuBuffer]) -> None:
        """Append the plan's passes to the open compute pass (WebGPU orders the
        dispatches of a pass and makes each one's writes visible to the next)."""
        # pipelines and bind groups first: what can fail does so before the pass changes
        work = []
        for p in plan.passes:
            pipeline, layout = self._pipeline(p)
            work.append((pipeline, self._bind_group(layout, p, handles), p.program.grid))
        self._record_work(work)
        if not self._batch_depth:   # eager: finished now, so an error names this dispatch
            self._close_pass()
            if len(self._queued) >= FLUSH_EVERY:
                self._flush()

    def _record_work(self, work: Sequence[tuple[Any, Any, tuple[int, int, int]]]) -> None:
        """(pipeline, bind group, grid) launches into the open pass. The objects are held
        until the encoder finishes: the commands refer to them and the caches may evict."""
        cpass = self._pass or self._open_pass()
        record, keep = self._recorder.record, self._recorded
        for pipeline, group, grid in work:
            keep.append((pipeline, group))
            record(cpass, pipeline, group, grid)
        self._in_pass += len(work)
        if SUBMIT_EVERY and self._in_pass >= SUBMIT_EVERY:
            self._flush()

    def _open_pass(self) -> Any:
        self._in_pass = 0
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        self._pass = self._encoder.begin_compute_pass()
        if self._recorder is None:
            self._recorder = fastpass.recorder(self.device, self._pass)
        return self._pass

    def _end_pass(self) -> None:
        """End the open compute pass, keeping its encoder open for more commands."""
        if self._pass is not None:
            cpass, self._pass = self._pass, None
            with self._guard("recording work"):
                cpass.end()

    def _close_pass(self) -> None:
        """End the open pass and encoder; its command buffer waits in the queue list."""
        self._end_pass()
        if self._encoder is not None:
            encoder, self._encoder = self._encoder, None
            with self._guard("recording work"):
                self._queued.append(encoder.finish())
            self._recorded.clear()

    @_locked
    def copy(self, src: GpuBuffer, src_offset: int, dst: GpuBuffer, dst_offset: int,
             nbytes: int) -> None:
        """Recorded in the open encoder between compute passes (a loop's row writes stay
        in its one command buffer); WebGPU copies whole 4-byte words, so a copy of
        other sizes or offsets (bool and float16 rows) reads and writes through the host."""
        self._live([src, dst])
        if not nbytes:
            return
        if (src_offset | dst_offset | nbytes) % 4:
            self._copy_through_host(src, src_offset, dst, dst_offset, nbytes)
            return
        with self._guard("copying between buffers"):
            self._end_pass()
            if self._encoder is None:
                self._encoder = self.device.create_command_encoder()
            self._encoder.copy_buffer_to_buffer(src.buffer, src_offset, dst.buffer,
                                                dst_offset, nbytes)
        if not self._batch_depth:
            self._close_pass()

    def _copy_through_host(self, src: GpuBuffer, src_offset: int, dst: GpuBuffer,
                           dst_offset: int, nbytes: int) -> None:
        lo, hi = dst_offset // 4 * 4, -(-(dst_offset + nbytes) // 4) * 4
        self._flush()
        with self._guard("copying between buffers"):
            data = np.frombuffer(self.device.queue.read_buffer(src.buffer, 0, src.capacity),
                                 np.uint8)
            words = np.frombuffer(self.device.queue.read_buffer(dst.buffer, lo, hi - lo),
                                  np.uint8).copy()
            start = dst_offset - lo
            words[start:start + nbytes] = data[src_offset:src_offset + nbytes]
            self.device.queue.write_buffer(dst.buffer, lo, words)
        self._unfinished = False

    @contextlib.contextmanager
    def _freeing(self, handles: list[GpuBuffer]) -> Iterator[None]:
        try:
            yield
        finally:
            for h in handles:
                self.free(h)

    def _bind_group(self, layout: Any, p: Pass, handles: Sequence[GpuBuffer]) -> Any:
        """Made once per layout and buffers bound: a jit program binds the same
        buffers call after call."""
        bound = tuple([handles[a].buffer for a in p.args])
        key = (id(layout), tuple(map(id, bound)), p.params)
        hit = self._bind_groups.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[1], bound)):
            self._bind_groups.move_to_end(key)
            return hit[0]
        group = self._new_bind_group(layout, p, handles)
        self._bind_groups[key] = (group, bound)   # holding the buffers keeps their ids
        if len(self._bind_groups) > BIND_GROUPS:
            self._bind_groups.popitem(last=False)
        return group

    def _new_bind_group(self, layout: Any, p: Pass, handles: Sequence[GpuBuffer]) -> Any:
        entries = [{"binding": i, "resource": {"buffer": handles[a].buffer, "offset": 0,
                                               "size": handles[a].capacity}}
                   for i, a in enumerate(p.args)]
        if p.params:
            if p.params not in self._uniforms:
                self._uniforms[p.params] = self.device.create_buffer_with_data(
                    data=p.params, usage=self._wgpu.BufferUsage.UNIFORM)
            entries.append({"binding": len(p.args),
                            "resource": {"buffer": self._uniforms[p.params]}})
        return self.device.create_bind_group(layout=layout, entries=entries)

    def _stamps(self, first: bool, last: bool) -> Optional[dict[str, Any]]:
        if self._query is None:
            self._query = self._query_pair()
        stamps: dict[str, Any] = {"query_set": self._query[0]}
        if first:
            stamps["beginning_of_pass_write_index"] = 0
        if last:
            stamps["end_of_pass_write_index"] = 1
        return stamps if len(stamps) > 1 else None

    def _query_pair(self) -> tuple[Any, Any]:
        """A query set of two timestamps and the buffer they resolve into."""
        w = self._wgpu
        qs = self.device.create_query_set(type=w.QueryType.timestamp, count=2)
        buf = self.device.create_buffer(
            size=16, usage=w.BufferUsage.QUERY_RESOLVE | w.BufferUsage.COPY_SRC)
        return qs, buf

    def _read_timestamps(self, query: Optional[tuple[Any, Any]] = None) -> float:
        self._flush()
        with self._guard("reading timestamps"):
            ns = np.frombuffer(self.device.queue.read_buffer((query or self._query)[1]),
                               np.uint64)
        return float(int(ns[1]) - int(ns[0])) / 1e6

    @_locked
    def _flush(self) -> None:
        """Submit what was recorded (without waiting) and recycle deferred frees."""
        self._close_pass()
        if self._queued:
            queued, self._queued = self._queued, []
            with self._guard("submitting work"):
                self.device.queue.submit(queued)
            self._unfinished = True
        deferred, self._deferred = self._deferred, []
        for h in deferred:
            if h.generation == self._generation:
                self._pool.give(h.capacity, h.buffer)
        self._recycle()

    @_locked
    def synchronize(self) -> None:
        self._flush()
        if not self._unfinished:   # nothing submitted since the last wait (a jit call's
            return                 # outputs are synchronised one after another)
        with self._guard("waiting for the device"):
            if self._wait is not None:
                self._wait()
            else:   # a read waits for all earlier submissions (wgpu-py 0.32's
                # on_submitted_work_done_sync fails on a callback signature mismatch)
                if self._fence is None:
                    self._fence = self.allocate(4)
                self.device.queue.read_buffer(self._fence.buffer, 0, 4)
        self._unfinished = False


def _pipeline_key(p: Pass) -> tuple:
    return (p.program.source, len(p.args), p.writable, bool(p.params))


def _tuned_text(kernel: Kernel, t: Tuning) -> str:
    lines = [kernel.text(), f"  layout: {t.strategy.value}, {t.workgroup} threads per workgroup"]
    if t.contraction is not None:
        c = t.contraction
        lines += [f"  as a contraction: batch {c.batch}, M {c.m}, N {c.n}",
                  f"    a(bidx, midx, ridx) = {render(c.a)}",
                  f"    b(bidx, nidx, ridx) = {render(c.b)}",
                  f"    gidx(bidx, midx, nidx) = {render(c.out_index)}"]
    return "\n".join(lines)
