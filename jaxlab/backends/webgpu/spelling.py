"""The two ways an op is spelled in WGSL (a template, or a call of a library helper)
and a library helper's definition: shared by ops.py and the 64-bit integers of int64.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Call:
    """A call of the LIBRARY helper `helper` on the operands: a typed one is called
    as helper_f32 / helper_f16 after the operand's WGSL type."""
    helper: str
    typed: bool = True

    def name(self, t: str) -> str:
        return f"{self.helper}_{t}" if self.typed else self.helper


Spelling = Union[str, Call]


@dataclass(frozen=True)
class Helper:
    """A WGSL function. A `typed` one takes T = f32 or f16 and is called as
    name_f32 / name_f16: `generic` bodies are valid for both, the others are
    written for f32 and reached from f16 through a converting wrapper."""
    params: str              # "x" or "a, b" (of type T), or fully typed "a: i32, b: i32"
    returns: str             # "T" or a fixed type
    body: str
    typed: bool = True
    generic: bool = False
    deps: tuple[str, ...] = ()   # helpers called; name_T means "of my own type"
