"""debug_callback: a primitive that hands its operands' values to a Python function
on the host, and returns nothing.

Eagerly it reads its operands and calls the function at once. Under jit it becomes
a step of the compiled program (CallbackStep) that reads its operands' buffers and
calls the function each time the program runs. Differentiated, it sees the primal
values; batched (vmap), the function is called once per batch element.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from jaxlab.array import wrap
from jaxlab.core.primitives import abstract_evals, batch_rules, jvp_rules, lowerings, primitive
from jaxlab.core.program_steps import _buffers, _record, _slots, structured
from jaxlab.core.trace import bind
from jaxlab.engine.devices import Device

debug_callback_p = primitive("debug_callback", multiple_results=True)


def _eager(*operands: Any, callback: Callable[..., None]) -> list:
    callback(*(np.asarray(wrap(x)) for x in operands))
    return []


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: Callable) -> tuple:
    bind(debug_callback_p, *primals, callback=callback)
    return [], []


def _per_element(callback: Callable, dims: Sequence[Optional[int]], size: int) -> Callable:
    """The callback of a batched call: called once per element of the batch."""
    def each(*values: np.ndarray) -> None:
        for i in range(size):
            callback(*(v if d is None else np.take(v, i, axis=d) for v, d in zip(values, dims)))
    return each


def _batch(size: int, values: Sequence[Any], dims: Sequence[Optional[int]], *,
           callback: Callable) -> tuple:
    bind(debug_callback_p, *values, callback=_per_element(callback, dims, size))
    return [], []


@dataclass
class CallbackStep:
    """A compiled program's step that reads its operands to the host and calls back."""
    device: Device
    callback: Callable[..., None]
    shapes: list             # each operand's shape
    in_specs: list           # each operand's prepared.SlotSpec (dtype and size)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    frees: list = field(default_factory=list)
    out_specs: list = field(default_factory=list)

    def run(self, ins: list, tally: Any) -> list:
        self.callback(*(b.to_numpy().reshape(s) for b, s in zip(ins, self.shapes)))
        return []

    def prepare(self, backend: Any) -> Callable:
        read, callback = backend.read, self.callback
        operands = [(spec.dtype, spec.size, shape) for spec, shape in
                    zip(self.in_specs, self.shapes)]

        def launch(ins: Sequence[Any], outs: Sequence[Any]) -> None:
            callback(*(read(h, dtype, size).reshape(shape) if size else
                       np.zeros(shape, dtype.np) for h, (dtype, size, shape) in zip(ins, operands)))
        return launch

    def programs(self) -> list:
        return []

    def lines(self) -> list[str]:
        return [f"debug_callback({_slots(self.inputs)})"]


def _compile(device: Device, rec: Any, ins: list, *, callback: Callable) -> list:
    from jaxlab.engine.prepared import spec_of
    for x in ins:
        if x.dtype.is_complex:
            raise NotImplementedError("debug callbacks of complex values under jit are not "
                                      "supported; pass the real and imaginary parts")
    stored = _buffers(ins, "read by a debug callback")
    step = CallbackStep(device, callback, [tuple(x.shape) for x in stored],
                        [spec_of(x.buffer) for x in stored])
    return _record(rec, device, step, stored, [])


lowerings[debug_callback_p] = _eager
abstract_evals[debug_callback_p] = lambda *avals, callback: []
jvp_rules[debug_callback_p] = _jvp
batch_rules[debug_callback_p] = _batch
structured[debug_callback_p] = _compile
