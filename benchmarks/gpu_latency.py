"""The round trip of a submission on the webgpu device: what a synchronised call waits
for beyond the host's recording and the GPU's own work.

    python3 -m benchmarks.gpu_latency [--repeats 200]

Rows (median and min over the repeats, microseconds):
- poll, nothing pending: wgpuDevicePoll(wait) with the queue empty (the call's floor);
- empty submit + wait: a command buffer with no commands, submitted and waited for;
- one-thread dispatch + wait: the smallest real work, submitted and waited for;
- the same with a wait that spins on the queue's work-done callback before blocking
  (fastpass.waiter with spin_s: the webgpu device's wait on a GPU, JAXLAB_WEBGPU_SPIN_US=0
  turns it off there);
- the same, read back (4 bytes): what `np.asarray` of a tiny result costs;
- a spin kernel + each wait, its timestamp span beside it: the round trip minus the span is
  what a submission costs beyond the GPU's work;
- the GPU's gap between two submissions, the second submitted as soon as the host saw
  the first done: the GPU-side idle time of one round trip (its timestamps), against the
  host's own time between the wait's return and the next submit;
- CPU time of the waiting thread over its wall time while it waits for a 2 ms kernel:
  near 1 means the wait spins on a core, near 0 that it sleeps;
- W4 (benchmarks/workloads.py): wall per step synchronised each step (as benchmarks.gpu
  measures it), per step over N steps with one wait at the end (the pipelined rate a
  training loop gets: jit calls return after their submission), the host time of a call,
  and the device span of one step.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import time
from typing import Any, Callable

import numpy as np

from jaxlab.backends.webgpu import fastpass

SPIN_S = 0.005   # the spin wait's spin before it blocks

SPIN_WGSL = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
struct Params { n: u32 }
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var x = f32(gid.x);
    for (var i = 0u; i < params.n; i = i + 1u) {
        x = x * 0.999 + 1.0;
    }
    out[gid.x] = x;
}
"""


class Rig:
    """A wgpu device (the jaxlab webgpu backend's) with a spin pipeline and timestamps."""

    def __init__(self) -> None:
        import wgpu
        import jaxlab
        self.wgpu = wgpu
        self.backend = jaxlab.engine.devices.get_device("webgpu").backend
        dev = self.device = self.backend.device
        usage = wgpu.BufferUsage
        self.out = dev.create_buffer(size=64 * 4 * 64, usage=usage.STORAGE | usage.COPY_SRC)
        module = dev.create_shader_module(code=SPIN_WGSL)
        self.pipeline = dev.create_compute_pipeline(layout="auto",
                                                    compute={"module": module,
                                                             "entry_point": "main"})
        self.groups: dict[int, Any] = {}
        self._spin = fastpass.waiter(dev, SPIN_S) or self.wait
        self.timestamps = "timestamp-query" in dev.features
        if self.timestamps:
            self.query = dev.create_query_set(type=wgpu.QueryType.timestamp, count=4)
            self.resolved = dev.create_buffer(size=32, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)

    def group(self, n: int) -> Any:
        if n not in self.groups:
            u = self.device.create_buffer_with_data(data=np.array([n, 0, 0, 0], np.uint32),
                                                    usage=self.wgpu.BufferUsage.UNIFORM)
            self.groups[n] = self.device.create_bind_group(
                layout=self.pipeline.get_bind_group_layout(0),
                entries=[{"binding": 0, "resource": {"buffer": self.out}},
                         {"binding": 1, "resource": {"buffer": u}}])
        return self.groups[n]

    def commands(self, n: int, groups: int = 1, stamps: tuple[int, int] | None = None) -> Any:
        """A command buffer of one spin dispatch of `n` iterations; `stamps`: the query
        indices its pass writes at its beginning and end."""
        enc = self.device.create_command_encoder()
        writes = None
        if stamps is not None:
            writes = {"query_set": self.query, "beginning_of_pass_write_index": stamps[0],
                      "end_of_pass_write_index": stamps[1]}
        cpass = enc.begin_compute_pass(timestamp_writes=writes)
        cpass.set_pipeline(self.pipeline)
        cpass.set_bind_group(0, self.group(n))
        cpass.dispatch_workgroups(groups)
        cpass.end()
        if stamps is not None and stamps[1] == 3:
            enc.resolve_query_set(self.query, 0, 4, self.resolved, 0)
        return enc.finish()

    def wait(self) -> None:
        self.device._poll_wait()

    def spin_wait(self) -> None:
        self._spin()

    def stamps_ns(self) -> np.ndarray:
        return np.frombuffer(self.device.queue.read_buffer(self.resolved), np.uint64).astype(
            np.int64)


def _times(fn: Callable[[], Any], repeats: int) -> list[float]:
    fn()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _row(label: str, seconds: list[float]) -> str:
    return (f"{label:54s} median {statistics.median(seconds) * 1e6:8.1f} us, "
            f"min {min(seconds) * 1e6:8.1f} us")


def round_trips(rig: Rig, repeats: int) -> list[str]:
    q = rig.device.queue
    empty = lambda: rig.device.create_command_encoder().finish()  # noqa: E731
    rows = [_row("poll(wait), nothing pending", _times(rig.wait, repeats)),
            _row("empty command buffer: submit + poll(wait)",
                 _times(lambda: (q.submit([empty()]), rig.wait()), repeats)),
            _row("one-workgroup dispatch: submit + poll(wait)",
                 _times(lambda: (q.submit([rig.commands(1)]), rig.wait()), repeats)),
            _row("  its recording alone (encoder, pass, finish)",
                 _times(lambda: rig.commands(1), repeats)),
            _row("one-workgroup dispatch: submit + spin-then-block wait",
                 _times(lambda: (q.submit([rig.commands(1)]), rig.spin_wait()), repeats)),
            _row("one-workgroup dispatch: submit + read_buffer(4 bytes)",
                 _times(lambda: (q.submit([rig.commands(1)]),
                                 q.read_buffer(rig.out, 0, 4)), repeats))]
    if not rig.timestamps:
        return rows + ["(no timestamp-query: no device spans)"]
    for n, (label, wait) in itertools.product((1, 20000, 200000), (("poll(wait)", rig.wait),
                                                                 ("spin wait", rig.spin_wait))):
        walls, spans = [], []
        for _ in range(max(20, repeats // 4)):
            cb = rig.commands(n, 1, (0, 1))
            resolve = rig.device.create_command_encoder()
            resolve.resolve_query_set(rig.query, 0, 2, rig.resolved, 0)
            t0 = time.perf_counter()
            q.submit([cb])
            wait()
            walls.append(time.perf_counter() - t0)
            q.submit([resolve.finish()])
            ns = rig.stamps_ns()
            spans.append((ns[1] - ns[0]) / 1e9)
        over = [w - s for w, s in zip(walls, spans)]
        rows.append(_row(f"spin kernel {n}: submit + {label}, wall", walls))
        rows.append(_row("  its device span (timestamps)", spans))
        rows.append(_row("  wall minus span", over))
    gaps, host = [], []
    for _ in range(max(20, repeats // 4)):
        q.submit([rig.commands(20000, 1, (0, 1))])
        rig.wait()
        t0 = time.perf_counter()
        q.submit([rig.commands(20000, 1, (2, 3))])
        host.append(time.perf_counter() - t0)
        rig.wait()
        ns = rig.stamps_ns()
        gaps.append((ns[2] - ns[1]) / 1e9)
    rows.append(_row("GPU idle between a wait's return and the next submit", gaps))
    rows.append(_row("  host time between them (recording + submit)", host))
    rows.append(_row("  GPU idle minus host time (wake-up + submit latency)",
                     [g - h for g, h in zip(gaps, host)]))
    back_to_back = []
    for _ in range(max(20, repeats // 4)):
        q.submit([rig.commands(20000, 1, (0, 1))])
        q.submit([rig.commands(20000, 1, (2, 3))])
        rig.wait()
        ns = rig.stamps_ns()
        back_to_back.append((ns[2] - ns[1]) / 1e9)
    rows.append(_row("GPU idle between two submissions queued together", back_to_back))
    return rows


def wait_cpu_share(rig: Rig) -> list[str]:
    """CPU time of the waiting thread (and the process) over the wait's wall time."""
    n = 20000
    while True:   # a spin long enough to wait ~2 ms for
        t0 = time.perf_counter()
        rig.device.queue.submit([rig.commands(n)])
        rig.wait()
        if time.perf_counter() - t0 > 2e-3 or n > 1 << 30:
            break
        n *= 2
    rows = []
    for label, clock in (("thread", time.thread_time), ("process", time.process_time)):
        shares = []
        for _ in range(20):
            rig.device.queue.submit([rig.commands(n)])
            c0, t0 = clock(), time.perf_counter()
            rig.wait()
            shares.append((clock() - c0) / (time.perf_counter() - t0))
        rows.append(f"{'poll(wait) CPU time / wall over a ~2 ms kernel, ' + label:54s} "
                    f"median {statistics.median(shares):.2f}")
    return rows


def w4_rows(repeats: int, chained: int) -> list[str]:
    import jaxlab
    from jaxlab.tree_util import tree_map
    from benchmarks.workloads import WORKLOADS, _w4_inputs
    with jaxlab.default_device("webgpu"):
        backend = jaxlab.engine.devices.get_device("webgpu").backend
        args = tree_map(lambda v: jaxlab.device_put(v, "webgpu"), _w4_inputs("gpu"))
        step = WORKLOADS["W4"].build["jaxlab"](jaxlab)

        def sync(out: Any) -> None:
            tree_map(lambda v: v.block_until_ready(), out)
        for _ in range(5):
            sync(step(*args))
        synced = _times(lambda: sync(step(*args)), repeats)
        host = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = step(*args)
            host.append(time.perf_counter() - t0)
            sync(out)
        pipelined, calls, final_waits = [], [], []
        for _ in range(max(5, repeats // chained)):
            t0 = time.perf_counter()
            for _ in range(chained):
                t1 = time.perf_counter()
                out = step(*args)
                calls.append(time.perf_counter() - t1)
            t1 = time.perf_counter()
            sync(out)
            final_waits.append(time.perf_counter() - t1)
            pipelined.append((time.perf_counter() - t0) / chained)
        chained_spans = []
        if backend.timestamps:   # the GPU's time for the steps run back to back
            for _ in range(5):
                with backend.device_span() as span:
                    for _ in range(chained):
                        out = step(*args)
                sync(out)
                chained_spans.append(span.ms / 1e3 / chained)
        spans = []
        if backend.timestamps:
            for _ in range(20):
                with backend.device_span() as span:
                    out = step(*args)
                sync(out)
                spans.append(span.ms / 1e3)
        # a training loop feeds each step's parameters to the next
        params, x, y = args
        loop = []
        for _ in range(max(5, repeats // chained)):
            t0 = time.perf_counter()
            for _ in range(chained):
                params, _loss = step(params, x, y)
            sync(params)
            loop.append((time.perf_counter() - t0) / chained)
        with jaxlab.capture() as log:   # each kernel timed alone: where the span goes
            sync(step(*args))
    rows = [f"W4 kernel {e.name:<16} {'x'.join(map(str, e.output_shapes[0])):>10} "
            f"{e.device_ms * 1e3 if e.device_ms is not None else float('nan'):8.1f} us"
            for e in log.kernels()]
    rows += [_row("W4: wall per step, synchronised each step", synced),
             _row("W4: host time of a call (returns after its submit)", host),
             _row(f"W4: wall per step over {chained} steps, one wait", pipelined),
             _row("  host time of each of those calls", calls),
             _row("  the wait after the last", final_waits),
             _row("W4: the same, each step's parameters fed to the next", loop)]
    if spans:
        rows.append(_row("W4: device span of one step (timestamps)", spans))
        rows.append(_row(f"W4: device span of {chained} steps back to back, per step",
                         chained_spans))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--chained", type=int, default=50)
    ap.add_argument("--no-w4", action="store_true")
    opts = ap.parse_args(argv)
    rig = Rig()
    print(f"adapter: {rig.backend.info()['device']} ({rig.backend.info()['backend_type']})")
    for line in round_trips(rig, opts.repeats) + wait_cpu_share(rig):
        print(line)
    if not opts.no_w4:
        for line in w4_rows(opts.repeats, opts.chained):
            print(line)


if __name__ == "__main__":
    main()
