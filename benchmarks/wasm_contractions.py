"""W3's matmul and W4's training step on the wasm device, kernel by kernel: where the
time of the contractions goes, in wall time and in CPU time.

    JAXLAB_WASM_THREADS=1 python3 -m benchmarks.wasm_contractions
    JAXLAB_WASM_THREADS=2 taskset -c 0,1 python3 -m benchmarks.wasm_contractions

Prints W3 (1024 x 1024 float32) as GFLOP/s of wall time and of CPU time (all threads'),
beside the FMA-only peak (benchmarks/wasm_peak.py) on as many threads as the device
uses, and W4's step with each kernel's best time over the captured steps (its
GFLOP/s, register tile and thread split from the tuning record). CPU time says what
the code costs when other processes share the cores; wall time is the figure that
benchmarks.run compares with the peers.
"""
from __future__ import annotations

import argparse
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


def w3(device: Any, threads: int, repeats: int) -> None:
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


def _choice(event: Any, name: str) -> Any:
    """A choice of the event's tuning record, or '' where it has none."""
    try:
        return event.tuning.value(name)
    except (AttributeError, KeyError):
        return ""


def w4(device: Any, repeats: int) -> None:
    params, x, y = _w4_inputs("cpu")
    put = lambda t: jaxlab.device_put(t, device)   # noqa: E731
    params = [(put(w), put(b)) for w, b in params]
    x, y = put(x), put(y)
    step = _w4_step(jaxlab)
    for _ in range(3):
        jaxlab.block_until_ready(step(params, x, y))
    wall, cpu = _best(lambda: step(params, x, y), repeats)
    print(f"W4 step: {wall * 1e3:.2f} ms wall, {cpu * 1e3:.2f} ms CPU (best of {repeats})")
    best: dict[int, list] = {}
    for _ in range(repeats):
        with jaxlab.capture() as log:
            jaxlab.block_until_ready(step(params, x, y))
        for i, e in enumerate(log):
            if i not in best or e.dispatch_ms < best[i].dispatch_ms:
                best[i] = e
    print("| kernel | shape | ms | GFLOP/s | tile | threads |\n|---|---|---|---|---|---|")
    total = 0.0
    for e in best.values():
        total += e.dispatch_ms
        rate = e.flops / e.dispatch_ms / 1e6 if e.dispatch_ms else 0.0
        print(f"| {e.name} | {e.output_shapes[0] if e.output_shapes else ''} | "
              f"{e.dispatch_ms:.3f} | {rate:.1f} | {_choice(e, 'tile')} | "
              f"{str(_choice(e, 'threads')).split(' (')[0].split(',')[0]} |")
    print(f"| sum of the best times | | {total:.3f} | | | |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    device = jaxlab.devices("wasm")[0]
    threads = device.backend.threads
    print(f"wasm device, {threads} thread(s)")
    w3(device, threads, args.repeats)
    w4(device, args.repeats)


if __name__ == "__main__":
    main()
