"""Source provenance in a report: the user's lines with the kernels each fed and its
share of the time, and a kernel's generated source line by line beside the jaxpr
equations and user lines each generated line computes.

A kernel's time is split evenly over the distinct user lines it came from (a line's
share is the sum of those parts): the engine does not time the parts of a fused
kernel, so the split says where the work came from, not what each part cost.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass
from typing import Iterable, Sequence

from jaxlab.events import KernelEvent
from jaxlab.ir.provenance import Origin, SourceInfo
from jaxlab.lab.view import Bar, Line, Node, Style, Table

SPLIT_NOTE = ("each kernel's time is split evenly over the user lines it came from (device "
              "time where the device measured it, host time otherwise)")
_MAX_SPAN = 60   # user lines shown around the ones that fed kernels, per file
_MAX_CHARS = 100  # of a generated line in the table (the listing above has it whole)


@dataclass(frozen=True)
class UserLine:
    """One line of the user's code: the kernels (report numbers, 1-based) it fed and
    its share of their time in ms."""
    file: str
    line: int
    function: str
    kernels: tuple[int, ...]
    ms: float


def _places(origins: Iterable[Origin]) -> list[SourceInfo]:
    """Distinct user lines (file, line) among `origins`, in order."""
    seen: dict[tuple[str, int], SourceInfo] = {}
    for o in origins:
        if o.source is not None:
            seen.setdefault((o.source.file, o.source.line), o.source)
    return list(seen.values())


def user_lines(kernels: Sequence[tuple[KernelEvent, float]]) -> list[UserLine]:
    """Per user line, the kernels it fed and its share of their time; `kernels` are each
    kernel's first event and its time (ms), in report order."""
    fed: dict[tuple[str, int], tuple[str, list[int], float]] = {}
    for number, (event, ms) in enumerate(kernels, 1):
        places = _places(event.origins)
        for p in places:
            function, numbers, share = fed.get((p.file, p.line), (p.function, [], 0.0))
            fed[(p.file, p.line)] = (function, numbers + [number], share + ms / len(places))
    return [UserLine(file, line, function, tuple(numbers), share)
            for (file, line), (function, numbers, share) in sorted(fed.items())]


def user_lines_nodes(lines: list[UserLine]) -> list[Node]:
    """The user's code around the lines that fed kernels (a cell, or the stretch of a
    file), each with the kernels it fed and a bar of its share of the time."""
    if not lines:
        return []
    total = sum(u.ms for u in lines) or 1.0
    nodes: list[Node] = [Line(SPLIT_NOTE, Style.MUTED)]
    by_file: dict[str, dict[int, UserLine]] = {}
    for u in lines:
        by_file.setdefault(u.file, {})[u.line] = u
    for file, fed in by_file.items():
        first, last = min(fed), max(fed)
        shown = range(first, last + 1) if last - first < _MAX_SPAN else sorted(fed)
        rows, keys, links = [], [], []
        for n in shown:
            u = fed.get(n)
            text = linecache.getline(file, n).rstrip()
            links.append([place_key(file, n)])
            if u is None:
                rows.append([str(n), text, "", "", ""])
                keys.append([n, text, "", 0, 0])
                continue
            rows.append([str(n), text, ", ".join(f"#{k}" for k in u.kernels),
                         f"{100 * u.ms / total:.0f}%", Bar(u.ms / total)])
            keys.append([n, text, u.kernels[0], u.ms, u.ms])
        nodes.append(Table(["line", "code", "kernels", "time share", ""], rows, align="rllrl",
                           title=file, keys=keys, name="lines", links=links))
    return nodes


def equations_text(event: KernelEvent) -> str:
    """A kernel's equations, those of each user line together after its number."""
    if not any(o.source for o in event.origins):
        return "\n".join(event.equations)
    by_line: dict[str, list[str]] = {}
    for o in event.origins:
        place = f"line {o.source.line} ({o.source.function})" if o.source else "-"
        by_line.setdefault(place, []).append(o.equation)
    return "\n".join(f"{place}: {'; '.join(eqs)}" for place, eqs in by_line.items())


def place_key(file: str, line: int) -> str:
    """What links a user line's rows across a report's tables (the live view's hover)."""
    return f"{file}:{line}"


def _origin_text(origins: frozenset[Origin], order: dict[Origin, int]) -> tuple[str, str]:
    """The equations and user lines of one generated line, in the kernel's order."""
    ranked = sorted(origins, key=lambda o: order.get(o, len(order)))
    equations = "; ".join(o.equation for o in ranked)
    places = [f"{s.line} ({s.function})" for s in _places(ranked)]
    return equations, ", ".join(places)


def generated_lines_table(event: KernelEvent, rows: int) -> Table:
    """The generated lines that compute something (the first `rows` of them), each
    beside the equations and user lines it computes (event.line_origins must be set)."""
    source = event.source.splitlines()
    per_line = event.line_origins.lines
    order = {o: i for i, o in enumerate(event.origins)}
    picked = [i for i, o in enumerate(per_line) if o][:rows]
    table, links = [], []
    for i in picked:
        origins = per_line[i] if i < len(per_line) else frozenset()
        equations, places = _origin_text(origins, order) if origins else ("", "")
        text = source[i] if len(source[i]) <= _MAX_CHARS else source[i][:_MAX_CHARS] + " …"
        table.append([str(i + 1), text, equations, places])
        links.append([place_key(s.file, s.line) for s in _places(origins)])
    computing = sum(1 for o in per_line if o)
    title = (f"generated lines beside what they compute ({len(table)} of the {computing} "
             f"of {len(source)} lines that compute)")
    return Table(["#", event.source_language or "source", "equations", "user line"], table,
                 align="rlll", title=title, name="provenance", links=links)
