"""Two reports compared kernel by kernel: the last run of a cell and this one, the two
devices of `%%kernel --compare`, two tunings of one kernel.

Kernels are matched by structure: the same kernel key (the same IR) first, then, among
the rest, the same name (the same loop nest shape) in order of dispatch. Each matched
pair shows its change in time, and its IR, tuning and generated source as unified
diffs (difflib); kernels on one side only are listed as such.
"""
from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from typing import Any, Optional

from jaxlab.events import KernelEvent
from jaxlab.lab.report import (MIME, VERSION, KernelGroup, Report, fmt_ms, jsonable,
                               show_value)
from jaxlab.lab.view import (Block, Fold, Html, Line, Node, Style, Table, code, page, to_html,
                             to_json, to_text)

_CONTEXT = 2          # unchanged lines around each change
_DIFF_LINES = 60      # a longer diff keeps its head and tail (like a listing)


def unified(before: str, after: str, what: str, labels: tuple[str, str]) -> str:
    """The unified diff of two texts ('' when they are equal)."""
    return "\n".join(difflib.unified_diff(before.splitlines(), after.splitlines(),
                                          f"{what} ({labels[0]})", f"{what} ({labels[1]})",
                                          n=_CONTEXT, lineterm=""))


def tuning_text(event: KernelEvent) -> str:
    if event.tuning is None:
        return ""
    return "\n".join(f"{c.name} = {show_value(c.value)}" for c in event.tuning.choices)


# what a kernel's diff compares: (stage title, the text of an event)
_STAGES = (("IR", lambda e: e.ir), ("IR after tuning", lambda e: e.tuned_ir),
           ("tuning", tuning_text), ("source", lambda e: e.source))


@dataclass(frozen=True)
class Pair:
    """A kernel of each side (None where it is on one side only)."""
    before: Optional[KernelGroup]
    after: Optional[KernelGroup]

    @property
    def name(self) -> str:
        return (self.after or self.before).first.name

    def diffs(self, labels: tuple[str, str]) -> list[tuple[str, str]]:
        """(stage, unified diff) for every stage that differs."""
        if self.before is None or self.after is None:
            return []
        found = [(title, unified(text(self.before.first), text(self.after.first), title, labels))
                 for title, text in _STAGES]
        return [(title, d) for title, d in found if d]


def match(before: Report, after: Report) -> list[Pair]:
    """Kernels paired by key, then by name in order; the rest alone (after's order)."""
    left = list(before.groups)
    pairs: list[Pair] = []
    for key_of in (lambda g: g.first.key, lambda g: g.first.name):
        for g in after.groups:
            if any(p.after is g for p in pairs):
                continue
            twin = next((b for b in left if key_of(b) == key_of(g)), None)
            if twin is not None:
                left.remove(twin)
                pairs.append(Pair(twin, g))
    matched = {id(p.after) for p in pairs}
    order = {id(g): i for i, g in enumerate(after.groups)}
    pairs.sort(key=lambda p: order[id(p.after)])
    pairs += [Pair(None, g) for g in after.groups if id(g) not in matched]
    return pairs + [Pair(b, None) for b in left]


class ReportDiff:
    """`after` against `before`: a table of kernels with their times and change, then
    each changed kernel's unified diffs."""

    def __init__(self, before: Report, after: Report,
                 labels: Optional[tuple[str, str]] = None) -> None:
        self.before, self.after = before, after
        self.labels = labels or (before.title or "before", after.title or "after")
        self.pairs = match(before, after)

    def table(self) -> Table:
        rows = []
        for p in self.pairs:
            a = p.before.ms if p.before else None
            b = p.after.ms if p.after else None
            change = (f"{b / a:.2f}x" if a and b else
                      "only " + self.labels[1] if p.before is None else
                      "only " + self.labels[0] if p.after is None else "-")
            same = "" if p.before is None or p.after is None else \
                "same IR" if p.before.first.key == p.after.first.key else "same name"
            rows.append([p.name, fmt_ms(a), fmt_ms(b), change, same,
                         ", ".join(t for t, _ in p.diffs(self.labels)) or "-"])
        return Table(["kernel", self.labels[0], self.labels[1], "time ratio", "match",
                      "differs in"], rows, align="lrrrll", title="kernels matched by structure",
                     name="diff")

    @functools.cached_property
    def view(self) -> Block:
        folds: list[Node] = []
        for p in self.pairs:
            diffs = p.diffs(self.labels)
            if diffs:
                folds.append(Fold(f"{p.name}: {', '.join(t for t, _ in diffs)} differ",
                                  tuple(code(d, "diff", cap=_DIFF_LINES) for _, d in diffs),
                                  open=len(self.pairs) == 1, cls="jl-kernel"))
        head = Line(f"jaxlab diff: {self.labels[0]} -> {self.labels[1]}", Style.TITLE)
        if not folds:
            folds = [Line("no kernel's IR, tuning or source differs", Style.MUTED)]
        return Block((head, self.table(), *folds))

    def text(self) -> str:
        return to_text(self.view)

    def html(self) -> Html:
        return page(to_html(self.view))

    def data(self) -> dict[str, Any]:
        return jsonable({
            "version": VERSION, "labels": list(self.labels),
            "kernels": [{"name": p.name, "before_ms": p.before and p.before.ms,
                         "after_ms": p.after and p.after.ms,
                         "same_ir": bool(p.before and p.after
                                         and p.before.first.key == p.after.first.key),
                         "differs": [t for t, _ in p.diffs(self.labels)]}
                        for p in self.pairs],
            "view": to_json(self.view)})

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html(), MIME: self.data()}

    __str__ = text
