"""The fusion story of a report: which adjacent equations did not fuse, why (as the
fuser decided it, engine/fusion.py) and what a user can change; a graph of the
equations grouped by kernel; and each kernel's way through the IR pipeline (lowered,
simplified with the rules that fired, tuned, rendered) with diffs between stages."""
from __future__ import annotations

import difflib
from typing import Optional, Sequence

from jaxlab.engine.fusion import ADVICE
from jaxlab.events import KernelEvent
from jaxlab.ir.provenance import Origin
from jaxlab.lab.view import Figure, Line, Mark, MarkKind, Node, Style, Table, code

_COLUMN, _ROW, _TOP = 150, 22, 30   # the graph's layout in px
_MAX_KERNELS, _MAX_NODES = 4, 5     # kernels, and equations per kernel, drawn
_CONTEXT = 1                        # unchanged lines around a change in a stage diff


def _place(o: Optional[Origin]) -> str:
    if o is None:
        return "-"
    short = o.equation.split("[")[0]
    return f"{short} (line {o.source.line})" if o.source else short


def unfused_pairs(events: Sequence[KernelEvent]) -> list[tuple[int, KernelEvent]]:
    """(kernel number, event) of each kernel whose value was stored between two
    equations: the producer's and a consumer's."""
    return [(i + 1, e) for i, e in enumerate(events)
            if e.unfused is not None and e.unfused.producer is not None
            and e.unfused.consumer is not None]


def story_tables(events: Sequence[KernelEvent]) -> list[Table]:
    """The pairs that did not fuse, then what to change, once per reason."""
    pairs = unfused_pairs(events)
    if not pairs:
        return []
    rows = [[f"#{n}", _place(e.unfused.producer), _place(e.unfused.consumer),
             e.unfused.reason.kind.value] for n, e in pairs]
    kinds = dict.fromkeys(e.unfused.reason.kind for _, e in pairs)
    return [Table(["kernel", "made by", "wanted by", "why it did not fuse"], rows,
                  title="adjacent equations that did not fuse", name="fusion"),
            Table(["why", "what you can change"], [[k.value, ADVICE[k]] for k in kinds],
                  name="fusion-advice")]


def graph(events: Sequence[KernelEvent]) -> Optional[Figure]:
    """Equations as nodes in columns, one column (a box) per kernel; a dashed edge from
    the equation that made a stored value to the one that read it in a later kernel.
    The first kernels that store a value between equations, and the kernels that read
    it, are drawn."""
    pairs = unfused_pairs(events)
    wanted = {o for _, e in pairs for o in (e.unfused.producer, e.unfused.consumer)}
    shown = [(n, e) for n, e in enumerate(events, 1)
             if e.origins and wanted & set(e.origins)][:_MAX_KERNELS]
    if len(shown) < 2:
        return None
    marks: list[Mark] = []
    where: dict[Origin, tuple[float, float]] = {}
    tallest = 0
    for k, (number, e) in enumerate(shown):
        x = 10 + k * _COLUMN
        nodes = e.origins[-_MAX_NODES:]     # (the latest: those nearest the output)
        tallest = max(tallest, len(nodes))
        marks.append(Mark(MarkKind.RECT, x, _TOP - 18, x + _COLUMN - 20,
                          _TOP + len(nodes) * _ROW, cls="jl-box"))
        marks.append(Mark(MarkKind.TEXT, x + 4, _TOP - 5, text=f"#{number} {e.name}"[:22],
                          cls="jl-label"))
        for j, o in enumerate(nodes):
            y = _TOP + j * _ROW + 12
            where.setdefault(o, (x, y))
            if j:
                marks.append(Mark(MarkKind.LINE, x + 8, y - _ROW + 3, x + 8, y - 3,
                                  cls="jl-edge"))
            marks.append(Mark(MarkKind.CIRCLE, x + 8, y, r=4, cls="jl-dot jl-memory"))
            marks.append(Mark(MarkKind.TEXT, x + 16, y + 4, text=_place(o)[:20],
                              cls="jl-label"))
    for _, e in shown:
        u = e.unfused
        if u is None or u.producer not in where or u.consumer not in where:
            continue
        (x0, y0), (x1, y1) = where[u.producer], where[u.consumer]
        if x1 > x0:
            marks.append(Mark(MarkKind.LINE, x0 + 12, y0, x1 + 4, y1, cls="jl-break"))
    return Figure(10 + len(shown) * _COLUMN, _TOP + tallest * _ROW + 10, tuple(marks),
                  f"equations of {len(shown)} kernels, grouped by kernel; dashed: a value "
                  f"stored between kernels")


def story_nodes(events: Sequence[KernelEvent]) -> list[Node]:
    figure = graph(events)
    return [*story_tables(events), *([figure] if figure is not None else [])]


def _diff(before: str, after: str, labels: tuple[str, str]) -> Optional[Node]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), labels[0],
                                      labels[1], n=_CONTEXT, lineterm=""))
    return code("\n".join(lines), "diff", cap=None) if lines else None


def pipeline_nodes(e: KernelEvent) -> list[Node]:
    """The kernel's way from lowering to generated code: each stage, and a diff to the
    next where both are IR."""
    p = e.pipeline
    if p is None:
        return []
    nodes: list[Node] = [Line("1. lowered (before simplification)", Style.TITLE),
                         code(p.lowered, "text", cap=None)]
    rules = ", ".join(f"{name} x{n}" for name, n in p.rules) or \
        "none (this structure was simplified before: the result is memoised)"
    nodes += [Line(f"2. simplified; rules fired: {rules}", Style.TITLE)]
    step = _diff(p.lowered, e.ir, ("lowered", "simplified"))
    nodes.append(step or Line("simplification changed nothing", Style.MUTED))
    nodes.append(Line("3. tuned", Style.TITLE))
    nodes.append(_diff(e.ir, e.tuned_ir, ("simplified", "tuned")) or
                 Line("tuning left the IR as it was (its choices: the tuning stage)",
                      Style.MUTED))
    lines = e.source.count("\n") + 1 if e.source else 0
    nodes.append(Line(f"4. rendered: {lines} lines of {e.source_language or 'source'} "
                      "(the source stage)", Style.TITLE))
    return nodes
