"""A model of a GPU's float32 arithmetic that WGSL allows and NVIDIA's Vulkan driver has:
subnormals flushed to zeros of their sign (every operand and result); a / b computed as
a * (1 / b), whose reciprocal of a |b| past 2^126 is subnormal and so flushed to 0; and
`x < y ? y : x` (or `? x : y`) compiled as max (min), which drops a NaN operand.
The webgpu renderer scales a division whose divisor it cannot bound (the div helper);
`guard=False` models a compiler that undid that, so that code which must not rely on it
can be checked. Lavapipe computes IEEE values, so CI cannot see these failures without it.

`flushing_cpu(monkeypatch)` makes the cpu device evaluate every kernel with the webgpu
renderer's math expansion (ir/mathlib.py, but sin/cos) under this model.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from jaxlab.backends import cpu as cpu_backend, cpu_strided
from jaxlab.backends.webgpu.ops import CAPABILITIES, bounded_divisor
from jaxlab.ir import evaluate as reference
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.mathlib import expand

F32 = np.float32
SMALLEST_NORMAL = F32(2.0 ** -126)
HUGE_DIVISOR = F32(2.0 ** 126)
# ops that move bits (no arithmetic, nothing flushed), and the webgpu fmod helper, which
# works on the operands' bits (only its result can be flushed)
_BITS = frozenset({AluOp.Bitcast, AluOp.GlobalIndex, AluOp.Where})


def flush(x: Any) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype != F32:
        return x
    return np.where(np.abs(x) < SMALLEST_NORMAL, np.copysign(F32(0), x), x).astype(F32)


def _reciprocal(b: np.ndarray) -> np.ndarray:
    return flush(F32(1) / flush(b))


def _divide(a: np.ndarray, b: np.ndarray, scaled: bool) -> np.ndarray:
    a, b = flush(a), flush(b)
    if scaled:   # the div helper: both operands by 1/4 past 2^126
        huge = np.abs(b) > HUGE_DIVISOR
        a, b = np.where(huge, a * F32(0.25), a), np.where(huge, b * F32(0.25), b)
    return flush(a * _reciprocal(b))


class FlushingEvaluator:
    """ir/evaluate.py's meaning of every op, under the model."""

    def __init__(self, guard: bool = True) -> None:
        self.guard = guard

    def node(self, node: AluExp, args: list, env: Mapping, buffers: Sequence,
             values: Mapping) -> np.ndarray:
        picked = _max_or_min(node)
        if picked is not None:
            x, y = (values[s] for s in node.src[0].src)
            return picked(flush(x), flush(y))
        if node.op in _BITS:
            return reference._eval_node(node, args, env, buffers)
        if node.op in (AluOp.Div, AluOp.Idiv) and node.dtype is DType.float32:
            q = _divide(args[0], args[1], self.guard and not bounded_divisor(node))
            return np.trunc(q) if node.op is AluOp.Idiv else q
        if node.op is AluOp.Reciprocal:
            return _reciprocal(args[0])
        if node.op is not AluOp.Mod:
            args = [flush(a) for a in args]
        return flush(reference._eval_node(node, args, env, buffers))

    def evaluate(self, exp: AluExp, env: Mapping | None = None,
                 buffers: Sequence = ()) -> np.ndarray:
        exp = expand(exp, CAPABILITIES)
        values: dict[AluExp, np.ndarray] = {}
        with np.errstate(all="ignore"):
            for node in exp.toposort():
                values[node] = self.node(node, [values[s] for s in node.src], env or {},
                                         buffers, values)
        return values[exp]


def _max_or_min(node: AluExp) -> Any:
    """np.fmax for a float `where(x < y, y, x)`, np.fmin for `where(x < y, x, y)`, else
    None: NumPy's NaN-dropping max and min, as the compiled select."""
    cond = node.src[0] if node.op is AluOp.Where else None
    if cond is None or cond.op is not AluOp.Cmplt or node.dtype is not DType.float32:
        return None
    x, y = cond.src
    return {(y, x): np.fmax, (x, y): np.fmin}.get(node.src[1:])


def flushing_cpu(monkeypatch: Any, guard: bool = True) -> None:
    """Evaluate the cpu device's kernels under the model (on either of its paths)."""
    evaluate = FlushingEvaluator(guard).evaluate
    monkeypatch.setattr(cpu_backend, "evaluate", evaluate)
    monkeypatch.setattr(cpu_strided, "evaluate", evaluate)
