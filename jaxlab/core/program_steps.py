"""Loop and branch steps of a compiled program (jit of cond, while, scan).

A control-flow equation compiles each body it holds ONCE into a sub-program
(core/jit.py `compile_body`) and becomes one step of the enclosing program:

  LoopStep   a scan (fori_loop with static bounds): the body runs `length`
             times, its outputs fed back as its carried inputs. The row of xs
             a step reads is picked by a step counter the body carries in a
             device buffer, so the body's kernels are the same every iteration
             and compile time does not grow with the trip count; each step's
             ys row is copied into the preallocated stacked output in place.
  WhileStep  the condition sub-program runs, its boolean is read to the host
             (one 1-element read per iteration), then the body runs.
  CondStep   the index is read to the host; only the taken branch runs.

Run prepared (no one listening to events), a step binds its sub-programs once
per call (engine/prepared.BodyRunner): a loop's computed carries alternate
between two buffer sets (an iteration reads one and writes the other), so its
iterations replay bound launcher lists with no allocation; on webgpu a scan is
recorded into the one command buffer of the call. A carry may pass through
unchanged (it keeps its buffer) but never moves to another carry's place: the
body copies it (a moved carry could be overwritten while still read).
Observed, the steps run stepwise on Buffers (`run`) and report their events.
Events: a loop's kernels are reported once each, with `calls` = iterations,
unless `events.per_iteration()` (the lab's --trace) asks for every dispatch;
each read-back of a predicate or index is reported as a "readback" event.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from jaxlab import events
from jaxlab.core.control_flow import (clamp_index, cond_p, fresh_copy, read_row, row_index,
                                      row_of, scalar_int, scan_p, split_scan, split_while,
                                      stacked_buffers, while_p)
from jaxlab.array import wrap
from jaxlab.core.avals import ShapedArray
from jaxlab.core.custom_derivatives import call_jaxpr, custom_jvp_call_p, custom_vjp_call_p
from jaxlab.core.jit import Program, compile_body, lower_jaxpr
from jaxlab.engine import dispatch, prepared
from jaxlab.engine import lazy as lz
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType


@dataclass
class Structured:
    """What compiling a control-flow equation records: the step and its buffers."""
    step: Any
    inputs: list
    outputs: list


class Tally:
    """A loop body's dispatches summed per kernel: one event each, with its count."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.rows: dict[int, list] = {}

    def add(self, st: Any, ins: list, outs: list, dispatch_ms: float,
            device_ms: Optional[float], first: bool) -> None:
        row = self.rows.get(id(st))
        if row is None:
            self.rows[id(st)] = [st, ins, outs, 1, dispatch_ms, device_ms, first]
            return
        row[3] += 1
        row[4] += dispatch_ms
        row[5] = None if row[5] is None or device_ms is None else row[5] + device_ms

    def flush(self) -> None:
        for st, ins, outs, calls, dispatch_ms, device_ms, first in self.rows.values():
            e = dispatch.make_event(self.device, st.program, st.exe, ins, outs,
                                    st.first_hit or not first, st.compile_ms if first else 0.0,
                                    dispatch_ms, device_ms, st.reason, st.origin)
            e.calls, e.flops, e.bytes = calls, e.flops * calls, e.bytes * calls
            events.emit(e)
        self.rows.clear()


def _body_tally(device: Device, tally: Optional[Tally]) -> Optional[Tally]:
    """Where a loop body's dispatches go: the enclosing loop's tally, a new one, or
    nowhere (each dispatch emits its own event: nobody listens, or --trace)."""
    if tally is not None:
        return tally
    if events.listening() and not events.per_iteration_active():
        return Tally(device)
    return None


def _emit_readback(device: Device, what: str, reads: int, ms: float) -> None:
    if reads and events.listening():
        events.emit(events.KernelEvent(
            name=f"{what}_readback", backend=device.platform, kind="readback",
            output_shapes=[()], output_dtypes=["bool" if what == "while" else "int32"],
            dispatch_ms=ms, bytes=4 * reads, cache_hit=True, calls=reads,
            reason=f"the {what} {'predicate' if what == 'while' else 'index'} is read "
                   f"to the host ({reads} reads, {ms / reads * 1e3:.1f} us each)"))


def _read_host(buf: Buffer) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = buf.to_numpy()[0]
    return value, (time.perf_counter() - t0) * 1e3


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + line for line in lines]


def _slots(xs: Sequence[Any]) -> str:
    return ", ".join(f"%{x}" if isinstance(x, int) else "const" for x in xs)


def _bytes(spec: prepared.SlotSpec) -> int:
    return spec.size * spec.dtype.itemsize


@dataclass(frozen=True)
class Phase:
    """A loop body that runs `unroll` steps per iteration, `count` times."""
    body: Program             # invariant + state -> state + each step's y rows
    count: int
    unroll: int


@dataclass
class LoopStep:
    device: Device
    length: int
    phases: list              # Phases in order: unrolled iterations, then the remainder
    n_invariant: int          # leading inputs read every iteration, never carried
    n_counter: int            # the state starts with the step counter (when xs are read)
    ys: list                  # avals of the stacked outputs (after the carries)
    reverse: bool = False
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)    # carries, then stacked ys
    frees: list = field(default_factory=list)
    out_specs: list = field(default_factory=list)

    def run(self, ins: list, tally: Optional[Tally]) -> list:
        invariant, state = ins[:self.n_invariant], ins[self.n_invariant:]
        n_state = len(state)
        ys = stacked_buffers(self.ys, self.length, self.device)
        own = _body_tally(self.device, tally)
        step = 0
        for phase in self.phases:
            for _ in range(phase.count):
                outs = phase.body.run_buffers(invariant + state, own)
                state, rows = outs[:n_state], outs[n_state:]
                for j in range(phase.unroll):
                    row = row_of(step, self.length, self.reverse)
                    step += 1
                    for acc, y in zip(ys, rows[j * len(ys):(j + 1) * len(ys)]):
                        dispatch.write_row(acc, row, y)
        if own is not None and tally is None:
            own.flush()
        return state[self.n_counter:] + ys

    def prepare(self, backend: Any) -> Callable:
        """The launcher: iterations replay bound calls (computed state alternates between
        two buffer sets, so after the third iteration the bindings repeat), each step's
        ys rows are copied in place, and the final carries into the step's outputs."""
        phases = []
        for phase in self.phases:
            runner = phase.body.body_runner()
            sets = [runner.result_buffers(), runner.result_buffers()]
            phases.append((runner, [[b.handle for b in s] for s in sets], phase.count,
                           phase.unroll, sets))
        length, n_inv, n_cnt, reverse = self.length, self.n_invariant, self.n_counter, self.reverse
        n_state, n_y = len(self.inputs) - n_inv, len(self.ys)
        first = self.phases[0].body
        carry_bytes = [_bytes(s) for s in first.in_specs[n_inv + n_cnt:]]
        y_bytes = [_bytes(prepared.spec_of_aval(a)) for a in self.ys]
        copy = backend.copy

        def launch(ins: Sequence[Any], outs: Sequence[Any]) -> None:
            invariant, state = list(ins[:n_inv]), list(ins[n_inv:])
            ys, step = outs[len(carry_bytes):], 0
            for runner, handles, count, unroll, _ in phases:
                bound: list = [None, None]
                for it in range(count):
                    b = bound[it % 2] if it >= 3 else \
                        runner.bind(invariant + state, handles[it % 2])
                    if it in (1, 2):
                        bound[it % 2] = b
                    prepared.run_bound(b.calls)
                    rows = b.outputs[n_state:]
                    for j in range(unroll):
                        row = length - 1 - step if reverse else step
                        step += 1
                        for h, acc, n in zip(rows[j * n_y:(j + 1) * n_y], ys, y_bytes):
                            copy(h, 0, acc, row * n, n)
                    state = b.outputs[:n_state]
            for h, t, n in zip(state[n_cnt:], outs, carry_bytes):
                copy(h, 0, t, 0, n)
        return launch

    def programs(self) -> list[Program]:
        return [phase.body for phase in self.phases]

    def lines(self) -> list[str]:
        inv, carried = self.inputs[:self.n_invariant], self.inputs[self.n_invariant:]
        lines = []
        for phase in self.phases:
            unrolled = f", {phase.unroll} steps each" if phase.unroll > 1 else ""
            head = (f"{_slots(self.outputs)} = loop {phase.count} x{unrolled}"
                    f"{' reversed' if self.reverse else ''}"
                    f" (carry {_slots(carried) or '-'}; invariant {_slots(inv) or '-'}) {{")
            lines += [head] + _indent(phase.body.lines(), 4) + ["}"]
        return lines


@dataclass
class WhileStep:
    device: Device
    cond: Program
    body: Program
    n_cond_consts: int
    n_body_consts: int
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    frees: list = field(default_factory=list)
    out_specs: list = field(default_factory=list)

    def run(self, ins: list, tally: Optional[Tally]) -> list:
        cc, bc, carried = split_while(ins, self.n_cond_consts, self.n_body_consts)
        own = _body_tally(self.device, tally)
        reads, read_ms = 0, 0.0
        while True:
            (pred,) = self.cond.run_buffers(cc + carried, own)
            go, ms = _read_host(pred)
            reads, read_ms = reads + 1, read_ms + ms
            if not go:
                break
            carried = self.body.run_buffers(bc + carried, own)
        if own is not None and tally is None:
            own.flush()
        _emit_readback(self.device, "while", reads, read_ms)
        return carried

    def prepare(self, backend: Any) -> Callable:
        """The launcher: the state is bound in three ways (the initial values, then the
        two buffer sets in turn); each iteration reads the predicate to the host."""
        cond, body = self.cond.body_runner(), self.body.body_runner()
        sets = [cond.result_buffers(), body.result_buffers(), body.result_buffers()]
        cond_out = [b.handle for b in sets[0]]
        handles = [[b.handle for b in s] for s in sets[1:]]
        n_cc, n_bc, read, copy = self.n_cond_consts, self.n_body_consts, backend.read, backend.copy
        sizes = [_bytes(s) for s in body.out_specs]

        def launch(ins: Sequence[Any], outs: Sequence[Any], _owners: Any = sets) -> None:
            cc, bc, state = split_while(ins, n_cc, n_bc)
            conds: dict[int, prepared.BoundBody] = {}
            bodies: dict[int, prepared.BoundBody] = {}
            key = 0   # 0: the initial state; 1: state in set 0; 2: state in set 1
            while True:
                c = conds.get(key)
                if c is None:
                    c = conds[key] = cond.bind(cc + state, cond_out)
                prepared.run_bound(c.calls)
                if not read(c.outputs[0], DType.bool, 1)[0]:
                    break
                b = bodies.get(key)
                if b is None:
                    b = bodies[key] = body.bind(bc + state, handles[1 if key == 1 else 0])
                prepared.run_bound(b.calls)
                state, key = b.outputs, (2 if key == 1 else 1)
            for h, t, n in zip(state, outs, sizes):
                copy(h, 0, t, 0, n)
        return launch

    def programs(self) -> list[Program]:
        return [self.cond, self.body]

    def lines(self) -> list[str]:
        carried = self.inputs[self.n_cond_consts + self.n_body_consts:]
        return ([f"{_slots(self.outputs)} = while (carry {_slots(carried)}) {{", "  cond {"] +
                _indent(self.cond.lines(), 4) + ["  }", "  body {"] +
                _indent(self.body.lines(), 4) + ["  }", "}"])


@dataclass
class CondStep:
    device: Device
    branches: list           # Programs, by index (JAX's order: false first)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    frees: list = field(default_factory=list)
    out_specs: list = field(default_factory=list)

    def run(self, ins: list, tally: Optional[Tally]) -> list:
        index, ms = _read_host(ins[0])
        _emit_readback(self.device, "cond", 1, ms)
        return self.branches[clamp_index(index, len(self.branches))].run_buffers(ins[1:], tally)

    def prepare(self, backend: Any) -> Callable:
        """The launcher: reads the index to the host, runs the taken branch with its
        results written straight into the step's outputs where it can."""
        runners = [b.body_runner() for b in self.branches]
        spare = [r.result_buffers() for r in runners]
        handles = [[b.handle for b in s] for s in spare]
        # bound once per set of operand and result buffers, not per call (a launcher
        # belongs to one runner of the program: no other thread shares these)
        bindings = [prepared.Bindings(r) for r in runners]
        read, copy, n = backend.read, backend.copy, len(runners)

        def launch(ins: Sequence[Any], outs: Sequence[Any], _owners: Any = spare) -> None:
            k = clamp_index(read(ins[0], DType.int32, 1)[0], n)
            b = bindings[k].bind(ins[1:], handles[k], outs)
            prepared.run_bound(b.calls)
            for h, t, nbytes in b.copies:
                copy(h, 0, t, 0, nbytes)
        return launch

    def programs(self) -> list[Program]:
        return list(self.branches)

    def lines(self) -> list[str]:
        ops = _slots(self.inputs[1:]) or "-"
        head = f"{_slots(self.outputs)} = "
        if len(self.branches) == 2:   # index 1 is the true branch
            return ([f"{head}cond {_slots(self.inputs[:1])} ({ops}) {{"] +
                    _indent(self.branches[1].lines(), 4) + ["} else {"] +
                    _indent(self.branches[0].lines(), 4) + ["}"])
        lines = [f"{head}switch {_slots(self.inputs[:1])} ({ops}) {{"]
        for k, b in enumerate(self.branches):
            lines += [f"  case {k} {{"] + _indent(b.lines(), 4) + ["  }"]
        return lines + ["}"]


# --- compiling the equations ------------------------------------------------------------

def _buffers(xs: Sequence[lz.Lazy], reason: str) -> list[lz.Lazy]:
    return [lz.realize(x, reason) for x in xs]


def _record(rec: Any, device: Device, step: Any, ins: Sequence[lz.Lazy],
            out_like: Sequence[Any]) -> list[lz.Lazy]:
    """Append the step to the recording; its outputs (shaped like `out_like`) are
    new placeholder buffers."""
    outs = [Buffer.placeholder(device, x.dtype, _size(x.shape)) for x in out_like]
    rec.steps.append(Structured(step, [x.buffer for x in ins], outs))
    return [lz.from_buffer(b, x.shape, x.dtype) for b, x in zip(outs, out_like)]


def _size(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _unaliased(state_outs: list[lz.Lazy], state_ins: Sequence[lz.Lazy]) -> list[lz.Lazy]:
    """A carry that moves to another carry's place is copied (prepared loops alternate
    buffer sets, and a moved carry could be overwritten while still read)."""
    place = {id(x.buffer): i for i, x in enumerate(state_ins)}
    return [fresh_copy(o) if place.get(id(o.buffer), j) != j else o
            for j, o in enumerate(state_outs)]


def _compile_scan(device: Device, rec: Any, ins: list, *, jaxpr, length, reverse, num_consts,
                  num_carry, unroll) -> list[lz.Lazy]:
    consts, carry, xs = split_scan(ins, num_consts, num_carry)
    consts, xs = _buffers(consts, "read by a loop"), _buffers(xs, "scanned over")
    carry = _buffers(carry, "loop carry")
    y_avals = jaxpr.out_avals[num_carry:]
    counter = [scalar_int(0, device)] if xs else []
    n_c, n_inv, n_cnt = len(consts), len(consts) + len(xs), len(counter)

    def steps(k: int) -> Callable:
        """A body running k steps of the scan: the state after them, and each step's ys."""
        def body(vals: list, sub: Any) -> list:
            c, x_rows, state, rows = vals[:n_c], vals[n_c:n_inv], vals[n_inv:], []
            for _ in range(k):
                step, rest = state[:n_cnt], state[n_cnt:]
                index = row_index(step[0], length, reverse) if step else None
                outs = lower_jaxpr(jaxpr, c + rest + [read_row(x, index) for x in x_rows],
                                   device, sub)
                nxt = [lz.elementwise(AluOp.Add, [step[0], lz.full((), 1, DType.int32, device)])] \
                    if step else []
                state = nxt + outs[:num_carry]
                rows += [lz.cast(y, a.dtype) for y, a in zip(outs[num_carry:], y_avals)]
            return _unaliased(state, vals[n_inv:]) + rows
        return body
    loop_ins = consts + xs + counter + carry
    k = max(1, min(unroll, length))
    phases = [Phase(compile_body(device, loop_ins, steps(k)), length // k, k)]
    if length % k:   # the steps left over run one per iteration
        phases.append(Phase(compile_body(device, loop_ins, steps(1)), length % k, 1))
    step = LoopStep(device, length, phases, n_inv, n_cnt, list(y_avals), reverse)
    stacked = [ShapedArray((length,) + a.shape, a.dtype) for a in y_avals]
    return _record(rec, device, step, loop_ins, carry + stacked)


def _compile_while(device: Device, rec: Any, ins: list, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                   body_nconsts) -> list[lz.Lazy]:
    ins = _buffers(ins, "read by a loop")
    cc, bc, carry = split_while(ins, cond_nconsts, body_nconsts)
    cond = compile_body(device, cc + carry, lambda v, r: lower_jaxpr(cond_jaxpr, v, device, r))
    body = compile_body(device, bc + carry, lambda v, r: _unaliased(
        lower_jaxpr(body_jaxpr, v, device, r), v[body_nconsts:]))
    step = WhileStep(device, cond, body, cond_nconsts, body_nconsts)
    return _record(rec, device, step, ins, carry)


def _compile_cond(device: Device, rec: Any, ins: list, *, branches) -> list[lz.Lazy]:
    ins = _buffers(ins, "read by a branch")
    index, ops = ins[0], ins[1:]
    programs = [compile_body(device, ops, lambda v, r, b=b: lower_jaxpr(b, v, device, r))
                for b in branches]
    return _record(rec, device, CondStep(device, programs), ins, branches[0].out_avals)


def _compile_custom_call(device: Device, rec: Any, ins: list, *, fun, **_) -> list[lz.Lazy]:
    """A custom_jvp/custom_vjp function's own computation: staged and lowered in place
    when it holds loops or branches (they become steps like any others), else lowered
    directly as outside jit."""
    closed = call_jaxpr([ShapedArray(x.shape, x.dtype) for x in ins], fun)
    if any(e.primitive in structured for e in closed.jaxpr.eqns):
        return lower_jaxpr(closed, ins, device, rec)
    return [o._lazy for o in fun(*(wrap(x) for x in ins))]


structured = {scan_p: _compile_scan, while_p: _compile_while, cond_p: _compile_cond,
              custom_jvp_call_p: _compile_custom_call, custom_vjp_call_p: _compile_custom_call}
