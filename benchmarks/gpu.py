"""GPU figures for the webgpu device against PyTorch (and JAX) on the same GPU.

    python -m benchmarks.gpu [--out FILE] [--workloads W1,W2,W3,W5,W4,SORT,CHOL,CHOLB,EIGH,SVD,W8,W9]

W1/W2 are reported as a fraction of a device-to-device copy's bandwidth, W3/W5
as a fraction of cuBLAS/cuDNN fp32 (TF32 off), W4 as a ratio to JAX on the GPU,
EIGH/SVD/QR (256x256) as a fraction of torch.linalg's time (cuSOLVER), W6's parts (SORT of
16M float32, CHOL of 512x512, CHOLB of (64, 256, 256)) as a fraction of torch.sort and
torch.linalg.cholesky (target >= 0.3), W8/W9 (FFT) as a
fraction of cuFFT through torch.fft (target >= 0.3).
jaxlab's device time is a GPU timestamp span around each call (its kernels in
order, as a jit call runs them) when the adapter has timestamp queries (else wall
time around a synchronised call); the peers' times come
from CUDA events. Every result is checked against NumPy first. W4's wall time is a
step waited for each time; its note adds the pipelined rate (50 steps, one wait at the
end: a training loop's) for jaxlab and JAX alike.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np

from benchmarks.workloads import WORKLOADS, _w4_step

REPEATS = 10
ROUTINE_TUNING: dict[str, list[str]] = {}   # workload -> its routines' tuning, as measured
def _cuda_time(fn: Callable[[], Any], torch: Any) -> float:
    """Median seconds of fn over REPEATS, measured with CUDA events."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def torch_figures(torch: Any, inputs: dict[str, tuple]) -> dict[str, float]:
    """Seconds per call for the physical references on this GPU."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    out: dict[str, float] = {}
    for name in ("W1", "W2"):
        if name in inputs:
            x = torch.from_numpy(inputs[name][0]).to(dev)
            y = torch.empty_like(x)
            out[f"{name}-copy"] = _cuda_time(lambda: y.copy_(x), torch)
    if "W3" in inputs:
        a, b = (torch.from_numpy(v).to(dev) for v in inputs["W3"])
        out["W3"] = _cuda_time(lambda: a @ b, torch)
    if "W5" in inputs:
        x, w = (torch.from_numpy(v).to(dev) for v in inputs["W5"])
        out["W5"] = _cuda_time(lambda: torch.nn.functional.conv2d(x, w, padding=1), torch)
    for name, fn in (("EIGH", torch.linalg.eigh), ("SVD", torch.linalg.svd),
                     ("QR", torch.linalg.qr),
                     ("SORT", lambda x: torch.sort(x).values), ("CHOL", torch.linalg.cholesky),
                     ("CHOLB", torch.linalg.cholesky)):
        if name in inputs:
            a = torch.from_numpy(inputs[name][0]).to(dev)
            out[name] = _cuda_time(lambda: fn(a), torch)
    for name in ("W8", "W9"):   # cuFFT, along the last axis as jnp.fft.fft
        if name in inputs:
            z = torch.from_numpy(inputs[name][0]).to(dev)
            out[name] = _cuda_time(lambda z=z: torch.fft.fft(z), torch)
    return out


REFERENCE_LABELS = {"W1": "D2D copy", "W2": "D2D copy", "W3": "cuBLAS fp32", "W5": "cuDNN fp32",
                    "EIGH": "torch.linalg.eigh", "SVD": "torch.linalg.svd",
                    "QR": "torch.linalg.qr",
                    "W8": "cuFFT (torch.fft)", "W9": "cuFFT (torch.fft)", "SORT": "torch.sort",
                    "CHOL": "torch.linalg.cholesky", "CHOLB": "torch.linalg.cholesky"}


def _relative_error(got: Any, want: Any) -> float:
    """The largest error relative to each result's scale, over a tuple's parts too."""
    parts = zip(got, want) if isinstance(want, tuple) else [(got, want)]
    errs = []
    for g, w in parts:
        g, w = (np.asarray(v).astype(np.complex128 if np.iscomplexobj(v) else np.float64)
                for v in (g, w))
        errs.append(float(np.max(np.abs(g - w)) / (np.max(np.abs(w)) + 1e-30)))
    return max(errs)


def jaxlab_seconds(name: str, inp: tuple) -> tuple[float, float, float, Any]:
    """(device seconds per call, wall seconds per call, kernel seconds per call, result)
    on the webgpu device. Wall time is taken with nothing listening. Device time is one
    timestamp span around the whole call as it runs (`Backend.device_span`); kernel
    time the sum of the kernels' times with each kernel timed alone (events), which on a
    real GPU reads longer: the GPU idles between kernels timed one by one.
    The routines' tuning of the last run goes to ROUTINE_TUNING (for the notes)."""
    import jaxlab
    from jaxlab.tree_util import tree_map
    w = WORKLOADS[name]
    with jaxlab.default_device("webgpu"):
        backend = jaxlab.engine.devices.get_device("webgpu").backend
        args = tree_map(lambda v: jaxlab.device_put(v, "webgpu"), inp)
        fn = w.build["jaxlab"](jaxlab)
        sync = lambda o: tree_map(lambda v: v.block_until_ready(), o)  # noqa: E731
        out = fn(*args)
        sync(out)
        walls, spans, kernels = [], [], []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            sync(fn(*args))
            walls.append(time.perf_counter() - t0)
        for _ in range(REPEATS):
            with backend.device_span() as span:
                out = fn(*args)
            sync(out)
            if span.ms is not None:
                spans.append(span.ms / 1e3)
        for _ in range(REPEATS):
            with jaxlab.capture() as log:
                out = fn(*args)
                sync(out)
            ms = [e.device_ms for e in log if e.device_ms is not None]
            if ms and len(ms) == len(log):
                kernels.append(sum(ms) / 1e3)
        ROUTINE_TUNING[name] = [
            f"{e.name}: " + ", ".join(f"{c.name} {c.value}" for c in e.tuning.choices)
            for e in log if e.kind == "routine" and e.tuning is not None]
    wall = statistics.median(walls)
    device = statistics.median(spans) if spans else wall
    return device, wall, (statistics.median(kernels) if kernels else device), out


def jaxlab_w4_pipelined(inp: tuple) -> float:
    import jaxlab
    from jaxlab.tree_util import tree_map
    with jaxlab.default_device("webgpu"):
        args = tree_map(lambda v: jaxlab.device_put(v, "webgpu"), inp)
        step = WORKLOADS["W4"].build["jaxlab"](jaxlab)
        return pipelined_seconds(step, args,
                                 lambda o: tree_map(lambda v: v.block_until_ready(), o))


def jax_w4_seconds(inp: tuple) -> tuple[float, float]:
    """(seconds per step waited for, seconds per step of a pipelined loop)."""
    import jax
    step = _w4_step(jax)
    args = jax.tree_util.tree_map(jax.device_put, inp)
    jax.block_until_ready(step(*args))
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        jax.block_until_ready(step(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), pipelined_seconds(step, args, jax.block_until_ready)


PIPELINED = 50   # steps run back to back before one wait


def pipelined_seconds(step: Callable, args: tuple, sync: Callable[[Any], Any]) -> float:
    """Median seconds per step of PIPELINED steps with one wait at the end: a training
    loop's rate, where each call returns after its submission (JAX's async dispatch;
    jaxlab's webgpu calls alike) and the host records the next step while the GPU runs."""
    sync(step(*args))
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(PIPELINED):
            out = step(*args)
        sync(out)
        times.append((time.perf_counter() - t0) / PIPELINED)
    return statistics.median(times)


def dispatch_readback_us() -> tuple[float, float]:
    """Microseconds per warm `np.asarray(jit(x + 1)(x))`: jaxlab on webgpu, JAX on the GPU."""
    import jax
    import jaxlab
    from benchmarks.run import readback_dispatch_seconds
    x = np.ones(16, np.float32)
    ours = readback_dispatch_seconds(jaxlab, jaxlab.device_put(x, "webgpu"))
    theirs = readback_dispatch_seconds(jax, jax.device_put(x))
    return ours * 1e6, theirs * 1e6


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="W1,W2,W3,W5,W4,SORT,CHOL,CHOLB,EIGH,SVD,W8,W9")
    ap.add_argument("--out", default="benchmarks/RESULTS-gpu.md")
    args = ap.parse_args(argv)
    import jaxlab
    import torch
    names = args.workloads.split(",")
    inputs = {n: WORKLOADS[n].inputs("gpu") for n in names if n != "W4"}
    ref = torch_figures(torch, inputs)
    backend = jaxlab.engine.devices.get_device("webgpu").backend
    lines = ["# GPU results (webgpu device)\n",
             f"Command: `python -m benchmarks.gpu --workloads {args.workloads}`  ",
             f"Adapter: {backend.info()}  ",
             f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}  ",
             f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n",
             "| workload | jaxlab device ms | jaxlab wall ms | reference | reference ms | "
             "jaxlab figure | fraction of reference |",
             "|---|---|---|---|---|---|---|"]
    notes: list[str] = []
    for name in names:
        w = WORKLOADS[name]
        if name == "W4":
            from benchmarks.workloads import _w4_inputs
            inp = _w4_inputs("gpu")
            dev_s, wall_s, kernel_s, out = jaxlab_seconds(name, inp)
            jax_s, jax_loop_s = jax_w4_seconds(inp)
            loop_s = jaxlab_w4_pipelined(inp)
            lines.append(f"| W4 | {dev_s * 1e3:.3f} | {wall_s * 1e3:.3f} | JAX GPU step | "
                         f"{jax_s * 1e3:.3f} | {1 / wall_s:.1f} steps/s | "
                         f"{jax_s / wall_s:.2f} (JAX time / jaxlab wall time) |")
            notes.append(f"W4: wall / device time of the step = {wall_s / dev_s:.2f} "
                         f"(target <= 2); its kernels timed one by one sum to "
                         f"{kernel_s * 1e3:.3f} ms; JAX step / jaxlab wall = "
                         f"{jax_s / wall_s:.2f} (target >= 0.3)")
            notes.append(f"W4 pipelined ({PIPELINED} steps, one wait): jaxlab "
                         f"{loop_s * 1e3:.3f} ms per step ({loop_s / dev_s:.2f}x the device "
                         f"span), JAX {jax_loop_s * 1e3:.3f} ms, JAX / jaxlab "
                         f"{jax_loop_s / loop_s:.2f}")
            continue
        inp = inputs[name]
        dev_s, wall_s, _, out = jaxlab_seconds(name, inp)
        err = _relative_error(out, w.numpy(*inp))
        ref_name = f"{name}-copy" if name in ("W1", "W2") else name
        ref_s = ref[ref_name]
        label = REFERENCE_LABELS[name]
        fig = w.work(inp) / dev_s
        lines.append(f"| {name} | {dev_s * 1e3:.3f} | {wall_s * 1e3:.3f} | {label} | "
                     f"{ref_s * 1e3:.3f} | {fig:.1f} {w.unit} | {ref_s / dev_s:.2f} "
                     f"(rel err {err:.1e}) |")
        notes += [f"{name} {line}" for line in ROUTINE_TUNING.get(name, [])]
    ours, theirs = dispatch_readback_us()
    notes.append(f"warm jit(x + 1) on a (16,) array with its read-back: jaxlab webgpu "
                 f"{ours:.1f} us, JAX on this GPU {theirs:.1f} us, ratio {ours / theirs:.2f} "
                 "(target <= 2)")
    text = "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
