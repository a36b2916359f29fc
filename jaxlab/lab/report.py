"""Reports of what the engine did, from KernelEvents.

A `Report` is one typed model of a capture: kernels grouped by identity (with
their calls and each dispatch's time), their stages, tuning choices and
autotune measurements, and totals as quantities with units. It is turned once
into a view (jaxlab/lab/view.py) and rendered three ways through
`_repr_mimebundle_`: text/plain, script-free text/html, and the view as JSON
for the JupyterLab renderer in extension/, which draws the same elements.
`Comparison` puts two reports side by side with a per-kernel ratio table;
`ErrorReport` shows a compile error with the faulty source lines marked;
`Table` is the small table the magics print.
"""
from __future__ import annotations

import enum
import functools
import math
import re
import statistics
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from jaxlab.backends.base import Autotuned, TuningRecord
from jaxlab.engine.roofline import Roof
from jaxlab.events import KernelEvent
from jaxlab.lab.fusion_view import pipeline_nodes, story_nodes
from jaxlab.lab.lines import (UserLine, equations_text, generated_lines_table, user_lines,
                              user_lines_nodes)
from jaxlab.lab.roofline_view import KernelPoint, bound_text, judge, roofline_nodes
from jaxlab.lab.view import (Bar, Block, Code, Columns, Fold, Html, Line, Node, Pre, Style, Table,
                             capped_text, code, join, markup, page, to_html, to_json, to_text)

MIME = "application/vnd.jaxlab.report+json"
VERSION = 2
STAGES = ("jaxpr", "ir", "tuned", "tuning", "pipeline", "source", "timings", "fusion",
          "program")
_PIPELINE_KERNELS = 4    # reports of more kernels show the pipeline stage only when asked
_CONTEXT_LINES = 5       # source lines shown around a compile error
_DISPATCH_ROWS = 12      # per-dispatch times listed per kernel
# Generated-source lines a report embeds, shared by its kernels (at least _MIN_LISTING
# each): a 10-kernel report stays near 120 kB in all three views together.
_LISTING_BUDGET = 160
# Characters of whole generated sources a report embeds for the renderer's "show all
# lines", divided by its number of kernels (sources beyond it stay capped there too,
# and say so): a one-kernel report keeps a long WAT whole, the report of a 10-kernel
# cell stays under 200 kB.
_FULL_TEXT_BUDGET = 100_000
_MIN_LISTING = 10
# Rows of the generated-line provenance tables a report embeds, given to its kernels by
# time, longest first (the lines beside their equations repeat the listing, so few).
_PROVENANCE_ROWS = 8


# --- numbers a person reads ------------------------------------------------------------

def fmt_ms(ms: Optional[float]) -> str:
    if ms is None:
        return "-"
    if ms < 1:
        return f"{ms * 1e3:.1f} us"
    return f"{ms:.2f} ms" if ms < 1e3 else f"{ms / 1e3:.2f} s"


def fmt_si(n: float, unit: str) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {prefix}{unit}"
    return f"{n:g} {unit}"


def fmt_rate(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.3g}"


class Unit(enum.Enum):
    COUNT = ""
    MS = "ms"
    FLOP = "FLOP"
    BYTES = "B"


@dataclass(frozen=True)
class Quantity:
    """A total with its unit; `text()` is how every view writes it."""
    name: str
    value: Optional[float]
    unit: Unit

    def text(self) -> str:
        if self.unit is Unit.MS:
            return fmt_ms(self.value)
        if self.value is None:
            return "-"
        if self.unit is Unit.COUNT:
            return f"{self.value:g}"
        return fmt_si(self.value, self.unit.value)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit.value or None,
                "text": self.text()}


def _shape(dtype: str, shape: Sequence[int]) -> str:
    return f"{dtype}[{','.join(map(str, shape))}]"


# --- JSON -----------------------------------------------------------------------------

def jsonable(x: Any) -> Any:
    """`x` with tuples as lists, NumPy scalars and arrays as Python values, keys
    as strings, non-finite floats as None and anything else as its str()."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "tolist") and hasattr(x, "dtype"):     # NumPy scalar or array
        return jsonable(x.tolist())
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (bool, int, str)):
        return x
    return str(x)


# --- kernels: the dispatches of one compiled kernel --------------------------------------

class KernelGroup:
    """Every dispatch of one kernel (same device and structure) in a report."""

    def __init__(self, events: list[KernelEvent]) -> None:
        self.events = events
        self.first = events[0]     # what they share: IR, source, tuning
        self.calls = sum(e.calls for e in events)   # a loop's kernel: one event, many calls
        self.host_ms = sum(e.dispatch_ms for e in events)
        self.compile_ms = sum(e.compile_ms for e in events)
        device = [e.device_ms for e in events]
        self.device_ms = sum(device) if all(d is not None for d in device) else None
        self.flops = sum(e.flops for e in events)
        self.bytes = sum(e.bytes for e in events)

    @property
    def ms(self) -> float:
        """Device time where every dispatch was measured there, else host time."""
        return self.device_ms if self.device_ms is not None else self.host_ms

    @property
    def gflops(self) -> Optional[float]:
        return self.flops / self.ms / 1e6 if self.ms > 0 and self.flops else None

    @property
    def gbps(self) -> Optional[float]:
        return self.bytes / self.ms / 1e6 if self.ms > 0 and self.bytes else None


def group_events(events: Iterable[KernelEvent]) -> list[KernelGroup]:
    """Dispatches of the same kernel together, in order of first dispatch."""
    groups: dict[tuple, list[KernelEvent]] = {}
    for e in events:
        groups.setdefault((e.backend, e.kind, e.name, e.key), []).append(e)
    return [KernelGroup(evs) for evs in groups.values()]


def flatten(record: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """A record (backend info) as (key, value) rows: nested dicts under dotted
    keys, lists joined with commas."""
    rows = []
    for k, v in record.items():
        if isinstance(v, dict):
            rows += flatten(v, f"{prefix}{k}.")
        elif isinstance(v, (list, tuple)):
            rows.append((f"{prefix}{k}", ", ".join(map(str, v))))
        else:
            rows.append((f"{prefix}{k}", str(v)))
    return rows


def show_value(value: Any) -> str:
    """A tuning value as a person reads it: tuples as AxB, booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return "x".join(map(str, value))
    return str(value)


def tuning_nodes(tuning: TuningRecord) -> list[Node]:
    """The tuning stage: a choice/value/reason table, then how it was autotuned."""
    nodes: list[Node] = [Table(["choice", "value", "reason"],
                               [[c.name, show_value(c.value), c.reason or "-"]
                                for c in tuning.choices])]
    if tuning.autotuned is not None:
        nodes += autotune_nodes(tuning.autotuned)
    return nodes


def autotune_nodes(a: Autotuned) -> list[Node]:
    head = (f"autotune: from the on-disk cache, measured {a.measured_at} "
            f"(in {fmt_ms(a.tuning_ms)}); nothing was timed now" if a.from_cache else
            f"autotune: {len(a.candidates)} candidates compiled and timed in "
            f"{fmt_ms(a.tuning_ms)} ({a.measured_at})")
    names = list(dict.fromkeys(k for c in a.candidates for k, _ in c.settings))
    rows = [[show_value(dict(c.settings).get(k, "")) for k in names] +
            [fmt_ms(c.compile_ms), fmt_ms(c.run_ms), "winner" if c.winner else ""]
            for c in a.candidates]
    return [Line(head, Style.MUTED),
            Table(names + ["compile", "run", ""], rows, align="l" * len(names) + "rrl",
                  title=f"{len(a.candidates)} autotune candidates",
                  marked=[i for i, c in enumerate(a.candidates) if c.winner])]


def _timings(g: KernelGroup) -> list[Node]:
    e = g.first
    cells = [("calls", str(g.calls)), ("cache hit", "yes" if e.cache_hit else "no"),
             ("compile", fmt_ms(g.compile_ms or None)), ("host dispatch", fmt_ms(g.host_ms)),
             ("device", fmt_ms(g.device_ms)), ("FLOPs", fmt_si(g.flops, "FLOP")),
             ("bytes", fmt_si(g.bytes, "B")),
             ("achieved", f"{fmt_rate(g.gflops)} GFLOP/s, {fmt_rate(g.gbps)} GB/s")]
    nodes: list[Node] = [Table([k for k, _ in cells], [[v for _, v in cells]],
                               align="r" * len(cells))]
    if len(g.events) > 1:      # (a loop's kernel is one event for all its calls)
        shown = g.events[:_DISPATCH_ROWS]
        rows = [[str(i + 1) + (f" (×{d.calls})" if d.calls != 1 else ""), fmt_ms(d.dispatch_ms),
                 fmt_ms(d.device_ms), "yes" if d.cache_hit else "no"]
                for i, d in enumerate(shown)]
        if len(g.events) > len(shown):
            rows.append([f"… {len(g.events) - len(shown)} more", "", "", ""])
        nodes.append(Table(["dispatch", "host", "device", "cache hit"], rows, align="rrrl",
                           title="each dispatch"))
    return nodes


def _io(e: KernelEvent) -> str:
    ins = ", ".join(_shape(d, s) for d, s in zip(e.input_dtypes, e.input_shapes))
    outs = ", ".join(_shape(d, s) for d, s in zip(e.output_dtypes, e.output_shapes))
    return f"({ins}) -> {outs}"


# --- the report ----------------------------------------------------------------------

ProgramLike = Any   # jaxlab.core.jit.Program: anything with .text()


class Report:
    """What ran: a summary of kernels with time bars, then each kernel's stages.

    `events` are KernelEvents (a capture() log); `program` is a jit Program (or
    a list of them) to show; `stages` picks from STAGES (None: all, folded;
    chosen ones are shown unfolded); `wall_ms` are wall times of repeated runs
    (best and median are shown); `notes` are lines for the top (data moved);
    `full_sources` keeps long generated sources whole (the live widget);
    `origins` names the jitted function (and where it is defined) of kernel keys;
    `peaks` are the measured roofs of devices (engine/roofline.py): each kernel of those
    devices is then placed under them, and plotted."""

    def __init__(self, events: Iterable[KernelEvent],
                 program: ProgramLike | Sequence[ProgramLike] | None = None, title: str = "",
                 stages: Optional[Iterable[str]] = None,
                 wall_ms: Sequence[float] = (), notes: Sequence[str] = (),
                 full_sources: bool = False, origins: Optional[dict[str, str]] = None,
                 peaks: Optional[dict[str, Roof]] = None) -> None:
        self.events = list(events)
        self.programs = [] if program is None else \
            list(program) if isinstance(program, (list, tuple)) else [program]
        self.title = title
        self.stages = tuple(STAGES if stages is None else stages)
        unknown = set(self.stages) - set(STAGES)
        if unknown:
            raise ValueError(f"unknown report stages {sorted(unknown)}; known: {', '.join(STAGES)}")
        self.open_stages = stages is not None    # asked for: shown unfolded
        self.wall_ms = list(wall_ms)
        self.notes = list(notes)
        self.full_sources = full_sources     # else long listings keep their head and tail
        self.origins = origins or {}         # kernel key -> the jitted function that ran it
        self.groups = group_events(self.events)
        self.peaks = dict(peaks or {})
        self.points = [self.point(i, g, self.peaks.get(g.first.backend))
                       for i, g in enumerate(self.groups)]
        self.listing_cap = max(_MIN_LISTING, _LISTING_BUDGET // max(len(self.groups), 1))
        self.whole_sources = self._whole_sources()
        self.provenance_rows = self._provenance_rows()

    def _whole_sources(self) -> set[int]:
        """The groups (by id) whose capped source also goes in whole, for the renderer's
        "show all lines": the shortest first, while they fit in the budget."""
        capped = sorted((len(g.first.source), id(g)) for g in self.groups
                        if g.first.source.count("\n") > self.listing_cap)
        budget = _FULL_TEXT_BUDGET // max(len(self.groups), 1)
        chosen: set[int] = set()
        spent = 0
        for size, key in capped:
            if spent + size > budget:
                break
            chosen.add(key)
            spent += size
        return chosen

    def _provenance_rows(self) -> dict[int, int]:
        """Rows of its provenance table per group (by id), for the longest kernels while
        the budget lasts (all of them in the live widget)."""
        left, rows = _PROVENANCE_ROWS, {}
        for g in sorted(self.groups, key=lambda g: -g.ms):
            lines = g.first.line_origins
            if lines is None:
                continue
            wanted = sum(1 for o in lines.lines if o)
            rows[id(g)] = wanted if self.full_sources else min(wanted, self.listing_cap, left)
            left -= rows[id(g)]
        return {k: v for k, v in rows.items() if v > 0}

    # -- the model --
    @staticmethod
    def point(i: int, g: KernelGroup, roof: Optional[Roof]) -> Optional[KernelPoint]:
        """Kernel `i` under its device's roofs (None where its time was not measured)."""
        return judge(i + 1, g.first.name, g.flops, g.bytes, g.device_ms, g.host_ms, g.calls,
                     roof)

    def devices(self) -> list[str]:
        """Every device a kernel ran on, in order of first dispatch."""
        return list(dict.fromkeys(e.backend for e in self.events))

    def totals(self) -> list[Quantity]:
        device = [e.device_ms for e in self.events]
        # autotuning measured here: at a compile (not a cache hit), not from the disk
        tuning = [e.tuning.autotuned.tuning_ms for g in self.groups for e in [g.first]
                  if e.tuning is not None and e.tuning.autotuned is not None
                  and not e.tuning.autotuned.from_cache and not e.cache_hit]
        found = [Quantity("kernels", len(self.groups), Unit.COUNT),
                 Quantity("dispatches", sum(e.calls for e in self.events), Unit.COUNT),
                 Quantity("cached", sum(e.cache_hit for e in self.events), Unit.COUNT),
                 Quantity("host", sum(e.dispatch_ms for e in self.events), Unit.MS),
                 Quantity("device", sum(device) if device and None not in device else None,
                          Unit.MS),
                 Quantity("compile", sum(e.compile_ms for e in self.events), Unit.MS),
                 Quantity("work", sum(e.flops for e in self.events), Unit.FLOP),
                 Quantity("traffic", sum(e.bytes for e in self.events), Unit.BYTES)]
        if tuning:
            found.append(Quantity("autotuning", sum(tuning), Unit.MS))
        if self.wall_ms:
            found += [Quantity("runs", len(self.wall_ms), Unit.COUNT),
                      Quantity("best wall", min(self.wall_ms), Unit.MS),
                      Quantity("median wall", statistics.median(self.wall_ms), Unit.MS)]
        return found

    def program_text(self) -> Optional[str]:
        return "\n\n".join(p.text() for p in self.programs) if self.programs else None

    # -- the view, built once --
    @functools.cached_property
    def view(self) -> Block:
        kernels = self.grouped([self.kernel_node(i, g) for i, g in enumerate(self.groups)])
        program = self.program_text()
        tail = [Fold("jit program", (Pre(capped_text(program)),), self.open_stages)] \
            if "program" in self.stages and program else []
        lines = user_lines_nodes(self.user_lines()) if "source" in self.stages else []
        head = [Fold("your code: time by line", tuple(lines), self.open_stages,
                     cls="jl-lines")] if lines else []
        return Block(tuple([Line(self.heading(), Style.TITLE), Line(self.headline(), Style.MUTED),
                            *[Line(n, Style.MUTED) for n in self.notes],
                            *([self.summary_table()] if self.groups else []),
                            *self.roofline_folds(), *self.fusion_folds(), *head, *kernels,
                            *tail]))

    def fusion_folds(self) -> list[Node]:
        story = story_nodes([g.first for g in self.groups]) if "fusion" in self.stages else []
        return [Fold("fusion story: what did not fuse, and why", tuple(story),
                     self.open_stages, cls="jl-fusion")] if story else []

    def roofline_folds(self) -> list[Node]:
        """Per device with roofs, the plot of its measured kernels."""
        folds: list[Node] = []
        for platform, roof in self.peaks.items():
            points = [p for p, g in zip(self.points, self.groups)
                      if p is not None and g.first.backend == platform]
            if points:
                folds.append(Fold(f"roofline ({platform})", tuple(roofline_nodes(roof, points)),
                                  self.open_stages, cls="jl-roofline"))
        return folds

    def user_lines(self) -> list[UserLine]:
        """The user's lines that fed kernels, with their share of the kernels' time."""
        return user_lines([(g.first, g.ms) for g in self.groups])

    def grouped(self, kernels: list[Fold]) -> list[Node]:
        """Kernel folds, those of each jitted function under its name and site."""
        nodes: list[Node] = []
        members: dict[str, list[Fold]] = {}
        for g, fold in zip(self.groups, kernels):
            origin = self.origins.get(g.first.key)
            if origin is None:
                nodes.append(fold)
                continue
            if origin not in members:
                members[origin] = []
                nodes.append(Fold(origin, (), cls="jl-function"))   # its place; filled below
            members[origin].append(fold)
        return [Fold(f"{n.label} · {_count(len(members[n.label]), 'kernel')}",
                     tuple(members[n.label]), open=True, cls=n.cls)
                if isinstance(n, Fold) and n.cls == "jl-function" else n for n in nodes]

    def heading(self) -> str:
        head = f"jaxlab report: {self.title}" if self.title else "jaxlab report"
        ran = self.devices()
        return f"{head} (ran on {', '.join(ran)})" if ran and ran != [self.title] else head

    def headline(self) -> str:
        t = {q.name: q for q in self.totals()}
        parts = [_count(t["kernels"].value, "kernel"),
                 f"{_count(t['dispatches'].value, 'dispatch')} ({t['cached'].text()} cached)",
                 f"host {t['host'].text()}", f"device {t['device'].text()}",
                 f"compile {t['compile'].text()}", t["work"].text(), t["traffic"].text()] \
            if self.events else ["no kernels ran"]
        if "autotuning" in t:
            parts.append(f"autotuning {t['autotuning'].text()}")
        if self.wall_ms:
            parts.append(f"wall over {t['runs'].text()} runs: best {t['best wall'].text()}, "
                         f"median {t['median wall'].text()}")
        return ", ".join(parts)

    def summary_table(self) -> Table:
        longest = max((g.ms for g in self.groups), default=0.0) or 1.0
        rows, keys = [], []
        for i, g in enumerate(self.groups):
            e = g.first
            rows.append([str(i + 1), e.name, e.backend, e.kind, str(g.calls), fmt_ms(g.host_ms),
                         fmt_ms(g.device_ms), fmt_rate(g.gflops), fmt_rate(g.gbps),
                         Bar(g.ms / longest)])
            keys.append([i + 1, e.name, e.backend, e.kind, g.calls, g.host_ms,
                         -1 if g.device_ms is None else g.device_ms, g.gflops or 0,
                         g.gbps or 0, g.ms])
        if self.peaks:   # the bound and the fraction of its roof (measured kernels only)
            for row, key, p in zip(rows, keys, self.points):
                row.insert(9, bound_text(p))
                key.insert(9, p.judgement.fraction if p else -1)
            return Table(["#", "kernel", "device", "kind", "calls", "host", "device time",
                          "GFLOP/s", "GB/s", "bound, of roof", "time"], rows,
                         align="rllllrrrrll", keys=keys, name="kernels")
        return Table(["#", "kernel", "device", "kind", "calls", "host", "device time",
                      "GFLOP/s", "GB/s", "time"], rows, align="rllllrrrrl", keys=keys,
                     name="kernels")

    def kernel_node(self, i: int, g: KernelGroup) -> Fold:
        e = g.first
        calls = f" · {g.calls} calls" if g.calls > 1 else ""
        label = f"{i + 1}. {e.name} · {e.backend} · {e.kind}{calls} · {fmt_ms(g.ms)}"
        head = Line(f"{_io(e)} · cache hit: {'yes' if e.cache_hit else 'no'} · "
                    f"reason: {e.reason or '-'}", Style.MUTED)
        stages = [s for s in (self.stage_node(g, name) for name in self.stages) if s]
        return Fold(label, (head, *stages), open=len(self.groups) == 1 or self.open_stages,
                    cls="jl-kernel")

    def stage_node(self, g: KernelGroup, name: str) -> Optional[Fold]:
        """One stage of one kernel (open if the stages were chosen); None where the
        kernel has nothing for it (and for the program, which is the cell's)."""
        e = g.first
        found: Optional[tuple[str, list[Node]]] = None
        if name == "jaxpr" and e.equations:
            found = f"jaxpr equations ({len(e.equations)})", \
                [Pre(capped_text(equations_text(e)))]
        elif name == "ir" and e.ir:
            found = "IR", [Pre(capped_text(e.ir))]
        elif name == "tuned" and e.tuned_ir:
            found = "IR after tuning", [Pre(capped_text(e.tuned_ir))]
        elif name == "tuning" and e.tuning is not None and e.tuning.choices:
            found = "tuning", tuning_nodes(e.tuning)
        elif name == "pipeline" and e.pipeline is not None and \
                (self.open_stages or self.full_sources or len(self.groups) <= _PIPELINE_KERNELS):
            found = "pipeline: lowered, simplified, tuned, rendered", pipeline_nodes(e)
        elif name == "source" and e.source:
            language = e.source_language or "text"
            cap = None if self.full_sources else self.listing_cap
            rows = self.provenance_rows.get(id(g))
            table = generated_lines_table(e, rows) if rows else None
            found = f"source ({language})", [code(e.source, language, cap=cap,
                                                  keep_full=id(g) in self.whole_sources),
                                             *([table] if table else [])]
        elif name == "timings":
            found = "timings", _timings(g)
        if found is None:
            return None
        return Fold(found[0], tuple(found[1]), self.open_stages)

    # -- the three renderings --
    def text(self) -> str:
        return to_text(self.view)

    def html(self) -> Html:
        """The report as a self-contained, script-free HTML fragment."""
        return page(to_html(self.view))

    def data(self) -> dict[str, Any]:
        """The report as JSON-ready data: the model's numbers (for programs) and the
        view (what the renderer draws)."""
        return jsonable({
            "version": VERSION, "title": self.title, "heading": self.heading(),
            "devices": self.devices(), "stages": self.stages,
            "totals": [q.to_json() for q in self.totals()],
            "kernels": [{"name": g.first.name, "backend": g.first.backend, "kind": g.first.kind,
                         "key": g.first.key, "source_language": g.first.source_language,
                         "calls": g.calls, "host_ms": g.host_ms, "device_ms": g.device_ms,
                         "compile_ms": g.compile_ms, "flops": g.flops, "bytes": g.bytes,
                         "dispatch_ms": [e.dispatch_ms for e in g.events],
                         "bound": p and p.judgement.bound.value,
                         "intensity": p and p.judgement.intensity,
                         "fraction_of_roof": p and p.judgement.fraction}
                        for g, p in zip(self.groups, self.points)],
            "roofs": {k: r.to_json() for k, r in self.peaks.items()},
            "lines": [vars(u) for u in self.user_lines()],
            "program": self.program_text(), "view": to_json(self.view)})

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html(), MIME: self.data()}

    __str__ = text


def _count(n: Optional[float], noun: str) -> str:
    n = int(n or 0)
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("h") else "s")


def indent(text: str, by: str = "  ") -> str:
    return "\n".join(by + line for line in text.splitlines())


# --- two reports side by side -----------------------------------------------------------

class Comparison:
    """Two reports of the same work (e.g. two backends) side by side, with a
    table of per-kernel times matched by kernel name and their ratio."""

    def __init__(self, left: Report, right: Report) -> None:
        self.left, self.right = left, right

    def times_table(self) -> Table:
        left = _times_by_name(self.left)
        right = _times_by_name(self.right)
        rows, keys = [], []
        for name in dict.fromkeys([*left, *right]):
            a, b = left.get(name), right.get(name)
            ratio = b / a if a and b else None
            rows.append([name, fmt_ms(a), fmt_ms(b), "-" if ratio is None else f"{ratio:.2f}x"])
            keys.append([name, a or 0, b or 0, ratio or 0])
        return Table(["kernel", self.left.title or "left", self.right.title or "right",
                      "right / left"], rows, align="lrrr", title="time per kernel", keys=keys,
                     name="compare")

    @functools.cached_property
    def view(self) -> Block:
        return Block((self.times_table(), Columns((self.left.view, self.right.view))))

    def text(self) -> str:
        return to_text(self.view)

    def html(self) -> Html:
        return page(to_html(self.view))

    def data(self) -> dict[str, Any]:
        return {"version": VERSION, "compare": [self.left.data(), self.right.data()],
                "view": to_json(self.view)}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html(), MIME: self.data()}

    __str__ = text


def _times_by_name(report: Report) -> dict[str, float]:
    times: dict[str, float] = {}
    for g in report.groups:
        times[g.first.name] = times.get(g.first.name, 0.0) + g.ms
    return times


# --- a link to a file the lab wrote --------------------------------------------------

class FileLink:
    """A file (a trace) as its path in text and an <a href> in HTML; a relative
    path resolves against the notebook's folder, as IPython's FileLink does."""

    def __init__(self, path: str, label: str, hint: str = "") -> None:
        self.path, self.label, self.hint = path, label, hint

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        link = markup('{label}: <a href="{href}" target="_blank">{path}</a> '
                      '<span class="jl-muted">{hint}</span>', label=self.label,
                      href=urllib.parse.quote(self.path), path=self.path, hint=self.hint)
        return {"text/plain": f"{self.label}: {self.path} {self.hint}".rstrip(),
                "text/html": page(link)}


# --- compile errors --------------------------------------------------------------------

_LINE_COL = re.compile(r":(\d+):(\d+)")


class ErrorReport:
    """An exception shown as a report: its message and, where it carries the
    generated source (`.source`), that source with the faulty lines marked.
    Lines come from `.line` / `.lineno` or from `:LINE:COL` in the message."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.message = str(exc)
        source = getattr(exc, "source", None)
        self.source = source if isinstance(source, str) else ""
        self.language = getattr(exc, "language", "") or _guess_language(self.source)
        n = len(self.source.splitlines())
        self.lines = sorted(line for line in fault_lines(exc) if 1 <= line <= n)

    @property
    def title(self) -> str:
        return type(self.exc).__name__

    def excerpt(self) -> range:
        """0-based indices of the source lines to show: around the faults, or all."""
        n = len(self.source.splitlines())
        if not self.lines:
            return range(n)
        return range(max(0, self.lines[0] - 1 - _CONTEXT_LINES),
                     min(n, self.lines[-1] + _CONTEXT_LINES))

    def text(self) -> str:
        out = [self.title, self.message]
        if self.source:
            src = self.source.splitlines()
            width = len(str(len(src)))
            out += ["", f"generated {self.language} source:"] + [
                f"{'>' if i + 1 in self.lines else ' '} {i + 1:>{width}} | {src[i]}"
                for i in self.excerpt()]
        return "\n".join(out)

    def html(self) -> Html:
        listing: list[Node] = []
        if self.source:
            label = (f"source ({self.language}), fault at line "
                     f"{', '.join(map(str, self.lines))}" if self.lines
                     else f"source ({self.language})")
            listing.append(Fold(label, (code(self.source, self.language, self.lines,
                                             self.excerpt()),), open=True))
            if self.lines:
                listing.append(Fold(f"whole source ({self.language})",
                                    (code(self.source, self.language, self.lines, cap=None),)))
        return page(to_html(Block((Line(self.title, Style.TITLE), Pre(self.message),
                                   *listing))))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html()}

    __str__ = text


def fault_lines(exc: BaseException) -> set[int]:
    """1-based source lines an exception names: `.line`, `.lineno`, `:LINE:COL`."""
    lines = {v for v in (getattr(exc, "line", None), getattr(exc, "lineno", None))
             if isinstance(v, int)}
    lines |= {int(m.group(1)) for m in _LINE_COL.finditer(str(exc))}
    return lines


def _guess_language(source: str) -> str:
    text = source.lstrip()
    if text.startswith("(module"):
        return "wat"
    return "wgsl" if "@compute" in text or "fn " in text else "text"
