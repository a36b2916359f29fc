"""float64 math as IR rewrites: exp, log, tanh, atan and asin over primitive f64 ops
(and i64/u64 bit operations), to about one ulp: the float32 rewrites of ir/mathlib.py
carry float32 polynomials, these Taylor series long enough for 53 bits (mathconst
computes their coefficients exactly). No renderer spells float64 math itself, so
ir/mathlib.expand applies these to every float64 node whatever the renderer's
capabilities. Edges follow NumPy, as the float32 rewrites do.
"""
from __future__ import annotations

import math
from typing import Callable

from jaxlab.ir import mathconst as K
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.floatbits import FLOAT64

F64, I64 = DType.float64, DType.int64


_f = FLOAT64.const
_abs, _signed, _horner = FLOAT64.abs, FLOAT64.signed, FLOAT64.horner
_power_of_two = FLOAT64.power_of_two


def _reduce_exp(x: AluExp) -> tuple[AluExp, AluExp, AluExp]:
    """(p, a, b): e^x = (1 + p) a b. x = n ln2 + r with |r| <= ln2/2 (ln2 in two parts:
    n * hi is exact), p = e^r - 1 by its Taylor series to r^13 (the next term is below
    0.05 ulp), 2^n as two factors a b (so a subnormal e^x rounds once)."""
    x = x.min(K.EXP64_MAX).max(K.EXP64_MIN)   # NaN stays NaN
    n = (x * (1 / math.log(2)) + 0.5).unary(AluOp.Floor)
    r = (x - n * K.LN2_64[0]) - n * K.LN2_64[1]
    p = r + r * r * _horner(r, K.EXP64_POLY)
    k = n.cast(I64)
    half = k.binary(AluOp.Shr, AluExp.const(1, I64))
    return p, _power_of_two(half), _power_of_two(k - half)


def exp(x: AluExp) -> AluExp:
    p, a, b = _reduce_exp(x)
    return (_f(1.0) + p) * a * b


def _expm1(x: AluExp) -> AluExp:
    """e^x - 1 = 2^n p + (2^n - 1): no cancellation near 0, where n = 0."""
    p, a, b = _reduce_exp(x)
    scale = a * b
    return scale * p + (scale - 1.0)


def log(x: AluExp) -> AluExp:
    """x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); log(1 + f) = 2 atanh(s),
    s = f/(2 + f), written as f - (f^2/2 - s (f^2/2 + R(s^2))) so that the large
    terms are exact."""
    f, e = FLOAT64.log_reduce(x)
    s = f / (f + 2.0)
    hfsq = f * f * 0.5
    z = s * s
    big_r = z * _horner(z, K.LOG64_POLY)
    return FLOAT64.log_edges(x, e * K.LN2_64[0] + (f - (hfsq - (s * (hfsq + big_r)
                                                                 + e * K.LN2_64[1]))))


def tanh(x: AluExp) -> AluExp:
    """Its Taylor series below TANH64_SMALL; beyond, u/(u + 2) with u = e^(2|x|) - 1, whose
    error hardly moves the quotient once u is large. tanh rounds to 1 from |x| = 19.1
    on, so |x| stops at 22 (e^44 is finite); the sign is put back last."""
    a = _abs(x)
    z = a * a
    small = a + a * z * _horner(z, K.TANH64_POLY)
    u = _expm1(a.min(K.TANH64_ONE) * 2.0)
    return _signed(a.lt(K.TANH64_SMALL).where(small, u / (u + 2.0)), x)


def atan(x: AluExp) -> AluExp:
    """As the float32 rewrite: |x| reduced below tan(pi/8), then the Taylor series; the
    added multiple of pi/4 goes in as a double-double."""
    a = _abs(x)
    big = _f(K.TAN_3PI_8_64).lt(a)
    mid = big.where(False, _f(K.TAN_PI_8_64).lt(a))
    t = big.where(_f(-1.0) / a, mid.where((a - 1.0) / (a + 1.0), a))
    hi = big.where(_f(2 * K.PIO4_64[0]), mid.where(_f(K.PIO4_64[0]), _f(0.0)))
    lo = big.where(_f(2 * K.PIO4_64[1]), mid.where(_f(K.PIO4_64[1]), _f(0.0)))
    z = t * t
    return _signed(hi + (t + (z * t * _horner(z, K.ATAN64_POLY) + lo)), x)


def asin(x: AluExp) -> AluExp:
    """Its Taylor series up to |x| = 1/2, pi/2 - 2 asin(sqrt((1 - |x|)/2)) above."""
    a = _abs(x)
    big = _f(0.5).lt(a)
    z = big.where((1.0 - a) * 0.5, a * a)
    t = big.where(z.unary(AluOp.Sqrt), a)
    tail = z * t * _horner(z, K.ASIN64_POLY)
    near_one = _f(K.PIO2_64[0]) - ((t + t) - (_f(K.PIO2_64[1]) - (tail + tail)))
    p = big.where(near_one, t + tail)
    return _f(1.0).lt(a).where(_f(math.nan), _signed(p, x))


REWRITES64: dict[AluOp, Callable[[AluExp], AluExp]] = {
    AluOp.Exp: exp, AluOp.Log: log, AluOp.Tanh: tanh, AluOp.Atan: atan, AluOp.Asin: asin,
}
