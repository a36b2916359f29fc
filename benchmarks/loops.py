"""Compile time of a jitted fori_loop against its trip count, in one run.

    python -m benchmarks.loops                    # cpu, wasm and JAX
    python -m benchmarks.loops --devices cpu,wasm,webgpu --steps 10,1000

A loop body is compiled once into a sub-program, so a 1000-step loop should
compile in the time a 10-step one does: the figure is the ratio of the two
(1.00 = the trip count costs nothing), beside JAX's (jit lower + compile).
Each measurement gets its own body constant, so no kernel comes from the
cache of an earlier measurement; the median of REPEATS is reported.
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


if __name__ == "__main__":
    main()
