"""Where the webgpu sort spends its device time: each pass of one sort timed alone

    python3 -m benchmarks.sort_passes [--n 16777216] [--rows 1] [--dtype float32] [--argsort]
                                      [--items K] [--ranking ballots|splits|nibbles]
                                      [--split-bits B] [--shared-reads]
                                      [--offsets lookback|scanned]
                                      [--warmup S]
                                      [--diagnose coalesced|no-payload|no-ranking]
                                      [--first-calls K]
                                      [--idle S]

prints every pass of the routine's plan (key kernel, each radix pass's histogram,
prefix-sum levels and scatter, the gather) with its device time, each pass in a
compute pass of its own between two timestamps (`WebGpuBackend.pass_times`), then the
sum by kind of pass, then spans for comparison: a jit call of the sort (what
benchmarks.gpu reports as SORT) right after compiling it and again after S seconds
of sorting (a GPU that idled runs slow clocks for a while), and the whole plan
dispatched as one compute pass (as a jit call records it). Times are medians over
REPEATS runs. The result is checked against NumPy's stable sort first. With
JAXLAB_WEBGPU_LOOP_BOUNDING=1 the shaders keep wgpu's loop counters (shader_modules.py).
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections import defaultdict
from typing import Any, Callable, Optional

import numpy as np

REPEATS = 10
# --diagnose: a change to the scatter's write-back that shows what it costs (the result
# is then wrong, and said to be)
DIAGNOSES = {
    # every key written back where it was read: the digit runs' scattered writes gone
    "coalesced": (("let to = digit_offset[", "let to = 0u * digit_offset["),
                  ("- digit_start[", "+ start + 0u * digit_start[")),
    # keys alone written back
    "no-payload": (("payload_out[to] = tile_payload", "// payload_out[to] = tile_payload"),),
    # (NIBBLES) no rounds: the tile written back as it was read, so what is left is the
    # cost of reading, the run starts and the write-back
    "no-ranking": (),
}


def _input(rows: int, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    shape = (rows, n) if rows > 1 else (n,)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _span_ms(backend: Any, run: Callable[[], Any]) -> Optional[float]:
    """Median device ms of `run()` inside a timestamp span."""
    spans = []
    for _ in range(REPEATS):
        with backend.device_span() as span:
            out = run()
        backend.synchronize()
        spans.append(span.ms)
        del out
    return None if None in spans else statistics.median(spans)


def _first_calls(backend: Any, run: Callable[[], Any], calls: int) -> list[str]:
    """Each call's device ms (and wall ms, up to its result), one call at a time."""
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        with backend.device_span() as span:
            out = run()
        backend.synchronize()
        wall = (time.perf_counter() - t0) * 1e3
        times.append(f"{span.ms:.2f} ({wall:.1f})" if span.ms is not None else f"({wall:.1f})")
        del out
    return times


def keep_busy(backend: Any, run: Callable[[], Any], seconds: float) -> int:
    """Run `run()` back to back for `seconds`; how many times it ran."""
    end, calls = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        run()
        backend.synchronize()
        calls += 1
    return calls


def _pass_table(exe: Any, runs: list[list[tuple[str, float]]]) -> None:
    """Each pass's median device ms, then the passes added up by kernel."""
    grids = [p.program.grid for p in exe.program.passes]
    print("\n| pass | kernel | workgroups | device ms |")
    print("|---|---|---|---|")
    by_kind: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for i, (label, _) in enumerate(runs[0]):
        ms = statistics.median(run[i][1] for run in runs)
        by_kind[label] += ms
        counts[label] += 1
        print(f"| {i} | {label} | {grids[i][0]}x{grids[i][1]}x{grids[i][2]} | {ms:.4f} |")
    print("\n| kernel | passes | device ms in all |")
    print("|---|---|---|")
    for label, ms in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"| {label} | {counts[label]} | {ms:.4f} |")
    print(f"\nsum of the passes timed alone: {sum(by_kind.values()):.4f} ms")


def _diagnose(radix: Any, changes: tuple[tuple[str, str], ...]) -> None:
    """Make radix.py's scatters with each `old` in their WGSL replaced by its `new`."""
    def changed(make: Callable[..., Any]) -> Callable[..., Any]:
        def scatter(*args: Any, **kwargs: Any) -> Any:
            shader = make(*args, **kwargs)
            body = shader.body
            for old, new in changes:
                assert old in body
                body = body.replace(old, new)
            return dataclasses.replace(shader, body=body)
        return scatter
    radix.split_scatter = changed(radix.split_scatter)
    radix.ballot_scatter = changed(radix.ballot_scatter)
    radix.nibble_scatter = changed(radix.nibble_scatter)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="row length")
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--argsort", action="store_true")
    ap.add_argument("--items", type=int,
                    help="radix_scatter.MAX_ITEMS: keys per thread of a tile")
    ap.add_argument("--ranking", choices=["ballots", "splits", "nibbles"],
                    help="radix.RANKING: how a scatter sorts its tile (ballots need "
                         "subgroups)")
    ap.add_argument("--shared-reads", action="store_true",
                    help="radix_nibbles.DIRECT_READS off: NIBBLES reads through shared memory")
    ap.add_argument("--split-bits", type=int, choices=[1, 2, 4],
                    help="radix.SPLIT_BITS: bits a split of --ranking splits sorts by")
    ap.add_argument("--offsets", choices=["lookback", "scanned"],
                    help="radix.OFFSETS: a tile's digit offsets by decoupled look-back "
                         "(with ballots), or by a histogram pass and a prefix sum")
    ap.add_argument("--diagnose", choices=sorted(DIAGNOSES),
                    help="time a scatter whose write-back is changed (a wrong result)")
    ap.add_argument("--first-calls", type=int, default=0,
                    help="print the device time of each of the first K jit calls")
    ap.add_argument("--idle", type=float, default=0.0,
                    help="seconds the device idles before the first calls (--first-calls)")
    ap.add_argument("--warmup", type=float, default=2.0,
                    help="seconds of sorting before the warm figures")
    args = ap.parse_args()

    import jaxlab
    import jaxlab.numpy as jnp
    from jaxlab.backends.webgpu import radix, radix_nibbles, radix_scatter
    from jaxlab.ir.dtypes import DType
    from jaxlab.ir.kernel import Routine

    radix_scatter.MAX_ITEMS = args.items or radix_scatter.MAX_ITEMS
    if args.ranking:
        radix.RANKING = radix_scatter.Ranking[args.ranking.upper()]
    radix.SPLIT_BITS = args.split_bits or radix.SPLIT_BITS
    radix_nibbles.DIRECT_READS = not args.shared_reads
    if args.offsets:
        radix.OFFSETS = radix_scatter.Offsets[args.offsets.upper()]

    if args.diagnose == "no-ranking":
        radix_nibbles._round = lambda *_: "  workgroupBarrier();\n"
    elif args.diagnose:
        _diagnose(radix, DIAGNOSES[args.diagnose])

    x = _input(args.rows, args.n, args.dtype)
    name = "argsort" if args.argsort else "sort"
    out_dtype = DType.int32 if args.argsort else DType(args.dtype)
    routine = Routine(name, ((x.shape, DType(args.dtype)),), ((x.shape, out_dtype),))
    backend = jaxlab.engine.devices.get_device("webgpu").backend
    exe = backend.prepare_routine(routine)
    data, result = backend.allocate(x.nbytes), backend.allocate(x.size * out_dtype.itemsize)
    backend.write(data, x)

    want = np.argsort(x, axis=-1, kind="stable") if args.argsort else np.sort(x, axis=-1)
    backend.dispatch(exe, [data], [result])
    got = backend.read(result, out_dtype, x.size).reshape(x.shape)
    print(f"{name} of {args.rows} x {args.n} {args.dtype} on {backend.info()['device']}: "
          f"correct {bool(np.array_equal(got, want, equal_nan=x.dtype.kind == 'f'))}")
    for c in exe.tuning.choices:
        print(f"- {c.name}: {c.value} ({c.reason})")
    if not backend.timestamps:
        print("no timestamp queries on this adapter: no device times")
        return

    fn = jaxlab.jit(jnp.argsort if args.argsort else jnp.sort)
    arg = jaxlab.device_put(x, "webgpu")
    fn(arg).block_until_ready()
    if args.first_calls:
        time.sleep(args.idle)
        print(f"\nthe first {args.first_calls} jit calls after compiling and {args.idle} s "
              "idle, one at a time: device ms (wall ms)")
        print(" ".join(_first_calls(backend, lambda: fn(arg), args.first_calls)))
    cold = _span_ms(backend, lambda: fn(arg))
    calls = keep_busy(backend, lambda: fn(arg), args.warmup)
    print(f"\na jit call (as benchmarks.gpu SORT) right after compiling: {cold:.4f} ms")
    print(f"a jit call after {args.warmup} s of sorting ({calls} calls): "
          f"{_span_ms(backend, lambda: fn(arg)):.4f} ms")

    def in_one_pass() -> None:
        with backend.batch():
            backend.dispatch(exe, [data], [result])

    print(f"the plan in one compute pass: {_span_ms(backend, in_one_pass):.4f} ms")
    _pass_table(exe, [backend.pass_times(exe, [data], [result]) for _ in range(REPEATS)])


if __name__ == "__main__":
    main()
