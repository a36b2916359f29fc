"""Each wgpu-native C call of a warm jit call's submission, timed on its own: W4's step.

    python3 -m benchmarks.submit_profile            # W4 (benchmarks/workloads.py)
    python3 -m benchmarks.submit_profile --small    # 64-32-32-10, batch 16 (a software adapter)

A warm webgpu jit call records its program's packed launches (replay.py) into a
command buffer of its own and submits it (fastpass.Recorder.submit). This replays
the same launches, bound to the same buffers, through the same C entry points one
at a time with a clock around each: creating the encoder, beginning the pass, the
launches (set pipeline / bind group / dispatch), ending and releasing the pass,
finishing, releasing the encoder, submitting, releasing the command buffer. Three
ways: each submission waited for before the next (the GPU idle when recording
starts), back to back with no wait (the GPU busy with the last), and recorded then
released without a submit (what recording costs with no submission at all); and
the first launch alone, waited for (the fixed cost of a submission against the
cost per launch).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import jaxlab
from benchmarks import workloads
from benchmarks.host_profile import warm_w4

STAGES = ("create encoder", "begin pass", "launches", "end pass", "release pass", "finish",
          "release encoder", "submit", "release command buffer")


def _bound_launches(step: Callable) -> tuple[Any, list]:
    """(the webgpu backend, the packed launches of the step's warm binding)."""
    from jaxlab.engine.devices import get_device
    backend = get_device("webgpu").backend
    program = next(iter(step.cache.values()))[0]
    runner = program._shared or program._idle[0]
    bound = list(runner._replay._bound.values())
    return backend, bound[-1][0]


def _one(backend: Any, packed: list, times: dict[str, list[int]], submit: bool) -> None:
    from wgpu.backends.wgpu_native._ffi import ffi, lib
    from wgpu.backends.wgpu_native._api import new_struct_p
    device, queue = backend.device._internal, backend.device.queue._internal
    clock = time.perf_counter_ns
    null = ffi.NULL
    enc_desc = new_struct_p("WGPUCommandEncoderDescriptor *")
    pass_desc = new_struct_p("WGPUComputePassDescriptor *")
    cb_desc = new_struct_p("WGPUCommandBufferDescriptor *")
    commands = ffi.new("WGPUCommandBuffer[1]")
    set_pipeline = lib.wgpuComputePassEncoderSetPipeline
    set_group = lib.wgpuComputePassEncoderSetBindGroup
    dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups

    def note(stage: str, t0: int) -> int:
        now = clock()
        times.setdefault(stage, []).append(now - t0)
        return now
    t = clock()
    encoder = lib.wgpuDeviceCreateCommandEncoder(device, enc_desc)
    t = note("create encoder", t)
    cpass = lib.wgpuCommandEncoderBeginComputePass(encoder, pass_desc)
    t = note("begin pass", t)
    last = None
    for pipeline, group, x, y, z in packed:
        if pipeline is not last:
            set_pipeline(cpass, pipeline)
            last = pipeline
        set_group(cpass, 0, group, 0, null)
        dispatch(cpass, x, y, z)
    t = note("launches", t)
    lib.wgpuComputePassEncoderEnd(cpass)
    t = note("end pass", t)
    lib.wgpuComputePassEncoderRelease(cpass)
    t = note("release pass", t)
    commands[0] = lib.wgpuCommandEncoderFinish(encoder, cb_desc)
    t = note("finish", t)
    lib.wgpuCommandEncoderRelease(encoder)
    t = note("release encoder", t)
    if submit:
        lib.wgpuQueueSubmit(queue, 1, commands)
        t = note("submit", t)
    lib.wgpuCommandBufferRelease(commands[0])
    note("release command buffer", t)


def _report(title: str, times: dict[str, list[int]]) -> None:
    print(title)
    total = [sum(xs) for xs in zip(*times.values())]
    for stage in STAGES:
        if stage in times:
            xs = times[stage]
            print(f"  {stage:24s} median {statistics.median(xs) / 1e3:8.1f} us, "
                  f"min {min(xs) / 1e3:8.1f} us")
    print(f"  {'all':24s} median {statistics.median(total) / 1e3:8.1f} us, "
          f"min {min(total) / 1e3:8.1f} us")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--small", action="store_true")
    opts = parser.parse_args(argv)
    with jaxlab.default_device("webgpu"):
        step, _ = warm_w4(opts.small)
        backend, packed = _bound_launches(step)
        print(f"adapter: {backend.info().get('device')}; W4 {workloads.LAYERS}, batch "
              f"{workloads.BATCH}: {len(packed)} launches, "
              f"{len({p[0] for p in packed})} pipelines")
        wait = backend.synchronize
        with backend._lock:
            for title, launches, submit, waited in [
                    ("each submission waited for", packed, True, True),
                    ("back to back, no wait", packed, True, False),
                    ("recorded, released, never submitted", packed, False, False),
                    ("the first launch alone, each waited for", packed[:1], True, True)]:
                times: dict[str, list[int]] = {}
                for _ in range(opts.calls):
                    _one(backend, launches, times, submit)
                    backend._unfinished = True
                    if waited:
                        wait()
                wait()
                _report(title, times)


if __name__ == "__main__":
    main()
