"""The sign a float expression is known to have, from its shape alone: x * x >= 0,
-(x * x) <= 0, exp(.) >= 0. The math rewrites (ir/mathlib.py) use it to drop the side
of a clamp that cannot be reached.

A known sign holds for every value but NaN (which the rewrites keep as NaN anyway);
-0 counts as <= 0 and as >= 0, like +0.
"""
from __future__ import annotations

import enum
from collections import Counter

from jaxlab.ir.alu import AluExp, AluOp


class Sign(enum.Enum):
    ZERO = 0        # both <= 0 and >= 0
    NONNEG = 1
    NONPOS = -1


def _times(a: Sign, b: Sign) -> Sign:
    return Sign(a.value * b.value)


def _plus(a: Sign | None, b: Sign | None) -> Sign | None:
    if a is Sign.ZERO:
        return b
    if b is Sign.ZERO or a is b:
        return a
    return None


def _negated(s: Sign | None) -> Sign | None:
    return None if s is None else Sign(-s.value)


_NONNEGATIVE_OPS = frozenset({AluOp.Exp, AluOp.Sqrt})


def _product_factors(e: AluExp) -> list[AluExp]:
    if e.op is AluOp.Mul:
        return _product_factors(e.src[0]) + _product_factors(e.src[1])
    return [e]


def sign_of(e: AluExp) -> Sign | None:
    """The sign every non-NaN value of the float expression `e` has, or None."""
    if e.op is AluOp.Const:
        return Sign.ZERO if e.arg == 0 else Sign.NONNEG if e.arg > 0 else Sign.NONPOS
    if e.op in _NONNEGATIVE_OPS:
        return Sign.NONNEG
    if e.op is AluOp.Add:
        return _plus(sign_of(e.src[0]), sign_of(e.src[1]))
    if e.op is AluOp.Sub:
        return _plus(sign_of(e.src[0]), _negated(sign_of(e.src[1])))
    if e.op is AluOp.Mul:
        # a factor that appears an even number of times contributes its square
        sign = Sign.NONNEG
        for factor, count in Counter(_product_factors(e)).items():
            if count % 2 == 0:
                continue
            s = sign_of(factor)
            if s is None:
                return None
            sign = _times(sign, s)
        return sign
    return None
