"""Where the webgpu sort spends its device time: each pass of one sort timed alone

    python3 -m benchmarks.sort_passes [--n 16777216] [--rows 1] [--dtype float32] [--argsort]
                                      [--items K] [--split B] [--ranking ballots|splits]

prints every pass of the routine's plan (key kernel, each radix pass's histogram,
prefix-sum levels and scatter, the gather) with its device time, each pass in a
compute pass of its own between two timestamps (`WebGpuBackend.pass_times`), then the
sum by kind of pass, then two spans for comparison: the whole plan dispatched as one
compute pass (as a jit call records it) and a jit call of the sort (what
benchmarks.gpu reports as SORT). Times are medians over REPEATS runs. The result is
checked against NumPy's stable sort first.
"""
from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

import numpy as np

REPEATS = 10


def _input(rows: int, n: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    shape = (rows, n) if rows > 1 else (n,)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _span_ms(backend, run) -> float | None:
    """Median device ms of `run()` inside a timestamp span."""
    spans = []
    for _ in range(REPEATS):
        with backend.device_span() as span:
            out = run()
        backend.synchronize()
        spans.append(span.ms)
        del out
    return None if None in spans else statistics.median(spans)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="row length")
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--argsort", action="store_true")
    ap.add_argument("--items", type=int, help="radix.MAX_ITEMS: keys per thread of a tile")
    ap.add_argument("--split", type=int, help="radix.SPLIT_BITS: bits a tile splits by")
    ap.add_argument("--ranking", choices=["ballots", "splits"],
                    help="radix.RANKING: how a scatter sorts its tile (default: ballots "
                         "where the adapter has subgroups)")
    args = ap.parse_args()

    import jaxlab
    import jaxlab.numpy as jnp
    from jaxlab.ir.dtypes import DType
    from jaxlab.backends.webgpu import radix
    from jaxlab.ir.kernel import Routine

    radix.MAX_ITEMS = args.items or radix.MAX_ITEMS
    radix.SPLIT_BITS = args.split or radix.SPLIT_BITS
    radix.RANKING = args.ranking and radix.Ranking[args.ranking.upper()]

    x = _input(args.rows, args.n, args.dtype)
    name = "argsort" if args.argsort else "sort"
    dtype = DType(args.dtype)
    routine = Routine(name, ((x.shape, dtype),), ((x.shape, DType.int32 if args.argsort
                                                   else dtype),))
    backend = jaxlab.engine.devices.get_device("webgpu").backend
    exe = backend.prepare_routine(routine)
    data = backend.allocate(x.nbytes)
    backend.write(data, x)
    out_dtype = routine.outputs[0][1]
    result = backend.allocate(x.size * out_dtype.itemsize)

    want = np.argsort(x, axis=-1, kind="stable") if args.argsort else np.sort(x, axis=-1)
    backend.dispatch(exe, [data], [result])
    got = backend.read(result, out_dtype, x.size).reshape(x.shape)
    print(f"{name} of {args.rows} x {args.n} {args.dtype} on {backend.info()['device']}: "
          f"correct {bool(np.array_equal(got, want, equal_nan=x.dtype.kind == 'f'))}")
    for c in exe.tuning.choices:
        print(f"- {c.name}: {c.value} ({c.reason})")

    runs = [backend.pass_times(exe, [data], [result]) for _ in range(REPEATS)]
    if not runs[0]:
        print("no timestamp queries on this adapter: no device times")
        return
    grids = [p.program.grid for p in exe.program.passes]
    print("\n| pass | kernel | workgroups | device ms |")
    print("|---|---|---|---|")
    by_kind: dict[str, float] = defaultdict(float)
    for i, (label, _) in enumerate(runs[0]):
        ms = statistics.median(run[i][1] for run in runs)
        by_kind[label] += ms
        print(f"| {i} | {label} | {grids[i][0]}x{grids[i][1]}x{grids[i][2]} | {ms:.4f} |")
    print("\n| kernel | passes | device ms in all |")
    print("|---|---|---|")
    counts = defaultdict(int)
    for label, _ in runs[0]:
        counts[label] += 1
    for label, ms in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"| {label} | {counts[label]} | {ms:.4f} |")
    print(f"\nsum of the passes timed alone: {sum(by_kind.values()):.4f} ms")

    def in_one_pass():
        with backend.batch():
            backend.dispatch(exe, [data], [result])

    print(f"the plan in one compute pass: {_span_ms(backend, in_one_pass):.4f} ms")
    fn = jaxlab.jit(jnp.argsort if args.argsort else jnp.sort)
    arg = jaxlab.device_put(x, "webgpu")
    fn(arg).block_until_ready()
    print(f"a jit call (as benchmarks.gpu SORT): {_span_ms(backend, lambda: fn(arg)):.4f} ms")


if __name__ == "__main__":
    main()
