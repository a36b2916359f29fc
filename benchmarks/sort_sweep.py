"""Tuning sweep for the webgpu sort on a GPU: device time of float32 sorts

    python3 -m benchmarks.sort_sweep

- the radix sort of 16M keys with each tile size (keys per thread), sort and argsort;
- rows around the radix threshold, bitonic against radix, the batch making 4M keys,
so that RADIX_MIN_LENGTH (routines.py) and MAX_ITEMS (radix.py) can be set from it.
Each configuration runs in a fresh process: plans are built once per shape.
Device time is a timestamp span around the call (as benchmarks.gpu).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

import numpy as np

REPEATS = 10
ALWAYS_BITONIC, ALWAYS_RADIX = 1 << 40, 1


def measure(rows: int, n: int, items: int, threshold: int, argsort: bool) -> dict:
    """Median device ms of one jitted sort (or argsort) of a (rows, n) float32 array."""
    import jaxlab
    from jaxlab.backends.webgpu import radix, routines
    radix.MAX_ITEMS, routines.RADIX_MIN_LENGTH = items, threshold
    x = np.random.default_rng(0).standard_normal((rows, n)).astype(np.float32)
    with jaxlab.default_device("webgpu"):
        backend = jaxlab.engine.devices.get_device("webgpu").backend
        fn = jaxlab.jit(jaxlab.numpy.argsort if argsort else jaxlab.numpy.sort)
        arg = jaxlab.device_put(x, "webgpu")
        out = np.asarray(fn(arg))
        want = np.argsort(x, kind="stable") if argsort else np.sort(x)
        spans = []
        for _ in range(REPEATS):
            with backend.device_span() as span:
                result = fn(arg)
            result.block_until_ready()
            spans.append(span.ms)
    return {"ms": statistics.median(spans) if None not in spans else None,
            "items": radix.items_per_thread(backend.limits),   # what shared memory allowed
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
    print("| rows x n | sort | keys per thread | threshold | device ms | correct |")
    print("|---|---|---|---|---|---|")
    configs = [dict(rows=1, n=1 << 24, items=items, threshold=ALWAYS_RADIX, argsort=argsort)
               for items in (4, 8, 16) for argsort in (False, True)]
    configs += [dict(rows=(1 << 22) // n, n=n, items=8, threshold=threshold, argsort=False)
                for n in (1024, 2048, 4096, 8192, 16384, 65536)
                for threshold in (ALWAYS_BITONIC, ALWAYS_RADIX)]
    for c in configs:
        r = _run(c)
        kind = "bitonic" if c["threshold"] == ALWAYS_BITONIC else "radix"
        print(f"| {c['rows']} x {c['n']} | {'argsort' if c['argsort'] else 'sort'} | "
              f"{r.get('items')} | {kind} | {r.get('ms')} | {r.get('correct', r.get('error'))} |",
              flush=True)


if __name__ == "__main__":
    main()
