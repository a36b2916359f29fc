"""Pygments highlighting for the generated sources (WGSL, WAT, plain text).

Pygments' WatLexer knows only the MVP instruction set: SIMD (`v128.load`,
`f32x4.add`), atomics, bulk memory and saturating truncations come out as
Error tokens, and so do decimals like `12.5`. `WatLexer` here adds them.
Colours are CSS variables, so one stylesheet follows the report's theme.
"""
from __future__ import annotations

from pygments import highlight as _pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer, inherit, words
from pygments.lexers import get_lexer_by_name
from pygments.lexers.special import TextLexer
from pygments.lexers.webassembly import WatLexer as _BaseWatLexer
from pygments.token import STANDARD_TYPES, Comment, Error, Generic, Keyword, Name, Number, \
    Operator, String, _TokenType
from pygments.util import ClassNotFound

_SHAPES = ("i8x16", "i16x8", "i32x4", "i64x2", "f32x4", "f64x2")
_ID_CHARS = r"[a-z0-9_]+(?:\.[a-z0-9_]+)*"


class WatLexer(_BaseWatLexer):
    """The WebAssembly text format with SIMD, threads/atomics and bulk memory."""

    name = "WebAssembly (jaxlab)"
    aliases = ["wat-jaxlab"]
    filenames: list[str] = []

    tokens = {
        "root": [
            # instructions first: the base rules would split `f32x4.add` at the dot
            (r"(?:v128|%s)\.%s" % ("|".join(_SHAPES), _ID_CHARS), Name.Builtin, "arguments"),
            (r"(?:i32|i64)\.atomic\.%s|memory\.atomic\.%s|atomic\.fence" % (_ID_CHARS, _ID_CHARS),
             Name.Builtin, "arguments"),
            (r"(?:memory|table|data|elem|ref)\.[a-z_]+|[if](?:32|64)\.trunc_sat_f(?:32|64)_[su]"
             r"|return_call(?:_indirect)?", Name.Builtin, "arguments"),
            (words(("v128", "externref", "funcref") + _SHAPES, suffix=r"\b"), Keyword.Type),
            (words(("shared", "offset", "declare", "item"), suffix=r"\b"), Keyword),
            (r"[+-]?\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)", Number.Float),
            (r"[+-]?\d(?:_?\d)*\.(?:\d(?:_?\d)*)?", Number.Float),
            inherit,
        ],
    }


# Token colours by role; a token takes the colour of its nearest listed ancestor.
_ROLES = {Comment: "comment", Keyword: "keyword", Keyword.Type: "type",
          Name.Builtin: "builtin", Name.Function: "function", Name.Decorator: "type",
          Name.Variable: "variable",
          Name.Attribute: "variable", Number: "number", String: "string",
          Operator: "operator", Error: "error",
          Generic.Inserted: "inserted", Generic.Deleted: "deleted", Generic.Heading: "muted",
          Generic.Subheading: "muted"}


def lexer_for(language: str) -> Lexer:
    """The lexer for a KernelEvent.source_language ('wat', 'wgsl', 'text', ...)."""
    if language in ("wat", "wast"):
        return WatLexer()
    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return TextLexer()


def highlight_lines(source: str, language: str) -> list[str]:
    """`source` as escaped HTML, one string per line (Pygments closes its spans
    at each line end, so every line stands alone: callers number or mark them)."""
    html = _pygments_highlight(source, lexer_for(language), HtmlFormatter(nowrap=True))
    return html.rstrip("\n").split("\n") if source else []


def token_css(scope: str) -> str:
    """Rules giving each Pygments token class under `scope` its role's colour,
    as `var(--jl-<role>)`: the palette lives with the report's theme."""
    selectors: dict[str, list[str]] = {}
    for ttype, short in STANDARD_TYPES.items():
        colour = role(ttype)
        if short and colour:
            selectors.setdefault(colour, []).append(f"{scope} .{short}")
    return "\n".join(f"{', '.join(sel)} {{ color: var(--jl-{colour}); }}"
                     for colour, sel in selectors.items())


def role(ttype: _TokenType) -> str | None:
    while ttype not in _ROLES and ttype.parent is not None:
        ttype = ttype.parent
    return _ROLES.get(ttype)
