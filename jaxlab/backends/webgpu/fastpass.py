"""Compute-pass commands recorded through wgpu-native's C entry points, a whole jit
call recorded and submitted through them, and a wait for the device through its poll.

A jit call records three commands per kernel: pipeline, bind group, dispatch.
Through wgpu-py's objects each of them builds cffi arguments and an error scope
in Python, several microseconds apiece; on an H200 a 30-kernel training step
spent more host time recording than the GPU spent running it. WebGPU reports a
bad command in a pass when its encoder finishes (the pass is invalidated, the
call itself does not fail, through wgpu-py either), and finish() still goes
through wgpu-py, so the direct calls lose no error (an eager dispatch finishes
its encoder at once, so its error names it). With other bindings (no
wgpu-native internals), the public methods record the same commands.

The GPU starts on a call only when it is submitted, at the end of its host time,
so the encoder, pass, finish and submit around the launches count too: through
wgpu-py's objects they took ~50 us of a warm W4 step (structs built, an error
scope and a Python object per call). `Recorder.commands` makes them as bare C calls
on descriptors built once, under one error capture of wgpu-py's own handler, so
a validation or memory error raises the same GPUError as through wgpu-py.
"""
from __future__ import annotations

import time
from typing import Any, Callable, NamedTuple, Optional, Sequence

# (compute pass, pipeline, bind group, grid) -> None
Record = Callable[[Any, Any, Any, tuple[int, int, int]], None]
# (pipeline, bind group, grid) -> a launch in the form `Recorder.play` takes
Pack = Callable[[Any, Any, tuple[int, int, int]], tuple]
# (compute pass, packed launches) -> None
Play = Callable[[Any, Sequence[tuple]], None]


class Commands(NamedTuple):
    """Command buffers of their own made and submitted by bare C calls: `record(packed
    launches)` -> a finished command buffer (a C handle; a bad command raises here and
    none is returned), `submit(buffer)` hands it to the queue, `drop(buffer)` releases
    one never submitted. Each buffer is submitted or dropped once."""
    record: Callable[[Sequence[tuple]], Any]
    submit: Callable[[Any], None]
    drop: Callable[[Any], None]


class Recorder(NamedTuple):
    """One launch recorded as it comes (`record`), or launches packed once (`pack`) and
    played many times (`play`: a jit program replayed on the same buffers), or played
    into a command buffer of their own (`commands`; None where only the public methods
    are available)."""
    record: Record
    pack: Pack
    play: Play
    commands: Optional[Commands] = None


def _public_play(cpass: Any, launches: Sequence[tuple]) -> None:
    for pipeline, group, grid in launches:
        public(cpass, pipeline, group, grid)


def public(cpass: Any, pipeline: Any, group: Any, grid: tuple[int, int, int]) -> None:
    cpass.set_pipeline(pipeline)
    cpass.set_bind_group(0, group)
    cpass.dispatch_workgroups(*grid)


_PUBLIC = Recorder(public, lambda pipeline, group, grid: (pipeline, group, grid), _public_play)


def recorder(device: Any, sample_pass: Any) -> Recorder:
    """The fastest way to record into passes like `sample_pass` (an open one) of
    `device`'s encoders."""
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

    def play_into(handle: Any, launches: Sequence[tuple]) -> None:
        last = None
        for pipeline, group, x, y, z in launches:
            if pipeline is not last:   # a pass keeps its pipeline until the next is set
                set_pipeline(handle, pipeline)
                last = pipeline
            set_group(handle, 0, group, 0, null)
            dispatch(handle, x, y, z)

    def play(cpass: Any, launches: Sequence[tuple]) -> None:
        play_into(cpass._internal, launches)
    return Recorder(record, pack, play, _commands(device, play_into))


def _commands(device: Any, play_into: Callable[[Any, Sequence[tuple]], None]) \
        -> Optional[Commands]:
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        from wgpu.backends.wgpu_native._api import error_handler, new_struct_p
        from wgpu.backends.wgpu_native._helpers import ERROR_TYPES
        from wgpu import GPUError
        handle, queue = device._internal, device.queue._internal
    except (ImportError, AttributeError):
        return None
    create_encoder, begin = lib.wgpuDeviceCreateCommandEncoder, \
        lib.wgpuCommandEncoderBeginComputePass
    end, release_pass = lib.wgpuComputePassEncoderEnd, lib.wgpuComputePassEncoderRelease
    finish, release_encoder = lib.wgpuCommandEncoderFinish, lib.wgpuCommandEncoderRelease
    queue_submit, release_commands = lib.wgpuQueueSubmit, lib.wgpuCommandBufferRelease
    # descriptors with no label or timestamps, built once
    encoder_desc = new_struct_p("WGPUCommandEncoderDescriptor *")
    pass_desc = new_struct_p("WGPUComputePassDescriptor *")
    commands_desc = new_struct_p("WGPUCommandBufferDescriptor *")
    one = ffi.new("WGPUCommandBuffer[1]")   # one submit at a time: the device's lock
    capture, release = error_handler.capture, error_handler.release
    scope = "jaxlab commands"

    def fail(caught: tuple[str, str]) -> GPUError:
        kind, message = caught
        return ERROR_TYPES.get(kind, GPUError)(message)

    def record(launches: Sequence[tuple]) -> Any:
        capture(scope)   # errors reported inside these calls land here, not in the log
        try:
            encoder = create_encoder(handle, encoder_desc)
            try:
                cpass = begin(encoder, pass_desc)
                play_into(cpass, launches)
                end(cpass)
                release_pass(cpass)
                commands = finish(encoder, commands_desc)
            finally:
                release_encoder(encoder)
        finally:
            caught = release(scope)
        if caught is not None:   # a bad command: the buffer is invalid, never submitted
            release_commands(commands)
            raise fail(caught)
        return commands

    def submit(commands: Any) -> None:
        capture(scope)
        try:
            one[0] = commands
            queue_submit(queue, 1, one)
            release_commands(commands)
        finally:
            caught = release(scope)
        if caught is not None:
            raise fail(caught)
    return Commands(record, submit, release_commands)


def waiter(device: Any, spin_s: float = 0.0) -> Optional[Callable[[], None]]:
    """A call that blocks until `device` has finished everything submitted (wgpu-native's
    poll with wait: one call, where a read-back of a fence buffer copies, maps and
    polls), or None where the bindings have none. `spin_s` > 0: first spin that long on
    the queue's work-done callback (polling without waiting) before blocking: a blocked
    thread wakes up late after a short GPU job (CUDA spins on a sync by default too)."""
    wait = getattr(device, "_poll_wait", None)
    if not callable(wait):
        return None
    if spin_s > 0:
        return _spin_waiter(device, wait, spin_s) or wait
    return wait


def _spin_waiter(device: Any, block: Callable[[], None],
                 spin_s: float) -> Optional[Callable[[], None]]:
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        from wgpu.backends.wgpu_native._api import new_struct
        poll, on_done = lib.wgpuDevicePoll, lib.wgpuQueueOnSubmittedWorkDone
        handle, queue = device._internal, device.queue._internal
    except (ImportError, AttributeError):
        return None
    done = [0]   # callbacks fired (one wait at a time: the device's lock)

    @ffi.callback("void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)")
    def work_done(status: Any, message: Any, user1: Any, user2: Any) -> None:
        done[0] += 1
    info = new_struct("WGPUQueueWorkDoneCallbackInfo",
                      mode=lib.WGPUCallbackMode_AllowProcessEvents, callback=work_done)
    null, clock = ffi.NULL, time.perf_counter

    def wait() -> None:
        seen = done[0]
        on_done(queue, info)   # fires, in a poll, once everything submitted so far is done
        give_up = clock() + spin_s
        while done[0] == seen:
            poll(handle, False, null)
            if clock() > give_up:
                block()   # a long job: sleep instead (the callback fires in it)
                return
    wait.keep = (work_done, info)   # type: ignore[attr-defined]  (alive while wait is)
    return wait
