"""Waiting in WebAssembly for a word of the shared memory to change.

A hand-off between the wasm device's threads (a job to a pool thread, its outcome
back to the dispatching thread) through a queue wakes a sleeping thread, and the
wake-up is the hand-off's cost: 14-80 us on the 2-core VMs measured, against a
split kernel of W4 of 50 us to 3 ms. A Python thread cannot spin without holding
the GIL, which the other thread needs; a Wasm call lets go of it. So a thread about
to sleep on a queue first spins in Wasm on a counter that the other side moves when
it puts something there (for at most JAXLAB_WASM_SPIN_US microseconds), then
lingers a few microseconds more, so that the mover reaches its own next Wasm call
and the GIL is free when this one takes it. The queue stays what decides: a missed
or early move only means a sleep, as without spinning.

Off unless JAXLAB_WASM_SPIN_US is set: on this 2-core machine at load 10, W4's step
measured worse with it (best of 40: 36-71 against 22-26 ms, CPU 26.5-27.3 against
22.0-22.7 ms, alternated runs): a spinning thread spends the share of a core that its
partner waits for. A quiet machine has not measured it yet.
"""
from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import wasmtime

from jaxlab.ir.dtypes import DType

POSTED, FINISHED = 0, 1   # the counters: jobs put on the pool's queue, jobs done
LINGER_US = 5             # after the move: the mover's way from the move to its Wasm call
CALIBRATION_LOADS = 1 << 20
MAX_I32 = (1 << 31) - 1

SPIN_TEXT = """(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; until the word at $at differs from $seen (at most $budget loads), then $linger loads more
  (func $kernel (export "kernel") (param $at i32) (param $seen i32) (param $budget i32) (param $linger i32)
    (block $moved
      (loop $wait
        (br_if $moved (i32.ne (i32.atomic.load (local.get $at)) (local.get $seen)))
        (local.set $budget (i32.sub (local.get $budget) (i32.const 1)))
        (br_if $wait (i32.gt_s (local.get $budget) (i32.const 0))))
      (return))
    (loop $linger
      (drop (i32.atomic.load (local.get $at)))
      (local.set $linger (i32.sub (local.get $linger) (i32.const 1)))
      (br_if $linger (i32.gt_s (local.get $linger) (i32.const 0))))))
"""


def spin_us() -> int:
    """Microseconds a thread spins before it sleeps (0, the default: never; 200 covers the
    host's gap between W4's split kernels)."""
    return max(0, int(os.environ.get("JAXLAB_WASM_SPIN_US", 0)))


class Spinner:
    """Two counters in the shared memory (POSTED, FINISHED) and the Wasm loop that waits
    for one to move; each waiting thread takes an instance of its own."""

    def __init__(self, wasm: Any, microseconds: int) -> None:
        self.at = wasm.memory.allocate(8)
        self.words = wasm.memory.view(self.at, DType.int32, 2)
        self.words[:] = 0
        self.module, _ = wasm.compile(hashlib.sha1(SPIN_TEXT.encode()).hexdigest(), SPIN_TEXT, 4)
        self.working = True
        per_us = self._loads_per_us()
        self.budget = min(MAX_I32, max(1, microseconds * per_us))
        self.linger = min(MAX_I32, max(1, LINGER_US * per_us))

    def _loads_per_us(self) -> int:
        """How many loads of the loop take a microsecond here (timed once)."""
        instance = self.module.take()
        t0 = time.perf_counter()
        instance.call(self.at, self.seen(POSTED), CALIBRATION_LOADS, 1)   # no pool yet: no move
        seconds = time.perf_counter() - t0
        self.module.give(instance)
        return max(1, int(CALIBRATION_LOADS / max(seconds, 1e-6) / 1e6))

    def move(self, which: int) -> None:
        """Move a counter (under the GIL: moves by two threads never overlap)."""
        self.words[which] += 1

    def seen(self, which: int) -> int:
        return int(self.words[which])

    def wait(self, which: int, seen: int) -> None:
        """Spin until counter `which` is no longer `seen`, or for the budget."""
        if not self.working:
            return
        instance = self.module.take()
        try:
            instance.call(self.at + 4 * which, seen, self.budget, self.linger)
        except (wasmtime.Trap, wasmtime.WasmtimeError):   # never expected: stop spinning
            self.working = False
            return
        self.module.give(instance)
