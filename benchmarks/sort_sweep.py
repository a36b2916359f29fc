"""Tuning sweep for the webgpu sort on a GPU: device time of float32 sorts

    python3 -m benchmarks.sort_sweep

- the radix sort of 16M keys with each tile size (keys per thread) and ranking
  (two 4-bit rounds of counts, subgroup ballots, or 2-bit splits);
- 16M keys of uint8, uint16 and int32 (1, 2 and 4 radix passes: the cost of a pass);
- rows around the radix threshold, bitonic against radix, the batch making 4M keys,
so that RADIX_MIN_LENGTH (routines.py), MAX_ITEMS (radix_scatter.py) and RANKING can be
set from it. `python3 -m benchmarks.sort_passes` shows one configuration's passes.
Each configuration runs in a fresh process: plans are built once per shape.
Device time is a timestamp span around the call (as benchmarks.gpu), after WARMUP_S
seconds of the same sort.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

import numpy as np

from benchmarks.sort_passes import keep_busy

REPEATS = 10
WARMUP_S = 1.0   # sorting before the figures: a GPU that idled runs slow clocks a while
ALWAYS_BITONIC, ALWAYS_RADIX = 1 << 40, 1


def measure(rows: int, n: int, items: int, ranking: str, threshold: int, argsort: bool,
            dtype: str = "float32") -> dict:
    """Median device ms of one jitted sort (or argsort) of a (rows, n) array."""
    import jaxlab
    from jaxlab.backends.webgpu import radix, radix_scatter, routines
    radix_scatter.MAX_ITEMS, routines.RADIX_MIN_LENGTH = items, threshold
    radix.RANKING = radix_scatter.Ranking[ranking]
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, n)) if dtype == "float32" else
         rng.integers(0, 1 << 31, (rows, n))).astype(dtype)
    with jaxlab.default_device("webgpu"):
        backend = jaxlab.engine.devices.get_device("webgpu").backend
        fn = jaxlab.jit(jaxlab.numpy.argsort if argsort else jaxlab.numpy.sort)
        arg = jaxlab.device_put(x, "webgpu")
        out = np.asarray(fn(arg))
        want = np.argsort(x, kind="stable") if argsort else np.sort(x)
        keep_busy(backend, lambda: fn(arg), WARMUP_S)
        spans = []
        for _ in range(REPEATS):
            with backend.device_span() as span:
                result = fn(arg)
            result.block_until_ready()
            spans.append(span.ms)
    return {"ms": statistics.median(spans) if None not in spans else None,
            # what shared memory allowed
            "items": radix_scatter.items_per_thread(backend.limits,
                                            radix.ranking(backend.lang.subgroups)),
            "correct": bool(np.array_equal(out, want))}


def _run(config: dict) -> dict:
    done = subprocess.run([sys.executable, "-m", "benchmarks.sort_sweep", "--one",
                           json.dumps(config)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", help="measure one configuration (JSON) in this process")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(**json.loads(args.one))))
        return
    print("| rows x n | sort | dtype | keys per thread | ranking | algorithm | device ms | "
          "correct |")
    print("|---|---|---|---|---|---|---|---|")
    # (NIBBLES holds at most 8 keys a thread)
    configs = [dict(rows=1, n=1 << 24, items=items, ranking=ranking, threshold=ALWAYS_RADIX,
                    argsort=False)
               for ranking, sizes in (("NIBBLES", (4, 8)), ("BALLOTS", (4, 8, 16)),
                                      ("SPLITS", (4, 8, 16))) for items in sizes]
    configs += [dict(rows=1, n=1 << 24, items=8, ranking=ranking, threshold=ALWAYS_RADIX,
                     argsort=True) for ranking in ("NIBBLES", "BALLOTS", "SPLITS")]
    configs += [dict(rows=1, n=1 << 24, items=8, ranking="NIBBLES", threshold=ALWAYS_RADIX,
                     argsort=False, dtype=dtype) for dtype in ("uint8", "uint16", "int32")]
    configs += [dict(rows=(1 << 22) // n, n=n, items=8, ranking="NIBBLES", threshold=threshold,
                     argsort=False)
                for n in (4096, 16384, 65536, 262144)
                for threshold in (ALWAYS_BITONIC, ALWAYS_RADIX)]
    for c in configs:
        r = _run(c)
        kind = "bitonic" if c["threshold"] == ALWAYS_BITONIC else "radix"
        print(f"| {c['rows']} x {c['n']} | {'argsort' if c['argsort'] else 'sort'} | "
              f"{c.get('dtype', 'float32')} | {r.get('items')} | {c['ranking']} | {kind} | "
              f"{r.get('ms')} | {r.get('correct', r.get('error'))} |", flush=True)


if __name__ == "__main__":
    main()
