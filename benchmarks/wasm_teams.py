"""What a team of threads gives the wasm device's long routines: the sort of 1M float32
and the Cholesky of one 512x512 matrix (issue 14's W6 parts), each run by a backend of
one thread and by one of two (a team taking items from a work list), interleaved in one
process so that both see the same machine, and how soon thread 0's helper joined a team
call (or whether it came after thread 0 had finished). A team is asked for even where
the routine's own threshold would not give one (cholesky.TEAM_FROM), to see what it gives.

    python -m benchmarks.wasm_teams [--calls 100]
"""
from __future__ import annotations

import argparse
import statistics
import threading
import time

import numpy as np

import jaxlab.backends.wasm.runtime as wasm_runtime
from jaxlab.backends.wasm import cholesky, sorting
from jaxlab.backends.wasm.runtime import WasmBackend
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine


def _inputs() -> dict[str, tuple[Routine, np.ndarray]]:
    rng = np.random.default_rng(0)
    values = rng.standard_normal(1 << 20).astype(np.float32)
    m = rng.standard_normal((512, 512)).astype(np.float32)
    spd = (m @ m.T / 512 + np.eye(512, dtype=np.float32)).astype(np.float32)
    return {name: (Routine(name, ((x.shape, DType.float32),), ((x.shape, DType.float32),)), x)
            for name, x in (("sort", values), ("cholesky", spd))}


def _helper_starts(backend: WasmBackend, exe, hin: int, hout: int, calls: int) -> tuple[list, int]:
    """Per call: when the helper's part started after the call began (ms), or None when
    it started after the call had returned (it then joined nothing)."""
    started: list[float] = []
    run = wasm_runtime._run

    def timed(instance, args, scratch):
        if threading.current_thread() is not threading.main_thread():
            started.append(time.perf_counter())
        return run(instance, args, scratch)
    wasm_runtime._run = timed
    late, starts = 0, []
    try:
        for _ in range(calls):
            started.clear()
            t0 = time.perf_counter()
            backend.dispatch(exe, [hin], [hout])
            t1 = time.perf_counter()
            backend.wasm.pool.submit(lambda: None).result()   # the helper has left
            if started and started[0] <= t1:
                starts.append((started[0] - t0) * 1e3)
            else:
                late += 1
    finally:
        wasm_runtime._run = run
    return starts, late


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100)
    args = ap.parse_args()
    cholesky.TEAM_FROM = min(cholesky.TEAM_FROM, 512)
    sorting.TEAM_FROM = min(sorting.TEAM_FROM, 1 << 20)
    for name, (routine, x) in _inputs().items():
        runs = {}
        for threads in (1, 2):
            be = WasmBackend(threads=threads)
            exe = be.prepare_routine(routine)
            hin, hout = be.allocate(x.nbytes), be.allocate(x.nbytes)
            be.write(hin, x)
            be.dispatch(exe, [hin], [hout])
            runs[threads] = (be, exe, hin, hout, [])
        for _ in range(args.calls):
            for be, exe, hin, hout, times in runs.values():
                t0 = time.perf_counter()
                be.dispatch(exe, [hin], [hout])
                times.append((time.perf_counter() - t0) * 1e3)
        for threads, (be, exe, hin, hout, times) in runs.items():
            q = statistics.quantiles(times, n=4)
            print(f"{name:8s} {threads} thread(s): min {min(times):.3f}  p25 {q[0]:.3f}  "
                  f"median {q[1]:.3f}  p75 {q[2]:.3f} ms  ({exe.tuning.value('threads')} in its record)")
        be, exe, hin, hout, _ = runs[2]
        starts, late = _helper_starts(be, exe, hin, hout, min(args.calls, 50))
        if starts:
            print(f"{name:8s} the helper joined {len(starts)} of {len(starts) + late} calls, starting "
                  f"{min(starts):.3f}-{max(starts):.3f} ms (median {statistics.median(starts):.3f}) after "
                  "the call began")
        else:
            print(f"{name:8s} the helper joined none of {late} calls")


if __name__ == "__main__":
    main()
