"""W1's parts on the GPU: device time of each function alone and of W1, beside a
device-to-device copy of the same bytes, so what limits W1 (memory or arithmetic) shows.

    python -m benchmarks.gpu_w1_parts [--size 67108864]

Each line is a jitted function of one float32 array, timed as benchmarks.gpu times W1
(a timestamp span around the call, median of 10), with the tuning of its kernel.
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

PARTS = {
    "x + 1": lambda m: lambda x: x + 1.0,
    "exp(-x*x)": lambda m: lambda x: m.exp(-x * x),
    "sin": lambda m: m.sin,
    "tanh(x*1.5+0.3)": lambda m: lambda x: m.tanh(x * 1.5 + 0.3),
    "W1": lambda m: lambda x: m.tanh(x * 1.5 + 0.3) * m.exp(-x * x) + m.sin(x),
}


def _span_ms(fn, x, backend) -> float:
    fn(x).block_until_ready()
    spans = []
    for _ in range(10):
        with backend.device_span() as span:
            out = fn(x)
        out.block_until_ready()
        spans.append(span.ms)
    return statistics.median(spans)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1 << 26)
    args = ap.parse_args(argv)
    import torch

    import jaxlab
    import jaxlab.numpy as jnp
    data = np.random.default_rng(0).standard_normal(args.size).astype(np.float32)
    src = torch.from_numpy(data).cuda()
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()
    copies = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        copies.append(start.elapsed_time(end))
    copy_ms = statistics.median(copies)
    backend = jaxlab.engine.devices.get_device("webgpu").backend
    x = jaxlab.device_put(data, "webgpu")
    print(f"{args.size} float32; torch device copy {copy_ms:.3f} ms")
    for name, build in PARTS.items():
        fn = jaxlab.jit(build(jnp))
        ms = _span_ms(fn, x, backend)
        with jaxlab.capture() as log:
            fn(x).block_until_ready()
        tuning = ", ".join(f"{c.name} {c.value}" for e in log.kernels() for c in e.tuning.choices)
        print(f"{name:18s} {ms:.3f} ms  copy/this {copy_ms / ms:.2f}  ({tuning})")


if __name__ == "__main__":
    main()
