"""The webgpu tuner's layouts (contraction tiles, row kernels, elementwise upcasts),
timed on the GPU by jaxlab.autotune().

    python -m benchmarks.gpu_tiles [--workloads W3,W5,W4,W1,W2]

For each workload (its GPU size), every kernel compiled is tuned by measurement in a
fresh autotune cache; the table lists, per kernel, each candidate layout's device time
(best of 3 timestamp-query runs) beside the tuner's own choice (the first candidate,
marked `default`) and the winner. It then times one call with the tuner's choices and one
with the winners (sums of kernel device times), so the gap the tuner leaves is visible.
"""
from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any

from benchmarks.workloads import WORKLOADS, _w4_inputs, _w4_step


SIZE = "gpu"   # the workloads' sizes ("cpu": smaller, to try this on a software adapter)


def _call(name: str, device: Any) -> tuple[Any, tuple]:
    """The workload's function and its inputs on `device`."""
    import jaxlab
    from jaxlab.tree_util import tree_map
    inp = _w4_inputs(SIZE) if name == "W4" else WORKLOADS[name].inputs(SIZE)
    fn = _w4_step(jaxlab) if name == "W4" else WORKLOADS[name].build["jaxlab"](jaxlab)
    return fn, tree_map(lambda v: jaxlab.device_put(v, device), inp)


def _device_ms(name: str, autotuned: bool) -> tuple[float, list]:
    """Summed kernel device ms of one warm call (median of 5) on a fresh device (its own
    compile cache), and that call's events."""
    import statistics

    import jaxlab
    from jaxlab.engine.devices import Device, get_device
    from jaxlab.tree_util import tree_map
    device = Device("webgpu", get_device("webgpu").backend)
    sums: list[float] = []
    with jaxlab.default_device(device), jaxlab.autotune(autotuned):
        fn, args = _call(name, device)
        tree_map(lambda v: v.block_until_ready(), fn(*args))
        for _ in range(5):
            with jaxlab.capture() as log:
                tree_map(lambda v: v.block_until_ready(), fn(*args))
            sums.append(sum(e.device_ms or 0.0 for e in log))
    return statistics.median(sums), list(log)


def _settings(choices: dict) -> str:
    if choices.get("strategy") != "tiled":
        return f"{choices.get('strategy')} wg {choices.get('workgroup')} " \
               f"upcast {choices.get('upcast')} unroll {choices.get('unroll')}"
    return (f"tiled {choices['tile']} reg {choices['register_block']} split "
            f"{choices['split_k']} {'double' if choices['double_buffer'] else 'single'} "
            f"{'vec4' if choices['vector_loads'] else 'scalar'}")


def report(name: str) -> list[str]:
    default_ms, default_log = _device_ms(name, autotuned=False)
    # the first call tunes every kernel (a fresh cache); the timed calls reuse the winners
    tuned_ms, tuned_log = _device_ms(name, autotuned=True)
    lines = [f"## {name}", ""]
    for default, tuned in zip(default_log, tuned_log):
        record = tuned.tuning.autotuned if tuned.tuning else None
        if record is None or len(record.candidates) < 2:
            continue
        shape = "x".join(map(str, tuned.output_shapes[0]))
        lines += [f"### {tuned.name} -> {shape}", "",
                  "| candidate | device ms (best of 3) | |", "|---|---|---|"]
        for i, c in enumerate(record.candidates):
            mark = ("tuner's choice " if i == 0 else "") + ("WINNER" if c.winner else "")
            lines.append(f"| {_settings(dict(c.settings))} | {c.run_ms:.4f} | {mark} |")
        reasons = [f"{c.name}={c.value}: {c.reason}" for c in default.tuning.choices]
        lines += ["", "tuner's reasons: " + "; ".join(reasons), ""]
    lines += ["per kernel, device ms of one call:", "",
              "| kernel | tuner's choice | ms | autotuned | ms |", "|---|---|---|---|---|"]
    for d, t in zip(default_log, tuned_log):
        lines.append(f"| {d.name} | {_settings(_values(d))} | {d.device_ms or 0:.4f} | "
                     f"{_settings(_values(t))} | {t.device_ms or 0:.4f} |")
    lines += ["", f"{name}: device ms per call, tuner's choices {default_ms:.3f}, "
                  f"autotuned {tuned_ms:.3f}", ""]
    return lines


def _values(event: Any) -> dict:
    return {c.name: c.value for c in event.tuning.choices} if event.tuning else {}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="W3,W5,W4")
    ap.add_argument("--size", default="gpu", choices=("gpu", "cpu"))
    args = ap.parse_args(argv)
    global SIZE
    SIZE = args.size
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp()   # measure, never reuse old winners
    import jaxlab
    backend = jaxlab.engine.devices.get_device("webgpu").backend
    print(f"adapter: {backend.info()}\n")
    for name in args.workloads.split(","):
        print("\n".join(report(name)), flush=True)


if __name__ == "__main__":
    main()
