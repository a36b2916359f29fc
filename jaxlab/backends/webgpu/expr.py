"""ExpWriter: an AluExp DAG as WGSL statements a person can read.

A subexpression used more than once (or too long to read inline) becomes a
named `let`, written in the outermost scope its index variables allow: work
that depends only on gidx is hoisted out of a reduction loop. Float math is
first rewritten into primitive ops (ir/mathlib.py, but for ops.CAPABILITIES).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from jaxlab.backends.traced import traced
from jaxlab.backends.webgpu.ops import (CAPABILITIES, Lang, bare, bounded_divisor, cast_text,
                                        const_text, ieee_text, op_text, reassociation_hazards)
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.mathlib import expand

_INLINE_CHARS = 72   # longer expressions get a name even when used once
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Name:
    """What a Special or Variable leaf reads as, and the scope it lives in."""
    text: str
    level: int = 0


class ExpWriter:
    """Write expressions into per-scope line lists (level 0 = outermost).

    `load(slot, index_text, dtype)` spells a load from an input. `names` binds
    Special/Variable leaves by name. `roots` are every expression this writer
    will be asked for, so shared subexpressions are known up front (with
    `share_roots`, a node in several roots is named too, so a later root reads what an
    earlier one computed). The helpers the written ops call are added to `needs`.
    """

    def __init__(self, lang: Lang, names: dict[str, Name], roots: Sequence[AluExp],
                 load: Callable[[int, str, object], str], needs: set[str],
                 prefix: str = "t", share_roots: bool = False) -> None:
        self.lang, self.names, self.load, self.prefix = lang, dict(names), load, prefix
        self.needs = needs
        self._expanded: dict[AluExp, AluExp] = {}
        roots = [self._expand(r) for r in roots]
        self.lines: dict[int, list[str]] = {}
        self._done: dict[AluExp, tuple[str, int]] = {}   # node -> (text, level)
        self._pairs: dict[tuple, tuple[str, int]] = {}    # threefry sources -> named pair
        self._count = 0
        # nodes whose computation a node's text holds inline (its own and unnamed sources'):
        # what the line that names or stores it computes (backends/traced.py)
        self._inline: dict[AluExp, frozenset] = {}
        self._uses: dict[AluExp, int] = {}
        self._exact = set().union(*(reassociation_hazards(r) for r in roots))
        for root in roots:
            for node in root.toposort():
                for s in node.src:
                    self._uses[s] = self._uses.get(s, 0) + 1
        if share_roots:
            seen: dict[AluExp, int] = {}
            for root in roots:
                for node in root.toposort():
                    seen[node] = seen.get(node, 0) + 1
            for node, count in seen.items():
                if node.src and count > 1:
                    self._uses[node] = self._uses.get(node, 0) + 2

    def bind(self, name: str, text: str, level: int) -> None:
        """(Re)bind a leaf name, forgetting everything written at its level or deeper
        (an unrolled loop body is written once per step)."""
        self.names[name] = Name(text, level)
        self._done = {n: v for n, v in self._done.items() if v[1] < level}
        self._pairs = {n: v for n, v in self._pairs.items() if v[1] < level}

    def take(self, level: int) -> list[str]:
        """The statements written at `level` since the last take."""
        return self.lines.pop(level, [])

    def _expand(self, exp: AluExp) -> AluExp:
        if exp not in self._expanded:
            self._expanded[exp] = expand(exp, CAPABILITIES)
        return self._expanded[exp]

    def value(self, exp: AluExp) -> str:
        """WGSL text of `exp` (carrying the nodes it computes inline); the `let`s it needs
        are left in self.lines."""
        exp = self._expand(exp)
        for node in exp.toposort():
            if node not in self._done:
                self._done[node] = self._write(node)
        return traced(self._done[exp][0], self._inline.get(exp, ()))

    def _write(self, node: AluExp) -> tuple[str, int]:
        op, lang = node.op, self.lang
        if op is AluOp.Const:
            return const_text(node.arg, node.dtype, lang, self.needs), 0
        if op in (AluOp.Special, AluOp.Variable):
            key = node.arg[0] if op is AluOp.Special else node.arg
            if key not in self.names:
                raise KeyError(f"webgpu codegen: nothing bound to {key!r}")
            name = self.names[key]
            return name.text, name.level
        level = max((self._done[s][1] for s in node.src), default=0)
        for s in node.src:   # work of an outer scope is named there: hoisted out of loops
            text, at = self._done[s]
            if at < level and s.src and not _NAME.fullmatch(text):
                self._done[s] = (self._let(text, at, s), at)
        self._inline[node] = frozenset([node]).union(*(self._inline.get(s, ()) for s in node.src))
        args = [self._done[s][0] for s in node.src]
        if op is AluOp.GlobalIndex:
            text = self.load(node.arg, bare(args[0]), node.dtype)
        elif op is AluOp.Cast:
            text = cast_text(node.src[0].dtype, node.dtype, args[0], lang, self.needs)
        elif op is AluOp.Bitcast:
            text = f"bitcast<{lang.vtype(node.dtype)}>({bare(args[0])})"
        elif op is AluOp.Threefry2x32:
            pair = self._threefry(node, args, level)
            return f"{pair}.{'xy'[node.arg]}", level
        else:
            bounded = op in (AluOp.Div, AluOp.Idiv, AluOp.Mod) and bounded_divisor(node)
            text = ieee_text(op, node.src, args, lang, self.needs) or \
                op_text(op, node.src[0].dtype, args, lang, self.needs, bounded)
        if node in self._exact:
            exact = f"exact_{lang.vtype(node.dtype)}"
            self.needs.add(exact)
            return self._let(f"{exact}({bare(text)})", level, node), level
        if self._uses.get(node, 0) > 1 or len(text) > _INLINE_CHARS:
            return self._let(text, level, node), level
        return text, level

    def _threefry(self, node: AluExp, args: list[str], level: int) -> str:
        # both output words of one call are usually wanted: name the pair once
        if node.src not in self._pairs:
            text = op_text(AluOp.Threefry2x32, node.dtype, args, self.lang, self.needs)
            self._pairs[node.src] = (self._let(text, level, node), level)
        return self._pairs[node.src][0]

    def _let(self, text: str, level: int, node: AluExp) -> str:
        name = f"{self.prefix}{self._count}"
        self._count += 1
        self.lines.setdefault(level, []).append(
            traced(f"let {name} = {bare(text)};", self._inline.get(node, ())))
        self._inline[node] = frozenset()   # its users read the name
        return name

