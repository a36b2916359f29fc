"""Compile time of a jitted fori_loop against its trip count, and the warm cost of an
iteration, in one run.

    python -m benchmarks.loops                    # cpu, wasm and JAX
    python -m benchmarks.loops --devices cpu,wasm,webgpu --steps 10,1000

A loop body is compiled once into a sub-program, so a 1000-step loop should
compile in the time a 10-step one does: the figure is the ratio of the two
(1.00 = the trip count costs nothing), beside JAX's (jit lower + compile).
Each measurement gets its own body constant, so no kernel comes from the
cache of an earlier measurement; the median of REPEATS is reported.

The second table runs compiled loops warm: microseconds per iteration of a
fori_loop with static bounds (a scan: no read-back), the same loop as a
while_loop (its predicate read to the host every iteration) and a cond
(its index read once per call); the difference of the first two is what a
predicate read-back costs.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

REPEATS = 7


def _loop(lax, steps: int, k: int) -> Callable:
    # k makes every measurement's kernels new (it is baked into the body)
    return lambda x: lax.fori_loop(0, steps, lambda i, v: v * 0.5 + (1.0 + k * 1e-3), x)


def jaxlab_compile_ms(device: str, steps: int, k: int) -> float:
    import jaxlab
    from jaxlab import lax
    with jaxlab.default_device(device):
        x = jaxlab.numpy.ones(256)
        t0 = time.perf_counter()
        jaxlab.jit(_loop(lax, steps, k)).lower(x)
        return (time.perf_counter() - t0) * 1e3


def jax_compile_ms(steps: int, k: int) -> float:
    import jax
    import jax.numpy as jnp
    from jax import lax
    x = jnp.ones(256)
    t0 = time.perf_counter()
    jax.jit(_loop(lax, steps, k)).lower(x).compile()
    return (time.perf_counter() - t0) * 1e3


def measure(fn: Callable[[int, int], float], steps: list[int]) -> dict[int, float]:
    fn(steps[0], -1)   # warm up imports and the device
    times: dict[int, list[float]] = {n: [] for n in steps}
    for r in range(REPEATS):   # interleaved, order alternating: drifting load and
        order = steps if r % 2 == 0 else steps[::-1]   # warm-up hit every trip count alike
        for j, n in enumerate(order):
            times[n].append(fn(n, r * len(steps) + j))
    return {n: statistics.median(t) for n, t in times.items()}


ITERATIONS = 200


def _iteration_fns(module, lax) -> dict[str, Callable]:
    body = lambda i, v: v * 0.5 + 1.0   # noqa: E731
    return {
        "fori (scan)": module.jit(lambda x: lax.fori_loop(0, ITERATIONS, body, x)),
        "while": module.jit(lambda x, n: lax.while_loop(
            lambda c: c[0] < n, lambda c: (c[0] + 1, body(c[0], c[1])), (0, x))[1]),
        "cond": module.jit(lambda x: lax.cond(x[0] > 0, lambda v: v + 1.0, lambda v: v - 1.0, x)),
    }


def iteration_us(module, lax, x, sync: Callable) -> dict[str, float]:
    """Warm microseconds per loop iteration (per call for cond), the best of REPEATS."""
    out = {}
    for name, fn in _iteration_fns(module, lax).items():
        args = (x, ITERATIONS) if name == "while" else (x,)
        sync(fn(*args))
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            sync(fn(*args))
            times.append(time.perf_counter() - t0)
        out[name] = min(times) * 1e6 / (1 if name == "cond" else ITERATIONS)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", default="cpu,wasm")
    ap.add_argument("--steps", default="10,1000")
    args = ap.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    rows = []
    for d in args.devices.split(","):
        rows.append((f"jaxlab[{d}]", measure(lambda n, k, d=d: jaxlab_compile_ms(d, n, k),
                                             steps)))
    try:
        rows.append(("jax[cpu]", measure(jax_compile_ms, steps)))
    except ImportError:
        pass
    head = " ".join(f"{f'{n} steps':>12}" for n in steps)
    print(f"{'compile (ms, median)':<22}{head}   {steps[-1]}/{steps[0]}")
    for label, t in rows:
        cells = " ".join(f"{t[n]:12.1f}" for n in steps)
        print(f"{label:<22}{cells}   {t[steps[-1]] / t[steps[0]]:8.2f}")
    worst = max((t[steps[-1]] / t[steps[0]] for label, t in rows if label.startswith("jaxlab")),
                key=lambda r: abs(r - 1))
    print(f"worst jaxlab ratio {worst:.2f} (within 20%: {'yes' if abs(worst - 1) <= 0.2 else 'no'})")
    import numpy as np
    runs = []
    for d in args.devices.split(","):
        import jaxlab
        from jaxlab import lax
        with jaxlab.default_device(d):
            x = jaxlab.numpy.asarray(np.ones(256, np.float32))
            runs.append((f"jaxlab[{d}]", iteration_us(jaxlab, lax, x, np.asarray)))
    try:
        import jax
        runs.append(("jax[cpu]", iteration_us(jax, jax.lax, jax.numpy.ones(256), np.asarray)))
    except ImportError:
        pass
    names = list(runs[0][1])
    print(f"\n{'warm us per iteration':<22}" + "".join(f"{n:>14}" for n in names) +
          f"{'read-back':>12}")
    for label, t in runs:
        print(f"{label:<22}" + "".join(f"{t[n]:14.2f}" for n in names) +
              f"{t['while'] - t['fori (scan)']:12.2f}")


if __name__ == "__main__":
    main()
