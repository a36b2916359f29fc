"""What the runtime launches: passes of WGSL programs over numbered buffers."""
from __future__ import annotations

from dataclasses import dataclass

from jaxlab.backends.webgpu.codegen import Program, generate, generate_split_sum
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.tune import Limits, Tuning
from jaxlab.ir.kernel import Kernel


@dataclass(frozen=True)
class Pass:
    program: Program
    args: tuple[int, ...]          # buffers bound in order: inputs, outputs, then scratch
    writable: frozenset[int]       # binding positions bound read_write
    params: bytes = b""            # a uniform block bound after the buffers, if any


@dataclass(frozen=True)
class Plan:
    passes: tuple[Pass, ...]
    scratch: tuple[int, ...] = ()  # bytes of temporaries, numbered after the outputs

    @property
    def source(self) -> str:
        """Each distinct shader once, in launch order."""
        seen: dict[str, None] = {}
        for p in self.passes:
            seen.setdefault(p.program.source, None)
        return "\n// ----\n".join(seen)


def single(program: Program, inputs: int) -> Plan:
    """One pass: `inputs` read-only buffers and the output."""
    return Plan((Pass(program, tuple(range(inputs + 1)), frozenset({inputs})),))


def kernel_plan(kernel: Kernel, tuning: Tuning, lang: Lang, limits: Limits) -> Plan:
    """The passes of a kernel: one, or with split-K the partial sums into scratch and a
    second pass that adds them and runs the epilogue."""
    first = generate(kernel, tuning, lang, limits)
    n = len(kernel.inputs)
    if tuning.tile is None or tuning.tile.split == 1:
        return single(first, n)
    c = tuning.contraction
    partials = 4 * tuning.tile.split * c.batch * c.m * c.n
    return Plan((Pass(first, (*range(n), n + 1), frozenset({n})),
                 Pass(generate_split_sum(kernel, tuning, lang, limits), tuple(range(n + 2)),
                      frozenset({n}))), (partials,))
