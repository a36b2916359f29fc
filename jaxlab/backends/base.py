"""The Backend protocol: the few things every device must do.

allocate / free / write / read move bytes; prepare_kernel and prepare_routine
turn IR into something runnable (an Executable carrying the generated source
and the tuning record, for the lab to show); dispatch runs it.
"""
from __future__ import annotations

import abc
import contextlib
import functools
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Optional, Sequence

import numpy as np

from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine


@dataclass
class Executable:
    """A prepared kernel or routine, ready to dispatch."""
    program: Any                      # whatever the backend runs
    source: str = ""                  # generated text (WGSL, WAT, a NumPy plan)
    language: str = ""
    tuning: Optional[dict[str, Any]] = None
    tuned_ir: str = ""
    compile_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Backend(abc.ABC):
    name: str = ""
    max_kernel_inputs: int = 1 << 30   # storage-buffer limits cap fusion on GPUs
    max_elements: int = (1 << 31) - 1  # kernels index in int32 (ir: Special gidx/ridx)
    max_buffer_bytes: int = 1 << 62    # the largest array the device holds (engine/limits.py)
    buffer_limit_reason: str = ""      # what sets max_buffer_bytes, for the error message

    @abc.abstractmethod
    def allocate(self, nbytes: int) -> Any: ...

    @abc.abstractmethod
    def free(self, handle: Any) -> None: ...

    @abc.abstractmethod
    def write(self, handle: Any, data: np.ndarray) -> None: ...

    @abc.abstractmethod
    def read(self, handle: Any, dtype: DType, count: int) -> np.ndarray: ...

    @abc.abstractmethod
    def prepare_kernel(self, kernel: Kernel) -> Executable: ...

    @abc.abstractmethod
    def prepare_routine(self, routine: Routine) -> Executable: ...

    @abc.abstractmethod
    def dispatch(self, exe: Executable, inputs: Sequence[Any], outputs: Sequence[Any]) \
            -> Optional[float]:
        """Run; returns device milliseconds where the device measures them."""

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

    def batch(self) -> ContextManager[None]:
        """Dispatches inside `with backend.batch():` may be recorded together and
        submitted once at the end (a jit call); reads inside still see every result."""
        return contextlib.nullcontext()

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}

    def memory_stats(self) -> dict[str, int]:
        """Bytes of device memory: `live_bytes` (held by arrays), `pooled_bytes` (freed
        and kept for reuse), `peak_bytes` (the most live at once)."""
        return {"live_bytes": 0, "pooled_bytes": 0, "peak_bytes": 0}
