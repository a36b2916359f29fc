"""Devices: a named backend instance, the registry, and the default device."""
from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from typing import Any, Callable, Iterator, Optional, Union

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


# name -> factory and priority (an int, or a function asked once, when the devices are
# first listed); a factory that fails removes only its own device.
_FACTORIES: dict[str, Callable[[], Backend]] = {}
_PRIORITY: dict[str, platforms.Priority] = {}
_DEVICES: dict[str, Device] = {}
_UNAVAILABLE: dict[str, str] = {}
_STARTING = threading.RLock()   # two threads asking for a new device start one backend


def register_backend(name: str, factory: Callable[[], Backend],
                     priority: platforms.Priority = 0) -> None:
    """Make a backend known; the available one of highest priority is the default."""
    _FACTORIES[name] = factory
    _PRIORITY[name] = priority


for _name, _factory, _priority in platforms.BUILTIN:
    register_backend(_name, _factory, _priority)


def _priority(name: str) -> int:
    value = _PRIORITY[name]
    if callable(value):
        with _STARTING:   # asked once, even when two threads list the devices at once
            value = _PRIORITY[name]
            if callable(value):
                value = _PRIORITY[name] = value()
    return value


PLATFORMS_VARIABLE = "JAXLAB_PLATFORMS"


def allowed_platforms() -> Optional[list[str]]:
    """The platforms JAXLAB_PLATFORMS names (comma-separated, in order of preference,
    as JAX_PLATFORMS for JAX), or None when it is unset: then every device may start."""
    value = os.environ.get(PLATFORMS_VARIABLE, "").strip()
    if not value:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in _FACTORIES]
    if unknown:
        raise ValueError(f"{PLATFORMS_VARIABLE}={value!r} names unknown platforms "
                         f"{unknown}; known: {', '.join(sorted(_FACTORIES))}")
    return names


def get_device(name: str) -> Device:
    device = _DEVICES.get(name)
    if device is not None:
        return device
    with _STARTING:
        return _DEVICES.get(name) or _start(name)


def _start(name: str) -> Device:
    if name not in _FACTORIES:
        raise ValueError(f"unknown device {name!r}; known: {', '.join(sorted(_FACTORIES))}")
    allowed = allowed_platforms()
    if allowed is not None and name not in allowed:
        raise RuntimeError(f"device {name!r} is not available here: "
                           f"{PLATFORMS_VARIABLE}={os.environ[PLATFORMS_VARIABLE]!r} leaves it out")
    try:
        backend = _FACTORIES[name]()
    except Exception as exc:  # a missing driver must not break the other devices
        _UNAVAILABLE[name] = f"{type(exc).__name__}: {exc}"
        raise RuntimeError(f"device {name!r} is not available here: {exc}") from exc
    _DEVICES[name] = Device(name, backend)
    return _DEVICES[name]


def devices(platform: Optional[str] = None) -> list[Device]:
    """The devices that can run here: those JAXLAB_PLATFORMS names in its order, else
    all, highest priority first."""
    out = []
    for name in allowed_platforms() or sorted(_FACTORIES, key=lambda n: -_priority(n)):
        if platform is not None and name != platform:
            continue
        try:
            out.append(get_device(name))
        except RuntimeError:
            pass
    return out


def unavailable() -> dict[str, str]:
    """Backends that failed to start, with the reason."""
    return dict(_UNAVAILABLE)


DeviceLike = Union[str, Device]
_default: contextvars.ContextVar[Optional[Device]] = contextvars.ContextVar(
    "jaxlab_default_device", default=None)


def to_device(d: DeviceLike) -> Device:
    if isinstance(d, Device):
        return d
    if isinstance(d, str):
        return get_device(d)
    raise TypeError(f"expected a device name or Device, got {type(d).__name__}")


def current_device() -> Device:
    d = _default.get()
    if d is None:
        available = devices()
        if not available:
            raise RuntimeError(f"no device could start ({PLATFORMS_VARIABLE}="
                               f"{os.environ.get(PLATFORMS_VARIABLE)!r}; failures: {unavailable()})")
        d = available[0]
        _default.set(d)
    return d


@contextlib.contextmanager
def default_device(d: DeviceLike) -> Iterator[Device]:
    """`with jaxlab.default_device("wasm"):` runs new arrays on that device."""
    token = _default.set(to_device(d))
    try:
        yield _default.get()
    finally:
        _default.reset(token)


def set_default_device(d: DeviceLike) -> Device:
    dev = to_device(d)
    _default.set(dev)
    return dev
