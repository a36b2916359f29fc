"""W2 (row softmax under jit) on the wasm device against JAX on the CPU, taken apart: what
each uses (threads and their CPU time, page faults), how their times spread when their
runs alternate in one process, and the rates the hardware gives (memory copy, exp alone).

    python3 -m benchmarks.softmax_anatomy               # W2's 4096 x 1024 float32
    python3 -m benchmarks.softmax_anatomy --runs 60 --numpy
    python3 -m benchmarks.softmax_anatomy --sweeps      # only: W2's row kernel with its max
                                                        # and sum of exp in one sweep or two

Per-thread CPU time is read from /proc/self/task (Linux; clock ticks, so summed over all
the runs); the rates are also given per CPU second (process_time, all threads), which
a loaded machine disturbs far less than wall time.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import resource
import statistics
import time
from typing import Any, Callable

import numpy as np

from benchmarks.workloads import WORKLOADS, _w2

TICK = os.sysconf("SC_CLK_TCK")
# objdump mnemonics that are not vector ALU work (moves, loads, stores, integer bookkeeping)
_NOT_VECTOR_ALU = re.compile(r"^(j|cmp|add|sub|mov|lea|inc|test|xor|shl|v?movdq|v?movap|v?movup|v?movs[sd]|vmovd\b)")


def _thread_ticks() -> dict[str, int]:
    """CPU clock ticks (user + system) of each thread of this process."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:   # the thread ended
            continue
        out[tid] = int(fields[11]) + int(fields[12])
    return out


class Usage:
    """What a run of calls used: wall, CPU per busy thread, minor page faults."""

    def __init__(self) -> None:
        self.ticks, self.usage, self.t0 = _thread_ticks(), resource.getrusage(resource.RUSAGE_SELF), \
            time.perf_counter()

    def report(self, calls: int) -> str:
        wall = time.perf_counter() - self.t0
        now, usage = _thread_ticks(), resource.getrusage(resource.RUSAGE_SELF)
        busy = sorted(((now[t] - self.ticks.get(t, 0)) / TICK for t in now), reverse=True)
        busy = [b for b in busy if b > 0]
        faults = (usage.ru_minflt - self.usage.ru_minflt) / calls
        return (f"{len(busy)} busy thread(s), CPU ms per call "
                f"{' + '.join(f'{b / calls * 1e3:.2f}' for b in busy)}; "
                f"wall ms per call {wall / calls * 1e3:.2f}; minor page faults per call {faults:.0f}")


def _seconds(call: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU (every thread of the process) seconds of one call."""
    t0, c0 = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - t0, time.process_time() - c0


def _spread(times: list[float]) -> str:
    ms = np.array(times) * 1e3
    return (f"min {ms.min():.2f}  p10 {np.percentile(ms, 10):.2f}  median {np.median(ms):.2f}  "
            f"p90 {np.percentile(ms, 90):.2f}  max {ms.max():.2f}")


def _row_kernel_text(x: np.ndarray, one_sweep: bool) -> str:
    """The WAT of W2's row kernel for x's rows, with its max and sum of exp in one sweep
    (as jaxlab chooses) or in two (the choice turned off for this build only)."""
    import jaxlab
    from jaxlab.backends.wasm import rows
    chosen = rows._online_index
    if not one_sweep:
        rows._online_index = lambda folds: None
    try:
        with jaxlab.default_device("wasm"), jaxlab.capture() as log:
            jaxlab.jit(_w2(jaxlab.numpy))(jaxlab.numpy.asarray(x)).block_until_ready()
    finally:
        rows._online_index = chosen
    (kernel,) = log.kernels()
    assert kernel.tuning.value("online") is one_sweep
    return kernel.source


def _loops(code: bytes) -> list[tuple[int, int]]:
    """(instructions, vector ALU ops) of each loop of compiled code, by objdump."""
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".cwasm") as f:
        f.write(code)
        f.flush()
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f.name],
                              capture_output=True, text=True).stdout
    ins = [(int(m[1], 16), m[2]) for m in re.finditer(r"^\s*([0-9a-f]+):\s+(.*)$", text, re.M)]
    where = {a: i for i, (a, _) in enumerate(ins)}
    found = []
    for i, (a, line) in enumerate(ins):
        jump = re.match(r"j\w+\s+([0-9a-f]+) <wasm\[0\]::function\[\d+\]::kernel", line)
        if jump and int(jump[1], 16) < a and int(jump[1], 16) in where:
            body = [t for _, t in ins[where[int(jump[1], 16)]:i + 1]]
            found.append((len(body), sum(not _NOT_VECTOR_ALU.match(t) for t in body)))
    return found


def sweeps(runs: int) -> None:
    """W2's row kernel, one sweep against two, on one thread of this process: both
    compiled, called in turn on the same rows (CPU time of each call), and the loops of
    each as compiled (objdump, where there is one)."""
    import wasmtime

    from jaxlab.backends.wasm.memory import LinearMemory
    from jaxlab.ir.dtypes import DType
    (x,) = WORKLOADS["W2"].inputs("cpu")
    texts = {"one sweep": _row_kernel_text(x, True),
             # one more row: its own kernel, not the one sweep's from the cache
             "two sweeps": _row_kernel_text(np.concatenate([x, x[:1]]), False)}
    config = wasmtime.Config()
    config.shared_memory = True
    engine = wasmtime.Engine(config)
    store, linker = wasmtime.Store(engine), wasmtime.Linker(engine)
    memory = LinearMemory(engine, 2 * x.nbytes // 65536 + 2)
    memory.define(linker, store)
    src, out = 65536, 65536 + x.nbytes
    memory.write(src, x)
    calls, code = {}, {}
    for name, text in texts.items():
        module = wasmtime.Module(engine, text)
        code[name] = module.serialize()
        calls[name] = linker.instantiate(store, module).exports(store)["kernel"]
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            c0 = time.process_time()
            call(store, out, src, 0, x.shape[0])
            cpu[name].append(time.process_time() - c0)
    got = memory.read(out, DType.float32, x.size).reshape(x.shape)
    print(f"W2's row kernel on one thread, {runs} calls each in turn (CPU ms per call; "
          f"load {os.getloadavg()[0]:.2f}); max |error| against NumPy {np.abs(got - _w2(np)(x)).max():.1e}")
    for name, t in cpu.items():
        print(f"  {name:10s} {_spread(t)}  {x.size / min(t) / 1e9:.2f} G values/s at the best")
    ratios = [b / a for a, b in zip(cpu["one sweep"], cpu["two sweeps"])]
    print(f"  two sweeps / one sweep per call: median {statistics.median(ratios):.3f}")
    try:
        for name, blob in code.items():
            loops = ", ".join(f"{n} ({v})" for n, v in _loops(blob) if n < 200)
            print(f"  {name}: loops' instructions (vector ALU ops): {loops}")
    except FileNotFoundError:
        print("  (no objdump: no instruction counts)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--sweeps", action="store_true",
                    help="only W2's row kernel on one thread, its max and sum of exp in one "
                         "sweep against two, and the instructions of their loops")
    ap.add_argument("--numpy", action="store_true",
                    help="NumPy's W2 between jaxlab and JAX in each round, as benchmarks.run "
                         "orders them (its temporaries pass through the caches)")
    args = ap.parse_args(argv)
    if args.sweeps:
        sweeps(args.runs)
        return
    import jax
    import jax.numpy as jjnp

    import jaxlab
    (x,) = WORKLOADS["W2"].inputs("cpu")
    moved = 2 * x.nbytes   # read once, written once

    jax_fn, jax_x = jax.jit(_w2(jjnp)), jax.device_put(x)
    hlo = jax_fn.lower(jax_x).compile().as_text()
    fusions = [line.split("fusion(")[0].split("=")[0].strip() + " " + line.split("kind=")[1].split(",")[0]
               for line in hlo.splitlines() if " fusion(" in line]
    print(f"JAX {jax.__version__}, {jax.devices()[0].platform}: fusions {fusions}; "
          f"1/sum multiplied: {'divide(' in hlo and 'multiply(' in hlo}")
    wasm = jaxlab.engine.devices.get_device("wasm")
    with jaxlab.default_device("wasm"):
        lab_fn, lab_x = jaxlab.jit(_w2(jaxlab.numpy)), jaxlab.device_put(x, wasm)
        copy_fn = jaxlab.jit(lambda v: -v)
        calls = {"jaxlab[wasm]": lambda: lab_fn(lab_x).block_until_ready(),
                 "numpy": lambda: _w2(np)(x),
                 "jax[cpu]": lambda: jax_fn(jax_x).block_until_ready(),
                 "jaxlab[wasm] -x (a copy)": lambda: copy_fn(lab_x).block_until_ready()}
        if not args.numpy:
            del calls["numpy"]
        for call in calls.values():
            call()
        print(f"wasm threads: {wasm.backend.threads}; CPUs this process may use: "
              f"{len(os.sched_getaffinity(0))}")

        print(f"\nEach alone, {args.runs} calls in a row:")
        for name, call in calls.items():
            usage = Usage()
            for _ in range(args.runs):
                call()
            print(f"  {name}: {usage.report(args.runs)}")

        print(f"\nInterleaved, {args.runs} rounds (ms per call; GB/s at the median, "
              f"{moved / 1e6:.1f} MB read and written; CPU ms: all threads):")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
        for _ in range(args.runs):
            for name, call in calls.items():
                times[name].append(_seconds(call))
        for name, t in times.items():
            wall = [w for w, _ in t]
            print(f"  {name:26s} {_spread(wall)}  {moved / statistics.median(wall) / 1e9:.1f} GB/s"
                  f"  CPU median {statistics.median(c for _, c in t) * 1e3:.2f}")
        ratios = [j[0] / w[0] for j, w in zip(times["jax[cpu]"], times["jaxlab[wasm]"])]
        print(f"  jax / jaxlab per round: min {min(ratios):.2f} median "
              f"{statistics.median(ratios):.2f} max {max(ratios):.2f}")

        # the vector exp alone: an argument known <= 0 (exp(-x*x)), and any argument
        small = np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32)
        small_x = jaxlab.device_put(small, wasm)
        print(f"\nexp alone, {small.size} float32 (in cache): G elements/s, best wall "
              "and per CPU second:")
        for label, fn in (("exp(-x*x), one-sided", lambda v: jaxlab.numpy.exp(-v * v)),
                          ("exp(x)", jaxlab.numpy.exp), ("-x (no exp)", lambda v: -v)):
            jitted = jaxlab.jit(fn)
            jitted(small_x).block_until_ready()
            runs = [_seconds(lambda: jitted(small_x).block_until_ready()) for _ in range(args.runs)]
            print(f"  jaxlab[wasm] {label:22s} {small.size / min(w for w, _ in runs) / 1e9:.2f}"
                  f"  {small.size / min(c for _, c in runs if c > 0) / 1e9:.2f}")

if __name__ == "__main__":
    main()
