"""The backends jaxlab ships, as the engine registers them (engine/devices.py).

Backends know nothing of the engine's registry. Each backend package is imported only
when its device starts (a missing dependency removes only its own device), and webgpu's
priority, which looks for a GPU, is asked once, when the devices are first listed:
`import jaxlab` starts nothing and probes nothing.
"""
from __future__ import annotations

from typing import Callable, Union

from jaxlab.backends.base import Backend

Priority = Union[int, Callable[[], int]]


def _cpu() -> Backend:
    from jaxlab.backends.cpu import CpuBackend
    return CpuBackend()


def _wasm() -> Backend:
    from jaxlab.backends.wasm import create
    return create()


def _webgpu() -> Backend:
    from jaxlab.backends.webgpu import create_backend
    return create_backend()


def _webgpu_priority() -> int:
    """20 on a hardware GPU, else 5 (lavapipe: below wasm)."""
    from jaxlab.backends.webgpu import priority
    return priority()


# name, factory, priority: the available device of highest priority is the default
BUILTIN: tuple[tuple[str, Callable[[], Backend], Priority], ...] = (
    ("cpu", _cpu, 0),
    ("wasm", _wasm, 10),     # the default CPU device (needs wasmtime)
    ("webgpu", _webgpu, _webgpu_priority),
)
