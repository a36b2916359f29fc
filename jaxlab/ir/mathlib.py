"""Float math as IR rewrites: exp, log, tanh, atan, asin, erf and erfc written as
AluExp over primitive ops (add, mul, div, sqrt, compare, where, casts,
bitcasts and integer bit operations), as tinygrad lowers its transcendentals.

A renderer declares which of these it spells natively (vocabulary.Capabilities);
`expand` rewrites the rest, so each renderer only spells primitive ops. float16
math is computed in float32 and rounded once, as NumPy does. Edges follow NumPy:
NaN in gives NaN out, log(0) = -inf, log(-1) = NaN, exp(inf) = inf, tanh(inf) = 1.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Sequence

from jaxlab.ir import mathconst as K
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel
from jaxlab.ir.provenance import active_lineage
from jaxlab.ir.vocabulary import Capabilities

F32, I32, U32 = DType.float32, DType.int32, DType.uint32
SIGN = 0x80000000
MAGNITUDE = 0x7fffffff
EXPONENT = 0x7f800000


def _f(value: float) -> AluExp:
    return AluExp.const(value, F32)


def _bits(x: AluExp) -> AluExp:
    return x.bitcast(U32)


def _float(bits: AluExp) -> AluExp:
    return bits.bitcast(F32)


def _abs(x: AluExp) -> AluExp:
    return _float(_bits(x) & MAGNITUDE)


def _signed(magnitude: AluExp, sign_of: AluExp) -> AluExp:
    """copysign for a magnitude known to be >= 0 (or NaN): its sign bit is clear."""
    return _float(_bits(magnitude) | (_bits(sign_of) & SIGN))


def _horner(x: AluExp, coeffs: Sequence[float]) -> AluExp:
    """coeffs[0] x^n + ... + coeffs[n], highest power first."""
    acc = _f(coeffs[0])
    for c in coeffs[1:]:
        acc = acc * x + c
    return acc


def _power_of_two(k: AluExp) -> AluExp:
    """2^k for an int32 k in the normal exponent range, built from its bits."""
    return (k + 127).binary(AluOp.Shl, 23).bitcast(F32)


def _int(value: int) -> AluExp:
    return AluExp.const(value, I32)


def exp(x: AluExp) -> AluExp:
    """Cephes expf: x = n ln2 + r, e^r by a polynomial, times 2^n."""
    x = x.min(K.EXP_MAX).max(K.EXP_MIN)   # 2^n stays finite; NaN stays NaN
    # n = x log2(e) rounded to nearest by adding 1.5 * 2^23: the sum's low mantissa bits
    # hold n as an integer (no rounding op, no float -> int conversion)
    t = x * K.LOG2E + K.ROUNDING_SHIFT
    n = t - K.ROUNDING_SHIFT
    k = t.bitcast(I32) - _f(K.ROUNDING_SHIFT).bitcast(I32)
    r = (x - n * K.LN2_HI) - n * K.LN2_LO
    e = _horner(r, K.EXP_POLY) * (r * r) + r + 1.0
    # times 2^n as 2^(n/2) 2^(n - n/2): one factor alone would overflow before the
    # product underflows to a subnormal, which is then rounded once
    half = k.binary(AluOp.Shr, 1)
    return e * _power_of_two(half) * _power_of_two(k - half)


def log(x: AluExp) -> AluExp:
    """Cephes logf: x = 2^e m with m in [sqrt(1/2), sqrt(2)), a polynomial in m - 1."""
    bits = _bits(x)
    tiny = (bits & EXPONENT).lt(0x00800000)           # zero or subnormal: scale by 2^25
    b = _bits(tiny.where(x * 33554432.0, x))
    m = _float((b & 0x807fffff) | 0x3f000000)          # in [0.5, 1)
    low = m.lt(K.SQRT_HALF)
    exponent = (b.binary(AluOp.Shr, 23) & 0xff).cast(I32) - tiny.where(_int(151), 126) \
        - low.where(_int(1), 0)
    e = exponent.cast(F32)
    t = low.where(m + m - 1.0, m - 1.0)
    z = t * t
    p = _horner(t, K.LOG_POLY) * t * z
    r = t + (p + e * K.LN2_LO - z * 0.5) + e * K.LN2_HI
    # +-0 -> -inf, negative -> NaN, +inf and NaN -> themselves
    magnitude = bits & MAGNITUDE
    special = AluExp.const(EXPONENT - 1, U32).lt(bits)   # inf, NaN or negative
    edge = AluExp.const(SIGN, U32).lt(bits).where(_f(math.nan), x)
    return magnitude.lt(1).where(_f(-math.inf), special.where(edge, r))


def tanh(x: AluExp) -> AluExp:
    """Cephes tanhf: x + x^3 P(x^2) near 0, 1 - 2/(e^2|x| + 1) beyond (1 for large |x|)."""
    a = _abs(x)
    z = x * x
    small = x + x * z * _horner(z, K.TANH_POLY)
    large = 1.0 - _f(2.0) / (exp(a + a) + 1.0)
    return a.lt(K.TANH_SMALL).where(small, _signed(large, x))


def atan(x: AluExp) -> AluExp:
    """Cephes atanf: |x| > tan(3pi/8): pi/2 + atan(-1/|x|); |x| > tan(pi/8):
    pi/4 + atan((|x| - 1)/(|x| + 1)); then t + t^3 P(t^2)."""
    a = _abs(x)
    big = _f(K.TAN_3PI_8).lt(a)
    mid = big.where(False, _f(K.TAN_PI_8).lt(a))
    t = big.where(_f(-1.0) / a, mid.where((a - 1.0) / (a + 1.0), a))
    base = big.where(_f(math.pi / 2), mid.where(_f(math.pi / 4), _f(0.0)))
    z = t * t
    return _signed(base + (t + z * t * _horner(z, K.ATAN_POLY)), x)


def asin(x: AluExp) -> AluExp:
    """Cephes asinf: a polynomial near 0, pi/2 - 2 asin(sqrt((1 - |x|)/2)) above 1/2."""
    a = _abs(x)
    big = _f(0.5).lt(a)
    z = big.where((1.0 - a) * 0.5, a * a)
    t = big.where(z.unary(AluOp.Sqrt), a)
    p = t + z * t * _horner(z, K.ASIN_POLY)
    p = big.where(math.pi / 2 - (p + p), p)
    return _f(1.0).lt(a).where(_f(math.nan), _signed(p, x))   # |x| > 1: no arcsine


def erfc(x: AluExp) -> AluExp:
    """The Chebyshev fit of mathconst, in float32. e^(-z^2) is taken as
    e^(-h^2) e^(-(z - h)(z + h)) with h = z cut to 12 bits: h^2 is exact, so the
    rounding of z^2 (up to 100 for z = 10) does not reach the exponent."""
    z = _abs(x).min(K.ERFC_ZERO_ABOVE)   # erfc is 0 beyond; an infinite z would give NaN
    h = _float(_bits(z) & 0xfffff000)
    t = _f(1.0) / (z * 0.5 + 1.0)
    poly = _f(K.ERFC_COEFFS[-1])
    for c in reversed(K.ERFC_COEFFS[1:-1]):
        poly = poly * t + c
    r = t * exp(_f(0.0) - h * h) * exp(K.ERFC_COEFFS[0] - (z - h) * (z + h) + poly * t)
    return x.lt(0.0).where(2.0 - r, r)


def erf(x: AluExp) -> AluExp:
    """The Taylor series near 0, where 1 - erfc(x) would cancel; 1 - erfc(x) beyond."""
    minus_x2 = _f(0.0) - x * x
    term, series = x, x
    for n in range(1, K.ERF_SERIES_TERMS + 1):
        term = term * minus_x2 / float(n)
        series = series + term / float(2 * n + 1)
    return _abs(x).lt(K.ERF_SERIES_BELOW).where(series * K.TWO_OVER_SQRT_PI, 1.0 - erfc(x))


REWRITES: dict[AluOp, Callable[[AluExp], AluExp]] = {
    AluOp.Exp: exp, AluOp.Log: log, AluOp.Tanh: tanh, AluOp.Atan: atan, AluOp.Asin: asin,
    AluOp.Erf: erf, AluOp.Erfc: erfc,
}


def expand(root: AluExp, capabilities: Capabilities) -> AluExp:
    """`root` with every float math op the renderer does not spell natively written
    as primitive ops (float16 through float32)."""
    done: dict[AluExp, AluExp] = {}
    found = active_lineage()
    for node in root.toposort():
        src = tuple(done[s] for s in node.src)
        if capabilities.expands(node.op) and node.op in REWRITES:
            arg = src[0].cast(F32)
            out = REWRITES[node.op](arg).cast(node.dtype)
            if found is not None:   # (the lab traces each generated line to its equation)
                found.derive_all(out, node, src)
        elif src != node.src:
            out = AluExp(node.op, node.dtype, src, node.arg)
        else:
            out = node
        if found is not None:
            found.derive(out, node)
        done[node] = out
    return done[root]


def expand_kernel(kernel: Kernel, capabilities: Capabilities) -> Kernel:
    """The kernel with its body and epilogue expanded (the same kernel if nothing is)."""
    exp = expand(kernel.exp, capabilities)
    reduction = kernel.reduction
    if reduction is not None:
        reduction = replace(reduction, epilogue=expand(reduction.epilogue, capabilities))
    if exp is kernel.exp and reduction == kernel.reduction:
        return kernel
    return replace(kernel, exp=exp, reduction=reduction)
