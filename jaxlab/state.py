"""Every piece of jaxlab's mutable state, in one place, with its scope and its guard.

Per context: each thread and each asyncio task sees its own value (a ContextVar); a new
thread starts from the default, and leaving a `with` block restores exactly what was
there before it.
    default_device    the device new arrays go to (None: jax_platform_name's, else the first available)
                      engine/devices.py
    trace_stack       the transformations active, innermost last          core/trace.py
    dynamic_trace     a staging trace that captures every bind             core/trace.py
    recorder          jit: kernels are recorded instead of run             engine/dispatch.py
    autotuning        kernels compiled now are tuned by timing      backends/autotuning.py
    captures          the capture() logs that events go to                 events.py
    per_iteration     loops report every iteration's dispatch              events.py
    config_scoped     config options set by `with` blocks (disable_jit...)  configuration.py

Shared by every thread, each behind its lock:
    platforms         backend factories and priorities, started devices    engine/devices.py
                      (an RLock: two threads asking for a new device start one backend;
                      a priority such as webgpu's GPU probe is asked once, under it)
    subscribers       callbacks that see every event                       events.py
    tuning_listeners  callbacks that see autotuning progress        backends/autotuning.py
    scalar_buffers    recent scalar arguments' device buffers              engine/scalars.py

Caches that belong to one device live on it, behind the device's own lock, so two
devices never wait for each other: the compile cache (`Device.cache`, engine/cache.py),
wasm's allocator and webgpu's queue, pool and caches (docs/ARCHITECTURE.md, Threads).
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, TypeVar

if TYPE_CHECKING:
    from jaxlab.core.trace import MainTrace
    from jaxlab.engine.buffer import Buffer
    from jaxlab.engine.devices import Device
    from jaxlab.engine.dispatch import Recorder
    from jaxlab.events import EventLog

T = TypeVar("T")


class ContextValue(Generic[T]):
    """A value of which each thread and asyncio task has its own."""

    def __init__(self, name: str, default: T) -> None:
        self._var: contextvars.ContextVar[T] = contextvars.ContextVar(f"jaxlab_{name}",
                                                                       default=default)
        self.get: Callable[[], T] = self._var.get   # the hot path: no wrapper call
        self.set: Callable[[T], Any] = self._var.set

    @contextlib.contextmanager
    def scoped(self, value: T) -> Iterator[T]:
        """`with value.scoped(v):` v inside, then exactly what was there before."""
        token = self._var.set(value)
        try:
            yield value
        finally:
            self._var.reset(token)


class Listeners(Generic[T]):
    """Callbacks shared by every thread: changed under a lock, read as a snapshot (a
    callback added while another thread calls them is called from the next time on)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: tuple[T, ...] = ()

    def add(self, callback: T) -> None:
        with self._lock:
            self._items += (callback,)

    def remove(self, callback: T) -> None:
        """Forget callback (once, if it was added)."""
        with self._lock:
            items = list(self._items)
            if callback in items:
                items.remove(callback)
            self._items = tuple(items)

    @contextlib.contextmanager
    def added(self, callback: T) -> Iterator[None]:
        self.add(callback)
        try:
            yield
        finally:
            self.remove(callback)

    def snapshot(self) -> tuple[T, ...]:
        return self._items

    def __bool__(self) -> bool:
        return bool(self._items)


@dataclass
class Platforms:
    """The backends the engine knows and the devices started, behind `lock`."""
    factories: dict[str, Callable[[], Any]] = field(default_factory=dict)
    # an int, or a function asked once (under the lock) the first time devices are listed
    priorities: dict[str, Any] = field(default_factory=dict)
    devices: dict[str, "Device"] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)   # name -> why it failed
    lock: threading.RLock = field(default_factory=threading.RLock)


@dataclass
class ScalarBuffers:
    """Per device (by id), the most recent scalar arguments' buffers, behind `lock`."""
    kept: dict[int, "OrderedDict[tuple, Buffer]"] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


# --- per context ------------------------------------------------------------------
default_device: ContextValue["Device | None"] = ContextValue("default_device", None)
trace_stack: ContextValue["tuple[MainTrace, ...]"] = ContextValue("trace_stack", ())
dynamic_trace: ContextValue["MainTrace | None"] = ContextValue("dynamic_trace", None)
recorder: ContextValue["Recorder | None"] = ContextValue("recorder", None)
autotuning: ContextValue[bool] = ContextValue("autotuning", False)
captures: ContextValue["tuple[EventLog, ...]"] = ContextValue("captures", ())
per_iteration: ContextValue[bool] = ContextValue("per_iteration", False)
config_scoped: ContextValue[dict[str, Any]] = ContextValue("config_scoped", {})

# --- shared -----------------------------------------------------------------------
platforms = Platforms()
subscribers: Listeners[Callable[[Any], None]] = Listeners()
tuning_listeners: Listeners[Callable[[Any], None]] = Listeners()
scalar_buffers = ScalarBuffers()
