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

from typing import Any, Callable, NamedTuple, Optional, Sequence

# (compute pass, pipeline, bind group, grid) -> None
Record = Callable[[Any, Any, Any, tuple[int, int, int]], None]
# (pipeline, bind group, grid) -> a launch in the form `Recorder.play` takes
Pack = Callable[[Any, Any, tuple[int, int, int]], tuple]
# (compute pass, packed launches) -> None
Play = Callable[[Any, Sequence[tuple]], None]


class Recorder(NamedTuple):
    """One launch recorded as it comes (`record`), or launches packed once (`pack`) and
    played many times (`play`: a jit program replayed on the same buffers)."""
    record: Record
    pack: Pack
    play: Play


def _public_play(cpass: Any, launches: Sequence[tuple]) -> None:
    for pipeline, group, grid in launches:
        public(cpass, pipeline, group, grid)


def public(cpass: Any, pipeline: Any, group: Any, grid: tuple[int, int, int]) -> None:
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(*grid)


_PUBLIC = Recorder(public, lambda pipeline, group, grid: (pipeline, group, grid), _public_play)


def recorder(sample_pass: Any) -> Recorder:
    """The fastest way to record into passes like `sample_pass` (an open one)."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_group = lib.wgpuComputePassEncoderSetBindGroup
        dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        sample_pass._internal   # noqa: B018  (the C handle the calls take)
    except (ImportError, AttributeError):
        return _PUBLIC
    null = ffi.NULL

    def record(cpass: Any, pipeline: Any, group: Any, grid: tuple[int, int, int]) -> None:
        handle = cpass._internal
        set_pipeline(handle, pipeline._internal)
        set_group(handle, 0, group._internal, 0, null)
        dispatch(handle, grid[0], grid[1], grid[2])

    def pack(pipeline: Any, group: Any, grid: tuple[int, int, int]) -> tuple:
        # the C handles themselves: playing them builds no Python object
        return (pipeline._internal, group._internal, *grid)

    def play(cpass: Any, launches: Sequence[tuple]) -> None:
        handle = cpass._internal
        last = None
        for pipeline, group, x, y, z in launches:
            if pipeline is not last:   # a pass keeps its pipeline until the next is set
                set_pipeline(handle, pipeline)
                last = pipeline
            set_group(handle, 0, group, 0, null)
            dispatch(handle, x, y, z)
    return Recorder(record, pack, play)


def waiter(device: Any) -> Optional[Callable[[], None]]:
    """A call that blocks until `device` has finished everything submitted (wgpu-native's
    poll with wait: one call, where a read-back of a fence buffer copies, maps and
    polls), or None where the bindings have none."""
    wait = getattr(device, "_poll_wait", None)
    return wait if callable(wait) else None
