"""Range analysis and the algebraic simplifier for AluExp.

The simplifier rewrites bottom-up until no rule applies. Its main customer is
index arithmetic: unravelling a flat index into dimensions and folding it back
(`(i // 4) % 4` with i < 16 is `i // 4`; `(g * 8 + r) // 8` is `g` when r < 8).
"""
from __future__ import annotations

import collections
import contextlib
import contextvars
import math
from typing import Callable, Iterator, Optional

from jaxlab.ir.alu import COMMUTATIVE, AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.provenance import active_lineage

_FLOAT_RANGE = (-math.inf, math.inf)


def _full(dtype: DType) -> tuple:
    return _FLOAT_RANGE if dtype.is_float else dtype.bounds


def _clamped(dtype: DType, lo, hi) -> tuple:
    """A computed range, or the dtype's whole range if it may have wrapped."""
    full = _full(dtype)
    if dtype.is_float or (full[0] <= lo and hi <= full[1]):
        return (lo, hi)
    return full


def _range_of(e: AluExp) -> tuple:
    op, src = e.op, e.src
    if op is AluOp.Const:
        v = int(e.arg) if e.dtype is DType.bool else e.arg
        return (v, v)
    if e.dtype.is_float:
        return _FLOAT_RANGE
    if op is AluOp.Param:   # known only when the kernel runs
        return _full(e.dtype)
    if op is AluOp.Special:
        return (0, e.arg[1] - 1)
    r = [s._range_cached() for s in src]
    if e.dtype is DType.bool:
        return _bool_range(op, r)
    if op is AluOp.Add:
        return _clamped(e.dtype, r[0][0] + r[1][0], r[0][1] + r[1][1])
    if op is AluOp.Sub:
        return _clamped(e.dtype, r[0][0] - r[1][1], r[0][1] - r[1][0])
    if op is AluOp.Mul:
        corners = [a * b for a in r[0] for b in r[1]]
        return _clamped(e.dtype, min(corners), max(corners))
    if op is AluOp.Idiv and src[1].is_const and src[1].arg > 0:
        c = src[1].arg
        return (int(r[0][0] / c), int(r[0][1] / c))
    if op is AluOp.Mod and src[1].is_const and src[1].arg > 0:
        c = src[1].arg
        if r[0][0] >= 0:
            return (0, min(c - 1, r[0][1]))
        return (-(c - 1), c - 1)
    if op is AluOp.Min:
        return (min(r[0][0], r[1][0]), min(r[0][1], r[1][1]))
    if op is AluOp.Max:
        return (max(r[0][0], r[1][0]), max(r[0][1], r[1][1]))
    if op is AluOp.Where:
        return (min(r[1][0], r[2][0]), max(r[1][1], r[2][1]))
    if op is AluOp.And and src[1].is_const and src[1].arg >= 0:
        return (0, src[1].arg)
    if op is AluOp.Cast and not src[0].dtype.is_float:
        return _clamped(e.dtype, *r[0])
    return _full(e.dtype)


def _bool_range(op: AluOp, r: list) -> tuple:
    if op is AluOp.Cmplt:
        (alo, ahi), (blo, bhi) = r
        return (1, 1) if ahi < blo else (0, 0) if alo >= bhi else (0, 1)
    if op is AluOp.Cmpne:
        (alo, ahi), (blo, bhi) = r
        return (1, 1) if ahi < blo or bhi < alo else (0, 1)
    if op is AluOp.And:
        return (r[0][0] & r[1][0], r[0][1] & r[1][1])
    if op is AluOp.Or:
        return (r[0][0] | r[1][0], r[0][1] | r[1][1])
    if op is AluOp.Where:
        return (min(r[1][0], r[2][0]), max(r[1][1], r[2][1]))
    return (0, 1)


def _range_cached(self: AluExp) -> tuple:
    if self._range is None:
        self._range = _range_of(self)
    return self._range


AluExp._range_cached = _range_cached  # type: ignore[attr-defined]


def value_range(e: AluExp) -> tuple:
    """(min, max) every element of e can take; for floats (-inf, inf) unless constant."""
    return e._range_cached()


# --- helpers on sums -------------------------------------------------------

def _terms(e: AluExp) -> list[AluExp]:
    if e.op is AluOp.Add:
        return _terms(e.src[0]) + _terms(e.src[1])
    return [e]


def _sum(terms: list[AluExp], dtype: DType) -> AluExp:
    if not terms:
        return AluExp.const(0, dtype)
    out = terms[0]
    for t in terms[1:]:
        out = AluExp(AluOp.Add, dtype, (out, t))
    return out


def _factor(term: AluExp) -> tuple[AluExp | None, int]:
    """term as (x, k) with term == x * k for a constant k (x None for a constant)."""
    if term.is_const:
        return None, term.arg
    if term.op is AluOp.Mul and term.src[1].is_const:
        return term.src[0], term.src[1].arg
    return term, 1


def _divide_sum(e: AluExp, c: int) -> Optional[tuple[list[AluExp], list[AluExp]]]:
    """Split the terms of e into (multiples of c already divided by c, the rest)."""
    divided, rest = [], []
    for t in _terms(e):
        x, k = _factor(t)
        if k % c == 0:
            if x is None:
                divided.append(AluExp.const(k // c, e.dtype))
            else:
                divided.append(x if k // c == 1 else AluExp(AluOp.Mul, e.dtype,
                                                            (x, AluExp.const(k // c, e.dtype))))
        else:
            rest.append(t)
    return (divided, rest) if divided else None


# --- rules: each takes a node with simplified sources, returns a rewrite or None

def _fold_constants(e: AluExp) -> Optional[AluExp]:
    if e.src and all(s.is_const for s in e.src) and e.op not in (AluOp.GlobalIndex,):
        from jaxlab.ir.evaluate import evaluate
        return AluExp.const(evaluate(e).item(), e.dtype)
    return None


def _fold_range(e: AluExp) -> Optional[AluExp]:
    if e.is_const or e.dtype.is_float or e.op is AluOp.GlobalIndex:
        return None
    lo, hi = value_range(e)
    if lo == hi:
        return AluExp.const(lo, e.dtype)
    return None


def _canonical_order(e: AluExp) -> Optional[AluExp]:
    if e.op in COMMUTATIVE and e.src[0].is_const and not e.src[1].is_const:
        return AluExp(e.op, e.dtype, (e.src[1], e.src[0]))
    return None


def _is(e: AluExp, value) -> bool:
    return e.is_const and e.arg == value


def _rule_add(e: AluExp) -> Optional[AluExp]:
    a, b = e.src
    if _is(b, 0):
        return a
    if e.dtype.is_int and b.is_const and a.op is AluOp.Add and a.src[1].is_const:
        return a.src[0] + AluExp.const(a.src[1].arg + b.arg, e.dtype)
    if e.dtype.is_int and a.op is AluOp.Add and a.src[1].is_const and not b.is_const:
        return (a.src[0] + b) + a.src[1]  # constants to the end of an index sum
    return None


def _ravel_pair(high: AluExp, low: AluExp) -> Optional[AluExp]:
    """`(x // a) * a + x % a` is x and `((x // a) % b) * a + x % a` is x % (a*b): an
    index unravelled into dims and ravelled again (true for truncating division)."""
    if not low.src[1].is_const or low.src[1].arg <= 0:   # low is a Mod
        return None
    x, a = low.src[0], low.src[1].arg
    y, k = _factor(high)
    if y is None or k != a:
        return None
    def is_x_div_a(q: AluExp) -> bool:
        return q.op is AluOp.Idiv and q.src[0] is x and _is(q.src[1], a)

    if is_x_div_a(y):
        return x
    if y.op is AluOp.Mod and is_x_div_a(y.src[0]) and y.src[1].is_const and \
            0 < a * y.src[1].arg <= DType.int32.bounds[1]:
        return x % AluExp.const(a * y.src[1].arg, x.dtype)
    return None


def _rule_ravel(e: AluExp) -> Optional[AluExp]:
    if e.dtype is not DType.int32:
        return None
    terms = _terms(e)
    for i, low in enumerate(terms):
        if low.op is not AluOp.Mod:
            continue
        for j, high in enumerate(terms):
            merged = None if i == j else _ravel_pair(high, low)
            if merged is not None:
                return _sum([t for n, t in enumerate(terms) if n not in (i, j)] + [merged],
                            e.dtype)
    return None


def _rule_sub(e: AluExp) -> Optional[AluExp]:
    a, b = e.src
    if _is(b, 0):
        return a
    if e.dtype is DType.int32:
        if a is b:
            return AluExp.const(0, e.dtype)
        if b.is_const:
            return a + AluExp.const(-b.arg, e.dtype)
    return None


def _rule_mul(e: AluExp) -> Optional[AluExp]:
    a, b = e.src
    if _is(b, 1):
        return a
    if e.dtype.is_int and b.is_const:
        if b.arg == 0:
            return b
        if a.op is AluOp.Mul and a.src[1].is_const:
            return a.src[0] * AluExp.const(a.src[1].arg * b.arg, e.dtype)
        if a.op is AluOp.Add and (a.src[1].is_const or a.src[0].op is AluOp.Mul):
            return a.src[0] * b + a.src[1] * b
    return None


def _nonneg_int_by_const(e: AluExp) -> Optional[int]:
    # int32 only: a uint32 sum that wrapped still has a non-negative range, so there
    # `lo >= 0` would not prove the sums and products below were computed exactly.
    a, b = e.src
    if e.dtype is DType.int32 and b.is_const and b.arg > 0 and value_range(a)[0] >= 0:
        return b.arg
    return None


def _rule_idiv(e: AluExp) -> Optional[AluExp]:
    c = _nonneg_int_by_const(e)   # None for floats and uint32
    if c is None:
        return None
    a = e.src[0]
    if c == 1:
        return a
    if a.op is AluOp.Idiv and a.src[1].is_const and a.src[1].arg > 0:
        return a.src[0] // AluExp.const(a.src[1].arg * c, e.dtype)
    x, k = _factor(a)
    if x is not None and k > 1 and c % k == 0 and value_range(x)[0] >= 0:
        return x // AluExp.const(c // k, e.dtype)
    split = _divide_sum(a, c)
    if split is not None:
        divided, rest = split
        rest_sum = _sum(rest, e.dtype)
        if value_range(rest_sum)[0] >= 0:
            return _sum(divided, e.dtype) + (rest_sum // c)
    return None


def _rule_mod(e: AluExp) -> Optional[AluExp]:
    c = _nonneg_int_by_const(e)   # None for floats and uint32
    if c is None:
        return None
    a = e.src[0]
    if value_range(a)[1] < c:
        return a
    if a.op is AluOp.Mod and a.src[1].is_const and a.src[1].arg % c == 0:
        return a.src[0] % c
    split = _divide_sum(a, c)
    if split is not None:
        rest_sum = _sum(split[1], e.dtype)
        if value_range(rest_sum)[0] >= 0:
            return rest_sum % c
    return None


def _rule_minmax(e: AluExp) -> Optional[AluExp]:
    a, b = e.src
    if a is b:
        return a
    if e.dtype.is_float:
        return None
    (alo, ahi), (blo, bhi) = value_range(a), value_range(b)
    first_smaller = ahi <= blo
    second_smaller = bhi <= alo
    if e.op is AluOp.Min:
        return a if first_smaller else b if second_smaller else None
    return b if first_smaller else a if second_smaller else None


def _rule_where(e: AluExp) -> Optional[AluExp]:
    c, a, b = e.src
    if c.is_const:
        return a if c.arg else b
    if a is b:
        return a
    if e.dtype is DType.bool and _is(a, True) and _is(b, False):
        return c
    return None


def _rule_logic(e: AluExp) -> Optional[AluExp]:
    a, b = e.src
    if e.dtype is not DType.bool:
        return None
    if a is b:
        return a if e.op is not AluOp.Xor else AluExp.const(False, DType.bool)
    if b.is_const:
        if e.op is AluOp.And:
            return a if b.arg else b
        if e.op is AluOp.Or:
            return b if b.arg else a
    return None


def _rule_float_div(e: AluExp) -> Optional[AluExp]:
    return e.src[0] if e.dtype.is_float and _is(e.src[1], 1.0) else None


RULES: dict[AluOp, tuple[Callable, ...]] = {
    AluOp.Add: (_rule_add, _rule_ravel), AluOp.Sub: (_rule_sub,), AluOp.Mul: (_rule_mul,),
    AluOp.Idiv: (_rule_idiv,), AluOp.Mod: (_rule_mod,),
    AluOp.Min: (_rule_minmax,), AluOp.Max: (_rule_minmax,),
    AluOp.Where: (_rule_where,), AluOp.And: (_rule_logic,), AluOp.Or: (_rule_logic,),
    AluOp.Xor: (_rule_logic,), AluOp.Div: (_rule_float_div,),
}
_GENERAL = (_fold_constants, _fold_range, _canonical_order)


def _rewrite_once(e: AluExp) -> Optional[AluExp]:
    for rule in _GENERAL + RULES.get(e.op, ()):
        out = rule(e)
        if out is not None and out is not e:
            fired = _fired.get()
            if fired is not None:
                fired[rule.__name__.lstrip("_")] += 1
            return out
    return None


_fired: contextvars.ContextVar[Optional[collections.Counter]] = contextvars.ContextVar(
    "jaxlab_rules_fired", default=None)


@contextlib.contextmanager
def counting_rules() -> Iterator[collections.Counter]:
    """Inside, every rewrite that fires is counted by rule name (the lab's pipeline view;
    a node simplified before is memoised: its rules do not fire again)."""
    fired: collections.Counter = collections.Counter()
    token = _fired.set(fired)
    try:
        yield fired
    finally:
        _fired.reset(token)


_SELF = object()  # marks "already simplest" without a self-reference cycle


def _simplest(node: AluExp) -> AluExp:
    return node if node._simple is _SELF else node._simple


def simplify(e: AluExp) -> AluExp:
    """The simplest equal expression the rules find (memoised on each node)."""
    found = active_lineage()
    if e._simple is not None and found is None:
        return _simplest(e)
    for node in e.toposort():
        if found is not None and node._simple is not None:
            found.derive(_simplest(node), node)
        if node._simple is not None:
            continue
        src = tuple(_simplest(s) for s in node.src)
        cur = node if src == node.src else AluExp(node.op, node.dtype, src, node.arg)
        for _ in range(64):
            nxt = _rewrite_once(cur)
            if nxt is None:
                break
            # a rewrite builds new nodes whose sources may not be simplified yet
            cur = _with_simple_sources(nxt)
        if cur._simple is None:
            cur._simple = _SELF
        node._simple = _SELF if cur is node else cur
        if found is not None:
            found.derive(cur, node)
    return _simplest(e)


def _with_simple_sources(e: AluExp) -> AluExp:
    src = tuple(simplify(s) for s in e.src)
    return e if src == e.src else AluExp(e.op, e.dtype, src, e.arg)
