"""Devices: a named backend instance, the registry, and the default device."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, Optional, Union

from jaxlab import state
from jaxlab.backends.base import Backend
from jaxlab.engine import platforms
from jaxlab.engine.cache import CompileCache


class Device:
    """One device (JAX's `Device`): `.platform` names its backend."""

    def __init__(self, platform: str, backend: Backend, id: int = 0) -> None:
        self.platform = platform
        self.id = id
        self.backend = backend
        # compiled kernels by structure, bounded (JAXLAB_CACHE_SIZE); eviction releases
        self.cache = CompileCache(backend.release)

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"


# The registry is state.platforms: a factory that fails removes only its own device.
_registry = state.platforms


def register_backend(name: str, factory: Callable[[], Backend],
                     priority: platforms.Priority = 0) -> None:
    """Make a backend known; the available one of highest priority is the default."""
    with _registry.lock:
        _registry.factories[name] = factory
        _registry.priorities[name] = priority


def unregister_backend(name: str) -> None:
    """Forget a backend and its device (a test's temporary one)."""
    with _registry.lock:
        for table in (_registry.factories, _registry.priorities, _registry.devices,
                      _registry.unavailable):
            table.pop(name, None)


def _priority(name: str) -> int:
    value = _registry.priorities[name]
    if callable(value):
        with _registry.lock:   # asked once, even when two threads list the devices at once
            value = _registry.priorities[name]
            if callable(value):
                value = _registry.priorities[name] = value()
    return value


for _platform in platforms.BUILTIN:   # the engine registers the backends jaxlab ships
    register_backend(*_platform)


PLATFORMS_VARIABLE = "JAXLAB_PLATFORMS"


def allowed_platforms() -> Optional[list[str]]:
    """The platforms JAXLAB_PLATFORMS names (comma-separated, in order of preference,
    as JAX_PLATFORMS for JAX), or None when it is unset: then every device may start."""
    value = os.environ.get(PLATFORMS_VARIABLE, "").strip()
    if not value:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in _registry.factories]
    if unknown:
        raise ValueError(f"{PLATFORMS_VARIABLE}={value!r} names unknown platforms "
                         f"{unknown}; known: {', '.join(sorted(_registry.factories))}")
    return names


def get_device(name: str) -> Device:
    device = _registry.devices.get(name)
    if device is not None:
        return device
    with _registry.lock:   # two threads asking for a new device start one backend
        return _registry.devices.get(name) or _start(name)


def _start(name: str) -> Device:
    if name not in _registry.factories:
        raise ValueError(f"unknown device {name!r}; known: {', '.join(sorted(_registry.factories))}")
    allowed = allowed_platforms()
    if allowed is not None and name not in allowed:
        raise RuntimeError(f"device {name!r} is not available here: "
                           f"{PLATFORMS_VARIABLE}={os.environ[PLATFORMS_VARIABLE]!r} leaves it out")
    try:
        backend = _registry.factories[name]()
    except Exception as exc:  # a missing driver must not break the other devices
        _registry.unavailable[name] = f"{type(exc).__name__}: {exc}"
        raise RuntimeError(f"device {name!r} is not available here: {exc}") from exc
    _registry.devices[name] = Device(name, backend)
    return _registry.devices[name]


def devices(platform: Optional[str] = None) -> list[Device]:
    """The devices that can run here: those JAXLAB_PLATFORMS names in its order, else
    all, highest priority first."""
    out = []
    for name in allowed_platforms() or sorted(_registry.factories, key=lambda n: -_priority(n)):
        if platform is not None and name != platform:
            continue
        try:
            out.append(get_device(name))
        except RuntimeError:
            pass
    return out


def unavailable() -> dict[str, str]:
    """Backends that failed to start, with the reason."""
    with _registry.lock:
        return dict(_registry.unavailable)


DeviceLike = Union[str, Device]


def to_device(d: DeviceLike) -> Device:
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        return get_device(d)
    raise TypeError(f"expected a device name or Device, got {type(d).__name__}")


def current_device() -> Device:
    d = state.default_device.get()
    if d is None:
        available = devices()
        if not available:
            raise RuntimeError(f"no device could start ({PLATFORMS_VARIABLE}="
                               f"{os.environ.get(PLATFORMS_VARIABLE)!r}; failures: {unavailable()})")
        d = available[0]
        state.default_device.set(d)
    return d


@contextlib.contextmanager
def default_device(d: DeviceLike) -> Iterator[Device]:
    """`with jaxlab.default_device("wasm"):` runs new arrays on that device."""
    with state.default_device.scoped(to_device(d)) as device:
        yield device


def set_default_device(d: DeviceLike) -> Device:
    dev = to_device(d)
    state.default_device.set(dev)
    return dev
