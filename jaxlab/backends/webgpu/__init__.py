"""The webgpu backend: kernels as WGSL, run through wgpu-py on a GPU, or on Mesa's
lavapipe (software Vulkan) where there is none."""
from __future__ import annotations

import glob
import os
import sys
from typing import Any, Optional

from jaxlab.backends.webgpu.adapter import ENV_CHOICE, is_hardware, select_adapter
from jaxlab.backends.autotuning import autotune
from jaxlab.backends.webgpu.errors import (DeviceLostError, WebGpuError, WebGpuMemoryError,
                                           WgslCompileError)
from jaxlab.backends.webgpu.runtime import WebGpuBackend

HARDWARE_PRIORITY = 20   # above wasm: a real GPU should be the default device
SOFTWARE_PRIORITY = 5    # below wasm, above cpu: lavapipe is correct but slow

_probed: Optional[Any] = None   # the adapter priority() found, reused by create_backend


def priority() -> int:
    """The registry priority: high only where a hardware adapter exists. Without a
    GPU device node on Linux none can, and wgpu is not even started."""
    global _probed
    if os.environ.get(ENV_CHOICE, "").lower() == "software":
        return SOFTWARE_PRIORITY
    nodes = glob.glob("/dev/dri/renderD*") + glob.glob("/dev/nvidia[0-9]*") + glob.glob("/dev/dxg")
    if sys.platform.startswith("linux") and not nodes:
        return SOFTWARE_PRIORITY
    try:
        _probed = select_adapter()
    except Exception:   # no wgpu, no driver: the device will just be unavailable
        return SOFTWARE_PRIORITY
    return HARDWARE_PRIORITY if is_hardware(_probed) else SOFTWARE_PRIORITY


def create_backend() -> WebGpuBackend:
    """The registry's factory; raises where no adapter exists."""
    return WebGpuBackend(_probed)


__all__ = ["DeviceLostError", "WebGpuBackend", "WebGpuError", "WebGpuMemoryError",
           "WgslCompileError", "autotune", "create_backend", "priority"]
