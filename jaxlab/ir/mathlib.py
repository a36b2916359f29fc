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
from typing import Callable

from jaxlab.ir import mathconst as K
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.floatbits import FLOAT32
from jaxlab.ir.floatsign import Sign, sign_of
from jaxlab.ir.kernel import Kernel
from jaxlab.ir.mathlib64 import REWRITES64
from jaxlab.ir.provenance import active_lineage
from jaxlab.ir.vocabulary import Capabilities

F32, I32 = DType.float32, DType.int32


_f, _bits, _float = FLOAT32.const, FLOAT32.bits_of, FLOAT32.from_bits
_abs, _signed, _horner = FLOAT32.abs, FLOAT32.signed, FLOAT32.horner
_power_of_two = FLOAT32.power_of_two


def _exp_within(x: AluExp, lo: int, hi: int) -> AluExp:
    """e^x for an x whose n = x log2(e), rounded to an integer, lies in [lo, hi] (at most
    150 from 0): x = n ln2 + r, e^r by a degree-6 minimax polynomial, times 2^n, rounded
    once (into the subnormals too). n is rounded by adding 1.5*2^23, so t's bits are
    n's plus a constant: no float->int conversion, no floor."""
    t = x * K.LOG2E + K.ROUND_MAGIC
    n = FLOAT32.rounded_back(t)
    r = (x - n * K.LN2_HI) - n * K.LN2_LO
    k = _bits(t).bitcast(I32) - K.ROUND_MAGIC_BITS
    if -FLOAT32.bias < lo and hi <= FLOAT32.bias:   # every 2^n is normal
        return _horner(r, K.EXP_POLY) * _power_of_two(k)
    if hi - lo <= 2 * FLOAT32.bias - 1:
        # 2^(n + shift) is normal for every n; the polynomial's coefficients carry
        # 2^-shift (exactly), so the product is the one rounding
        shift = 1 - FLOAT32.bias - lo if lo <= -FLOAT32.bias else FLOAT32.bias - hi
        scaled = [c * 2.0 ** -shift for c in K.EXP_POLY]
        return _horner(r, scaled) * _power_of_two(k + shift)
    # 2^(n/2) 2^(n - n/2): one factor alone would overflow before the product
    # underflows to a subnormal, which is then rounded once
    half = k.binary(AluOp.Shr, 1)
    return _horner(r, K.EXP_POLY) * _power_of_two(half) * _power_of_two(k - half)


def exp(x: AluExp) -> AluExp:
    """The clamp keeps 2^n finite (NaN stays NaN); an argument of known sign is
    clamped on one side only, which also saves a factor of 2^n."""
    sign = sign_of(x)
    lo, hi = K.EXP_MIN, K.EXP_MAX
    if sign is not Sign.NONNEG:
        x = x.max(K.EXP_MIN)
    else:
        lo = 0.0
    if sign is not Sign.NONPOS:
        x = x.min(K.EXP_MAX)
    else:
        hi = 0.0
    return _exp_within(x, round(lo * K.LOG2E), round(hi * K.LOG2E))


def log(x: AluExp) -> AluExp:
    """Cephes logf: x = 2^e m with m in [sqrt(1/2), sqrt(2)), a polynomial in m - 1."""
    t, e = FLOAT32.log_reduce(x)
    z = t * t
    p = _horner(t, K.LOG_POLY) * t * z
    return FLOAT32.log_edges(x, t + (p + e * K.LN2_LO - z * 0.5) + e * K.LN2_HI)


def tanh(x: AluExp) -> AluExp:
    """Cephes tanhf: x + x^3 P(x^2) near 0, 1 - 2/(e^2|x| + 1) beyond (1 for large |x|).
    On |x|'s bits: its integer minimum clamps e^2|x|'s argument, and NaN (whose bits
    pass inf's) takes the polynomial, which keeps it."""
    magnitude = _bits(x) & FLOAT32.magnitude
    a = _float(magnitude)   # on |x|, the sign put back last: tanh(-0) is -0
    z = a * a
    small = a + a * z * _horner(z, K.TANH_POLY)
    clamped = _float(magnitude.min(_bits(_f(K.TANH_ONE))))
    e = _exp_within(clamped + clamped, 0, round(2 * K.TANH_ONE * K.LOG2E))
    large = 1.0 - _f(2.0) / (e + 1.0)
    # large for |x| in [TANH_SMALL, inf]: one unsigned compare of the bits' offset
    start = _bits(_f(K.TANH_SMALL))
    inside = (magnitude - start).lt(FLOAT32.exponent - start + 1)
    return _signed(inside.where(large, small), x)


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


def _rewrite(node: AluExp, capabilities: Capabilities) -> Callable[[AluExp], AluExp] | None:
    """The rewrite of a float math node: float64 always (no renderer spells its math:
    mathlib64.py), narrower floats where the renderer does not."""
    if node.dtype is DType.float64:
        return REWRITES64.get(node.op)
    return REWRITES.get(node.op) if capabilities.expands(node.op) else None


def expand(root: AluExp, capabilities: Capabilities) -> AluExp:
    """`root` with every float math op the renderer does not spell natively written
    as primitive ops (float16 through float32; float64 in its own precision)."""
    done: dict[AluExp, AluExp] = {}
    found = active_lineage()
    for node in root.toposort():
        src = tuple(done[s] for s in node.src)
        rewrite = _rewrite(node, capabilities)
        if rewrite is not None:
            wide = node.dtype is DType.float64
            out = rewrite(src[0] if wide else src[0].cast(F32))
            out = out if wide else out.cast(node.dtype)
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
