"""The machine's Wasm SIMD peak: GFLOP/s of a kernel that does nothing but f32x4
multiply-adds (relaxed_madd, fused where the CPU fuses) on all cores at once.

W3 is reported as a fraction of this figure: a matmul can approach it but not pass it.
Each thread runs its own instance (its own store) of one module; the accumulators are
independent, so the kernel is bound by the FMA units' throughput, not their latency.
"""
from __future__ import annotations

import os
import threading
import time

ACCUMULATORS = 12       # independent chains: FMA latency x throughput (4 x 2) and spare
STEPS_PER_ITERATION = 4  # multiply-adds per accumulator per loop iteration
FLOP_PER_FMA = 2 * 4    # a multiply and an add in each of four lanes


def fma_module_text(accumulators: int = ACCUMULATORS) -> str:
    """`run(n)`: n iterations of STEPS_PER_ITERATION multiply-adds on each accumulator; the
    lanes' sum is returned so that no work can be dropped."""
    accs = [f"$a{i}" for i in range(accumulators)]
    body = [f"(local.set {a} (f32x4.relaxed_madd (local.get {a}) (local.get $x) (local.get $y)))"
            for _ in range(STEPS_PER_ITERATION) for a in accs]
    total = f"(local.get {accs[0]})"
    for a in accs[1:]:
        total = f"(f32x4.add {total} (local.get {a}))"
    return "\n".join(
        ['(module (func (export "run") (param $n i32) (result f32)',
         "  (local $x v128) (local $y v128) " + " ".join(f"(local {a} v128)" for a in accs),
         "  (local.set $x (f32x4.splat (f32.const 0.999)))",
         "  (local.set $y (f32x4.splat (f32.const 0.001)))"]
        + [f"  (local.set {a} (f32x4.splat (f32.const {i})))" for i, a in enumerate(accs)]
        + ["  (loop $steps"] + [f"    {line}" for line in body]
        + ["    (br_if $steps (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))",
           f"  (f32x4.extract_lane 0 {total})))"])


def wasm_fma_peak_gflops(threads: int | None = None, iterations: int = 1_000_000,
                         rounds: int = 5) -> float:
    """Best of `rounds` runs of the FMA kernel on `threads` threads at once (default: the
    CPUs this process may use), in GFLOP/s of wall time."""
    import wasmtime
    threads = threads or len(os.sched_getaffinity(0))
    engine = wasmtime.Engine()
    module = wasmtime.Module(engine, fma_module_text())
    calls = []
    for _ in range(threads):
        store = wasmtime.Store(engine)
        run = wasmtime.Instance(store, module, []).exports(store)["run"]
        run(store, 1000)   # compiled and warm
        calls.append((store, run))
    flops = threads * iterations * STEPS_PER_ITERATION * ACCUMULATORS * FLOP_PER_FMA
    best = float("inf")
    for _ in range(rounds):
        workers = [threading.Thread(target=run, args=(store, iterations)) for store, run in calls]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = min(best, time.perf_counter() - t0)
    return flops / best / 1e9


if __name__ == "__main__":
    print(f"{wasm_fma_peak_gflops():.1f} GFLOP/s")
