"""Host time of a warm jit call on webgpu: W4's training step, where it goes.

    python3 -m benchmarks.host_profile            # W4 (benchmarks/workloads.py)
    python3 -m benchmarks.host_profile --stages   # and the time of each stage of a call
    python3 -m benchmarks.host_profile --profile  # and a cProfile of the warm calls
    python3 -m benchmarks.host_profile --small --stages --clock thread   # a software adapter

Prints, per warm call (min and median of many): the time until the call returns
(the host's recording and submission), the part of it spent inside wgpu-native's
calls made through wgpu-py (creating the encoder and pass, finishing, submitting:
the driver's time), the rest (Python, and the C calls fastpass makes directly), and
the wall time of a call waited for. Device time is benchmarks.gpu's job.

`--stages` times each stage of a warm call on its own calls (the jit signature and
cache lookup, the outputs' memory, binding, recording and submitting, the output
Arrays, the output pytree); a stage's wrapper adds well under a microsecond.
`--small` runs W4's step at 64-32-32-10, batch 16: the same kernels' structure and
host work with little device work, for a software adapter whose kernels would
otherwise hold the host's cores. `--clock thread` counts the calling thread's CPU time
instead of the wall clock, for a loaded machine (another process's turn on the core
is not counted; the driver's own threads are not either).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import jaxlab
from jaxlab.tree_util import tree_map
from benchmarks import workloads
from benchmarks.workloads import WORKLOADS, _w4_inputs

CLOCKS = {"wall": time.perf_counter_ns, "thread": time.thread_time_ns}
C_LABELS = {"record": "  of it: recording a command buffer (C calls)",
            "submit": "  of it: submitting it (C calls)"}
UNTIL_SUBMIT = "from the call to its submit (the GPU idle till then)"


def _driver_clock(clock: Callable[[], int]) -> tuple[list[float], Callable[[], None]]:
    """Time spent in wgpu-py's library calls, summed into the returned cell (the
    undo callable puts the calls back)."""
    from wgpu.backends.wgpu_native import _api
    lib, spent, saved = _api.libf, [0.0], {}
    for name in dir(lib):
        if name.startswith("wgpu") and name != "wgpuDevicePoll":   # poll: the wait
            saved[name] = f = getattr(lib, name)

            def timed(*args: Any, _f: Callable = f) -> Any:
                t0 = clock()
                try:
                    return _f(*args)
                finally:
                    spent[0] += (clock() - t0) / 1e9
            setattr(lib, name, timed)
    return spent, lambda: [setattr(lib, k, v) for k, v in saved.items()] and None


def _stage_points() -> list[tuple[str, Any, str]]:
    """(label, owner, attribute) of each timed stage, outermost first."""
    from jaxlab import api
    from jaxlab.backends.webgpu import replay, runtime
    from jaxlab.core import jit
    from jaxlab.engine import buffer, prepared
    return [("signature + cache key (api._call_signature)", api, "_call_signature"),
            ("program call (core/jit.Program.__call__)", jit.Program, "__call__"),
            ("  runner (engine/prepared.PreparedSteps.run)", prepared.PreparedSteps, "run"),
            ("    outputs' memory (Buffer.planned_many)", buffer.Buffer, "planned_many"),
            ("    replay: bind + record + submit", replay.ProgramReplay, "__call__"),
            ("      binding key", runtime.WebGpuBackend, "binding_key"),
            ("      record + submit (WebGpuBackend._replay)", runtime.WebGpuBackend, "_replay"),
            ("output pytree (tree_unflatten)", api, "tree_unflatten")]


@contextmanager
def _staged(clock: Callable[[], int]) -> Iterator[dict[str, int]]:
    """Each stage's callable wrapped to add its time (ns) into the yielded dict."""
    spent: dict[str, int] = {}
    saved = []
    for label, owner, name in _stage_points():
        if not hasattr(owner, name):
            continue
        f = getattr(owner, name)
        saved.append((owner, name, f))
        setattr(owner, name, _timed(f, label, spent, clock))
    try:
        yield spent
    finally:
        for owner, name, f in reversed(saved):
            setattr(owner, name, f)


def _timed(f: Any, label: str, spent: dict[str, int], clock: Callable[[], int]) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = clock()
        try:
            return f(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0) + clock() - t0
    return timed


def _stages(step: Callable, args: tuple, calls: int, clock: Callable[[], int]) -> None:
    from jaxlab.engine.devices import get_device
    backend = get_device("webgpu").backend
    recorder = backend._recorder
    with _staged(clock) as spent:
        submitted: list[int] = []
        if recorder.commands is not None:
            commands = recorder.commands

            def submit(buffer: Any) -> None:
                submitted.append(clock())
                commands.submit(buffer)
            backend._recorder = recorder._replace(commands=commands._replace(
                record=_timed(commands.record, C_LABELS["record"], spent, clock),
                submit=_timed(submit, C_LABELS["submit"], spent, clock)))
        sync(step(*args))
        whole: list[int] = []
        per: dict[str, list[int]] = {}
        for _ in range(calls):
            spent.clear()
            submitted.clear()
            t0 = clock()
            out = step(*args)
            whole.append(clock() - t0)
            for k, v in spent.items():
                per.setdefault(k, []).append(v)
            if submitted:
                per.setdefault(UNTIL_SUBMIT, []).append(submitted[0] - t0)
            sync(out)
    backend._recorder = recorder
    print(f"{'whole call':50s} min {min(whole) / 1e3:7.1f} us, median "
          f"{statistics.median(whole) / 1e3:7.1f} us")
    for label in [label for label, _, _ in _stage_points()] + [*C_LABELS.values(), UNTIL_SUBMIT]:
        if label in per:
            xs = per[label]
            print(f"{label:50s} min {min(xs) / 1e3:7.1f} us, median "
                  f"{statistics.median(xs) / 1e3:7.1f} us  ({len(xs)} calls)")


def sync(out: Any) -> None:
    """Wait for every array of a jit call's result."""
    tree_map(lambda v: v.block_until_ready(), out)


def warm_w4(small: bool) -> tuple[Callable, tuple]:
    """W4's jitted step (at 64-32-32-10, batch 16 with `small`) and its inputs on the
    webgpu device (the default device inside), called five times."""
    if small:
        workloads.LAYERS, workloads.BATCH = (64, 32, 32, 10), 16
    args = tree_map(lambda v: jaxlab.device_put(v, "webgpu"), _w4_inputs("gpu"))
    step = WORKLOADS["W4"].build["jaxlab"](jaxlab)
    for _ in range(5):
        sync(step(*args))
    return step, args


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--stages", action="store_true")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    opts = parser.parse_args(argv)
    clock = CLOCKS[opts.clock]
    with jaxlab.default_device("webgpu"):
        step, args = warm_w4(opts.small)
        walls = []
        for _ in range(opts.calls):
            t0 = clock()
            sync(step(*args))
            walls.append((clock() - t0) / 1e9)
        spent, undo = _driver_clock(clock)
        host, driver = [], []
        for _ in range(opts.calls):
            spent[0] = 0.0
            t0 = clock()
            out = step(*args)
            host.append((clock() - t0) / 1e9)
            driver.append(spent[0])
            sync(out)
        undo()
        rest = [h - d for h, d in zip(host, driver)]
        print(f"clock: {opts.clock}; W4 layers {workloads.LAYERS}, batch {workloads.BATCH}")
        for label, xs in [("call returns after", host), ("  in wgpu-py's library calls", driver),
                          ("  the rest (Python, fastpass)", rest), ("wall, waited for", walls)]:
            print(f"{label:32s} min {min(xs) * 1e3:.3f} ms, median {statistics.median(xs) * 1e3:.3f} ms")
        if opts.stages:
            _stages(step, args, opts.calls, clock)
        if opts.profile:
            prof = cProfile.Profile()
            for _ in range(opts.calls):
                prof.enable()
                out = step(*args)
                prof.disable()
                sync(out)
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
            print(text.getvalue())


if __name__ == "__main__":
    main()
