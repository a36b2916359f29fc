"""W3's matmul and W4's training step on the wasm device, kernel by kernel: where the
time of the contractions goes, in wall time and in CPU time.

    JAXLAB_WASM_THREADS=1 python3 -m benchmarks.wasm_contractions
    JAXLAB_WASM_THREADS=2 taskset -c 0,1 python3 -m benchmarks.wasm_contractions

Prints W3 (1024 x 1024 float32) as GFLOP/s of wall time and of CPU time (all threads'),
beside the FMA-only peak (benchmarks/wasm_peak.py) on as many threads as the device
uses, and W4's step with each kernel's best time over the captured steps (its
GFLOP/s and fraction of that peak, register tile and thread split from the tuning
record, each thread's part (the pieces it pulled, summed): its CPU time, when the pool
thread started, the time the dispatch spent outside its parts). CPU time
says what the code costs when other processes share the cores; wall time is the figure
that benchmarks.run compares with the peers. A `clean` time is the best among the
steps in which no part of that kernel waited for a core: on a loaded machine, the
closest to what a quiet one would show.
"""
from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any, Callable

import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from benchmarks.wasm_peak import wasm_fma_peak_gflops
from benchmarks.workloads import _w4_inputs, _w4_step


def _best(call: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Best wall and best CPU seconds of `repeats` calls (each waited for)."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        jaxlab.block_until_ready(call())
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def w3(device: Any, threads: int, repeats: int) -> float:
    """W3's rates; returns the FMA-only peak (GFLOP/s) on `threads` threads."""
    n = 1024
    rng = np.random.default_rng(0)
    a, b = (jaxlab.device_put(rng.standard_normal((n, n)).astype(np.float32), device)
            for _ in range(2))
    matmul = jaxlab.jit(lambda a, b: a @ b)
    jaxlab.block_until_ready(matmul(a, b))
    wall, cpu = _best(lambda: matmul(a, b), repeats)
    flop = 2 * n ** 3
    peak = wasm_fma_peak_gflops(threads)
    print(f"W3 matmul {n}: {flop / wall / 1e9:.1f} GFLOP/s wall ({wall * 1e3:.2f} ms), "
          f"{flop / cpu / 1e9:.1f} per CPU-second; FMA-only peak on {threads} thread(s): "
          f"{peak:.1f} GFLOP/s, fraction {flop / wall / 1e9 / peak:.2f}")
    return peak


def _choice(event: Any, name: str) -> Any:
    """A choice of the event's tuning record, or '' where it has none."""
    try:
        return event.tuning.value(name)
    except (AttributeError, KeyError):
        return ""


CLEAN_SLACK_S = 20e-6   # a part whose wall time passes its CPU time by more waited for a core
CLEAN_START_S = 100e-6  # a pool thread that starts later than this waited for a core


def _per_thread(parts: list) -> list:
    """One dispatch's parts merged per thread (threads that pull pieces run several): its
    first start, the span to its last end, its CPU time summed."""
    threads: dict[int, list] = {}
    for p in parts:
        threads.setdefault(p.thread, []).append(p)
    merged = []
    for own in threads.values():
        start = min(p.start_s for p in own)
        merged.append(dataclasses.replace(
            own[0], chunk=(min(p.chunk[0] for p in own), max(p.chunk[1] for p in own)),
            start_s=start, wall_s=max(p.start_s + p.wall_s for p in own) - start,
            cpu_s=sum(p.cpu_s for p in own)))
    return merged


def _parts_by_event(events: list, parts: list) -> list[list]:
    """Each event's parts, one per thread (empty for a kernel run in one call without
    scratch): the parts of one dispatch share its start time, and dispatches come in the
    events' order."""
    groups: dict[float, list] = {}
    for p in parts:
        groups.setdefault(p.dispatched, []).append(p)
    ordered = [_per_thread(groups[t]) for t in sorted(groups)]
    found, i = [], 0
    for e in events:
        if i < len(ordered) and ordered[i][0].kernel == e.name:
            found.append(sorted(ordered[i], key=lambda p: (p.helper, p.chunk)))
            i += 1
        else:
            found.append([])
    return found


def _clean(parts: list) -> bool:
    """Every part had a core the whole time (its wall time is its CPU time), and the pool
    threads started at once."""
    return all(p.wall_s - p.cpu_s <= max(CLEAN_SLACK_S, 0.03 * p.cpu_s)
               and p.start_s <= CLEAN_START_S for p in parts)


def _host_cpu(device: Any, call: Callable[[], Any], repeats: int) -> float:
    """Best CPU seconds of `call` with every compiled kernel's Wasm call replaced by a
    no-op: what the host side of a step costs (Python, the hand-offs to the pool). Reaches
    into the runtime's instances, for this measurement only; they are restored after."""
    instances = [i for m in device.backend.wasm.modules.values() for i in m.idle]
    calls = [i.call for i in instances]
    for i in instances:
        i.call = lambda *args: None
    try:
        return _best(call, repeats)[1]
    finally:
        for i, c in zip(instances, calls):
            i.call = c


def w4(device: Any, threads: int, repeats: int, peak: float) -> None:
    """The step's wall and CPU time, then per kernel: its best dispatch time, GFLOP/s and
    fraction of the FMA peak on the device's threads, each thread's part (CPU time, best
    over the steps; the medians of when the pool thread started after the dispatch began
    and of the dispatch's time outside its parts: its setup and, after the last part
    ended, the join), and the best
    dispatch time among the steps where every part had a core throughout (`clean`: on a
    shared machine the other figures include waiting for a core)."""
    params, x, y = _w4_inputs("cpu")
    put = lambda t: jaxlab.device_put(t, device)   # noqa: E731
    params = [(put(w), put(b)) for w, b in params]
    x, y = put(x), put(y)
    step = _w4_step(jaxlab)
    for _ in range(3):
        jaxlab.block_until_ready(step(params, x, y))
    wall, cpu = _best(lambda: step(params, x, y), repeats)
    print(f"W4 step: {wall * 1e3:.2f} ms wall, {cpu * 1e3:.2f} ms CPU (best of {repeats})")
    print(f"its host side (every kernel call a no-op): "
          f"{_host_cpu(device, lambda: step(params, x, y), 10 * repeats) * 1e3:.3f} ms CPU")
    runs, host = [], float("inf")
    for _ in range(repeats):
        with jaxlab.capture() as log, device.backend.timing_parts() as parts:
            t0 = time.perf_counter()
            jaxlab.block_until_ready(step(params, x, y))
            step_s = time.perf_counter() - t0
        events = list(log)
        host = min(host, step_s - sum(e.dispatch_ms for e in events) / 1e3)
        runs.append(list(zip(events, _parts_by_event(events, list(parts)))))
    print(f"host time between the kernels (step wall - its dispatches, best): {host * 1e3:.3f} ms")
    print("| kernel | shape | ms | GFLOP/s | of peak | tile | threads | CPU ms per part "
          "| pool thread start us | join and setup us | clean ms (of runs) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")
    total = clean_total = critical = 0.0
    for i in range(len(runs[0])):
        samples = [run[i] for run in runs]
        e = min((s[0] for s in samples), key=lambda ev: ev.dispatch_ms)
        clean = [s[0].dispatch_ms for s in samples if s[1] and _clean(s[1])]
        total += e.dispatch_ms
        clean_total += min(clean) if clean else e.dispatch_ms
        rate = e.flops / e.dispatch_ms / 1e6 if e.dispatch_ms else 0.0
        per_part = [min(s[1][j].cpu_s for s in samples if len(s[1]) > j) * 1e3
                    for j in range(max(len(s[1]) for s in samples))]
        # the slowest thread of each run (pulled pieces: the threads' shares vary by run)
        critical += min(max(p.cpu_s for p in s[1]) for s in samples if s[1]) * 1e3 \
            if per_part else e.dispatch_ms
        starts = sorted(p.start_s * 1e6 for s in samples for p in s[1] if p.helper)
        # the dispatch's time after its last part ended (waking the dispatching thread,
        # giving instances and scratch back), with its setup before the first began
        joins = sorted((s[0].dispatch_ms / 1e3 - max(p.start_s + p.wall_s for p in s[1])) * 1e6
                       for s in samples if s[1])
        cells = [e.name, e.output_shapes[0] if e.output_shapes else "", f"{e.dispatch_ms:.3f}",
                 f"{rate:.1f}", f"{rate / peak:.2f}", _choice(e, "tile"),
                 str(_choice(e, "threads")).split(" (")[0].split(",")[0],
                 " / ".join(f"{c:.3f}" for c in per_part),
                 f"{starts[len(starts) // 2]:.0f}" if starts else "",
                 f"{joins[len(joins) // 2]:.0f}" if joins else "",
                 f"{min(clean):.3f} ({len(clean)})" if clean else ""]
        print("| " + " | ".join(map(str, cells)) + " |")
    print(f"| sum of the best times | | {total:.3f} | | | | | | | | {clean_total:.3f} |")
    print(f"each kernel's slowest thread (CPU time, best run) or, run in one call, its best "
          f"time, summed: "
          f"{critical:.3f} ms (the kernels' share of a step whose threads never wait for a "
          "core, before thread start and join)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    device = jaxlab.devices("wasm")[0]
    threads = device.backend.threads
    print(f"wasm device, {threads} thread(s)")
    peak = w3(device, threads, args.repeats)
    w4(device, threads, args.repeats, peak)


if __name__ == "__main__":
    main()
