"""KernelEvent and capture(): what the engine tells whoever is listening.

The engine never imports IPython: it appends events to the active recorders.
A notebook, a test, a benchmark and a terminal all read the same events.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from jaxlab import state

if TYPE_CHECKING:
    from jaxlab.backends.base import TuningRecord
    from jaxlab.engine.fusion import Unfused
    from jaxlab.ir.kernel import KernelPipeline
    from jaxlab.ir.provenance import LineOrigins, Origin


@dataclass
class KernelEvent:
    name: str
    backend: str
    kind: str                       # "kernel" or "routine"
    input_shapes: list[tuple] = field(default_factory=list)
    input_dtypes: list[str] = field(default_factory=list)
    output_shapes: list[tuple] = field(default_factory=list)
    output_dtypes: list[str] = field(default_factory=list)
    equations: list[str] = field(default_factory=list)   # jaxpr equations it fused
    origins: list[Origin] = field(default_factory=list)  # the same, with the user's lines
    ir: str = ""                    # kernel IR before tuning
    tuned_ir: str = ""              # after tuning
    tuning: Optional[TuningRecord] = None  # choices and the reasons for them
    source: str = ""                # generated WGSL / WAT / NumPy plan
    source_language: str = ""
    # per line of `source`, the equations it computes (where the generator records them)
    line_origins: Optional[LineOrigins] = None
    compile_ms: float = 0.0
    dispatch_ms: float = 0.0        # host time of the dispatch call
    device_ms: Optional[float] = None  # GPU timestamp queries, where available
    flops: int = 0
    bytes: int = 0
    cache_hit: bool = False
    key: str = ""
    reason: str = ""                # why this value had to exist in memory
    # the same as the fuser decided it: its kind, the equation that made the value and
    # the one that wanted it (engine/fusion.py)
    unfused: Optional[Unfused] = None
    pipeline: Optional[KernelPipeline] = None   # the kernel as lowered, and the rules that fired
    calls: int = 1                  # dispatches it stands for (a loop body's kernel: one
                                    # event for all iterations; times, flops and bytes
                                    # are their sums)
    # perf_counter seconds when the event was made, just after its dispatch
    # returned: what places it on a timeline (lab/profile.py)
    timestamp: float = field(default_factory=time.perf_counter)

    def summary(self) -> str:
        shape = "x".join(map(str, self.output_shapes[0])) if self.output_shapes else "-"
        hit = " (cached)" if self.cache_hit else f" compile {self.compile_ms:.2f} ms"
        calls = f" x{self.calls}" if self.calls != 1 else ""
        return (f"{self.name:<24} {shape:>14} {self.backend:<7} "
                f"{self.dispatch_ms * 1000:9.1f} us{calls}{hit}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EventLog(list):
    """The events of one capture() block, in order."""

    def kernels(self) -> list[KernelEvent]:
        return [e for e in self if e.kind == "kernel"]

    def summary(self) -> str:
        return "\n".join(e.summary() for e in self)


@contextlib.contextmanager
def capture() -> Iterator[EventLog]:
    """`with jaxlab.capture() as log:` collects every KernelEvent emitted inside (in
    this thread or asyncio task)."""
    with state.captures.scoped(state.captures.get() + (EventLog(),)) as logs:
        yield logs[-1]


def subscribe(callback: Callable[[KernelEvent], None]) -> None:
    """Call `callback(event)` for each event emitted from now on, from every thread
    (the lab's `%jaxlab debug`)."""
    state.subscribers.add(callback)


def unsubscribe(callback: Callable[[KernelEvent], None]) -> None:
    state.subscribers.remove(callback)


@contextlib.contextmanager
def per_iteration() -> Iterator[None]:
    """Inside, a jit program's loops emit every iteration's dispatches as events
    (a timeline, the lab's --trace) instead of one event per kernel with `calls`."""
    with state.per_iteration.scoped(True):
        yield


def per_iteration_active() -> bool:
    return state.per_iteration.get()


def listening() -> bool:
    return bool(state.captures.get()) or bool(state.subscribers)


def emit(event: KernelEvent) -> None:
    for log in state.captures.get():
        log.append(event)
    for callback in state.subscribers.snapshot():
        callback(event)
