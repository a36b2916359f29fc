"""Run the workloads for jaxlab (each device) and its peers in ONE process run.

    python -m benchmarks.run                       # every workload, every device
    python -m benchmarks.run --workloads W4,W7 --devices cpu
    python -m benchmarks.run --workloads W1,W3 --dtype float64 --out benchmarks/RESULTS-x64.md

Prints a table and writes benchmarks/RESULTS.md. Ratios are peer time /
jaxlab time (above 1: jaxlab is faster). Every result is checked against
NumPy before it is timed; compile time is never mixed into a warm figure.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import json
import platform
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

from benchmarks.wasm_peak import wasm_fma_peak_gflops
from benchmarks.workloads import BATCH, LAYERS, LR, WORKLOADS, Workload, _w4_step

REPEATS = 5          # timed runs of each library per workload, at least ...
MAX_REPEATS = 21     # ... and at most: as many as take about ROUND_SECONDS in all
ROUND_SECONDS = 2.0


def _seconds(fn: Callable[[], Any], sync: Callable[[Any], Any]) -> float:
    t0 = time.perf_counter()
    sync(fn())
    return time.perf_counter() - t0


def _check(name: str, lib: str, got: Any, want: Any, rtol: float) -> None:
    got_l = got if isinstance(got, tuple) else (got,)
    want_l = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got_l, want_l):
        g, w = (_wide(np.asarray(v)) for v in (g, w))
        # error relative to the result's scale: a float32 sum of 1024 terms can land
        # near zero, where an element-wise relative error means nothing
        err = np.max(np.abs(g - w)) / (np.max(np.abs(w)) + 1e-30) if w.size else 0.0
        if not err <= rtol * 10:
            raise AssertionError(f"{name} on {lib}: result differs from NumPy (rel err {err:.2e})")


def _wide(v: np.ndarray) -> np.ndarray:
    """float64 (complex128 for complex results) for comparing."""
    return v.astype(np.complex128 if np.iscomplexobj(v) else np.float64)


# --- libraries: how to place inputs, build, synchronise -----------------------------------
class Lib:
    def __init__(self, label: str, module: Any, put: Callable, sync: Callable, key: str) -> None:
        self.label, self.module, self.put, self.sync, self.key = label, module, put, sync, key


def _jaxlab_libs(devices: list[str]) -> list[Lib]:
    import jaxlab
    from jaxlab.tree_util import tree_map
    libs = []
    for d in devices:
        dev = jaxlab.engine.devices.get_device(d)
        put = lambda tree, dev=dev: tree_map(lambda x: jaxlab.device_put(x, dev), tree)  # noqa
        sync = lambda out: tree_map(lambda x: x.block_until_ready(), out)  # noqa: E731
        libs.append(Lib(f"jaxlab[{d}]", jaxlab, put, sync, "jaxlab"))
    return libs


def _jax_lib() -> Lib | None:
    try:
        import jax
    except ImportError:
        return None
    return Lib(f"jax[{jax.default_backend()}]", jax, lambda t: jax.tree_util.tree_map(
        jax.device_put, t), jax.block_until_ready, "jax")


def _numpy_lib() -> Lib:
    return Lib("numpy", np, lambda t: t, lambda out: out, "numpy")


def _result_of(w: Workload, out: Any) -> Any:
    return out[1] if w.name == "W4" else out


def _reference(w: Workload, inputs: tuple) -> Any:
    return w.numpy(*inputs)


def run_workload(w: Workload, libs: list[Lib], size: str) -> dict[str, dict]:
    """Each library's warm time: the median of its timed runs. Every library is set up,
    compiled and checked first; then each library's runs follow one another. Not
    interleaved: a peer's worker threads keep spinning after its call (OpenBLAS ~0.1 s)
    and take the cores from whichever library runs next (a 1024 matmul on wasm right
    after NumPy's: 52 ms, 0.15 s later: 26 ms), and a pause before every call measures
    each library cold instead."""
    inputs = w.inputs(size)
    want = _reference(w, inputs)
    ready = []
    for lib in libs:
        if lib.key not in w.build:
            continue
        args = lib.put(inputs)
        fn = w.build[lib.key](lib.module)
        with _device_ctx(lib):
            t0 = time.perf_counter()
            out = fn(*args)
            lib.sync(out)
            first = time.perf_counter() - t0
            _check(w.name, lib.label, _result_of(w, out), want, w.rtol)
        ready.append((lib, lambda fn=fn, args=args: fn(*args), first))
    times: dict[str, list[float]] = {lib.label: [] for lib, _, _ in ready}
    for lib, call, _ in ready:
        with _device_ctx(lib):
            runs = times[lib.label]
            runs.append(_seconds(call, lib.sync))   # the first timed run sets how many
            rounds = max(REPEATS, min(MAX_REPEATS, int(ROUND_SECONDS / len(ready) / runs[0])))
            runs += [_seconds(call, lib.sync) for _ in range(rounds - 1)]
    rows = {}
    for lib, _, first in ready:
        warm = statistics.median(times[lib.label])
        rows[lib.label] = {"seconds": warm, "compile_s": max(first - warm, 0.0),
                           "figure": w.work(inputs) / warm}
    return rows


_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _widened(tree: Any) -> Any:
    """Every float32 (complex64) array of a tree of inputs as float64 (complex128)."""
    if isinstance(tree, np.ndarray):
        return tree.astype(_WIDER.get(tree.dtype, tree.dtype))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_widened(t) for t in tree)
    return tree


def in_float64(w: Workload) -> Workload:
    """The workload on float64 (complex128) inputs; x64 must be on in every library."""
    return dataclasses.replace(w, inputs=lambda s: _widened(w.inputs(s)))


def _device_ctx(lib: Lib):
    import contextlib
    if lib.key != "jaxlab":
        return contextlib.nullcontext()
    import jaxlab
    return jaxlab.default_device(lib.label[len("jaxlab["):-1])


def numpy_single_thread_matmul(n: int) -> float:
    """W3 with 1-thread BLAS, in a subprocess (thread counts are fixed at import)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    code = ("import numpy as np, time, statistics\n"
            f"a = np.random.default_rng(0).standard_normal(({n},{n})).astype(np.float32)\n"
            "a @ a\nts = []\n"
            "for _ in range(5):\n t = time.perf_counter(); a @ a; ts.append(time.perf_counter() - t)\n"
            "print(statistics.median(ts))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


def readback_dispatch_seconds(module: Any, x: Any, n: int = 2000, rounds: int = 20) -> float:
    """Seconds per warm `np.asarray(jit(x + 1)(x))` (a dispatch and its read-back: the
    latency a user waits for one small jitted call), the best of `rounds` rounds: on a
    shared machine the least disturbed round is the estimate of the cost itself."""
    inc = module.jit(lambda v: v + 1)
    np.asarray(inc(x))
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n // rounds):
            np.asarray(inc(x))
        times.append((time.perf_counter() - t0) / (n // rounds))
    return min(times)


def w7_latency(libs: list[Lib]) -> dict[str, dict]:
    """Cold jit of the W4 step (trace + fuse + codegen + compile, nothing run),
    warm dispatch of jit(x + 1) on a (16,) array, and the same with each result read
    back to NumPy."""
    from benchmarks.workloads import _w4_inputs
    inputs = _w4_inputs("cpu")
    rows = {}
    for lib in libs:
        if lib.key == "numpy":
            continue
        with _device_ctx(lib):
            args = lib.put(inputs)
            colds = []
            for _ in range(3):   # a fresh function each time: nothing cached
                step = _w4_step(lib.module)
                t0 = time.perf_counter()
                lowered = step.lower(*args)
                if lib.key == "jax":
                    lowered.compile()
                colds.append(time.perf_counter() - t0)
            inc = lib.module.jit(lambda x: x + 1)
            x = lib.put(np.ones(16, np.float32))
            lib.sync(inc(x))
            n = 2000
            t0 = time.perf_counter()
            for _ in range(n):
                out = inc(x)
            lib.sync(out)
            dispatch = (time.perf_counter() - t0) / n
            readback = readback_dispatch_seconds(lib.module, x)
        rows[lib.label] = {"cold_ms": statistics.median(colds) * 1e3,
                           "dispatch_us": dispatch * 1e6, "readback_us": readback * 1e6}
    return rows


# --- jax-js (npm @jax-js/jax) under Node, Wasm backend: a subprocess per workload ----------
JAXJS_DIR = "/tmp/jaxlab-jaxjs"   # npm cache outside the repo, reused across runs
JAXJS_WORKLOADS = ("W1", "W2", "W3", "W4", "W5")
JAXJS_PKG = os.path.join(JAXJS_DIR, "node_modules", "@jax-js", "jax", "package.json")


def _jaxjs_install() -> bool:
    if not (shutil.which("node") and shutil.which("npm")):
        print("jax-js: skipped, node or npm is not on PATH", file=sys.stderr)
        return False
    if os.path.exists(JAXJS_PKG):
        return True
    try:
        subprocess.run(["npm", "install", "--prefix", JAXJS_DIR, "@jax-js/jax"], check=True,
                       capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"jax-js: skipped, npm install failed: {e}", file=sys.stderr)
        return False
    return True


def _jaxjs_rows(names: list[str], size: str) -> dict[str, dict]:
    """The "jax-js[wasm]" row of each workload it can run; a failure only drops that row."""
    for name in names:
        if name not in JAXJS_WORKLOADS:
            print(f"jax-js: no row for {name} (the jax-js peer covers W1-W5)", file=sys.stderr)
    todo = [n for n in names if n in JAXJS_WORKLOADS]
    if not todo or not _jaxjs_install():
        return {}
    script = os.path.join(os.path.dirname(__file__), "jaxjs_bench.mjs")
    env = dict(os.environ, JAXJS_DIR=JAXJS_DIR)
    rows = {}
    for name in todo:
        w = WORKLOADS[name]
        inputs = w.inputs(size)
        # the script builds its own inputs of these shapes (W4: of these layer sizes)
        spec = ({"layers": LAYERS, "batch": BATCH, "lr": LR, "shapes": []} if name == "W4"
                else {"shapes": [list(a.shape) for a in inputs]})
        spec.update(name=name, repeats=REPEATS)
        try:
            proc = subprocess.run(["node", script, json.dumps(spec)], env=env, capture_output=True,
                                  text=True, timeout=600, check=True)
            r = json.loads(proc.stdout.strip().splitlines()[-1])
        except subprocess.CalledProcessError as e:
            print(f"jax-js: {name} failed: {e.stderr.strip()[-500:]}", file=sys.stderr)
            continue
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
            print(f"jax-js: {name} failed: {e}", file=sys.stderr)
            continue
        rows[name] = {"seconds": r["seconds"], "compile_s": r["compile_s"],
                      "figure": w.work(inputs) / r["seconds"]}
    return rows


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("jax", "wasmtime", "wgpu"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:
            pass
    if os.path.exists(JAXJS_PKG):
        with open(JAXJS_PKG) as f:
            out["@jax-js/jax"] = json.load(f)["version"]
    return out


def _format(results: dict, w3_single: float | None, wasm_peak: float | None = None) -> list[str]:
    lines = []
    for name, rows in results.items():
        if name == "W7":
            continue
        w = WORKLOADS[name]
        lines.append(f"\n### {name}: {w.title} ({w.unit})\n")
        jaxlab_rows = {k: v for k, v in rows.items() if k.startswith("jaxlab")}
        peers = {k: v for k, v in rows.items() if not k.startswith("jaxlab")}
        if name == "W3" and w3_single is not None:
            n_flops = WORKLOADS["W3"].work(WORKLOADS["W3"].inputs("cpu"))
            peers["numpy (1-thread BLAS)"] = {"seconds": w3_single,
                                             "figure": n_flops / w3_single, "compile_s": 0.0}
        # W3 beside the Wasm SIMD peak (benchmarks/wasm_peak.py), measured in this run
        peak = wasm_peak if name == "W3" else None
        lines.append("| library | time (ms) | figure | compile (ms) | " +
                     " | ".join(f"{p} / this" for p in peers) +
                     (f" | fraction of Wasm peak ({peak:.1f} GFLOP/s)" if peak else "") + " |")
        lines.append("|---|---|---|---|" + "---|" * (len(peers) + bool(peak)))
        for label, r in {**jaxlab_rows, **peers}.items():
            ratios = " | ".join(f"{peers[p]['seconds'] / r['seconds']:.2f}" for p in peers)
            if peak:
                ratios += f" | {r['figure'] / peak:.2f}"
            lines.append(f"| {label} | {r['seconds'] * 1e3:.2f} | {r['figure']:.2f} | "
                         f"{r['compile_s'] * 1e3:.0f} | {ratios} |")
    if "W7" in results:
        lines.append("\n### W7: latency\n")
        rows = results["W7"]
        jax_rb = next((r["readback_us"] for k, r in rows.items() if k.startswith("jax[")), None)
        lines.append("| library | cold jit of W4 step (ms) | warm dispatch jit(x+1) (us) | "
                     "with read-back (us) | this / jax (read-back; target <= 2) |")
        lines.append("|---|---|---|---|---|")
        for label, r in rows.items():
            ratio = f"{r['readback_us'] / jax_rb:.2f}" if jax_rb else "-"
            lines.append(f"| {label} | {r['cold_ms']:.1f} | {r['dispatch_us']:.1f} | "
                         f"{r['readback_us']:.1f} | {ratio} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6,SORT,CHOL,CHOLB,W7,W8,W9")
    ap.add_argument("--devices", default=None, help="jaxlab devices (default: all)")
    ap.add_argument("--size", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"],
                    help="float64: the workloads' float inputs widened, x64 on everywhere")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "RESULTS.md"))
    args = ap.parse_args(argv)
    import jaxlab
    wide = args.dtype == "float64"
    if wide:
        jaxlab.config.update("jax_enable_x64", True)
        if _jax_lib() is not None:
            import jax
            jax.config.update("jax_enable_x64", True)
    devices = args.devices.split(",") if args.devices else [d.platform for d in jaxlab.devices()]
    libs = _jaxlab_libs(devices) + [_numpy_lib()] + ([_jax_lib()] if _jax_lib() else [])
    results: dict[str, Any] = {}
    names = args.workloads.split(",")
    wasm_peak = None
    for name in names:
        if name == "W7":
            results["W7"] = w7_latency(libs)
        else:
            w = WORKLOADS[name]
            results[name] = run_workload(in_float64(w) if wide else w, libs, args.size)
        if name == "W3" and not wide:   # right after W3 (a float32 peak): the same conditions
            wasm_peak = wasm_fma_peak_gflops()
        print(f"{name} done", file=sys.stderr)
    for name, row in ({} if wide else _jaxjs_rows(names, args.size)).items():   # (float32 only)
        results[name]["jax-js[wasm]"] = row
    w3_single = numpy_single_thread_matmul(1024) \
        if "W3" in names and args.size == "cpu" and not wide else None   # (a float32 figure)
    header = [f"# Benchmark results\n",
              f"Command: `python -m benchmarks.run {' '.join(argv or sys.argv[1:])}`  ",
              f"Machine: {platform.platform()}, {os.cpu_count()} CPUs  ",
              "Versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()) + "  ",
              f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ",
              f"Inputs: {args.dtype}" + (" (float32/complex64 inputs widened, x64 on)" if wide else "") + "  ",
              "Ratios are peer time / jaxlab time, measured in this one run "
              f"(median of {REPEATS}-{MAX_REPEATS} warm runs, each library's runs one "
              "after another).\n"]
    text = "\n".join(header + _format(results, w3_single, wasm_peak)) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
