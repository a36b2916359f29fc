"""Time to the first result of a jitted elementwise chain against its length and the
deepest expression a kernel may hold, in one run.

    python -m benchmarks.chains                                  # webgpu, 128 ops
    python -m benchmarks.chains --devices cpu,wasm,webgpu --ops 10000 --depths 0

A chain x = sin(x) + c_i with a different constant c_i per step: every kernel is new,
so the figure is tracing, lowering, code generation and the compilers' time (lavapipe
compiles a shader at its first submission, so the first run is timed with the
compile, with Mesa's on-disk shader cache off). `--depths 0` keeps each backend's own
limit; other values set `max_fused_depth` for the run.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MESA_SHADER_CACHE_DISABLE", "true")   # before wgpu starts


def first_result_seconds(device: str, ops: int, depth: int, salt: int) -> tuple[float, int]:
    import numpy as np

    import jaxlab
    import jaxlab.numpy as jnp
    dev = jaxlab.devices(device)[0]
    backend = dev.backend
    own = backend.max_fused_depth

    def chain(x):
        for i in range(ops // 2):   # sin and add: 2 ops a step
            x = jnp.sin(x) + (1.0 + (salt * ops + i) * 1e-6)
        return x
    backend.max_fused_depth = depth or own
    try:
        with jaxlab.default_device(dev), jaxlab.capture() as log:
            x = jnp.asarray(np.linspace(-1, 1, 256, dtype=np.float32))
            t0 = time.perf_counter()
            np.asarray(jaxlab.jit(chain)(x))
            seconds = time.perf_counter() - t0
    finally:
        backend.max_fused_depth = own
    return seconds, len(log.kernels())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", default="webgpu")
    ap.add_argument("--ops", default="128")
    ap.add_argument("--depths", default="8,16,32,64")
    args = ap.parse_args()
    print(f"{'device':<10}{'ops':>7}{'depth':>7}{'kernels':>9}{'first result (s)':>18}")
    salt = 0
    for device in args.devices.split(","):
        for ops in (int(n) for n in args.ops.split(",")):
            for depth in (int(d) for d in args.depths.split(",")):
                salt += 1   # new constants: nothing from an earlier row's caches
                seconds, kernels = first_result_seconds(device, ops, depth, salt)
                print(f"{device:<10}{ops:>7}{depth or 'own':>7}{kernels:>9}{seconds:>18.2f}")


if __name__ == "__main__":
    main()
