"""Shader modules without wgpu's loop counters.

wgpu (naga) puts a counter of its own into every loop of a shader, so that no loop can
run forever ("loop bounding"). That costs time: on an H200 the radix sort's four
scatters took 2.47-2.62 ms with the counters and 1.44-1.57 ms without
(benchmarks/sort_passes.py --runtime-checks, 05:11 UTC). Every loop jaxlab writes has a
finite bound by construction (a count, or a spin limit), so modules are made through
wgpu-native's wgpuDeviceCreateShaderModuleTrusted with bounds checks only.
JAXLAB_WEBGPU_LOOP_BOUNDING=1 keeps wgpu's counters; where the trusted entry is missing
or makes no module, a module is made as wgpu-py makes it (with the counters).
"""
from __future__ import annotations

import enum
import os
from typing import Any

LOOP_BOUNDING_ENV = "JAXLAB_WEBGPU_LOOP_BOUNDING"


class RuntimeChecks(enum.Enum):
    """What wgpu compiles into a shader to guard it."""
    BOUNDS = "bounds checks"
    BOUNDS_AND_LOOPS = "bounds checks and loop counters"   # wgpu's default


def wanted_checks() -> RuntimeChecks:
    """The checks asked for: loop counters only where the environment asks for them."""
    keep = os.environ.get(LOOP_BOUNDING_ENV, "0").strip() not in ("", "0")
    return RuntimeChecks.BOUNDS_AND_LOOPS if keep else RuntimeChecks.BOUNDS


def create_module(device: Any, source: str, label: str,
                  checks: RuntimeChecks) -> tuple[Any, RuntimeChecks]:
    """A shader module of WGSL `source` made with `checks` where wgpu-native allows it,
    and the checks it has. Compile errors raise wgpu's GPUError either way."""
    if checks is RuntimeChecks.BOUNDS:
        module = _trusted(device, source, label)
        if module is not None:
            return module, checks
    return device.create_shader_module(label=label, code=source), RuntimeChecks.BOUNDS_AND_LOOPS


def _trusted(device: Any, source: str, label: str) -> Any:
    """The module with bounds checks only, or None where wgpu-native cannot make one."""
    try:
        from wgpu.backends.wgpu_native import _api
        create = _api.libf.wgpuDeviceCreateShaderModuleTrusted
        only_bounds = _api.lib.WGPUShaderRuntimeChecks_BoundsChecks
    except (ImportError, AttributeError):
        return None
    ffi, lib = _api.ffi, _api.lib
    # the structs wgpu-py's create_shader_module builds for WGSL
    wgsl = _api.new_struct_p("WGPUShaderSourceWGSL *", code=_api.to_c_string_view(source))
    wgsl[0].chain.next = ffi.NULL
    wgsl[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    descriptor = _api.new_struct_p("WGPUShaderModuleDescriptor *",
                                   nextInChain=ffi.cast("WGPUChainedStruct *", wgsl),
                                   label=_api.to_c_string_view(label))
    handle = create(device._internal, descriptor, only_bounds)
    if handle == ffi.NULL:
        return None
    return _api.GPUShaderModule(label, handle, device)
