"""The display vocabulary every lab view is made of, and its three renderings.

A report is built once as a tree of these nodes (Line, Table, Code, Pre, Fold,
Columns, Block); `text()` renders it for a terminal, `html()` as script-free
HTML with scoped CSS (JupyterLab, nbconvert, GitHub, nbviewer), and `to_json()`
as the data the JupyterLab renderer in extension/ draws with the same elements
and classes. Numbers are formatted once, here or before, so the views cannot
disagree. Every string that can come from user code goes through `markup`,
which escapes whatever is not already `Html`.
"""
from __future__ import annotations

import enum
import html
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union

from pygments import lex
from pygments.token import STANDARD_TYPES, _TokenType

from jaxlab.lab.lexers import lexer_for, role, token_css

_BAR_CHARS = 20          # width of a time bar in the text view
MAX_LINES = 40           # a longer listing keeps a third of these from its head and the
                         # rest from its tail (a WAT module ends with its kernel)


# --- HTML: escape by default ---------------------------------------------------------

class Html(str):
    """Text that is already HTML: `markup` inserts it as is."""


def markup(template: str, **values: Any) -> Html:
    """`template.format(**values)` with every value escaped unless it is Html."""
    return Html(template.format(**{k: v if isinstance(v, Html) else html.escape(str(v))
                                   for k, v in values.items()}))


def join(parts: Iterable[str]) -> Html:
    return Html("".join(parts))


# --- nodes ------------------------------------------------------------------------------

class Style(enum.Enum):
    PLAIN = ""
    TITLE = "jl-title"
    MUTED = "jl-muted"


@dataclass(frozen=True)
class Line:
    """A line of text."""
    text: str
    style: Style = Style.PLAIN


@dataclass(frozen=True)
class Bar:
    """A table cell drawn as a bar `fraction` of the column wide."""
    fraction: float


Cell = Union[str, Bar]


@dataclass(frozen=True)
class Table:
    """Rows of cells; `align` has one letter per column, 'l' or 'r'; `marked`
    rows are highlighted (an autotune winner); `keys` (one per cell) make the
    live view sortable; `name` tells the live view what the table is."""
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    align: str = ""
    title: str = ""
    marked: frozenset[int] = frozenset()
    keys: Optional[tuple[tuple[Union[float, str], ...], ...]] = None
    name: str = ""
    links: Optional[tuple[tuple[str, ...], ...]] = None

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[Cell]], align: str = "",
                 title: str = "", marked: Iterable[int] = (),
                 keys: Optional[Sequence[Sequence[Union[float, str]]]] = None,
                 name: str = "", links: Optional[Sequence[Sequence[str]]] = None) -> None:
        """`links`: per row, the places it stands for (user lines); the live view lights
        every row of the report sharing one while the pointer is on a row."""
        set_ = object.__setattr__      # frozen: set once, here
        set_(self, "headers", tuple(headers))
        set_(self, "rows", tuple(tuple(r) for r in rows))
        set_(self, "align", align.ljust(len(self.headers), "l"))
        set_(self, "title", title)
        set_(self, "marked", frozenset(marked))
        set_(self, "keys", None if keys is None else tuple(tuple(k) for k in keys))
        set_(self, "name", name)
        set_(self, "links", None if links is None else tuple(tuple(k) for k in links))

    def text(self) -> str:
        return to_text(self)

    def html(self) -> Html:
        return to_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": page(self.html())}


@dataclass(frozen=True)
class CodeLine:
    number: int                               # 1-based, in the whole source
    tokens: tuple[tuple[str, str], ...]       # (Pygments short class, text)
    marked: bool = False


@dataclass(frozen=True)
class Gap:
    """Lines left out of a long listing."""
    count: int


@dataclass(frozen=True)
class Code:
    """Highlighted, numbered source (possibly an excerpt, with gaps); `full` is the
    whole text of a capped listing where it was small enough to embed, for the live
    renderer's "show all lines" (the static HTML stays capped)."""
    language: str
    lines: tuple[Union[CodeLine, Gap], ...]
    full: Optional[str] = None


@dataclass(frozen=True)
class Pre:
    """Preformatted text (IR, equations, a program)."""
    text: str


@dataclass(frozen=True)
class Fold:
    """A titled section that opens and closes (a <details>)."""
    label: str
    children: tuple["Node", ...]
    open: bool = False
    cls: str = "jl-stage"


@dataclass(frozen=True)
class Columns:
    """Views side by side (the two runs of a comparison)."""
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Block:
    """Nodes one after another."""
    children: tuple["Node", ...]


class MarkKind(enum.Enum):
    LINE = "line"
    CIRCLE = "circle"
    TEXT = "text"
    RECT = "rect"


@dataclass(frozen=True)
class Mark:
    """One mark of a figure, in pixels (y down): a line (x, y)-(x2, y2), a circle of
    radius r (its `text` is a tooltip), text at (x, y), a rect (x, y)-(x2, y2)."""
    kind: MarkKind
    x: float
    y: float
    x2: float = 0.0
    y2: float = 0.0
    r: float = 0.0
    text: str = ""
    cls: str = ""


@dataclass(frozen=True)
class Figure:
    """A small plot (a roofline, a fusion graph): SVG in the static HTML, the same marks
    drawn by the renderer; `title` says in words what it shows (the text view)."""
    width: int
    height: int
    marks: tuple[Mark, ...]
    title: str


Node = Union[Line, Table, Code, Pre, Fold, Columns, Block, Figure]


# --- source listings ----------------------------------------------------------------------

def code(source: str, language: str, marked: Iterable[int] = (),
         lines: Optional[range] = None, cap: Optional[int] = MAX_LINES,
         keep_full: bool = False) -> Code:
    """`source` highlighted; `marked` lines (1-based) shaded as faulty; `lines`
    (0-based) picks an excerpt; a listing longer than `cap` lines keeps its head
    and tail around a gap (None: whole), and with `keep_full` its whole text too."""
    marked = set(marked)
    raw = source.splitlines()
    picked: list[Optional[int]] = list(lines if lines is not None else range(len(raw)))
    head, tail = _head_tail(cap)
    if cap is not None and len(picked) > cap + 1:
        picked = picked[:head] + [None] + picked[-tail:]
    # only the lines shown are highlighted (lexing is most of a report's cost), each run
    # of consecutive lines at once
    tokens: dict[int, tuple[tuple[str, str], ...]] = {}
    for run in _runs([i for i in picked if i is not None]):
        tokens.update(zip(run, tokenize("\n".join(raw[run[0]:run[-1] + 1]), language)))
    omitted = len(raw) - head - tail if None in picked else 0
    full = source if omitted and keep_full else None
    return Code(language, tuple(Gap(omitted) if i is None else
                                CodeLine(i + 1, tokens.get(i, ()), i + 1 in marked)
                                for i in picked), full)


def _runs(indices: list[int]) -> list[list[int]]:
    """Consecutive stretches of sorted indices."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _head_tail(cap: Optional[int]) -> tuple[int, int]:
    head = (cap or 0) // 3
    return head, (cap or 0) - head


def tokenize(source: str, language: str) -> list[tuple[tuple[str, str], ...]]:
    """Per line, (token class, text) runs (the class as Pygments' HTML names it)."""
    lines: list[list[tuple[str, str]]] = [[]]
    for ttype, value in lex(source, lexer_for(language)):
        cls = _short(ttype)
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append([])
            line = lines[-1]
            if part and line and line[-1][0] == cls:    # one span per run of a class
                line[-1] = (cls, line[-1][1] + part)
            elif part:
                line.append((cls, part))
    if lines and not lines[-1] and source.endswith("\n") or source == "":
        lines.pop()
    return [tuple(line) for line in lines]


def _short(ttype: _TokenType) -> str:
    """The token's class where the stylesheet colours it; '' (plain text) elsewhere."""
    if role(ttype) is None:
        return ""
    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    return STANDARD_TYPES.get(ttype, "")


def capped_text(text: str, cap: int = MAX_LINES) -> str:
    """Plain text with the same head-and-tail cap as listings."""
    lines = text.splitlines()
    if len(lines) <= cap + 1:
        return text
    head, tail = _head_tail(cap)
    return "\n".join(lines[:head] + [gap_text(len(lines) - head - tail)] + lines[-tail:])


def gap_text(count: int) -> str:
    return f"… {count} lines omitted …"


# --- text ---------------------------------------------------------------------------------

def to_text(node: Node, depth: int = 0) -> str:
    pad = "  " * depth
    if isinstance(node, Line):
        return pad + node.text
    if isinstance(node, Table):
        return _table_text(node, pad)
    if isinstance(node, Code):
        width = len(str(max((ln.number for ln in node.lines if isinstance(ln, CodeLine)),
                            default=1)))
        return "\n".join(pad + (gap_text(ln.count) if isinstance(ln, Gap) else
                                f"{'>' if ln.marked else ' '}{ln.number:>{width}} | "
                                + "".join(t for _, t in ln.tokens))
                         for ln in node.lines)
    if isinstance(node, Pre):
        return "\n".join(pad + line for line in node.text.splitlines())
    if isinstance(node, Fold):
        return "\n".join([f"{pad}{node.label}:"] + [to_text(c, depth + 1) for c in node.children])
    if isinstance(node, Columns):
        return "\n\n".join(to_text(c, depth) for c in node.children)
    if isinstance(node, Figure):
        return f"{pad}[figure: {node.title}]"
    return "\n".join(to_text(c, depth) for c in node.children)


def _table_text(t: Table, pad: str) -> str:
    cells = [list(t.headers)] + [[_cell_text(c) for c in row] for row in t.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t.headers))]
    lines = [pad + t.title] if t.title else []
    for n, row in enumerate(cells):
        mark = ("*" if n - 1 in t.marked else " ") if t.marked else ""
        lines.append(pad + mark + "  ".join(c.rjust(w) if a == "r" else c.ljust(w)
                                            for c, w, a in zip(row, widths, t.align)).rstrip())
    return "\n".join(lines)


def _cell_text(c: Cell) -> str:
    return "#" * max(1, round(c.fraction * _BAR_CHARS)) if isinstance(c, Bar) else c


# --- HTML ---------------------------------------------------------------------------------

def to_html(node: Node) -> Html:
    if isinstance(node, Line):
        return markup('<div class="{cls}">{text}</div>', cls=node.style.value, text=node.text)
    if isinstance(node, Table):
        return _table_html(node)
    if isinstance(node, Code):
        return markup('<pre class="jl-code">{body}</pre>', body=join(map(_line_html, node.lines)))
    if isinstance(node, Pre):
        return markup('<pre class="jl-pre">{text}</pre>', text=node.text)
    if isinstance(node, Fold):
        return markup('<details class="{cls}"{open}><summary>{label}</summary>{body}</details>',
                      cls=node.cls, open=Html(" open" if node.open else ""), label=node.label,
                      body=join(map(to_html, node.children)))
    if isinstance(node, Columns):
        return markup('<div class="jl-columns">{cols}</div>',
                      cols=join(markup('<div class="jl-column">{c}</div>', c=to_html(c))
                                for c in node.children))
    if isinstance(node, Figure):
        return _figure_html(node)
    return join(map(to_html, node.children))


_MARK_SVG = {
    MarkKind.LINE: '<line x1="{x}" y1="{y}" x2="{x2}" y2="{y2}"{cls}/>',
    MarkKind.RECT: '<rect x="{x}" y="{y}" width="{w}" height="{h}"{cls}/>',
    MarkKind.CIRCLE: '<circle cx="{x}" cy="{y}" r="{r}"{cls}><title>{text}</title></circle>',
    MarkKind.TEXT: '<text x="{x}" y="{y}"{cls}>{text}</text>',
}


def _figure_html(node: Figure) -> Html:
    marks = join(markup(_MARK_SVG[m.kind], x=round(m.x), y=round(m.y), x2=round(m.x2),
                        y2=round(m.y2), w=round(m.x2 - m.x), h=round(m.y2 - m.y),
                        r=round(m.r), text=m.text,
                        cls=markup(' class="{c}"', c=m.cls) if m.cls else Html(""))
                 for m in node.marks)
    return markup('<div class="jl-figure-box"><svg class="jl-figure" width="{w}" height="{h}" '
                  'viewBox="0 0 {w} {h}" role="img" aria-label="{title}">{marks}</svg></div>',
                  w=node.width, h=node.height, title=node.title, marks=marks)


def _line_html(line: Union[CodeLine, Gap]) -> Html:
    if isinstance(line, Gap):
        return markup('<span class="jl-line jl-gap">{t}</span>', t=gap_text(line.count))
    tokens = join(markup('<span class="{cls}">{t}</span>', cls=cls, t=t) if cls else
                  markup("{t}", t=t) for cls, t in line.tokens)
    return markup('<span class="jl-line{fault}"><span class="jl-ln">{n}</span>{tokens}</span>',
                  fault=" jl-fault" if line.marked else "", n=line.number, tokens=tokens)


def _table_html(t: Table) -> Html:
    def row_html(tag: str, row: Sequence[Cell], n: int) -> Html:
        tds = join(markup('<{tag}{cls}>{c}</{tag}>', tag=tag, c=_cell_html(c),
                          cls=Html(' class="jl-barcell"' if isinstance(c, Bar) else
                                   ' class="jl-num"' if a == "r" else ""))
                   for c, a in zip(row, t.align))
        return markup('<tr{cls}>{tds}</tr>', tds=tds,
                      cls=Html(' class="jl-winner"' if n in t.marked else ""))
    caption = markup('<div class="jl-title">{t}</div>', t=t.title) if t.title else Html("")
    return markup('{caption}<table><thead>{head}</thead><tbody>{body}</tbody></table>',
                  caption=caption, head=row_html("th", t.headers, -1),
                  body=join(row_html("td", r, n) for n, r in enumerate(t.rows)))


def _cell_html(c: Cell) -> Html:
    if isinstance(c, Bar):
        return markup('<span class="jl-bar" style="width: {pct}%"></span>',
                      pct=f"{100 * c.fraction:.1f}")
    return markup("{c}", c=c)


# --- JSON (what extension/src/index.ts draws) -------------------------------------------------

def to_json(node: Node) -> dict[str, Any]:
    if isinstance(node, Line):
        return {"t": "line", "text": node.text, "style": node.style.value}
    if isinstance(node, Table):
        return {"t": "table", "headers": list(node.headers), "align": node.align,
                "title": node.title, "marked": sorted(node.marked), "name": node.name,
                "rows": [[{"bar": round(c.fraction, 4)} if isinstance(c, Bar) else c for c in r]
                         for r in node.rows],
                "keys": None if node.keys is None else [list(k) for k in node.keys],
                "links": None if node.links is None else [list(k) for k in node.links]}
    if isinstance(node, Figure):
        return {"t": "figure", "width": node.width, "height": node.height, "title": node.title,
                "marks": [_mark_json(m) for m in node.marks]}
    if isinstance(node, Code):
        return {"t": "code", "language": node.language, "parts": _code_parts(node),
                "full": node.full}
    if isinstance(node, Pre):
        return {"t": "pre", "text": node.text}
    if isinstance(node, Fold):
        return {"t": "fold", "label": node.label, "open": node.open, "cls": node.cls,
                "children": [to_json(c) for c in node.children]}
    kind = "columns" if isinstance(node, Columns) else "block"
    return {"t": kind, "children": [to_json(c) for c in node.children]}


def _mark_json(m: Mark) -> dict[str, Any]:
    """A mark in whole pixels, its empty fields left out (the renderer reads 0 and '')."""
    found: dict[str, Any] = {"k": m.kind.value}
    for key in ("x", "y", "x2", "y2", "r", "text", "cls"):
        value = getattr(m, key)
        if value:
            found[key] = round(value) if isinstance(value, float) else value
    return found


def _code_parts(node: Code) -> list[dict[str, Any]]:
    """Runs of consecutive lines as a few strings (a notebook stores JSON indented, one
    list item a line: a token per item would multiply a listing's size): `text` is the
    lines, `runs` per line the token classes as `class:length` (length in code points),
    `marked` the faulty line numbers; a gap is {"gap": count}."""
    parts: list[dict[str, Any]] = []
    for line in node.lines:
        if isinstance(line, Gap):
            parts.append({"gap": line.count})
            continue
        if not parts or "gap" in parts[-1]:
            parts.append({"from": line.number, "lines": [], "runs": [], "marked": []})
        part = parts[-1]
        part["lines"].append("".join(t for _, t in line.tokens))
        part["runs"].append(" ".join(f"{cls}:{len(t)}" for cls, t in line.tokens))
        if line.marked:
            part["marked"].append(line.number)
    return [p if "gap" in p else {"from": p["from"], "text": "\n".join(p["lines"]),
                                  "runs": "\n".join(p["runs"]), "marked": p["marked"]}
            for p in parts]


# --- the stylesheet: one for the static HTML and the renderer -------------------------------

# Palettes: light and dark; JupyterLab's and VS Code's own theme flags win over
# the OS preference, so the colours match the page they sit on.
_LIGHT = {"inserted": "#116329", "deleted": "#82071e", "memory": "#3b82f6",
          "compute": "#d97706", "launch": "#9ca3af",
          "fg": "#1f2328", "bg": "#ffffff", "muted": "#59636e", "border": "#d1d9e0",
          "code-bg": "#f6f8fa", "bar": "#3b82f6", "fault": "#ffe4e1", "winner": "#dcfce7",
          "comment": "#6e7781", "keyword": "#cf222e", "type": "#8250df", "builtin": "#0550ae",
          "function": "#6639ba", "variable": "#953800", "number": "#0a7c7c",
          "string": "#0a3069", "operator": "#1f2328", "error": "#d1242f"}
_DARK = {"inserted": "#3fb950", "deleted": "#f85149", "memory": "#60a5fa",
         "compute": "#fbbf24", "launch": "#9ca3af",
         "fg": "#e6edf3", "bg": "#0d1117", "muted": "#9198a1", "border": "#3d444d",
         "code-bg": "#161b22", "bar": "#60a5fa", "fault": "#5c1a1a", "winner": "#14532d",
         "comment": "#8b949e", "keyword": "#ff7b72", "type": "#d2a8ff", "builtin": "#79c0ff",
         "function": "#d2a8ff", "variable": "#ffa657", "number": "#56d4dd",
         "string": "#a5d6ff", "operator": "#e6edf3", "error": "#ff7b72"}

# Two classes on the root: the rules then outrank JupyterLab's `.jp-RenderedHTMLCommon td`.
ROOT_CLASSES = "jaxlab-report jl-scope"
_ROOT = ".jaxlab-report.jl-scope"
_LAYOUT_CSS = """
%R { color: var(--jp-content-font-color1, var(--jl-fg));
  background: var(--jp-layout-color0, var(--jl-bg)); padding: 6px 8px;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; line-height: 1.4; }
%R .jl-title { font-weight: 600; font-size: 14px; }
%R .jl-muted { color: var(--jp-content-font-color2, var(--jl-muted)); }
%R table { border-collapse: collapse; margin: 4px 0; color: inherit; font-size: inherit;
  table-layout: auto; }
%R th, %R td { padding: 2px 8px; text-align: left; vertical-align: top; background: none;
  border: none; border-bottom: 1px solid var(--jp-border-color2, var(--jl-border)); }
%R td.jl-num, %R th.jl-num { text-align: right; font-variant-numeric: tabular-nums; }
%R .jl-barcell { width: 160px; }
%R .jl-bar { display: block; height: 10px; min-width: 1px; background: var(--jl-bar); border-radius: 2px; }
%R tr.jl-winner td { background: var(--jl-winner); }
%R details { margin: 4px 0; }
%R details details, %R details.jl-kernel > table { margin-left: 14px; }
%R summary { cursor: pointer; }
%R pre { margin: 2px 0; padding: 6px 8px; overflow-x: auto; font-size: 12px;
  font-family: var(--jp-code-font-family, ui-monospace, monospace);
  background: var(--jl-code-bg); color: var(--jl-fg); border-radius: 3px; border: none; }
%R .jl-line { display: block; white-space: pre; }
%R .jl-ln { display: inline-block; min-width: 3em; padding-right: 1em; text-align: right;
  color: var(--jl-muted); user-select: none; }
%R .jl-gap { color: var(--jl-muted); font-style: italic; }
%R .jl-fault { background: var(--jl-fault); }
%R .jl-columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(0, 1fr)); gap: 12px; }
%R .jl-column { min-width: 0; overflow-x: auto; }
%R tr.jl-linked td { background: var(--jl-winner); }
%R .jl-figure { font-size: 10px; overflow: visible; }
%R .jl-figure .jl-frame { fill: none; stroke: var(--jl-border); }
%R .jl-figure text { fill: var(--jl-muted); text-anchor: middle; }
%R .jl-figure text.jl-right { text-anchor: end; }
%R .jl-figure text.jl-left { text-anchor: start; }
%R .jl-figure text.jl-label { fill: var(--jl-fg); text-anchor: start; }
%R .jl-figure .jl-roof { stroke: var(--jl-fg); stroke-width: 1.5; }
%R .jl-figure .jl-edge { stroke: var(--jl-muted); stroke-width: 1.2; }
%R .jl-figure .jl-break { stroke: var(--jl-deleted); stroke-width: 1.5; stroke-dasharray: 4 2; }
%R .jl-figure .jl-box { fill: var(--jl-code-bg); stroke: var(--jl-border); }
%R .jl-figure .jl-dot { fill-opacity: 0.6; stroke: var(--jl-fg); stroke-width: 0.5; }
%R .jl-figure .jl-memory { fill: var(--jl-memory); }
%R .jl-figure .jl-compute { fill: var(--jl-compute); }
%R .jl-figure .jl-launch { fill: var(--jl-launch); }
"""


def _palette(selector: str, colours: dict[str, str]) -> str:
    return selector + " { " + " ".join(f"--jl-{k}: {v};" for k, v in colours.items()) + " }"


def stylesheet() -> str:
    """The report CSS (extension/style/report.css is this text: a test checks it)."""
    light_flags = ", ".join(f"{flag} {_ROOT}" for flag in
                            ('body[data-jp-theme-light="true"]', "body.vscode-light"))
    dark_flags = ", ".join(f"{flag} {_ROOT}" for flag in
                           ('body[data-jp-theme-light="false"]', "body.vscode-dark"))
    return "\n".join([
        _palette(_ROOT, _LIGHT),
        "@media (prefers-color-scheme: dark) { " + _palette(_ROOT, _DARK) + " }",
        _palette(light_flags, _LIGHT), _palette(dark_flags, _DARK),
        _LAYOUT_CSS.strip().replace("%R", _ROOT),
        token_css(f"{_ROOT} .jl-code")]) + "\n"


STYLE = Html("<style>" + stylesheet() + "</style>")


def page(body: Html) -> Html:
    """`body` inside the report's root element, with its scoped stylesheet."""
    return markup('<div class="{cls}">{style}{body}</div>', cls=ROOT_CLASSES, style=STYLE,
                  body=body)
