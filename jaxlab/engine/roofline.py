"""Rooflines: what a device can do at best, measured on the device itself.

`peaks(device)` times a copy kernel (bytes/s), a register-blocked FMA kernel (FLOP/s: a
matmul on cached inputs, which each backend lowers to tiles of multiply-adds held in
registers) and a one-element kernel (the launch overhead), once per
adapter: the numbers are kept on disk beside the autotune results, keyed by everything
the backend reports about its adapter. `Roof.judge` says what bounds a kernel (memory,
compute or its launch) and how close it came to that roof.
"""
from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

from jaxlab import events
from jaxlab.backends.autotuning import TuneCache
from jaxlab.engine import dispatch
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, RIDX, Kernel, Reduction, acc_variable

COPY_ELEMENTS = 1 << 21     # 8 MB read, 8 MB written
FMA_SIZE = 256              # the FMA kernel's matmul: 33.5 MFLOP on 768 kB of inputs
_RUNS = 4                   # timed runs after a warm-up; the best counts
LAUNCH_FACTOR = 2.0         # a call within this many launch overheads is launch-bound


class Bound(enum.Enum):
    """What limits a kernel: moving its bytes, doing its arithmetic, or starting it."""
    MEMORY = "memory"
    COMPUTE = "compute"
    LAUNCH = "launch"


@dataclass(frozen=True)
class Judgement:
    bound: Bound
    intensity: float          # FLOP per byte moved
    fraction: float           # achieved rate / the roof at its intensity


@dataclass(frozen=True)
class Roof:
    """A device's measured peaks."""
    platform: str
    gbps: float               # copy bandwidth, GB/s (bytes read + written)
    gflops: float             # FMA throughput, GFLOP/s (a multiply-add is 2 FLOP)
    launch_ms: float          # the time of a kernel that does (almost) nothing
    measured_at: str
    from_cache: bool = False
    host_timed: bool = False  # the device's host dispatch time is its kernels' time

    def measured_ms(self, device_ms: Optional[float], host_ms: float) -> Optional[float]:
        """A kernel's measured time on this device: its device time, or its host time
        where that is the kernel's own (None: not measured)."""
        if device_ms is not None:
            return device_ms
        return host_ms if self.host_timed else None

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the two roofs meet."""
        return self.gflops / self.gbps

    def attainable(self, intensity: float) -> float:
        """GFLOP/s the roofs allow at `intensity`."""
        return min(self.gflops, intensity * self.gbps)

    def judge(self, flops: float, nbytes: float, ms: float, calls: int = 1) -> Judgement:
        """What bounds a kernel that did `flops` and moved `nbytes` in `ms` over `calls`
        dispatches, and its achieved rate as a fraction of that roof."""
        intensity = flops / nbytes if nbytes else float("inf")
        if intensity < self.ridge:
            fraction = nbytes / ms / 1e6 / self.gbps
        else:
            fraction = flops / ms / 1e6 / self.gflops
        if ms / max(calls, 1) <= LAUNCH_FACTOR * self.launch_ms:
            bound = Bound.LAUNCH
        else:
            bound = Bound.MEMORY if intensity < self.ridge else Bound.COMPUTE
        return Judgement(bound, intensity, fraction)

    def to_json(self) -> dict[str, Any]:
        return {"gbps": self.gbps, "gflops": self.gflops, "launch_ms": self.launch_ms,
                "measured_at": self.measured_at}


def copy_kernel(n: int = COPY_ELEMENTS) -> Kernel:
    gidx = AluExp.special(GIDX, n)
    return Kernel((n,), ((DType.float32, n),), AluExp.load(0, gidx, DType.float32))


def fma_kernel(n: int = FMA_SIZE) -> Kernel:
    """An n x n x n matmul on inputs that stay in cache: the backends lower it to their
    register-blocked contraction (a tile of multiply-adds per thread), so it runs at the
    arithmetic units' rate rather than memory's."""
    gidx = AluExp.special(GIDX, n * n)
    ridx = AluExp.special(RIDX, n)
    row, col = gidx // n, gidx % n
    a = AluExp.load(0, row * n + ridx, DType.float32)
    b = AluExp.load(1, ridx * n + col, DType.float32)
    acc = acc_variable(DType.float32)
    return Kernel((n, n), ((DType.float32, n * n), (DType.float32, n * n)),
                  (a * b).simplify(), Reduction(AluOp.Add, n, acc), reduce_shape=(n,))


def _best_ms(device: Device, kernel: Kernel) -> float:
    """Best time of a few dispatches after a warm-up (device time where measured)."""
    inputs = [Buffer(device, d, n) for d, n in kernel.inputs]
    best = float("inf")
    for run in range(_RUNS + 1):
        with events.capture() as log:
            t0 = time.perf_counter()
            dispatch.run(device, kernel, inputs)
            device.backend.synchronize()
            wall = (time.perf_counter() - t0) * 1e3
        measured = log[-1].device_ms if log and log[-1].device_ms is not None else wall
        if run:
            best = min(best, measured)
    return best


def measure(device: Device) -> Roof:
    """Time the three kernels on `device` now."""
    copy, fma, empty = copy_kernel(), fma_kernel(), copy_kernel(1)
    copy_ms, fma_ms, launch_ms = (_best_ms(device, k) for k in (copy, fma, empty))
    return Roof(device.platform, 2 * 4 * COPY_ELEMENTS / copy_ms / 1e6,
                fma.flops() / fma_ms / 1e6, launch_ms,
                datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def valid_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("measured_at"), str) and all(
        isinstance(entry.get(k), (int, float)) and not isinstance(entry.get(k), bool)
        and entry[k] > 0 for k in ("gbps", "gflops", "launch_ms"))


def adapter_key(device: Device) -> str:
    """Everything the backend says about its adapter, hashed: peaks are per adapter."""
    info = json.dumps(device.backend.info(), sort_keys=True, default=str)
    return hashlib.sha1(info.encode()).hexdigest()[:16]


_known: dict[int, Roof] = {}
_lock = threading.Lock()


def peaks(device: Device, cache: Optional[TuneCache] = None) -> Roof:
    """The device's roofs: measured once per adapter (remembered on disk), then known."""
    with _lock:
        if id(device) in _known and cache is None:
            return _known[id(device)]
        cache = cache or TuneCache(device.platform, kind="peaks", valid=valid_entry)
        key = adapter_key(device)
        entry = cache.get(key)
        if entry is not None:
            roof = Roof(device.platform, entry["gbps"], entry["gflops"], entry["launch_ms"],
                        entry["measured_at"], from_cache=True)
        else:
            roof = measure(device)
            cache.put(key, roof.to_json())
        roof = dataclasses.replace(roof, host_timed=device.backend.host_timed)
        _known[id(device)] = roof
        return roof
