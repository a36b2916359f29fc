"""What a team of threads gives the wasm device's long routines: the sort of 1M float32
and the Cholesky of one 512x512 matrix (issue 14's W6 parts; other sizes on request), each run by a backend of
one thread and by one of two (a team taking items from a work list), interleaved in one
process so that both see the same machine, and how soon thread 0's helper joined a team
call (or whether it came after thread 0 had finished). A team is asked for even where
the routine's own threshold would not give one (cholesky.TEAM_FROM), to see what it gives.

    python -m benchmarks.wasm_teams [--calls 100] [--sort-sizes 1048576] [--cholesky-sizes 256,512,1024]
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


def _spd(n: int, rng: np.random.Generator) -> np.ndarray:
    m = rng.standard_normal((n, n)).astype(np.float32)
    return (m @ m.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _inputs(sort_sizes: list[int], cholesky_sizes: list[int]) -> dict[str, tuple[Routine, np.ndarray]]:
    rng = np.random.default_rng(0)
    arrays = ([(f"sort {n}", "sort", rng.standard_normal(n).astype(np.float32)) for n in sort_sizes]
              + [(f"cholesky {n}", "cholesky", _spd(n, rng)) for n in cholesky_sizes])
    return {label: (Routine(name, ((x.shape, DType.float32),), ((x.shape, DType.float32),)), x)
            for label, name, x in arrays}


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
    ap.add_argument("--sort-sizes", default=str(1 << 20), help="row lengths, comma-separated")
    ap.add_argument("--cholesky-sizes", default="512", help="matrix sizes, comma-separated")
    args = ap.parse_args()
    sizes = {name: [int(v) for v in text.split(",") if v]
             for name, text in (("sort", args.sort_sizes), ("cholesky", args.cholesky_sizes))}
    for module, name in ((cholesky, "cholesky"), (sorting, "sort")):
        if sizes[name]:   # a team from the smallest size asked for
            module.TEAM_FROM = min(module.TEAM_FROM, *sizes[name])
    for name, (routine, x) in _inputs(sizes["sort"], sizes["cholesky"]).items():
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
            print(f"{name:14s} {threads} thread(s): min {min(times):.3f}  p25 {q[0]:.3f}  "
                  f"median {q[1]:.3f}  p75 {q[2]:.3f} ms  ({exe.tuning.value('threads')} in its record)")
        be, exe, hin, hout, _ = runs[2]
        starts, late = _helper_starts(be, exe, hin, hout, min(args.calls, 50))
        if starts:
            print(f"{name:14s} the helper joined {len(starts)} of {len(starts) + late} calls, starting "
                  f"{min(starts):.3f}-{max(starts):.3f} ms (median {statistics.median(starts):.3f}) after "
                  "the call began")
        else:
            print(f"{name:14s} the helper joined none of {late} calls")


if __name__ == "__main__":
    main()
