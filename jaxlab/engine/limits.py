"""How large an array a device can hold and index, checked before any code is
generated or memory allocated (JAX answers RESOURCE_EXHAUSTED at once too)."""
from __future__ import annotations

import math
from typing import Sequence

from jaxlab import state
from jaxlab.engine.devices import Device
from jaxlab.errors import ResourceExhaustedError
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Routine


def _describe(shape: Sequence[int], dtype: DType) -> str:
    return f"{dtype.value}[{','.join(map(str, shape))}]"


def _check_index_space(device: Device, count: int, what: str) -> None:
    limit = device.backend.max_elements
    if count > limit:
        raise ResourceExhaustedError(
            f"RESOURCE_EXHAUSTED: {what} {count} elements; kernels on {device.platform} "
            f"index at most {limit} (int32 index math)")


def check_dtype(device: Device, dtype: DType) -> None:
    """Raise TypeError if `device` does not compute `dtype`."""
    if dtype not in device.backend.dtypes:
        started = list(state.platforms.devices.values())
        able = sorted({"cpu"} | {d.platform for d in started if dtype in d.backend.dtypes})
        raise TypeError(f"{dtype.value} is not supported on the {device.platform} device "
                        f"({device.backend.dtype_limit_reason}); put the array on a device "
                        f"that computes it ({' or '.join(able)}), e.g. "
                        f"jaxlab.device_put(x, jaxlab.devices('cpu')[0])")


def check_kernel_dtypes(device: Device, kernel: Kernel) -> None:
    """check_dtype for every value a kernel computes."""
    roots = kernel.roots()
    for dtype in {node.dtype for root in roots for node in root.toposort()}:
        check_dtype(device, dtype)


def check_routine_dtypes(device: Device, routine: Routine) -> None:
    """check_dtype for a routine's inputs and outputs."""
    for _, dtype in routine.inputs + routine.outputs:
        check_dtype(device, dtype)


def check_array(device: Device, shape: Sequence[int], dtype: DType) -> None:
    """Raise ResourceExhaustedError if `device` cannot hold or index this array
    (TypeError if it does not compute its dtype)."""
    check_dtype(device, dtype)
    count = math.prod(shape)
    _check_index_space(device, count, f"{_describe(shape, dtype)} has")
    nbytes = count * dtype.itemsize
    limit = device.backend.max_buffer_bytes
    if nbytes > limit:
        raise ResourceExhaustedError(
            f"RESOURCE_EXHAUSTED: Out of memory allocating {nbytes} bytes for "
            f"{_describe(shape, dtype)} on {device.platform}, which holds at most {limit} "
            f"bytes per array ({device.backend.buffer_limit_reason})")


def check_kernel(device: Device, kernel: Kernel) -> None:
    """A lowered kernel's output must fit the device, and its index math int32: the
    output and reduction counters and every load's position (a contraction's operands
    are indexed apart, so a big matmul passes though output x reduction is large)."""
    check_array(device, kernel.shape, kernel.dtype)
    widest = kernel.widest_index()
    if widest > device.backend.max_elements:
        visits = kernel.size * (kernel.reduction.size if kernel.reduction else 1)
        shape = tuple(kernel.shape) + tuple(kernel.reduce_shape)
        _check_index_space(device, widest, f"{'a reduction over' if kernel.reduction else 'a kernel over'} "
                           f"{_describe(shape, kernel.dtype)} visits {visits} elements; its "
                           "index math reaches")
