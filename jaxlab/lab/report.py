"""Reports of what the engine did, from KernelEvents.

`Report` renders three ways through `_repr_mimebundle_`: text/plain for a
terminal, script-free text/html (scoped CSS, <details> per stage) that reads in
JupyterLab, nbconvert, GitHub and nbviewer, and the report as JSON data for a
front end. `Comparison` puts two reports side by side; `ErrorReport` shows a
compile error with the faulty source lines marked; `Table` is the small table
the magics print.

Every string that can come from user code goes through `markup`, which escapes
whatever is not already `Html`.
"""
from __future__ import annotations

import html
import math
import re
import statistics
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union

from jaxlab.events import KernelEvent
from jaxlab.lab.lexers import highlight_lines, token_css

MIME = "application/vnd.jaxlab.report+json"
VERSION = 1
STAGES = ("jaxpr", "ir", "tuned", "tuning", "source", "timings", "program")
_BAR_CHARS = 20          # width of a time bar in the text report
_CONTEXT_LINES = 5       # source lines shown around a compile error


# --- HTML: escape by default ---------------------------------------------------------

class Html(str):
    """Text that is already HTML: `markup` inserts it as is."""


def markup(template: str, **values: Any) -> Html:
    """`template.format(**values)` with every value escaped unless it is Html."""
    return Html(template.format(**{k: v if isinstance(v, Html) else html.escape(str(v))
                                   for k, v in values.items()}))


def join(parts: Iterable[str]) -> Html:
    return Html("".join(parts))


# Palettes: light and dark; JupyterLab's and VS Code's own theme flags win over
# the OS preference, so the colours match the page they sit on.
_LIGHT = {"fg": "#1f2328", "bg": "#ffffff", "muted": "#59636e", "border": "#d1d9e0",
          "code-bg": "#f6f8fa", "bar": "#3b82f6", "fault": "#ffe4e1", "winner": "#dcfce7",
          "comment": "#6e7781", "keyword": "#cf222e", "type": "#8250df", "builtin": "#0550ae",
          "function": "#6639ba", "variable": "#953800", "number": "#0a7c7c",
          "string": "#0a3069", "operator": "#1f2328", "error": "#d1242f"}
_DARK = {"fg": "#e6edf3", "bg": "#0d1117", "muted": "#9198a1", "border": "#3d444d",
         "code-bg": "#161b22", "bar": "#60a5fa", "fault": "#5c1a1a", "winner": "#14532d",
         "comment": "#8b949e", "keyword": "#ff7b72", "type": "#d2a8ff", "builtin": "#79c0ff",
         "function": "#d2a8ff", "variable": "#ffa657", "number": "#56d4dd",
         "string": "#a5d6ff", "operator": "#e6edf3", "error": "#ff7b72"}

_ROOT = ".jaxlab-report"
_LAYOUT_CSS = """
.jaxlab-report { color: var(--jp-content-font-color1, var(--jl-fg));
  background: var(--jp-layout-color0, var(--jl-bg)); padding: 6px 8px;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; line-height: 1.4; }
.jaxlab-report .jl-title { font-weight: 600; font-size: 14px; }
.jaxlab-report .jl-muted { color: var(--jp-content-font-color2, var(--jl-muted)); }
.jaxlab-report table { border-collapse: collapse; margin: 4px 0; color: inherit; font-size: inherit; }
.jaxlab-report th, .jaxlab-report td { padding: 2px 8px; text-align: left; vertical-align: top;
  border-bottom: 1px solid var(--jp-border-color2, var(--jl-border)); }
.jaxlab-report td.jl-num, .jaxlab-report th.jl-num { text-align: right; font-variant-numeric: tabular-nums; }
.jaxlab-report .jl-barcell { width: 160px; }
.jaxlab-report .jl-bar { display: block; height: 10px; min-width: 1px; background: var(--jl-bar); border-radius: 2px; }
.jaxlab-report tr.jl-winner td { background: var(--jl-winner); }
.jaxlab-report details { margin: 4px 0; }
.jaxlab-report details details, .jaxlab-report details.jl-kernel > table { margin-left: 14px; }
.jaxlab-report summary { cursor: pointer; }
.jaxlab-report pre { margin: 2px 0; padding: 6px 8px; overflow-x: auto; font-size: 12px;
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  background: var(--jl-code-bg); color: var(--jl-fg); border-radius: 3px; }
.jaxlab-report .jl-line { display: block; }
.jaxlab-report .jl-ln { display: inline-block; min-width: 3em; padding-right: 1em; text-align: right;
  color: var(--jl-muted); user-select: none; }
.jaxlab-report .jl-fault { background: var(--jl-fault); }
.jaxlab-report .jl-compare > tbody > tr > td { border: none; padding: 0 6px; width: 50%; }
"""


def _palette(selector: str, colours: dict[str, str]) -> str:
    return selector + " { " + " ".join(f"--jl-{k}: {v};" for k, v in colours.items()) + " }"


def _stylesheet() -> str:
    light_flags = ", ".join(f"{flag} {_ROOT}" for flag in
                            ('body[data-jp-theme-light="true"]', "body.vscode-light"))
    dark_flags = ", ".join(f"{flag} {_ROOT}" for flag in
                           ('body[data-jp-theme-light="false"]', "body.vscode-dark"))
    return "\n".join([
        _palette(_ROOT, _LIGHT),
        "@media (prefers-color-scheme: dark) { " + _palette(_ROOT, _DARK) + " }",
        _palette(light_flags, _LIGHT), _palette(dark_flags, _DARK),
        _LAYOUT_CSS.strip(), token_css(f"{_ROOT} .jl-code")])


STYLE = Html("<style>" + _stylesheet() + "</style>")


def page(body: Html) -> Html:
    """`body` inside the report's root element, with its scoped stylesheet."""
    return markup('<div class="jaxlab-report">{style}{body}</div>', style=STYLE, body=body)


def details(label: str, body: Html, open_: bool = False, cls: str = "jl-stage") -> Html:
    return markup('<details class="{cls}"{open}><summary>{label}</summary>{body}</details>',
                  cls=cls, open=Html(" open" if open_ else ""), label=label, body=body)


def pre(text: str) -> Html:
    return markup('<pre class="jl-pre">{text}</pre>', text=text)


def code(source: str, language: str, marked: Iterable[int] = (),
         lines: Optional[range] = None) -> Html:
    """Highlighted, numbered source; `marked` lines (1-based) are shaded as
    faulty; `lines` (0-based) picks an excerpt."""
    marked = set(marked)
    highlighted = highlight_lines(source, language)
    picked = lines if lines is not None else range(len(highlighted))
    body = join(markup('<span class="jl-line{cls}"><span class="jl-ln">{n}</span>{code}</span>',
                       cls=" jl-fault" if i + 1 in marked else "", n=i + 1,
                       code=Html(highlighted[i]))
                for i in picked)
    return markup('<pre class="jl-code">{body}</pre>', body=body)


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


# --- tables ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Bar:
    """A table cell drawn as a bar `fraction` of the column wide."""
    fraction: float


Cell = Union[str, Bar]


class Table:
    """Rows of cells as aligned text or an HTML table; `align` has one letter
    per column, 'l' or 'r'; `marked` rows are highlighted (an autotune winner)."""

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str = "",
                 title: str = "", marked: Iterable[int] = ()) -> None:
        self.headers, self.rows, self.title = list(headers), [list(r) for r in rows], title
        self.align = align.ljust(len(self.headers), "l")
        self.marked = set(marked)

    def text(self) -> str:
        cells = [self.headers] + [[_cell_text(c) for c in row] for row in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.headers))]
        lines = [self.title] if self.title else []
        for n, row in enumerate(cells):
            mark = ("*" if n - 1 in self.marked else " ") if self.marked else ""
            lines.append(mark + "  ".join(c.rjust(w) if a == "r" else c.ljust(w)
                                         for c, w, a in zip(row, widths, self.align)).rstrip())
        return "\n".join(lines)

    def html(self) -> Html:
        def row_html(tag: str, row: Sequence[Cell], n: int) -> Html:
            tds = join(markup('<{tag}{cls}>{c}</{tag}>', tag=tag, c=_cell_html(c),
                              cls=Html(' class="jl-barcell"' if isinstance(c, Bar) else
                                       ' class="jl-num"' if a == "r" else ""))
                       for c, a in zip(row, self.align))
            return markup('<tr{cls}>{tds}</tr>', tds=tds,
                          cls=Html(' class="jl-winner"' if n in self.marked else ""))
        caption = markup('<div class="jl-title">{t}</div>', t=self.title) if self.title else ""
        return markup('{caption}<table><thead>{head}</thead><tbody>{body}</tbody></table>',
                      caption=Html(caption), head=row_html("th", self.headers, -1),
                      body=join(row_html("td", r, n) for n, r in enumerate(self.rows)))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": page(self.html())}


def _cell_text(c: Cell) -> str:
    return "#" * max(1, round(c.fraction * _BAR_CHARS)) if isinstance(c, Bar) else c


def _cell_html(c: Cell) -> Html:
    if isinstance(c, Bar):
        return markup('<span class="jl-bar" style="width: {pct}%"></span>',
                      pct=f"{100 * c.fraction:.1f}")
    return markup("{c}", c=c)


# --- kernels: the dispatches of one compiled kernel --------------------------------------

class KernelGroup:
    """Every dispatch of one kernel (same backend and structure) in a report."""

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
    """A record (tuning choices, backend info) as (key, value) rows: nested dicts
    under dotted keys, lists joined with commas."""
    rows = []
    for k, v in record.items():
        if isinstance(v, dict):
            rows += flatten(v, f"{prefix}{k}.")
        elif isinstance(v, (list, tuple)):
            rows.append((f"{prefix}{k}", ", ".join(map(str, v))))
        else:
            rows.append((f"{prefix}{k}", str(v)))
    return rows


def _tuning_rows(tuning: dict[str, Any]) -> list[tuple[str, str]]:
    return flatten({k: v for k, v in tuning.items() if k != "candidates"})


def candidates_table(candidates: Sequence[dict[str, Any]]) -> Table:
    """Autotune candidates: their configuration, time and the winner marked."""
    keys = list(dict.fromkeys(k for c in candidates for k in c if k not in ("ms", "winner")))
    rows = [[str(c.get(k, "")) for k in keys] + [fmt_ms(c.get("ms")),
                                                 "winner" if c.get("winner") else ""]
            for c in candidates]
    return Table(keys + ["time", ""], rows, align="l" * len(keys) + "rl",
                 title=f"{len(candidates)} autotune candidates",
                 marked=[i for i, c in enumerate(candidates) if c.get("winner")])


def _timing_rows(g: KernelGroup) -> list[tuple[str, str]]:
    e = g.first
    return [("calls", str(g.calls)), ("cache hit", "yes" if e.cache_hit else "no"),
            ("compile", fmt_ms(g.compile_ms or None)), ("host dispatch", fmt_ms(g.host_ms)),
            ("device", fmt_ms(g.device_ms)), ("FLOPs", fmt_si(g.flops, "FLOP")),
            ("bytes", fmt_si(g.bytes, "B")), ("achieved", f"{fmt_rate(g.gflops)} GFLOP/s, "
                                                         f"{fmt_rate(g.gbps)} GB/s")]


def _io(e: KernelEvent) -> str:
    ins = ", ".join(_shape(d, s) for d, s in zip(e.input_dtypes, e.input_shapes))
    outs = ", ".join(_shape(d, s) for d, s in zip(e.output_dtypes, e.output_shapes))
    return f"({ins}) -> {outs}"


# --- the report ----------------------------------------------------------------------

ProgramLike = Any   # jaxlab.core.jit.Program: anything with .text()


class Report:
    """What ran: a summary of kernels with time bars, then each kernel's stages.

    `events` are KernelEvents (a capture() log); `program` is a jit Program (or
    a list of them) to show; `stages` picks from STAGES (None: all, folded);
    `wall_ms` are wall times of repeated runs (best and median are shown)."""

    def __init__(self, events: Iterable[KernelEvent],
                 program: ProgramLike | Sequence[ProgramLike] | None = None, title: str = "",
                 stages: Optional[Iterable[str]] = None,
                 wall_ms: Sequence[float] = ()) -> None:
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
        self.groups = group_events(self.events)

    # -- data --
    def totals(self) -> dict[str, Any]:
        device = [e.device_ms for e in self.events]
        return {"kernels": len(self.groups), "dispatches": len(self.events),
                "cache_hits": sum(e.cache_hit for e in self.events),
                "compile_ms": sum(e.compile_ms for e in self.events),
                "dispatch_ms": sum(e.dispatch_ms for e in self.events),
                "device_ms": sum(device) if device and None not in device else None,
                "flops": sum(e.flops for e in self.events),
                "bytes": sum(e.bytes for e in self.events)}

    def program_text(self) -> Optional[str]:
        return "\n\n".join(p.text() for p in self.programs) if self.programs else None

    def data(self) -> dict[str, Any]:
        """The whole report as JSON-ready data (the MIME bundle's JSON)."""
        wall = {"runs": len(self.wall_ms), "best_ms": min(self.wall_ms),
                "median_ms": statistics.median(self.wall_ms), "all_ms": self.wall_ms} \
            if self.wall_ms else None
        return jsonable({"version": VERSION, "title": self.title,
                         "kernels": [e.to_dict() for e in self.events],
                         "program": self.program_text(), "totals": self.totals(),
                         "stages": self.stages, "wall": wall})

    # -- shared pieces of text and HTML --
    def _headline(self) -> str:
        t = self.totals()
        parts = [f"{t['kernels']} kernels", f"{t['dispatches']} dispatches "
                 f"({t['cache_hits']} cached)", f"host {fmt_ms(t['dispatch_ms'])}",
                 f"device {fmt_ms(t['device_ms'])}", f"compile {fmt_ms(t['compile_ms'])}",
                 fmt_si(t["flops"], "FLOP"), fmt_si(t["bytes"], "B")] \
            if self.events else ["no kernels ran"]
        if self.wall_ms:
            parts.append(f"wall over {len(self.wall_ms)} runs: best {fmt_ms(min(self.wall_ms))},"
                         f" median {fmt_ms(statistics.median(self.wall_ms))}")
        return ", ".join(parts)

    def summary_table(self) -> Table:
        longest = max((g.ms for g in self.groups), default=0.0) or 1.0
        rows = [[str(i + 1), g.first.name, g.first.backend, g.first.kind, str(g.calls),
                 fmt_ms(g.host_ms), fmt_ms(g.device_ms), fmt_rate(g.gflops), fmt_rate(g.gbps),
                 Bar(g.ms / longest)] for i, g in enumerate(self.groups)]
        return Table(["#", "kernel", "backend", "kind", "calls", "host", "device", "GFLOP/s",
                      "GB/s", "time"], rows, align="rllllrrrrl")

    def _title(self) -> str:
        return f"jaxlab report: {self.title}" if self.title else "jaxlab report"

    # -- text --
    def text(self) -> str:
        out = [self._title(), self._headline()]
        if self.groups:
            out += ["", self.summary_table().text()]
        for i, g in enumerate(self.groups):
            out += ["", self._kernel_text(i, g)]
        if "program" in self.stages and self.programs:
            out += ["", "jit program:", indent(self.program_text() or "")]
        return "\n".join(out)

    def _kernel_text(self, i: int, g: KernelGroup) -> str:
        e = g.first
        out = [f"-- {i + 1}. {e.name} · {e.backend} · {e.kind} {'-' * 20}",
               f"  {_io(e)}", f"  reason: {e.reason or '-'}"]
        for name in self.stages:
            stage = self._stage(g, name)
            if name == "timings":
                out.append("  timings: " + ", ".join(f"{k} {v}" for k, v in _timing_rows(g)))
            elif stage is not None:
                label, text, _ = stage
                out += [f"  {label}:", indent(text, "    ")]
        return "\n".join(out)

    def _stage(self, g: KernelGroup, name: str) -> Optional[tuple[str, str, Html]]:
        """(label, text, HTML) of one stage of a kernel; None where it has none
        (and for timings and program, which are laid out on their own)."""
        e = g.first
        if name == "jaxpr" and e.equations:
            text = "\n".join(e.equations)
            return f"jaxpr equations ({len(e.equations)})", text, pre(text)
        if name == "ir" and e.ir:
            return "IR", e.ir, pre(e.ir)
        if name == "tuned" and e.tuned_ir:
            return "IR after tuning", e.tuned_ir, pre(e.tuned_ir)
        if name == "tuning" and e.tuning:
            tables = [Table(["choice", "value"], _tuning_rows(e.tuning))]
            if e.tuning.get("candidates"):
                tables.append(candidates_table(e.tuning["candidates"]))
            return "tuning", "\n".join(t.text() for t in tables), join(t.html() for t in tables)
        if name == "source" and e.source:
            language = e.source_language or "text"
            return f"source ({language})", e.source, code(e.source, language)
        return None

    # -- HTML --
    def html(self) -> Html:
        """The report as a self-contained, script-free HTML fragment."""
        return page(self.body_html())

    def body_html(self) -> Html:
        """The report without its root element and stylesheet (for embedding)."""
        kernels = join(self._kernel_html(i, g) for i, g in enumerate(self.groups))
        program = details("jit program", pre(self.program_text() or ""), self.open_stages) \
            if "program" in self.stages and self.programs else Html("")
        return markup('<div class="jl-title">{title}</div><div class="jl-muted">{headline}</div>'
                      '{summary}{kernels}{program}', title=self._title(),
                      headline=self._headline(),
                      summary=self.summary_table().html() if self.groups else Html(""),
                      kernels=kernels, program=program)

    def _kernel_html(self, i: int, g: KernelGroup) -> Html:
        e = g.first
        head = markup('<div class="jl-muted">{io} · cache hit: {hit} · reason: {reason}</div>',
                      io=_io(e), hit="yes" if e.cache_hit else "no", reason=e.reason or "-")
        stages = join(self.stage_html(g, name) for name in self.stages if name != "program")
        label = f"{i + 1}. {e.name} · {e.backend} · {e.kind} · {fmt_ms(g.ms)}"
        return details(label, join([head, stages]), open_=len(self.groups) == 1,
                       cls="jl-kernel")

    def stage_html(self, g: KernelGroup, name: str) -> Html:
        """One stage of one kernel: a <details> (open if the stages were chosen), or
        the timings table; empty where the kernel has nothing for that stage."""
        if name == "timings":
            rows = _timing_rows(g)
            return Table([k for k, _ in rows], [[v for _, v in rows]],
                         align="r" * len(rows)).html()
        stage = self._stage(g, name)
        return details(stage[0], stage[2], self.open_stages) if stage else Html("")

    _stage_html = stage_html   # the name jaxlab/lab/widgets.py calls it by

    # -- IPython --
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html(), MIME: self.data()}

    __str__ = text


def indent(text: str, by: str = "  ") -> str:
    return "\n".join(by + line for line in text.splitlines())


# --- two reports side by side -----------------------------------------------------------

class Comparison:
    """Two reports of the same work (e.g. two backends) side by side, with a
    table of per-kernel times matched by kernel name."""

    def __init__(self, left: Report, right: Report) -> None:
        self.left, self.right = left, right

    def times_table(self) -> Table:
        left = _times_by_name(self.left)
        right = _times_by_name(self.right)
        rows = []
        for name in dict.fromkeys([*left, *right]):
            a, b = left.get(name), right.get(name)
            ratio = f"{b / a:.2f}x" if a and b else "-"
            rows.append([name, fmt_ms(a), fmt_ms(b), ratio])
        return Table(["kernel", self.left.title or "left", self.right.title or "right",
                      "right / left"], rows, align="lrrr", title="time per kernel")

    def text(self) -> str:
        return "\n\n".join([self.times_table().text(), self.left.text(), self.right.text()])

    def html(self) -> Html:
        return page(markup('{times}<table class="jl-compare"><tbody><tr><td>{left}</td>'
                           '<td>{right}</td></tr></tbody></table>',
                           times=self.times_table().html(), left=self.left.body_html(),
                           right=self.right.body_html()))

    def data(self) -> dict[str, Any]:
        return {"version": VERSION, "compare": [self.left.data(), self.right.data()]}

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
        listing = Html("")
        if self.source:
            label = (f"source ({self.language}), fault at line "
                     f"{', '.join(map(str, self.lines))}" if self.lines
                     else f"source ({self.language})")
            listing = details(label, code(self.source, self.language, self.lines, self.excerpt()),
                              open_=True)
            if self.lines:
                listing = join([listing, details(f"whole source ({self.language})",
                                                 code(self.source, self.language, self.lines))])
        return page(markup('<div class="jl-title">{title}</div>{message}{listing}',
                           title=self.title, message=pre(self.message), listing=listing))

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
