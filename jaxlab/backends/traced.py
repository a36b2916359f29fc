"""Generated lines that remember what they compute, for the lab's provenance view.

A generator writes a line as `traced(text, nodes)`: a str that carries the kernel's
nodes (and provenance.FOLD for a reduction step) it computes. Indenting it keeps
them (`like`); `line_marks` reads them back per physical line once the module's
lines are final. A side table built while emitting: no generated text is parsed.
"""
from __future__ import annotations

from typing import Iterable

_NONE: frozenset = frozenset()


class Traced(str):
    marks: frozenset

    def __new__(cls, text: str, marks: frozenset) -> "Traced":
        line = super().__new__(cls, text)
        line.marks = marks
        return line


def marks_of(text: str) -> frozenset:
    return getattr(text, "marks", _NONE)


def traced(text: str, marks: Iterable) -> str:
    """`text` carrying `marks` (plain text where there are none)."""
    marks = frozenset(marks)
    return Traced(text, marks) if marks else text


def like(text: str, *sources: str) -> str:
    """`text` carrying the marks of the lines it was made from (an indented copy)."""
    return traced(text, frozenset().union(*(marks_of(s) for s in sources)))


def line_marks(lines: Iterable[str]) -> tuple[frozenset, ...]:
    """Per physical line of `"\\n".join(lines)`, the marks of the line it starts (a
    line written over several, an inlined function, is marked once, where it starts)."""
    out: list[frozenset] = []
    for line in lines:
        out += [marks_of(line)] + [_NONE] * line.count("\n")
    return tuple(out)


class Listing(str):
    """Lines of text joined, with the marks of each physical line."""
    line_marks: tuple[frozenset, ...]

    def __new__(cls, text: str, line_marks: tuple[frozenset, ...]) -> "Listing":
        out = super().__new__(cls, text)
        out.line_marks = line_marks
        return out


def listing(lines: list[str]) -> Listing:
    return Listing("\n".join(lines), line_marks(lines))


def join(parts: list[str], sep: str = "\n") -> Listing:
    """`sep.join(parts)`, keeping the marks of parts that are Listings or Traced lines."""
    marks: list[frozenset] = []
    for i, part in enumerate(parts):
        if i:
            marks += [_NONE] * (sep.count("\n") - 1)
        marks += getattr(part, "line_marks", None) or line_marks([part])
    return Listing(sep.join(parts), tuple(marks))
