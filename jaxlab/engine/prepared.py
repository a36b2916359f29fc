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
from typing import Any, Hashable, NamedTuple, Optional, Sequence

from jaxlab import events
from jaxlab.backends.base import Backend
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.ir.dtypes import DType

_REUSE_SLACK = 2   # a freed buffer serves a value at most this many times smaller


class SlotSpec(NamedTuple):
    """What a value is (events read `dtype` and `size` as of a Buffer)."""
    dtype: DType
    size: int
    nbytes: int   # allocated (at least 4: zero-sized allocations are invalid on some backends)


def _spec(dtype: DType, size: int) -> SlotSpec:
    return SlotSpec(dtype, size, max(4, size * dtype.itemsize))


def spec_of(buf: Any) -> SlotSpec:
    """The spec of a value a step outputs (a placeholder Buffer says dtype and size)."""
    return _spec(buf.dtype, buf.size)


def spec_of_aval(aval: Any) -> SlotSpec:
    return _spec(aval.dtype, math.prod(aval.shape))


class _PreparedStep(NamedTuple):
    launch: Any                  # (input handles, output handles) -> device ms or None
    ins: list[int]               # places in the call's table
    outs: list[int]
    fixed: Optional[tuple]       # (inputs, outputs) handle lists when both are known now
    step: Any


class Plan:
    """Where each slot of a program lives: places 0..n_inputs-1 are the inputs, then
    one place per returned slot, then the arena."""

    def __init__(self, n_inputs: int, steps: Sequence[Any], kept: set[int]) -> None:
        self.place: dict[int, int] = {i: i for i in range(n_inputs)}
        self.specs: dict[int, SlotSpec] = {}
        self.returned: list[SlotSpec] = []   # values made each call, in place order
        self.arena: list[int] = []                       # bytes per arena buffer
        self.n_inputs = n_inputs
        for st in steps:
            for slot, spec in zip(st.outputs, st.out_specs):
                self.specs[slot] = spec
        n_places = n_inputs + len({s for s in kept if s >= n_inputs})
        free: list[int] = []   # arena buffers whose value is dead
        arena_of: dict[int, int] = {}
        for st in steps:
            for slot in st.outputs:
                spec = self.specs[slot]
                if slot in kept:   # returned values follow the inputs
                    self.place[slot] = n_inputs + len(self.returned)
                    self.returned.append(spec)
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

    def __init__(self, device: Device, plan: Plan, steps: Sequence[Any],
                 kernels_only: bool = False) -> None:
        """`kernels_only`: every step is a kernel step (has `exe`), so the backend may
        replay them all its own faster way (Backend.program_replay)."""
        self.device, self.plan = device, plan
        backend = device.backend
        self._batches = type(backend).batch is not Backend.batch   # else nothing to enter
        # arena buffers: plain 4-byte words, viewed as each kernel's dtype by the backend
        self._arena = [Buffer(device, DType.int32, -(-n // 4)) for n in plan.arena]
        # the table of handles: inputs and returned values (filled per call), the arena,
        # then the constant inputs of steps
        self._template: list[Any] = [None] * plan.arena_base + [b.handle for b in self._arena]
        const_place: dict[int, int] = {}
        for st in steps:
            for x in st.inputs:
                if not isinstance(x, int) and id(x) not in const_place:
                    const_place[id(x)] = len(self._template)
                    self._template.append(x.handle)
        fixed_from = plan.arena_base
        self.steps: list[_PreparedStep] = []
        for st in steps:
            ins = [plan.place[x] if isinstance(x, int) else const_place[id(x)] for x in st.inputs]
            outs = [plan.place[s] for s in st.outputs]
            fixed = None
            if min(ins + outs, default=fixed_from) >= fixed_from:
                fixed = ([self._template[x] for x in ins], [self._template[o] for o in outs])
            self.steps.append(_PreparedStep(st.prepare(backend), ins, outs, fixed, st))
        self._returned = [(s.dtype, s.size, s.nbytes) for s in plan.returned]
        self._replay = backend.program_replay(
            [(st.exe, p.ins, p.outs) for p, st in zip(self.steps, steps)],
            self._template) if kernels_only else None
        # the commonest program (jit(x + 1)): one step that reads the inputs and writes
        # the results, in order: launched on the call's handles with no table
        n, places = plan.n_inputs, plan.arena_base
        self._direct = self.steps[0].launch if len(self.steps) == 1 and \
            self.steps[0].ins == list(range(n)) and \
            self.steps[0].outs == list(range(n, places)) else None

    def run(self, inputs: Sequence[Buffer], first_call: bool) -> list[Buffer]:
        """Run every step on these input buffers; returns the buffer of every place
        before the arena (the inputs, then the new buffers of the returned values)."""
        device = self.device
        bufs = inputs + Buffer.planned_many(device, self._returned)
        if events.listening():
            table = self._template.copy()
            table[:len(bufs)] = [b.handle for b in bufs]
            self._run_observed(table, bufs, first_call)
            return bufs
        handles = [b.handle for b in bufs]
        if self._replay is not None and self._replay(handles):
            return bufs
        if self._direct is not None:
            ins, outs = handles[:len(inputs)], handles[len(inputs):]
            if self._batches:
                with device.backend.batch():
                    self._direct(ins, outs)
            else:
                self._direct(ins, outs)
            return bufs
        table = self._template.copy()
        table[:len(bufs)] = handles
        if self._batches:
            with device.backend.batch():
                self._launch_all(table)
        else:
            self._launch_all(table)
        return bufs

    def _launch_all(self, table: list) -> None:
        for launch, ins, outs, fixed, _ in self.steps:
            if fixed is not None:
                launch(*fixed)
            else:
                launch([table[x] for x in ins], [table[o] for o in outs])

    def bound(self, handles: Sequence[Any]) -> list[tuple]:
        """(launch, input handles, output handles) of every step, with `handles` in the
        places before the arena: what a loop replays each iteration with no lookups."""
        table = self._template.copy()
        table[:len(handles)] = handles
        return [(launch, *fixed) if fixed is not None else
                (launch, [table[x] for x in ins], [table[o] for o in outs])
                for launch, ins, outs, fixed, _ in self.steps]

    def _run_observed(self, table: list, bufs: list[Buffer], first_call: bool) -> None:
        """The same run, timing each step and emitting its KernelEvent."""
        from jaxlab.engine.dispatch import make_event

        def describe(slot: Any) -> Any:   # a Buffer, or the spec of an arena value
            if not isinstance(slot, int):
                return slot   # a constant input
            place = self.plan.place[slot]
            return bufs[place] if place < len(bufs) else self.plan.specs[slot]
        with self.device.backend.batch():
            for launch, ins, outs, _, st in self.steps:
                t0 = time.perf_counter()
                device_ms = launch([table[x] for x in ins], [table[o] for o in outs])
                dispatch_ms = (time.perf_counter() - t0) * 1e3
                events.emit(make_event(
                    self.device, st.program, st.exe, [describe(x) for x in st.inputs],
                    [describe(s) for s in st.outputs],
                    st.first_hit or not first_call, st.compile_ms if first_call else 0.0,
                    dispatch_ms, device_ms, st.reason, st.origin))


def run_bound(calls: Sequence[tuple]) -> None:
    for launch, ins, outs in calls:
        launch(ins, outs)


class BoundBody(NamedTuple):
    calls: list                      # run_bound(calls) runs the body once
    outputs: list                    # the handle of each result after it
    copies: list                     # (source handle, target handle, bytes) still to copy


class Bindings:
    """A BodyRunner's bindings kept per set of handles, the few most recent: each call of
    a program binds a branch to the same arena places, and its inputs and outputs often
    come back at the same places (a training loop alternates between two sets)."""

    def __init__(self, runner: "BodyRunner", kept: int = 2) -> None:
        self._runner, self._kept = runner, kept
        self._key = runner.device.backend.binding_key
        self._bound: dict[Hashable, BoundBody] = {}   # insertion order: oldest first

    def bind(self, inputs: Sequence[Any], results: Sequence[Any],
             targets: Optional[Sequence[Any]] = None) -> BoundBody:
        """BodyRunner.bind, or what it gave for the same handles before."""
        key = self._key([*inputs, *results, *(targets or ())])
        hit = self._bound.get(key)
        if hit is None:
            hit = self._runner.bind(inputs, results, targets)
            if len(self._bound) >= self._kept:
                del self._bound[next(iter(self._bound))]
            self._bound[key] = hit   # the key holds the handles with the binding
        return hit


class BodyRunner:
    """A sub-program (a loop body, a branch) prepared to run many times on handles.

    `out_index[j]` says where result j is: an input (index < n_inputs), a value the
    body computes (the returned places next), or a constant (after them). A caller
    binds it once per set of buffers and replays the bound calls."""

    def __init__(self, device: Device, plan: Plan, steps: Sequence[Any],
                 out_index: Sequence[int], consts: Sequence[Any],
                 out_specs: Sequence[SlotSpec]) -> None:
        self.device, self.plan = device, plan
        self.prepared = PreparedSteps(device, plan, steps)
        self.out_index, self.consts, self.out_specs = list(out_index), list(consts), out_specs
        self.n_inputs = plan.n_inputs

    def result_buffers(self) -> list[Buffer]:
        """Buffers for the values the body computes (a loop keeps two sets)."""
        return Buffer.planned_many(self.device,
                                   [(s.dtype, s.size, s.nbytes) for s in self.plan.returned])

    def bind(self, inputs: Sequence[Any], results: Sequence[Any],
             targets: Optional[Sequence[Any]] = None) -> BoundBody:
        """Bind input handles and the handles `results` its computed values go to. A
        result j with a target (a handle) is written there directly where it is the
        only result of its value, else copied there afterwards (BoundBody.copies)."""
        results = list(results)
        if targets is not None:
            n = self.n_inputs
            counts: dict[int, int] = {}
            for k in self.out_index:
                counts[k] = counts.get(k, 0) + 1
            for j, (k, t) in enumerate(zip(self.out_index, targets)):
                if t is not None and n <= k < n + len(results) and counts[k] == 1:
                    results[k - n] = t
        calls = self.prepared.bound(list(inputs) + results)
        everything = list(inputs) + results + self.consts
        outputs = [everything[k] for k in self.out_index]
        copies = [] if targets is None else [
            (h, t, self.out_specs[j].size * self.out_specs[j].dtype.itemsize)
            for j, (h, t) in enumerate(zip(outputs, targets)) if t is not None and h is not t]
        return BoundBody(calls, outputs, copies)
