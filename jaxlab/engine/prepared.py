"""A jit program's kernel steps prepared once, run with no per-op planning.

Preparing numbers every value a program handles into a table of places: the
call's inputs, its outputs (fresh buffers each call: they are returned), and an
arena of intermediate buffers planned once, where a value freed by one step
lends its buffer to a later one. Each step gets its backend launcher
(`Backend.launcher`) and, where it touches only the arena and constants, its
argument lists, once. A call then fills in the inputs and outputs, runs the
launchers in order inside `backend.batch()` (one submission on webgpu), and
builds events only when someone listens.
"""
from __future__ import annotations

import math
import time
from typing import Any, NamedTuple, Optional, Sequence

from jaxlab import events
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel

_REUSE_SLACK = 2   # a freed buffer serves a value at most this many times smaller


class SlotSpec(NamedTuple):
    """What a value is (events read `dtype` and `size` as of a Buffer)."""
    dtype: DType
    size: int

    @property
    def nbytes(self) -> int:
        return max(4, self.size * self.dtype.itemsize)


def output_specs(program: Any) -> list[SlotSpec]:
    if isinstance(program, Kernel):
        return [SlotSpec(program.dtype, program.size)]
    return [SlotSpec(d, math.prod(s)) for s, d in program.outputs]


class _PreparedStep(NamedTuple):
    launch: Any                  # (input handles, output handles) -> device ms or None
    ins: list                    # place numbers (int) or fixed handles (wrapped)
    outs: list[int]              # place numbers
    fixed: Optional[tuple]       # (inputs, outputs) handle lists when both are known now
    step: Any


class _Fixed(NamedTuple):
    handle: Any                  # a constant input's handle, known when preparing


class Plan:
    """Where each slot of a program lives: places 0..n_inputs-1 are the inputs, then
    one place per returned slot, then the arena."""

    def __init__(self, n_inputs: int, steps: Sequence[Any], kept: set[int]) -> None:
        self.place: dict[int, int] = {i: i for i in range(n_inputs)}
        self.specs: dict[int, SlotSpec] = {}
        self.returned: list[tuple[int, SlotSpec]] = []   # (place, spec) made each call
        self.arena: list[int] = []                       # bytes per arena buffer
        for st in steps:
            for slot, spec in zip(st.outputs, output_specs(st.program)):
                self.specs[slot] = spec
        n_places = n_inputs + len({s for s in kept if s >= n_inputs})
        free: list[int] = []   # arena buffers whose value is dead
        arena_of: dict[int, int] = {}
        for st in steps:
            for slot in st.outputs:
                spec = self.specs[slot]
                if slot in kept:
                    self.place[slot] = n_inputs + len(self.returned)
                    self.returned.append((self.place[slot], spec))
                    continue
                j = self._reuse(free, spec.nbytes)
                if j is None:
                    j = len(self.arena)
                    self.arena.append(spec.nbytes)
                arena_of[slot] = j
                self.place[slot] = n_places + j
            for slot in st.frees:
                if slot in arena_of:
                    free.append(arena_of[slot])
        self.n_places = n_places + len(self.arena)
        self.arena_base = n_places

    def _reuse(self, free: list[int], nbytes: int) -> Optional[int]:
        fits = [j for j in free if nbytes <= self.arena[j] <= nbytes * _REUSE_SLACK]
        if not fits:
            return None
        j = min(fits, key=lambda k: self.arena[k])
        free.remove(j)
        return j


class PreparedSteps:
    """The steps, their launchers and one arena: run() by one caller at a time
    (Program keeps a pool of these for concurrent calls)."""

    def __init__(self, device: Device, plan: Plan, steps: Sequence[Any]) -> None:
        self.device, self.plan = device, plan
        backend = device.backend
        # arena buffers: plain 4-byte words, viewed as each kernel's dtype by the backend
        self._arena = [Buffer(device, DType.int32, -(-n // 4)) for n in plan.arena]
        self._template: list[Any] = [None] * plan.n_places
        for j, b in enumerate(self._arena):
            self._template[plan.arena_base + j] = b.handle
        self.steps: list[_PreparedStep] = []
        for st in steps:
            ins = [plan.place[x] if isinstance(x, int) else _Fixed(x.handle) for x in st.inputs]
            outs = [plan.place[s] for s in st.outputs]
            fixed = None
            if all(isinstance(x, _Fixed) or x >= plan.arena_base for x in ins) and \
                    all(o >= plan.arena_base for o in outs):
                fixed = ([x.handle if isinstance(x, _Fixed) else self._template[x] for x in ins],
                         [self._template[o] for o in outs])
            self.steps.append(_PreparedStep(backend.launcher(st.exe), ins, outs, fixed, st))

    def run(self, inputs: Sequence[Buffer], first_call: bool) -> dict[int, Buffer]:
        """Run every step on these input buffers; the returned slots' new buffers by place."""
        table = list(self._template)
        for i, b in enumerate(inputs):
            table[i] = b.handle
        made: dict[int, Buffer] = {}
        for place, spec in self.plan.returned:
            made[place] = Buffer(self.device, spec.dtype, spec.size)
            table[place] = made[place].handle
        if events.listening():
            self._run_observed(table, inputs, made, first_call)
            return made
        with self.device.backend.batch():
            for launch, ins, outs, fixed, _ in self.steps:
                if fixed is not None:
                    launch(*fixed)
                else:
                    launch([x.handle if isinstance(x, _Fixed) else table[x] for x in ins],
                           [table[o] for o in outs])
        return made

    def _run_observed(self, table: list, inputs: Sequence[Buffer], made: dict[int, Buffer],
                      first_call: bool) -> None:
        """The same run, timing each step and emitting its KernelEvent."""
        from jaxlab.engine.dispatch import make_event
        def describe(slot: Any) -> Any:   # a Buffer, or the spec of an arena value
            if not isinstance(slot, int):
                return slot   # a constant input
            place = self.plan.place[slot]
            return inputs[place] if place < len(inputs) else \
                made.get(place) or self.plan.specs[slot]
        with self.device.backend.batch():
            for launch, ins, outs, _, st in self.steps:
                in_handles = [x.handle if isinstance(x, _Fixed) else table[x] for x in ins]
                t0 = time.perf_counter()
                device_ms = launch(in_handles, [table[o] for o in outs])
                dispatch_ms = (time.perf_counter() - t0) * 1e3
                events.emit(make_event(
                    self.device, st.program, st.exe, [describe(x) for x in st.inputs],
                    [describe(s) for s in st.outputs],
                    st.first_hit or not first_call, st.compile_ms if first_call else 0.0,
                    dispatch_ms, device_ms, st.reason, st.origin))
