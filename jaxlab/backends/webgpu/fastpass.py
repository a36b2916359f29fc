"""Compute-pass commands recorded through wgpu-native's C entry points, and a wait
for the device through its poll.

A jit call records three commands per kernel: pipeline, bind group, dispatch.
Through wgpu-py's objects each of them builds cffi arguments and an error scope
in Python, several microseconds apiece; on an H200 a 30-kernel training step
spent more host time recording than the GPU spent running it. WebGPU reports a
bad command in a pass when its encoder finishes (the pass is invalidated, the
call itself does not fail, through wgpu-py either), and finish() still goes
through wgpu-py, so the direct calls lose no error (an eager dispatch finishes
its encoder at once, so its error names it). With other bindings (no
wgpu-native internals), the public methods record the same commands.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

# (compute pass, pipeline, bind group, grid) -> None
Record = Callable[[Any, Any, Any, tuple[int, int, int]], None]


def public(cpass: Any, pipeline: Any, group: Any, grid: tuple[int, int, int]) -> None:
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(*grid)


def recorder(sample_pass: Any) -> Record:
    """The fastest way to record into passes like `sample_pass` (an open one)."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_group = lib.wgpuComputePassEncoderSetBindGroup
        dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        sample_pass._internal   # noqa: B018  (the C handle the calls take)
    except (ImportError, AttributeError):
        return public
    null = ffi.NULL

    def record(cpass: Any, pipeline: Any, group: Any, grid: tuple[int, int, int]) -> None:
        handle = cpass._internal
        set_pipeline(handle, pipeline._internal)
        set_group(handle, 0, group._internal, 0, null)
        dispatch(handle, grid[0], grid[1], grid[2])
    return record


def waiter(device: Any) -> Optional[Callable[[], None]]:
    """A call that blocks until `device` has finished everything submitted (wgpu-native's
    poll with wait: one call, where a read-back of a fence buffer copies, maps and
    polls), or None where the bindings have none."""
    wait = getattr(device, "_poll_wait", None)
    return wait if callable(wait) else None
