"""JAX's device and process queries. jaxlab runs in one process with one device per
platform (cpu, wasm, webgpu); `backend` picks a platform, the default device's
when None."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from jaxlab.array import ArrayBase
from jaxlab.engine.devices import Device, current_device, devices
from jaxlab.tree_util import tree_map


def default_backend() -> str:
    """The platform of the default device ('cpu', 'wasm' or 'webgpu')."""
    return current_device().platform


def _platform(backend: Any) -> str:
    if backend is None:
        return default_backend()
    return backend.platform if isinstance(backend, Device) else str(backend)


def local_devices(process_index: Optional[int] = None, backend: Any = None,
                  host_id: Optional[int] = None) -> list[Device]:
    """The devices of `backend`'s platform in this process."""
    index = process_index if process_index is not None else host_id
    if index not in (None, 0):
        raise ValueError(f"Unknown process_index {index}: jaxlab runs in one process (0)")
    found = devices(_platform(backend))
    if not found:
        raise RuntimeError(f"Unknown backend {_platform(backend)!r}: no such device started")
    return found


def device_count(backend: Any = None) -> int:
    return len(local_devices(backend=backend))


def local_device_count(backend: Any = None) -> int:
    return len(local_devices(backend=backend))


def process_count(backend: Any = None) -> int:
    return 1


def process_index(backend: Any = None) -> int:
    return 0


def device_get(x: Any) -> Any:
    """x with every array leaf copied to the host as a NumPy array (other leaves as
    they are)."""
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, ArrayBase) else leaf, x)
