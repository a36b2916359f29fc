"""Host time of a warm jit call on webgpu: W4's training step, where it goes.

    python3 -m benchmarks.host_profile            # W4 (benchmarks/workloads.py)
    python3 -m benchmarks.host_profile --profile  # and a cProfile of the warm calls

Prints, per warm call (min and median of many): the time until the call returns
(the host's recording and submission), the part of it spent inside wgpu-native's
calls made through wgpu-py (creating the encoder and pass, finishing, submitting:
the driver's time), the rest (Python, and the C calls fastpass makes directly), and
the wall time of a call waited for. Device time is benchmarks.gpu's job.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from typing import Any, Callable

import jaxlab
from jaxlab.tree_util import tree_map
from benchmarks.workloads import WORKLOADS, _w4_inputs


def _driver_clock() -> tuple[list[float], Callable[[], None]]:
    """Time spent in wgpu-py's library calls, summed into the returned cell (the
    undo callable puts the calls back)."""
    from wgpu.backends.wgpu_native import _api
    lib, spent, saved = _api.libf, [0.0], {}
    for name in dir(lib):
        if name.startswith("wgpu") and name != "wgpuDevicePoll":   # poll: the wait
            saved[name] = f = getattr(lib, name)

            def timed(*args: Any, _f: Callable = f) -> Any:
                t0 = time.perf_counter()
                try:
                    return _f(*args)
                finally:
                    spent[0] += time.perf_counter() - t0
            setattr(lib, name, timed)
    return spent, lambda: [setattr(lib, k, v) for k, v in saved.items()] and None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    opts = parser.parse_args(argv)
    device = "webgpu"
    with jaxlab.default_device(device):
        args = tree_map(lambda v: jaxlab.device_put(v, device), _w4_inputs("gpu"))
        step = WORKLOADS["W4"].build["jaxlab"](jaxlab)

        def sync(out: Any) -> None:
            tree_map(lambda v: v.block_until_ready(), out)
        for _ in range(5):
            sync(step(*args))
        walls = []
        for _ in range(opts.calls):
            t0 = time.perf_counter()
            sync(step(*args))
            walls.append(time.perf_counter() - t0)
        spent, undo = _driver_clock()
        host, driver = [], []
        for _ in range(opts.calls):
            spent[0] = 0.0
            t0 = time.perf_counter()
            out = step(*args)
            host.append(time.perf_counter() - t0)
            driver.append(spent[0])
            sync(out)
        undo()
        rest = [h - d for h, d in zip(host, driver)]
        for label, xs in [("call returns after", host), ("  in wgpu-py's library calls", driver),
                          ("  the rest (Python, fastpass)", rest), ("wall, waited for", walls)]:
            print(f"{label:32s} min {min(xs) * 1e3:.3f} ms, median {statistics.median(xs) * 1e3:.3f} ms")
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
