"""jit: a jaxpr compiled once into a kernel program that later calls replay.

Compiling evaluates the jaxpr with each primitive's lowering on lazy arrays
whose buffers are placeholders, while dispatch records kernels instead of
running them. What materialises (and why) is decided there:
jit outputs, the ends of reduction epilogues, values with several consumers,
producers broadcast into matmuls, routine inputs and outputs, and backend
limits. Replaying the program does no per-op Python work: it allocates,
dispatches the prepared executables in order and frees after last use.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from jaxlab import events
from jaxlab.array import Array, wrap
from jaxlab.core.jaxpr import ClosedJaxpr, Lit, Var, equation_text
from jaxlab.core import sharing
from jaxlab.core.primitives import lower
from jaxlab.core.trace import note_origin, placement
from jaxlab.engine import dispatch, prepared
from jaxlab.engine import lazy as lz
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.engine.fusion import Break, Reason
from jaxlab.ir import provenance
from jaxlab.ir.provenance import Origin

_SHARED_NODES = 24   # a shared expression bigger than this is stored, not recomputed


@dataclass
class Step:
    program: Any            # Kernel or Routine
    exe: Any                # the backend's prepared executable
    inputs: list            # slot numbers (int) or constant Buffers
    outputs: list[int]      # slot numbers
    frees: list[int]        # slots whose last use is this step
    reason: str
    origin: tuple
    first_hit: bool = True  # whether compiling found the executable in the cache
    compile_ms: float = 0.0
    out_specs: list = field(default_factory=list)   # prepared.SlotSpec of each output

    def prepare(self, backend: Any) -> Callable:
        """The step's launcher (engine/prepared.py calls it once per runner)."""
        return backend.launcher(self.exe)


class Program:
    """The compiled form of a jitted function for one set of input avals."""

    def __init__(self, device: Device, in_specs: list, steps: list[Step],
                 outputs: list, out_avals: list, n_slots: int, jaxpr: ClosedJaxpr) -> None:
        n_inputs = len(in_specs)
        self.device, self.n_inputs, self.steps = device, n_inputs, steps
        self.in_specs = in_specs   # prepared.SlotSpec of each input
        self.outputs, self.out_avals, self.n_slots, self.jaxpr = outputs, out_avals, n_slots, jaxpr
        self.calls = 0   # the first call's events report the compilation it needed
        # Every program runs prepared (engine/prepared.py): loops and branches replay
        # their sub-programs' prepared steps. Observed (events), a program with loops or
        # branches runs step by step (_run) so that a loop reports its kernels once.
        self.structured = any(type(st) is not Step for st in steps)
        kept = {v for k, v in outputs if k == "slot"}
        self.plan = prepared.Plan(n_inputs, steps, kept)
        self._idle: list[prepared.PreparedSteps] = []   # prepared runners not in use
        # a runner with no arena and no loops holds nothing a call changes: all calls,
        # from any thread, share one (made on the first call)
        self._stateless = not self.plan.arena and not self.structured
        self._shared: prepared.PreparedSteps | None = None
        # each result: (place of its buffer, (shape, dtype)), or (None, a constant lazy
        # value), and whether it is weakly typed (as the jaxpr says, like JAX's jit results)
        weak = [a.weak_type for a in jaxpr.out_avals] if jaxpr is not None else \
            [False] * len(outputs)
        # (a real value's aval says no dtype: from_buffer's complex check is skipped)
        self._results = [(self.plan.place[v], (aval[0], aval[1] if aval[1].is_complex else None),
                          w) if k == "slot" else (None, v, w)
                         for (k, v), aval, w in zip(outputs, out_avals, weak)]

    def body_runner(self) -> prepared.BodyRunner:
        """This program as a sub-program run on handles (engine/prepared.BodyRunner)."""
        n_places = self.plan.arena_base
        consts = [v.buffer.handle for k, v in self.outputs if k != "slot"]
        index, c = [], 0
        for k, v in self.outputs:
            if k == "slot":
                index.append(self.plan.place[v])
            else:
                index.append(n_places + c)
                c += 1
        specs = [prepared.spec_of(v.buffer) if k != "slot" else
                 self.in_specs[v] if v < self.n_inputs else self.plan.specs[v]
                 for k, v in self.outputs]
        return prepared.BodyRunner(self.device, self.plan, self.steps, index, consts, specs)

    def __call__(self, args: Sequence[Array]) -> list[Array]:
        if self.structured and events.listening():
            return self._run_stepwise(args)
        device = self.device
        inputs = []
        for a in args:
            buf = a._lazy._buf   # the common case first: a realized array on this device
            inputs.append(buf if buf is not None and buf.device is device
                          else _as_buffer(a, device))
        first = self.calls == 0
        self.calls += 1
        if self._shared is not None:
            bufs = self._shared.run(inputs, first)
        else:
            bufs = self._run_pooled(inputs, first)
        # a constant (or constant-shaped) lazy value is computed without kernels
        return [Array(lz.from_buffer(bufs[place], *aval), weak) if place is not None
                else Array(aval, weak) for place, aval, weak in self._results]

    def _run_pooled(self, inputs: list[Buffer], first: bool) -> list[Buffer]:
        # a runner owns its arena: a second caller at the same time gets its own
        try:
            runner = self._idle.pop()   # atomic: two threads never get the same runner
        except IndexError:
            runner = prepared.PreparedSteps(self.device, self.plan, self.steps,
                                            kernels_only=not self.structured)
            if self._stateless:
                self._shared = runner
        try:
            return runner.run(inputs, first)
        finally:
            self._idle.append(runner)

    def _run_stepwise(self, args: Sequence[Array]) -> list[Array]:
        slots = self._run([_as_buffer(a, self.device) for a in args], None)
        return [wrap(lz.from_buffer(slots[value], *aval), weak) if kind == "slot"
                else wrap(value, weak)   # a constant lazy value computed without kernels
                for (kind, value), (_, aval, weak) in zip(self.outputs, self._results)]

    def run_buffers(self, buffers: Sequence[Buffer], tally: Any = None) -> list[Buffer]:
        """Run as a sub-program (a loop body, a branch): buffers in, buffers out.
        `tally` collects its dispatches instead of emitting one event each."""
        slots = self._run(buffers, tally)
        return [slots[v] if k == "slot" else v.buffer for k, v in self.outputs]

    def _run(self, buffers: Sequence[Buffer], tally: Any) -> list[Any]:
        slots: list[Any] = [None] * self.n_slots
        slots[:len(buffers)] = buffers
        backend = self.device.backend
        listening = events.listening()
        first = self.calls == 0
        self.calls += 1
        for st in self.steps:
            ins = [slots[x] if isinstance(x, int) else x for x in st.inputs]
            if type(st) is not Step:   # a loop or a branch: runs its own sub-programs
                outs = st.run(ins, tally)
            else:
                outs = dispatch.output_buffers(self.device, st.program)
                t0 = time.perf_counter()
                device_ms = backend.dispatch(st.exe, [b.handle for b in ins],
                                             [b.handle for b in outs])
                if tally is not None:
                    tally.add(st, ins, outs, (time.perf_counter() - t0) * 1e3, device_ms, first)
                elif listening:
                    events.emit(dispatch.make_event(
                        self.device, st.program, st.exe, ins, outs, st.first_hit or not first,
                        st.compile_ms if first else 0.0, (time.perf_counter() - t0) * 1e3,
                        device_ms, st.reason, st.origin))
            for slot, b in zip(st.outputs, outs):
                slots[slot] = b
            for slot in st.frees:
                slots[slot] = None
        return slots

    def kernel_steps(self) -> list[Step]:
        """Every kernel step, those of its loops' and branches' sub-programs too."""
        found, todo = [], [self]
        while todo:
            program = todo.pop()
            for st in program.steps:
                if type(st) is Step:
                    found.append(st)
                else:
                    todo.extend(st.programs())
        return found

    def text(self) -> str:
        """The program as steps a person can read; loops and branches as nested blocks."""
        head = (f"program on {self.device.platform}: {self.n_inputs} inputs, "
                f"{len(self.steps)} steps")
        return "\n".join([head] + ["  " + line for line in self.lines()])

    def lines(self) -> list[str]:
        lines = []
        for i, st in enumerate(self.steps):
            if type(st) is Step:
                ins = ", ".join(f"%{x}" if isinstance(x, int) else "const" for x in st.inputs)
                outs = ", ".join(f"%{x}" for x in st.outputs)
                lines.append(f"{i:3d}: alloc {outs}; run {st.program.name}({ins})   "
                             f"# {st.reason}")
            else:
                block = st.lines()
                lines += [f"{i:3d}: {block[0]}"] + ["     " + line for line in block[1:]]
            if st.frees:
                lines.append(f"     free {', '.join(f'%{x}' for x in st.frees)}")
        outs = ", ".join(f"%{v}" if k == "slot" else "const" for k, v in self.outputs)
        return lines + [f"return {outs}"]

    __str__ = text


def _as_buffer(a: Array, device: Device) -> Buffer:
    if a.device is not device:
        if not lz.is_constant(a._lazy):
            raise ValueError(f"Received incompatible devices for jitted computation: it runs on "
                             f"{device} and got an argument {placement(a)}. Put it there "
                             f"first: jaxlab.device_put(x, jaxlab.devices({device.platform!r})[0]).")
        a = wrap(lz.on_device(a._lazy, device))   # a Python scalar goes where the program runs
    return a._realize().buffer


def compile_program(closed: ClosedJaxpr, device: Device) -> Program:
    in_avals = closed.in_avals
    placeholders = [Buffer.placeholder(device, a.dtype, _size(a.shape)) for a in in_avals]
    for c in closed.consts:   # now, not while recording: the user's arrays must keep
        if _fill(c) is None:  # real buffers, not the program's placeholders
            c._realize()
    with dispatch.recording() as rec:
        results = lower_jaxpr(closed, [lz.from_buffer(p, a.shape, a.dtype)
                                       for p, a in zip(placeholders, in_avals)], device, rec)
        results = [lz.realize(r, Reason(Break.OUTPUT, "jit output")) if _needs_buffer(r) else r
                   for r in results]
    return _assemble(device, closed, placeholders, rec.steps, results)


def compile_body(device: Device, avals: Sequence[Any],
                 body: Callable[[list[lz.Lazy], Any], list[lz.Lazy]]) -> Program:
    """A sub-program (a loop body, a branch): `body(input lazies, recorder)` builds
    its results, which all end in buffers, since a loop feeds them back in."""
    placeholders = [Buffer.placeholder(device, a.dtype, _size(a.shape)) for a in avals]
    with dispatch.recording() as rec:
        results = body([lz.from_buffer(p, a.shape, a.dtype)
                        for p, a in zip(placeholders, avals)], rec)
        results = [lz.realize(r, Reason(Break.CARRIED, "carried to the next iteration"))
                   for r in results]
    return _assemble(device, None, placeholders, rec.steps, results)


def lower_jaxpr(closed: ClosedJaxpr, inputs: Sequence[lz.Lazy], device: Device,
                rec: Any) -> list[lz.Lazy]:
    """Evaluate the jaxpr with each primitive's lowering while `rec` records the
    kernels; control-flow equations compile their bodies into sub-programs."""
    from jaxlab.core.program_steps import structured
    jaxpr = closed.jaxpr
    uses = sharing.analyse(jaxpr)
    env: dict[int, lz.Lazy] = {}
    for v, c in zip(jaxpr.in_binders[:closed.n_consts], closed.consts):
        fill = _fill(c)
        env[id(v)] = c._realize() if fill is None else lz.on_device(fill, device)
    for v, x in zip(jaxpr.in_binders[closed.n_consts:], inputs):
        env[id(v)] = x

    def read(a: Any) -> lz.Lazy:
        if isinstance(a, Lit):
            return lz.full((), a.val, a.aval.dtype, device)
        return env[id(a)]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.inputs]
        origin = Origin(equation_text(eqn.primitive, eqn.params), eqn.source_info)
        with provenance.equation(origin):
            if eqn.primitive in structured:
                outs = structured[eqn.primitive](device, rec, ins, **eqn.params)
            else:
                out = lower(eqn.primitive, ins, eqn.params)
                outs = list(out) if eqn.primitive.multiple_results else [out]
        for v, o in zip(eqn.out_binders, outs):
            note_origin(o, ins, origin)
            if _stored(o, v, uses, env, device):
                o = lz.share(o, Reason(Break.CONSUMERS,
                                       f"used by {uses.count[id(v)]} equations"))
            env[id(v)] = o
    return [read(a) for a in jaxpr.outs]


def _fill(c: Array) -> "lz.Lazy | None":
    """A constant the jaxpr captured that is one value everywhere (the zeros a
    gradient rule makes): it stays a literal in the kernels that read it, where
    realizing it would make every kernel read a buffer of zeros."""
    v = c._lazy
    if isinstance(v, lz.Lazy) and v.pending is None and v._buf is None and v.exp.is_const:
        return v
    return None


def _stored(o: lz.Lazy, v: Var, uses: sharing.Uses, env: dict, device: Device) -> bool:
    """Whether the value `o` of `v`, which several equations use, is stored once."""
    if uses.count.get(id(v), 0) < 2:
        return False
    region = uses.rejoined.get(id(v))
    if region is not None and _fuses_whole(o, region, env, device):
        return False
    # a widening use would store a big expression anyway, in the layout it reads: each
    # such use once (a weight gradient's matmul reads a transposed copy)
    return _worth_sharing(o) or id(v) in uses.widened and not lz.is_cheap(o)


def _fuses_whole(o: lz.Lazy, region: sharing.Region, env: dict, device: Device) -> bool:
    """Whether the region's equations over `o` lower into one expression: its other
    inputs carry no reduction of their own (a second one would store `o`'s per use)
    and the expression stays within the fuser's limits."""
    others = [env[id(a)] for a in region.others]
    return all(isinstance(x, lz.Lazy) and x.pending is None for x in others) and \
        isinstance(o, lz.Lazy) and \
        o.exp.depth + len(region.equations) < device.backend.max_fused_depth and \
        sum(x.node_count() for x in [o, *others]) < lz.MAX_FUSED_NODES // 2


def _worth_sharing(o: lz.Lazy) -> bool:
    """Reductions and large expressions are computed once; elementwise producers
    are recomputed in each consumer's kernel: arithmetic, even an exp, costs less
    than writing and re-reading the values through memory."""
    return o.buffer is None and (o.pending is not None or
                                 len(o.exp.toposort()) > _SHARED_NODES)


def _needs_buffer(o: lz.Lazy) -> bool:
    return o.buffer is None and not (o.exp.is_const and o.pending is None)


def _size(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _assemble(device: Device, closed: ClosedJaxpr, placeholders: list[Buffer],
              recorded: list, results: list[lz.Lazy]) -> Program:
    """Number every placeholder buffer, and free each after its last use."""
    slot_of: dict[int, int] = {id(b): i for i, b in enumerate(placeholders)}
    steps: list[Step] = []
    for record in recorded:
        if not isinstance(record, tuple):   # a loop or branch step: (step, ins, outs)
            step, ins, outs = record.step, record.inputs, record.outputs
        else:
            program, exe, ins, outs, reason, origin, hit, compile_ms = record
            step = Step(program, exe, [], [], [], reason, origin, hit, compile_ms)
        for b in outs:
            slot_of[id(b)] = len(slot_of)
        step.inputs = [slot_of.get(id(b), b) for b in ins]
        step.outputs, step.frees = [slot_of[id(b)] for b in outs], []
        step.out_specs = [prepared.spec_of(b) for b in outs]
        steps.append(step)
    outputs = []
    for r in results:
        buf = r.buffer
        outputs.append(("slot", slot_of[id(buf)]) if buf is not None and id(buf) in slot_of
                       else ("value", r))
    kept = {v for k, v in outputs if k == "slot"}
    last_use: dict[int, int] = {}
    for i, st in enumerate(steps):
        for x in st.inputs:
            if isinstance(x, int):
                last_use[x] = i
    for slot, i in last_use.items():
        if slot not in kept and slot >= len(placeholders):
            steps[i].frees.append(slot)
    return Program(device, [prepared.spec_of(b) for b in placeholders], steps, outputs,
                   [(r.shape, r.dtype) for r in results], len(slot_of), closed)
