"""The Backend protocol: the few things every device must do.

allocate / free / write / read move bytes; prepare_kernel and prepare_routine
turn IR into something runnable (an Executable carrying the generated source
and the tuning record, for the lab to show); dispatch runs it. `knobs(kernel)`
says which tuning choices a caller may override for a kernel and with which
values; `prepare_kernel(kernel, overrides)` takes them.
"""
from __future__ import annotations

import abc
import contextlib
import functools
import math
from dataclasses import dataclass, field
from typing import (Any, Callable, ContextManager, Hashable, Iterator, Mapping, Optional,
                    Sequence)

import numpy as np

from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine


@dataclass(frozen=True)
class Choice:
    """One tuning decision: what was chosen and why."""
    name: str
    value: Any
    reason: str = ""


@dataclass
class DeviceSpan:
    """The device time of the work recorded inside `Backend.device_span()`, filled in
    when the span ends: None where the device cannot measure it."""
    ms: Optional[float] = None


@dataclass(frozen=True)
class Candidate:
    """One configuration autotuning compiled and timed."""
    settings: tuple[tuple[str, Any], ...]   # (choice name, value), as the tuner records them
    compile_ms: float
    run_ms: float
    winner: bool = False


@dataclass(frozen=True)
class Autotuned:
    """How a kernel's tuning was measured: every candidate, the time it took,
    and whether the result came from the on-disk cache (and when it was measured)."""
    candidates: tuple[Candidate, ...]
    tuning_ms: float          # compiling and timing every candidate, when measured
    from_cache: bool
    measured_at: str          # ISO 8601, UTC


@dataclass(frozen=True)
class TuningRecord:
    """A kernel's tuning choices, with the autotune measurements behind them."""
    choices: tuple[Choice, ...] = ()
    autotuned: Optional[Autotuned] = None

    def value(self, name: str) -> Any:
        """The value of choice `name` (KeyError where there is none)."""
        for choice in self.choices:
            if choice.name == name:
                return choice.value
        raise KeyError(f"no tuning choice {name!r}; choices: "
                       f"{', '.join(c.name for c in self.choices)}")

    def reason(self, name: str) -> str:
        return next(c.reason for c in self.choices if c.name == name)

    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.choices)


@dataclass(frozen=True)
class Knob:
    """A tuning choice a caller may set for one kernel: every value offered compiles."""
    name: str
    values: tuple[Any, ...]
    current: Any              # the tuner's own choice
    doc: str                  # what it does


@dataclass
class Executable:
    """A prepared kernel or routine, ready to dispatch."""
    program: Any                      # whatever the backend runs
    source: str = ""                  # generated text (WGSL, WAT, a NumPy plan)
    language: str = ""
    tuning: Optional[TuningRecord] = None
    tuned_ir: str = ""
    compile_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    # per line of `source`, what it computes: nodes of the kernel as lowered (and
    # provenance.FOLD for a reduction step); set by engine/dispatch.py from what the
    # generator records (`traced_lines`), empty where it records nothing
    line_marks: tuple[frozenset, ...] = ()
    traced_lines: tuple[frozenset, ...] = ()   # the same, in nodes of the tuned kernel
    flops: Optional[int] = None       # a routine's, where its backend can count them


class Backend(abc.ABC):
    name: str = ""
    # dispatch returns when the work is done, so its host time is the kernel's own time
    # (the lab's roofline counts only measured times)
    host_timed: bool = False
    max_kernel_inputs: int = 1 << 30   # storage-buffer limits cap fusion on GPUs
    # ops nested on one path of a fused expression; past it operands are realized
    # first (shader compilers slow down sharply on deep expressions)
    max_fused_depth: int = 1 << 30
    # a row kernel holds rows of at most this many values in one workgroup, so a
    # reduction broadcast back over its rows is folded where it is used (softmax in one
    # read: engine/deferred.py); 0: never. Its folds and outputs have these dtypes.
    max_row_length: int = 0
    min_row_length: int = 1            # shorter rows would leave a workgroup's lanes idle
    row_dtypes: frozenset = frozenset()
    # may a row kernel read its rows with a stride (down columns)? A GPU's neighbouring
    # threads then read neighbouring rows; a CPU's SIMD lanes would gather one by one
    strided_rows: bool = True
    max_elements: int = (1 << 31) - 1  # kernels index in int32 (ir: Special gidx/ridx)
    max_buffer_bytes: int = 1 << 62    # the largest array the device holds (engine/limits.py)
    buffer_limit_reason: str = ""      # what sets max_buffer_bytes, for the error message
    dtypes: frozenset = frozenset(DType)   # the dtypes its kernels compute
    # its sort routines take 8/16-bit values as they are; else they sort them widened to
    # 32 bits (core/linalg.py)
    narrow_sorts: bool = False
    dtype_limit_reason: str = ""       # why others are missing, for the error message
    # float results below the normal range may come back as zeros of their sign: WGSL lets
    # a GPU flush subnormals (NVIDIA's Vulkan driver does); NumPy's arithmetic keeps them
    may_flush_subnormals: bool = False

    @abc.abstractmethod
    def allocate(self, nbytes: int) -> Any: ...

    def allocate_many(self, sizes: Sequence[int]) -> list[Any]:
        """allocate() of each size, in order (a jit call's outputs): a backend with a
        lock takes it once here."""
        return [self.allocate(n) for n in sizes]

    @abc.abstractmethod
    def free(self, handle: Any) -> None: ...

    @abc.abstractmethod
    def write(self, handle: Any, data: np.ndarray) -> None: ...

    @abc.abstractmethod
    def read(self, handle: Any, dtype: DType, count: int) -> np.ndarray: ...

    def read_array(self, handle: Any, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
        """read() of a whole buffer in `shape` (a non-empty one): a backend that can
        build the copy in its shape in one step says so here (a read-back's hot path)."""
        return self.read(handle, dtype, math.prod(shape)).reshape(shape)

    @abc.abstractmethod
    def prepare_kernel(self, kernel: Kernel,
                       overrides: Optional[Mapping[str, Any]] = None) -> Executable:
        """`overrides` (knob name -> one of that knob's values) replace the tuner's choices."""

    def knobs(self, kernel: Kernel) -> tuple[Knob, ...]:
        """The tuning choices `prepare_kernel` takes overrides for, for `kernel`."""
        return ()

    @abc.abstractmethod
    def prepare_routine(self, routine: Routine) -> Executable: ...

    @abc.abstractmethod
    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        """Run; returns device milliseconds where the device measures them."""

    @abc.abstractmethod
    def copy(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        """Bytes [src_offset, +nbytes) of `src` into `dst` at `dst_offset`, in order with
        the dispatches around it (a scan writes each step's row of its stacked output)."""

    def synchronize(self) -> None:
        """Wait for submitted work (a no-op for synchronous backends)."""

    def release(self, exe: Executable) -> None:
        """The compile cache evicted `exe`: free what only it used (a compiled module, a
        pipeline). Dispatching `exe` afterwards must still work (a jit program may hold
        it), if more slowly."""

    def launcher(self, exe: Executable) -> Callable[[Sequence[Any], Sequence[Any]], Any]:
        """A callable (inputs, outputs) -> device ms or None that runs `exe`: jit programs
        prepare one per step, so a backend can do its per-dispatch checks here once."""
        return functools.partial(self.dispatch, exe)

    def binding_key(self, handles: Sequence[Any]) -> Hashable:
        """Equal for two lists of handles that bind the same memory, so that what was
        bound to one serves the other (a holder of the key holds the handles: no id is
        reused meanwhile)."""
        return tuple(map(id, handles))

    def program_replay(self, launches: Sequence[tuple[Executable, list, list]],
                       table: Sequence[Any]) -> Optional[Callable[[Sequence[Any]], bool]]:
        """A faster way than the launchers to run a jit program of kernels only (no one
        listening to events): `launches` are (executable, input places, output places)
        into `table` (handles; the call's inputs and outputs fill its first places).
        The callable runs them all on the call's handles and returns True, or False
        where it cannot (the launchers run instead). None: nothing faster here."""
        return None

    def batch(self) -> ContextManager[None]:
        """Dispatches inside `with backend.batch():` may be recorded together and
        submitted once at the end (a jit call); reads inside still see every result."""
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def device_span(self) -> Iterator[DeviceSpan]:
        """Everything dispatched inside, timed on the device as one span from its first
        command to its last (a whole jit call as the device ran it, gaps included);
        `span.ms` stays None where the device has no clock."""
        yield DeviceSpan()

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}

    def memory_stats(self) -> dict[str, int]:
        """Bytes of device memory: `live_bytes` (held by arrays), `pooled_bytes` (freed
        and kept for reuse), `peak_bytes` (the most live at once)."""
        return {"live_bytes": 0, "pooled_bytes": 0, "peak_bytes": 0}


def no_overrides(backend: Backend, overrides: Optional[Mapping[str, Any]]) -> None:
    """Refuse overrides, for a backend without knobs."""
    if overrides:
        raise ValueError(f"the {backend.name} backend has no tuning knobs; got "
                         f"{', '.join(sorted(overrides))}")
