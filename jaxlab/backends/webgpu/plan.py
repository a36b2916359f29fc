"""What the runtime launches: passes of WGSL programs over numbered buffers."""
from __future__ import annotations

from dataclasses import dataclass

from jaxlab.backends.webgpu.codegen import Program


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
