"""Complex elementwise functions as real arithmetic on the parts (re, im), with the
values C99 Annex G gives at infinities, NaNs and signed zeros (the Array API standard's
special cases).

Each function is a formula that is accurate for finite values (no overflow of squares
for large parts, no cancellation near the zeros), then a table of special cases: rows
of (condition on the parts, result), the first that holds winning, applied as a select
chain over the formula. Functions with a symmetry (odd, even, conjugate-symmetric) are
computed in the first quadrant and take their signs back from the operand, so their
tables list only non-negative parts, as the standard does. sin, cos, tan, asin, acos
and atan follow from the hyperbolic functions (sin z = -i sinh(iz), ...), which is how
C99 defines their special values too.

Everything here is lazy expressions, so every device computes the same values; `Real`
only lets the formulas read as arithmetic.
"""
from __future__ import annotations

import math
from typing import Callable, Union

from jaxlab.core import elementwise as ew
from jaxlab.core.primitives import lowerings
from jaxlab.engine import complex as cx
from jaxlab.engine import lazy as lz
from jaxlab.engine.complex import ComplexLazy
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp, Divisor
from jaxlab.ir.dtypes import DType

INF, NAN, PI = math.inf, math.nan, math.pi
LN2 = math.log(2.0)
# beyond it, 1 is negligible beside |z| (1/|z|^2 < 2^-56) and squares of parts still fit
# float32: the inverse functions switch to their asymptotic forms there
HUGE = 2.0 ** 28
# parts are scaled by powers of two (ew.power_of_two_scale) before a division by them
SCALE_EDGE = ew.SCALE_EDGE
EXP_OVERFLOWS = 88.0    # e^x of float32 overflows soon after: sinh, cosh halve it first
TANH_SATURATED = 20.0   # tanh(x) rounds to 1 beyond it; cosh(2x) would overflow further on


class Real:
    """A real lazy expression with arithmetic and comparison operators."""

    __slots__ = ("lazy",)

    def __init__(self, lazy: Lazy) -> None:
        self.lazy = lazy

    def lift(self, value: "Operand") -> Lazy:
        if isinstance(value, Real):
            return value.lazy
        dtype = DType.bool if isinstance(value, bool) else self.lazy.dtype
        return lz.full(self.lazy.shape, value, dtype, self.lazy.device)

    def _op(self, op: AluOp, *others: "Operand") -> "Real":
        return Real(lz.elementwise(op, [self.lazy, *(self.lift(o) for o in others)]))

    def _rop(self, op: AluOp, other: "Operand") -> "Real":
        return Real(lz.elementwise(op, [self.lift(other), self.lazy]))

    def __add__(self, o): return self._op(AluOp.Add, o)            # noqa: E704
    def __radd__(self, o): return self._rop(AluOp.Add, o)          # noqa: E704
    def __sub__(self, o): return self._op(AluOp.Sub, o)            # noqa: E704
    def __rsub__(self, o): return self._rop(AluOp.Sub, o)          # noqa: E704
    def __mul__(self, o): return self._op(AluOp.Mul, o)            # noqa: E704
    def __rmul__(self, o): return self._rop(AluOp.Mul, o)          # noqa: E704
    def __truediv__(self, o): return self._op(AluOp.Div, o)        # noqa: E704
    def __rtruediv__(self, o): return self._rop(AluOp.Div, o)      # noqa: E704
    def __neg__(self): return self._op(AluOp.Mul, -1.0)            # noqa: E704
    def __lt__(self, o): return self._op(AluOp.Cmplt, o)           # noqa: E704
    def __gt__(self, o): return self._rop(AluOp.Cmplt, o)          # noqa: E704
    def __and__(self, o): return self._op(AluOp.And, o)            # noqa: E704
    def __or__(self, o): return self._op(AluOp.Or, o)              # noqa: E704
    def __xor__(self, o): return self._op(AluOp.Xor, o)            # noqa: E704
    def __invert__(self): return self._op(AluOp.Xor, True)         # noqa: E704

    def eq(self, o: "Operand") -> "Real":
        return ~self._op(AluOp.Cmpne, o)

    def over(self, o: "Operand") -> "Real":
        """self / o for a divisor within [2^-126, 2^126] (or 0) wherever the quotient is
        used: a renderer need not guard it against huge divisors (ir/alu.py Divisor)."""
        return Real(lz.elementwise(AluOp.Div, [self.lazy, self.lift(o)], arg=Divisor.BOUNDED))


Operand = Union[Real, float, bool]
Complex = tuple[Real, Real]


def where(cond: Real, yes: Operand, no: Operand, like: Real | None = None) -> Real:
    """yes where cond holds, else no; `like` gives the dtype when both are numbers."""
    like = next(v for v in (yes, no, like) if isinstance(v, Real))
    return Real(lz.elementwise(AluOp.Where, [cond.lazy, like.lift(yes), like.lift(no)]))


def _alu(op: AluOp) -> Callable[[Real], Real]:
    return lambda x: Real(lz.elementwise(op, [x.lazy]))


exp, log, sqrt = _alu(AluOp.Exp), _alu(AluOp.Log), _alu(AluOp.Sqrt)
sin, cos, tanh = _alu(AluOp.Sin), _alu(AluOp.Cos), _alu(AluOp.Tanh)


def atan2(y: Real, x: Real) -> Real:
    return Real(lowerings[ew.atan2_p](y.lazy, x.lazy))


def fabs(x: Real) -> Real:
    return Real(lowerings[ew.abs_p](x.lazy))


def isnan(x: Real) -> Real:
    return x._op(AluOp.Cmpne, x)


def isinf(x: Real) -> Real:
    return fabs(x).eq(INF)


def isfinite(x: Real) -> Real:
    return (x - x).eq(0.0)


def signbit(x: Real) -> Real:
    """Negative, -0.0 included (1/-0.0 is -inf); a NaN counts as positive."""
    return (x < 0.0) | (x.eq(0.0) & (1.0 / x < 0.0))


def negate_where(cond: Real, x: Real) -> Real:
    return where(cond, -x, x)


def power_of_two_scale(big: Real) -> Real:
    return Real(ew.power_of_two_scale(big.lazy))


class Magnitude:
    """max(|a|, |b|) and what dividing by it needs: `scale`, a power of two, and `unit`,
    max * scale (1 where both parts are 0), so that part / max is (part * scale) / unit."""

    __slots__ = ("big", "small", "scale", "unit", "zero")

    def __init__(self, a: Real, b: Real) -> None:
        # NaN-propagating max and min: a GPU compiler may turn `a < b ? b : a` into its
        # max, which drops a NaN (NVIDIA's does: log(0 + NaN j) came out -inf + NaN j)
        a, b = fabs(a), fabs(b)
        self.big, self.small = a._op(AluOp.Max, b), a._op(AluOp.Min, b)
        self.zero = self.big.eq(0.0)
        self.scale = power_of_two_scale(self.big)
        self.unit = where(self.zero, 1.0, self.big * self.scale)

    def divide(self, part: Real) -> Real:
        """part / max(|a|, |b|) for a part at most that large (0 where both are 0)."""
        return (part * self.scale).over(self.unit)

    @property
    def ratio(self) -> Real:
        """min / max, 0 where both are 0."""
        return self.divide(self.small)


def hypot(a: Real, b: Real) -> Real:
    """sqrt(a^2 + b^2) without overflow or underflow of the squares; inf if a part is."""
    m = Magnitude(a, b)
    ratio = m.ratio
    return where(isinf(a) | isinf(b), INF, m.big * sqrt(1.0 + ratio * ratio))


def log_hypot(a: Real, b: Real) -> Real:
    """log |a + ib|, finite where |a + ib| itself would overflow (parts past 1.2e38);
    inf if a part is (even with a NaN beside it)."""
    m = Magnitude(a, b)
    ratio = m.ratio
    return where(isinf(a) | isinf(b), INF, log(m.big) + 0.5 * log1p(ratio * ratio))


# --- real functions the complex formulas need, accurate near 0 --------------------------

def expm1(x: Real) -> Real:
    """Kahan: the rounding of u = e^x cancels in (u - 1) x / log u."""
    u = exp(x)
    kahan = (fabs(x) < 0.5) & ~u.eq(1.0)
    v = where(kahan, u, 2.0)
    return where(kahan, ((v - 1.0) * x).over(log(v)), where(u.eq(1.0), x, u - 1.0))


def log1p(x: Real) -> Real:
    """Goldberg: log(u) x / (u - 1) with u = 1 + x cancels the rounding of u."""
    u = 1.0 + x
    goldberg = (fabs(x) < 0.5) & ~u.eq(1.0)
    v = where(goldberg, u, 2.0)
    return where(goldberg, (x * log(v)).over(v - 1.0), where(u.eq(1.0), x, log(u)))


def half_exp(x: Real) -> Real:
    """e^x / 2, finite for x up to log(max) + ln 2 (e^x alone overflows float32 past 88.7)."""
    return where(x > EXP_OVERFLOWS, exp(x - LN2), 0.5 * exp(x))


def sinh(x: Real) -> Real:
    # near 0, two terms of opposite sign: no cancellation
    near = 0.5 * (expm1(x) - expm1(-x))
    return where(fabs(x) > EXP_OVERFLOWS, negate_where(signbit(x), half_exp(fabs(x))), near)


def cosh(x: Real) -> Real:
    h = half_exp(fabs(x))
    return h + 0.25 / h


def asinh(x: Real) -> Real:
    a = fabs(x)
    huge = a > HUGE
    small = where(huge, 0.0, a)
    near = log1p(small + small * small / (1.0 + sqrt(1.0 + small * small)))
    return negate_where(signbit(x), where(huge, log(a) + LN2, near))


# --- tables and symmetries --------------------------------------------------------------

Row = tuple[Real, tuple[Operand, Operand]]


def special_cases(formula: Complex, *rows: Row) -> Complex:
    """The formula, except where a row's condition holds (the first such row wins)."""
    re, im = formula
    for cond, (row_re, row_im) in reversed(rows):
        re, im = where(cond, row_re, re), where(cond, row_im, im)
    return re, im


def odd(fn: Callable[[Real, Real], Complex]) -> Callable[[Real, Real], Complex]:
    """f(-z) = -f(z) and f(conj z) = conj f(z): computed at (|a|, |b|)."""
    def f(a: Real, b: Real) -> Complex:
        re, im = fn(fabs(a), fabs(b))
        return negate_where(signbit(a), re), negate_where(signbit(b), im)
    return f


def even(fn: Callable[[Real, Real], Complex]) -> Callable[[Real, Real], Complex]:
    """f(-z) = f(z) and f(conj z) = conj f(z): computed at (|a|, |b|)."""
    def f(a: Real, b: Real) -> Complex:
        re, im = fn(fabs(a), fabs(b))
        return re, negate_where(signbit(a) ^ signbit(b), im)
    return f


def times_minus_i(fn: Callable[[Real, Real], Complex]) -> Callable[[Real, Real], Complex]:
    """z -> -i fn(iz): sin from sinh, tan from tanh, asin from asinh, atan from atanh."""
    def f(a: Real, b: Real) -> Complex:
        re, im = fn(-b, a)
        return im, -re
    return f


# --- the functions: (re, im) -> (re, im) ------------------------------------------------

def c_exp(a: Real, b: Real) -> Complex:
    half = half_exp(a)   # e^a cos b is finite for some a where e^a is not
    return special_cases(
        (half * cos(b) * 2.0, half * sin(b) * 2.0),
        (b.eq(0.0), (exp(a), b)),
        ((a.eq(INF)) & ~isfinite(b), (INF, NAN)),
        ((a.eq(-INF)) & ~isfinite(b), (0.0, 0.0)))


def c_expm1(a: Real, b: Real) -> Complex:
    # e^a cos b - 1 = expm1(a) cos b - 2 sin^2(b/2): no cancellation near 0
    half_sin = sin(0.5 * b)
    return special_cases(
        (expm1(a) * cos(b) - 2.0 * half_sin * half_sin, exp(a) * sin(b)),
        (a.eq(0.0) & b.eq(0.0), (0.0, b)),
        (b.eq(0.0), (expm1(a), b)),
        ((a.eq(INF)) & ~isfinite(b), (INF, NAN)),
        ((a.eq(-INF)) & ~isfinite(b), (-1.0, 0.0)))


def c_log(a: Real, b: Real) -> Complex:
    return log_hypot(a, b), atan2(b, a)


def c_log1p(a: Real, b: Real) -> Complex:
    one_plus_a = 1.0 + a
    # |1 + z|^2 - 1 = a (2 + a) + b^2: log1p of it keeps small z's digits
    near_zero = (fabs(a) < 0.5) & (fabs(b) < 0.5)
    re = where(near_zero, 0.5 * log1p(a * (2.0 + a) + b * b), log_hypot(one_plus_a, b))
    return re, atan2(b, one_plus_a)


def c_sqrt(a: Real, b: Real) -> Complex:
    """t = sqrt((|a| + |z|) / 2); the other part is b / 2t. The parts are scaled by an
    even power of two first, the result by its square root: by 1/4 past 2^126, so that
    |a| + |z| cannot overflow, and by 2^64 below 2^-64, so that no step is subnormal (a
    device may flush those). Infinite parts take the standard's values as they are."""
    big = Magnitude(a, b).big
    huge, tiny = big > 2.0 ** 126, big < 1.0 / SCALE_EDGE
    scale = where(huge, 0.25, where(tiny, SCALE_EDGE, 1.0, like=a))
    sa, sb = a * scale, b * scale
    t = sqrt(0.5 * (fabs(sa) + hypot(sa, sb)))
    u = sb.over(2.0 * t)   # t is at least 2^-43 unless z is 0
    a_positive = ~signbit(a) | a.eq(0.0)
    re = where(a_positive, t, fabs(u))
    im = where(a_positive, u, negate_where(signbit(b), t))
    unscale = where(huge, 2.0, where(tiny, SCALE_EDGE ** -0.5, 1.0, like=a))
    return special_cases(
        (re * unscale, im * unscale),
        (isinf(b), (INF, b)),
        (a.eq(INF), (INF, b * 0.0)),   # b * 0: b's sign, NaN for NaN
        (a.eq(-INF), (fabs(b * 0.0), where(signbit(b), -INF, INF, like=a))),
        (a.eq(0.0) & b.eq(0.0), (0.0, b)))


@odd
def c_sinh(x: Real, y: Real) -> Complex:
    return special_cases(
        (sinh(x) * cos(y), cosh(x) * sin(y)),
        (y.eq(0.0), (sinh(x), y)),
        (x.eq(0.0) & ~isfinite(y), (0.0, NAN)),
        (x.eq(INF) & ~isfinite(y), (INF, NAN)))


@even
def c_cosh(x: Real, y: Real) -> Complex:
    return special_cases(
        (cosh(x) * cos(y), sinh(x) * sin(y)),
        (y.eq(0.0), (cosh(x), 0.0)),
        (x.eq(0.0) & ~isfinite(y), (NAN, 0.0)),
        (x.eq(INF) & ~isfinite(y), (INF, NAN)))


@odd
def c_tanh(x: Real, y: Real) -> Complex:
    """(sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y): the denominator is
    cosh 2x + cos 2y without its cancellation near y = pi/2."""
    sh, cy, sy = sinh(x), cos(y), sin(y)
    den = sh * sh + cy * cy
    saturated = x > TANH_SATURATED
    re = where(saturated, 1.0, sh * cosh(x) / den)
    im = where(saturated, 4.0 * sy * cy * exp(-2.0 * x), sy * cy / den)
    return special_cases(
        (re, im),
        (y.eq(0.0), (tanh(x), y)),
        (x.eq(INF), (1.0, 0.0)),
        (x.eq(0.0) & ~isfinite(y), (0.0, NAN)),
        (~isfinite(y), (NAN, NAN)))


def _large(a: Real, b: Real) -> Real:
    """|z| so large (or infinite) that 1 is negligible beside it."""
    return (fabs(a) > HUGE) | (fabs(b) > HUGE)


def _log_2z(a: Real, b: Real) -> Complex:
    """log(2z): asinh(z) and acosh(z) for huge z (Re z >= 0 for asinh)."""
    return log_hypot(a, b) + LN2, atan2(b, a)


@odd
def c_asinh(x: Real, y: Real) -> Complex:
    """Kahan's: with w = iz, asinh z = (asinh Im(conj(sqrt(1-w)) sqrt(1+w)),
    atan2(y, Re(sqrt(1-w) sqrt(1+w))))."""
    large = _large(x, y)
    sx, sy = where(large, 0.0, x), where(large, 0.0, y)   # keep the unused branch finite
    s1r, s1i = c_sqrt(1.0 + sy, -sx)
    s2r, s2i = c_sqrt(1.0 - sy, sx)
    near = asinh(s1r * s2i - s1i * s2r), atan2(sy, s1r * s2r - s1i * s2i)
    far = _log_2z(x, y)
    return special_cases(
        (where(large, far[0], near[0]), where(large, far[1], near[1])),
        (y.eq(0.0), (asinh(x), y)))


def c_acosh(a: Real, b: Real) -> Complex:
    """Kahan's: (asinh Re(conj(sqrt(z-1)) sqrt(z+1)), 2 atan2(Im sqrt(z-1), Re sqrt(z+1)))."""
    large = _large(a, b)
    sa, sb = where(large, 0.0, a), where(large, 0.0, b)
    s1r, s1i = c_sqrt(sa - 1.0, sb)
    s2r, s2i = c_sqrt(sa + 1.0, sb)
    near = asinh(s1r * s2r + s1i * s2i), 2.0 * atan2(s1i, s2r)
    far = _log_2z(a, b)
    return special_cases(
        (where(large, far[0], near[0]), where(large, far[1], near[1])),
        (a.eq(0.0) & isnan(b), (NAN, PI / 2)))


def c_acos(a: Real, b: Real) -> Complex:
    """acos z = -i acosh z where Im z >= 0 (+0 included), i acosh z below."""
    re, im = c_acosh(a, b)
    below = signbit(b)
    return negate_where(below, im), negate_where(~below, re)


@odd
def c_atanh(x: Real, y: Real) -> Complex:
    """(log1p(4x / ((1-x)^2 + y^2)) / 4, atan2(2y, (1-x)(1+x) - y^2) / 2); beyond HUGE
    the real part is x / |z|^2 and the imaginary one pi/2."""
    large = _large(x, y)
    sx, sy = where(large, 0.0, x), where(large, 0.0, y)
    one_minus = 1.0 - sx
    near = (0.25 * log1p(4.0 * sx / (one_minus * one_minus + sy * sy)),
            0.5 * atan2(2.0 * sy, one_minus * (1.0 + sx) - sy * sy))
    h = hypot(x, y)
    return special_cases(
        (where(large, x / h / h, near[0]), where(large, PI / 2, near[1])),
        (isnan(y) & (x.eq(0.0) | isinf(x)), (0.0, NAN)),
        (isinf(x) | isinf(y), (0.0, PI / 2)),
        (isnan(x) | isnan(y), (NAN, NAN)))


c_sin = times_minus_i(c_sinh)
c_tan = times_minus_i(c_tanh)
c_asin = times_minus_i(c_asinh)
c_atan = times_minus_i(c_atanh)


def c_cos(a: Real, b: Real) -> Complex:
    return c_cosh(-b, a)   # cos z = cosh(iz)


def c_sign(a: Real, b: Real) -> Complex:
    """z / |z| as (a, b) / max(|a|, |b|) / sqrt(1 + ratio^2) (|z| may overflow), the
    parts and the divisor scaled alike; +0 + 0j at zero, as the standard asks."""
    m = Magnitude(a, b)
    ratio = m.ratio
    unit = m.unit * sqrt(1.0 + ratio * ratio)
    return (where(m.zero, 0.0, (a * m.scale).over(unit)),
            where(m.zero, 0.0, (b * m.scale).over(unit)))


def _half_power(scale: Real, sign: float) -> Real:
    """2^(32 sign) where scale is 2^64, its inverse where 2^-64, 1 where 1: a square root
    of scale^sign, exact."""
    up, down = SCALE_EDGE ** (0.5 * sign), SCALE_EDGE ** (-0.5 * sign)
    return where(scale > 1.0, up, where(scale < 1.0, down, 1.0, like=scale))


def _copysign_unit(x: Real, is_inf: Real) -> Real:
    """1 where x is infinite, else 0, with x's sign."""
    return negate_where(signbit(x), where(is_inf, 1.0, 0.0, like=x))


def c_div(a: Real, b: Real, c: Real, d: Real) -> Complex:
    """(a + ib) / (c + id) by Smith's algorithm on scaled parts: each pair is scaled by a
    power of two into [2^-64, 2^64] first, so that c + d r and a + b r cannot overflow
    where the quotient does not (JAX's NaN or 0 at parts near 3e38) and the divisor is
    never past 2^126; the quotient is scaled back in two equal steps. Where both parts
    come out NaN, C99 Annex G's recovery (as XLA's) gives the infinities and zeros."""
    num, den = Magnitude(a, b), Magnitude(c, d)
    sa, sb, sc, sd = a * num.scale, b * num.scale, c * den.scale, d * den.scale
    use_c = fabs(d) < fabs(c)
    big, small = where(use_c, sc, sd), where(use_c, sd, sc)
    r = small.over(big)
    q = big + small * r
    re = where(use_c, sa + sb * r, sa * r + sb).over(q)
    im = where(use_c, sb - sa * r, sb * r - sa).over(q)
    half = _half_power(den.scale, 1.0) * _half_power(num.scale, -1.0)
    re, im = re * half * half, im * half * half

    finite_num, finite_den = isfinite(a) & isfinite(b), isfinite(c) & isfinite(d)
    inf_a, inf_b, inf_c, inf_d = isinf(a), isinf(b), isinf(c), isinf(d)
    zero_den = c.eq(0.0) & d.eq(0.0) & ~(isnan(a) & isnan(b))
    inf_sign = where(signbit(c), -INF, INF, like=c)
    ua, ub = _copysign_unit(a, inf_a), _copysign_unit(b, inf_b)
    uc, ud = _copysign_unit(c, inf_c), _copysign_unit(d, inf_d)
    return special_cases(
        (re, im),
        (isnan(re) & isnan(im) & zero_den, (inf_sign * a, inf_sign * b)),
        (isnan(re) & isnan(im) & (inf_a | inf_b) & finite_den,
         ((ua * c + ub * d) * INF, (ub * c - ua * d) * INF)),
        (isnan(re) & isnan(im) & (inf_c | inf_d) & finite_num,
         ((a * uc + b * ud) * 0.0, (b * uc - a * ud) * 0.0)))


def on_parts(fn: Callable[[Real, Real], Complex]) -> Callable[[ComplexLazy], ComplexLazy]:
    """A complex lowering rule from a function of the parts."""
    def rule(z: ComplexLazy) -> ComplexLazy:
        re, im = fn(Real(z.re), Real(z.im))
        return cx.from_parts(re.lazy, im.lazy)
    return rule
