"""Devices: a named backend instance, the registry, and the default device."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, Optional, Union

from jaxlab import state
from jaxlab.configuration import config
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


def _platforms_setting() -> tuple[str, str]:
    """Where the allowed platforms come from (for messages) and its text: the
    jax_platforms option once set, else the environment variable."""
    option = config.jax_platforms
    if option is not None:
        return "jax_platforms", option
    return PLATFORMS_VARIABLE, os.environ.get(PLATFORMS_VARIABLE, "")


def _parse_platforms(source: str, value: str) -> Optional[list[str]]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        return None
    unknown = [n for n in names if n not in _registry.factories]
    if unknown:
        raise ValueError(f"{source}={value!r} names unknown platforms "
                         f"{unknown}; known: {', '.join(sorted(_registry.factories))}")
    return names


def allowed_platforms() -> Optional[list[str]]:
    """The platforms `jax_platforms` (jaxlab.config) or else JAXLAB_PLATFORMS names
    (comma-separated, in order of preference, as JAX_PLATFORMS for JAX), or None when
    neither is set: then every device may start."""
    return _parse_platforms(*_platforms_setting())


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
        source, value = _platforms_setting()
        raise RuntimeError(f"device {name!r} is not available here: "
                           f"{source}={value!r} leaves it out")
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


# The device of a thread that chose none: the jax_platform_name option's, else the first
# available; one for all threads, chosen again after a change of the platform options.
_automatic: Optional[Device] = None


def current_device() -> Device:
    return state.default_device.get() or _automatic or _choose_automatic()


def _choose_automatic() -> Device:
    global _automatic
    name = config.jax_platform_name
    if name:
        _automatic = get_device(name)
        return _automatic
    available = devices()
    if not available:
        source, value = _platforms_setting()
        raise RuntimeError(f"no device could start ({source}={value!r}; "
                           f"failures: {unavailable()})")
    _automatic = available[0]
    return _automatic


def _platform_name_updated(name: str) -> None:
    global _automatic
    if name:
        get_device(name)     # an unknown or unavailable platform raises; the option stays
    _automatic = None


def _platforms_updated(value: Optional[str]) -> None:
    global _automatic
    if value is not None:
        _parse_platforms("jax_platforms", value)
    _automatic = None


config.watch("jax_platform_name", _platform_name_updated)
config.watch("jax_platforms", _platforms_updated)


@contextlib.contextmanager
def default_device(d: DeviceLike) -> Iterator[Device]:
    """`with jaxlab.default_device("wasm"):` runs new arrays on that device."""
    with state.default_device.scoped(to_device(d)) as device:
        yield device


def set_default_device(d: DeviceLike) -> Device:
    dev = to_device(d)
    state.default_device.set(dev)
    return dev
