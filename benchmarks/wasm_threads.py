"""How a large matmul shares the wasm device's threads: per thread, its share of the
columns, its CPU time and its wall time per call, against one thread doing all of it;
and what handing a tiny kernel to the other threads costs (wake and join).

    python3 -m benchmarks.wasm_threads                 # W3's 1024 x 1024 x 1024, 2 threads
    python3 -m benchmarks.wasm_threads --n 512 --threads 4

The kernel is W3's (`a @ b`, float32) as the wasm backend compiles it; its parts are run
here on threads of this script, each timing itself (time.thread_time: CPU time of that
thread), the way the backend's dispatch splits it. Rounds alternate one thread and all
threads, so that both see the same load; the best of each is printed.
"""
from __future__ import annotations

import argparse
import threading
import time

import numpy as np

from jaxlab.backends.wasm.runtime import WasmBackend
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Reduction, acc_variable


def matmul_kernel(n: int) -> Kernel:
    """out[i, j] = sum over k of a[i, k] * b[k, j], all n x n float32."""
    g, r = AluExp.special("gidx", n * n), AluExp.special("ridx", n)
    body = AluExp.load(0, (g // n) * n + r, DType.float32) * AluExp.load(1, r * n + g % n,
                                                                           DType.float32)
    return Kernel(shape=(n, n), inputs=((DType.float32, n * n),) * 2, exp=body,
                  reduction=Reduction(AluOp.Add, n, acc_variable(DType.float32)),
                  reduce_shape=(n,))


def _run_parts(backend: WasmBackend, exe, buffers: tuple) -> tuple[float, list]:
    """One call, its parts on threads of their own: wall seconds, and per part (its
    [lo, hi), CPU seconds, wall seconds)."""
    prog = exe.program
    instances = [prog.module.take() for _ in prog.chunks]
    scratch = [backend.memory.allocate(prog.scratch_bytes) if prog.scratch_bytes else None
               for _ in prog.chunks]
    parts: list = [None] * len(prog.chunks)

    def part(i: int) -> None:
        c0, w0 = time.thread_time(), time.perf_counter()
        extra = (scratch[i],) if scratch[i] is not None else ()
        instances[i].call(*buffers, *extra, *prog.chunks[i])
        parts[i] = (prog.chunks[i], time.thread_time() - c0, time.perf_counter() - w0)
    helpers = [threading.Thread(target=part, args=(i,)) for i in range(1, len(prog.chunks))]
    w0 = time.perf_counter()
    for h in helpers:
        h.start()
    part(0)
    for h in helpers:
        h.join()
    wall = time.perf_counter() - w0
    for instance in instances:
        prog.module.give(instance)
    for s in scratch:
        if s is not None:
            backend.memory.free(s)
    return wall, parts


def _hand_off_us(backend: WasmBackend, threads: int, calls: int) -> tuple[float, float]:
    """Best microseconds of a dispatch of a 64-element kernel on one thread and split
    over `threads` (what a hand-off to the pool and the join cost)."""
    x = AluExp.load(0, AluExp.special("gidx", 64), DType.float32)
    kernel = Kernel(shape=(64,), inputs=((DType.float32, 64),), exp=x + 1.0)
    handles = [backend.allocate(256), backend.allocate(256)]
    best = []
    for n in (1, threads):
        exe = backend.prepare_kernel(kernel, {"threads": n})
        t = float("inf")
        for _ in range(calls):
            t0 = time.perf_counter()
            backend.dispatch(exe, handles[:1], handles[1:])
            t = min(t, time.perf_counter() - t0)
        best.append(t * 1e6)
    return best[0], best[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    n, threads = args.n, args.threads
    backend = WasmBackend(threads=threads)
    backend.min_thread_work = 0
    kernel = matmul_kernel(n)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    handles = [backend.allocate(a.nbytes), backend.allocate(b.nbytes)]
    backend.write(handles[0], a)
    backend.write(handles[1], b)
    out = backend.allocate(a.nbytes)
    exes = {t: backend.prepare_kernel(kernel, {"threads": t}) for t in (1, threads)}
    buffers = (out, *handles)
    _run_parts(backend, exes[threads], buffers)
    got = backend.read(out, DType.float32, n * n).reshape(n, n)
    error = float(np.abs(got - a @ b).max())
    best: dict[int, tuple] = {}
    for _ in range(args.rounds):
        for t, exe in exes.items():
            wall, parts = _run_parts(backend, exe, buffers)
            if t not in best or wall < best[t][0]:
                best[t] = (wall, parts)
    flop = 2 * n ** 3
    print(f"matmul {n} x {n} x {n} float32, tile {exes[1].tuning.value('tile')}, "
          f"largest error against NumPy {error:.1e}; best of {args.rounds} calls")
    print("| threads | wall ms | GFLOP/s | part: columns, CPU ms, wall ms |\n|---|---|---|---|")
    for t, (wall, parts) in best.items():
        shown = "; ".join(f"[{lo}, {hi}) {cpu * 1e3:.2f} / {w * 1e3:.2f}"
                          for (lo, hi), cpu, w in parts)
        print(f"| {t} | {wall * 1e3:.2f} | {flop / wall / 1e9:.1f} | {shown} |")
    one, split = _hand_off_us(backend, threads, 200)
    print(f"\na 64-element kernel: {one:.1f} us on one thread, {split:.1f} us split over "
          f"{threads} (the hand-off and join: {split - one:.1f} us)")


if __name__ == "__main__":
    main()
