"""The exceptions the webgpu backend raises, with messages a person can act on."""
from __future__ import annotations

import re
from typing import Optional

_CONTEXT_LINES = 4


class WebGpuError(RuntimeError):
    """A WebGPU operation failed; the backend stays usable."""


class WgslCompileError(WebGpuError):
    """Generated WGSL the compiler rejected: its message and the source around the fault."""

    def __init__(self, label: str, compiler_message: str, source: str) -> None:
        self.label, self.compiler_message, self.source = label, compiler_message, source
        self.line = fault_line(compiler_message)
        super().__init__(f"WGSL compile error in {label or 'a shader'}:\n"
                         f"{compiler_message.strip()}\n\n{excerpt(source, self.line)}")


class DeviceLostError(WebGpuError):
    """The device went away; the next call gets a fresh one (old arrays are gone)."""


class WebGpuMemoryError(MemoryError):
    """An allocation the device cannot make."""


def fault_line(message: str) -> Optional[int]:
    """The first line number naga reports (`wgsl:19:29`), if any."""
    m = re.search(r"wgsl:(\d+):\d+", message)
    return int(m.group(1)) if m else None


def excerpt(source: str, line: Optional[int]) -> str:
    """Numbered lines of `source` around `line` (1-based), the faulty one marked."""
    lines = source.splitlines()
    if line is None or not 1 <= line <= len(lines):
        lo, hi = 0, min(len(lines), 2 * _CONTEXT_LINES + 1)
        head = "Generated WGSL (no line reported):"
    else:
        lo, hi = max(0, line - 1 - _CONTEXT_LINES), min(len(lines), line + _CONTEXT_LINES)
        head = f"Generated WGSL around line {line}:"
    width = len(str(hi))
    body = [f"{'>' if i + 1 == line else ' '} {i + 1:>{width}} | {lines[i]}" for i in range(lo, hi)]
    return "\n".join([head, *body])
