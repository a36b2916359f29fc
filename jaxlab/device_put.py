"""device_put: move (or place) data on a device."""
from __future__ import annotations

from typing import Any, Optional

from jaxlab.array import Array
from jaxlab.core.values import from_host
from jaxlab.engine.devices import DeviceLike, current_device, default_device, to_device


def device_put(x: Any, device: Optional[DeviceLike] = None) -> Array:
    """x as an Array on `device` (the default device when None)."""
    from jaxlab.numpy._util import asarray_
    target = to_device(device) if device is not None else current_device()
    if isinstance(x, Array):
        if x.device is target:
            return x
        with default_device(target):
            return from_host(x.to_numpy(), x.jdtype)
    with default_device(target):
        return asarray_(x)
