"""A printer a person can read: infix arithmetic, shared subexpressions named once."""
from __future__ import annotations

from collections import Counter

from jaxlab.ir.alu import BINARY, COMPARE, AluExp, AluOp

_INFIX = {op: op.value for op in (BINARY | COMPARE) if op not in (AluOp.Min, AluOp.Max)}


def leaf_text(e: AluExp) -> str:
    if e.op is AluOp.Const:
        if isinstance(e.arg, bool):
            return "true" if e.arg else "false"
        return repr(e.arg) if e.dtype.is_float else str(e.arg)
    if e.op is AluOp.Param:
        return f"param({e.arg!r})"
    if e.op is AluOp.Special:
        return e.arg[0]
    if e.op is AluOp.Variable:
        return e.arg
    if e.op is AluOp.GlobalView:
        buffer, tracker = e.arg
        return f"{getattr(buffer, 'name', buffer)}{tracker.short()}"
    if e.op is AluOp.Valid:
        return f"valid{e.arg.short()}"
    raise AssertionError(e.op)


def _node_text(e: AluExp, args: list[str]) -> str:
    op = e.op
    b = e.src[1] if len(e.src) > 1 else None
    if op is AluOp.Add and b.is_const and not e.dtype.is_float and b.arg < 0:
        return f"({args[0]} - {-b.arg})"
    if op is AluOp.Cmpne and b.is_const and b.arg is True:
        return f"!{args[0]}"
    if op in _INFIX:
        return f"({args[0]} {_INFIX[op]} {args[1]})"
    if op is AluOp.GlobalIndex:
        return f"in{e.arg}[{_strip(args[0])}]"
    if op in (AluOp.Cast, AluOp.Bitcast):
        return f"{op.value}<{e.dtype.short}>({_strip(args[0])})"
    if op is AluOp.Threefry2x32:
        return f"threefry2x32.{e.arg}({', '.join(args)})"
    return f"{op.value}({', '.join(_strip(a) for a in args)})"


def node_text(e: AluExp, args: list[str]) -> str:
    """One node over its sources' texts (`args`), without a subtree walk."""
    return _strip(_node_text(e, args))


def _strip(text: str) -> str:
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def render(e: AluExp, names: dict[AluExp, str] | None = None) -> str:
    """One line for small trees; shared non-leaf nodes become `tN = ...` lines."""
    order = e.toposort()
    uses = Counter(s for n in order for s in n.src)
    text: dict[AluExp, str] = {}
    lets: list[str] = []
    names = dict(names or {})
    for node in order:
        if node in names:
            text[node] = names[node]
            continue
        if not node.src:
            text[node] = leaf_text(node)
            continue
        body = _node_text(node, [text[s] for s in node.src])
        if uses[node] > 1 and node is not e:
            name = f"t{len(lets)}"
            lets.append(f"{name} = {_strip(body)}")
            body = name
        text[node] = body
    return "\n".join(lets + [_strip(text[e])])
