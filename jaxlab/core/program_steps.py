"""Loop and branch steps of a compiled program (jit of cond, while, scan).

A control-flow equation compiles each body it holds ONCE into a sub-program
(core/jit.py `compile_body`) and becomes one step of the enclosing program:

  LoopStep   a scan (fori_loop with static bounds): the body runs `length`
             times, its outputs fed back as its carried inputs. The row of xs
             a step reads and the row of ys it writes are picked by a step
             counter the body carries in a device buffer, so the body's kernels
             are the same every iteration and compile time does not grow with
             the trip count.
  WhileStep  the condition sub-program runs, its boolean is read to the host
             (one 1-element read per iteration), then the body runs.
  CondStep   the index is read to the host; only the taken branch runs.

Buffers are values: a kernel always writes fresh output buffers, so a carry
that passes through unchanged (output = input) is shared, never overwritten.
Events: a loop's kernels are reported once each, with `calls` = iterations,
unless `events.per_iteration()` (the lab's --trace) asks for every dispatch;
each read-back of a predicate or index is reported as a "readback" event.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from jaxlab import events
from jaxlab.core.control_flow import (clamp_index, cond_p, read_row, row_index, scalar_int,
                                      scan_p, split_scan, split_while, while_p, write_row)
from jaxlab.core.jit import Program, compile_body, lower_jaxpr
from jaxlab.engine import dispatch
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


@dataclass
class LoopStep:
    device: Device
    length: int
    body: Program
    n_invariant: int          # leading inputs read every iteration, never carried
    reverse: bool = False
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    frees: list = field(default_factory=list)

    def run(self, ins: list, tally: Optional[Tally]) -> list:
        invariant, carried = ins[:self.n_invariant], ins[self.n_invariant:]
        own = _body_tally(self.device, tally)
        for _ in range(self.length):
            carried = self.body.run_buffers(invariant + carried, own)
        if own is not None and tally is None:
            own.flush()
        return carried

    def lines(self) -> list[str]:
        inv, carried = self.inputs[:self.n_invariant], self.inputs[self.n_invariant:]
        head = (f"{_slots(self.outputs)} = loop {self.length} x{' reversed' if self.reverse else ''}"
                f" (carry {_slots(carried) or '-'}; invariant {_slots(inv) or '-'}) {{")
        return [head] + _indent(self.body.lines(), 4) + ["}"]


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

    def run(self, ins: list, tally: Optional[Tally]) -> list:
        index, ms = _read_host(ins[0])
        _emit_readback(self.device, "cond", 1, ms)
        return self.branches[clamp_index(index, len(self.branches))].run_buffers(ins[1:], tally)

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


def _compile_scan(device: Device, rec: Any, ins: list, *, jaxpr, length, reverse, num_consts,
                  num_carry, unroll) -> list[lz.Lazy]:
    consts, carry, xs = split_scan(ins, num_consts, num_carry)
    consts, xs = _buffers(consts, "read by a loop"), _buffers(xs, "scanned over")
    carry = _buffers(carry, "loop carry")
    ys = [lz.realize(lz.full((length,) + a.shape, 0, a.dtype, device), "stacked scan output")
          for a in jaxpr.out_avals[num_carry:]]
    counter = [scalar_int(0, device)] if xs or ys else []
    n_c, n_inv, n_cnt = len(consts), len(consts) + len(xs), len(counter)

    def body(vals: list, sub: Any) -> list:
        c, x_rows = vals[:n_c], vals[n_c:n_inv]
        step, rest = vals[n_inv:n_inv + n_cnt], vals[n_inv + n_cnt:]
        index = row_index(step[0], length, reverse) if step else None
        outs = lower_jaxpr(jaxpr, c + rest[:num_carry] + [read_row(x, index) for x in x_rows],
                           device, sub)
        written = [write_row(acc, y, index) for acc, y in zip(rest[num_carry:], outs[num_carry:])]
        nxt = [lz.elementwise(AluOp.Add, [step[0], lz.full((), 1, DType.int32, device)])] \
            if step else []
        return nxt + outs[:num_carry] + written
    loop_ins = consts + xs + counter + carry + ys
    program = compile_body(device, loop_ins, body)
    step = LoopStep(device, length, program, n_inv, reverse)
    return _record(rec, device, step, loop_ins, counter + carry + ys)[n_cnt:]


def _compile_while(device: Device, rec: Any, ins: list, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                   body_nconsts) -> list[lz.Lazy]:
    ins = _buffers(ins, "read by a loop")
    cc, bc, carry = split_while(ins, cond_nconsts, body_nconsts)
    cond = compile_body(device, cc + carry, lambda v, r: lower_jaxpr(cond_jaxpr, v, device, r))
    body = compile_body(device, bc + carry, lambda v, r: lower_jaxpr(body_jaxpr, v, device, r))
    step = WhileStep(device, cond, body, cond_nconsts, body_nconsts)
    return _record(rec, device, step, ins, carry)


def _compile_cond(device: Device, rec: Any, ins: list, *, branches) -> list[lz.Lazy]:
    ins = _buffers(ins, "read by a branch")
    index, ops = ins[0], ins[1:]
    programs = [compile_body(device, ops, lambda v, r, b=b: lower_jaxpr(b, v, device, r))
                for b in branches]
    return _record(rec, device, CondStep(device, programs), ins, branches[0].out_avals)


structured = {scan_p: _compile_scan, while_p: _compile_while, cond_p: _compile_cond}
