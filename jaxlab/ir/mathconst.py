"""The constants of jaxlab's float math, written once: the rewrites of ir/mathlib.py
and the renderers' native sin/cos/erf read them from here.

Polynomials are Cephes' float32 minimax fits (highest power first); erfc is the
Chebyshev fit of Numerical Recipes (fractional error < 1.2e-7).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

# exp: x = n ln2 + r, |r| <= ln2/2; ln2 in two parts so that n * LN2_HI is exact
LOG2E = 1.4426950408889634
LN2_HI = 0.693359375
LN2_LO = -2.12194440e-4
# e^r on |r| <= ln2/2, degree 6, highest power first: Lawson's minimax fit of relative
# error 3.1e-9 (benchmarks/math_fit.py), one degree below Cephes' 1 + r + r^2 P(r)
EXP_POLY = (1.381458598e-3, 8.368716575e-3, 4.166838899e-2, 1.666652113e-1,
            4.999999404e-1, 1.0, 1.0)
# the same to degree 5 (relative error 1.05e-7, benchmarks/math_fit.py): the one-sided
# exps (wasm's exp_nonpos, softmax's exp(x - max); exp_nonneg, tanh's), whose result is
# rounded once from it
EXP_POLY5 = (8.3125077544e-3, 4.1890150284e-2, 1.6667114738e-1, 4.9999231543e-1, 1.0, 1.0)
# n + 1.5*2^23 (|n| < 2^22) rounds n to an integer and holds it in its low bits
ROUND_MAGIC = 1.5 * 2.0 ** 23
ROUND_MAGIC_BITS = 0x4B400000
EXP_MAX = 88.8          # above: e^x overflows to inf
EXP_MIN = -103.98       # below: e^x underflows to 0

# log: x = 2^e m, m in [sqrt(1/2), sqrt(2)); log(1 + f) = f - f^2/2 + f^3 P(f)
SQRT_HALF = 0.70710678118654752440
LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
            1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
            3.3333331174e-1)

# sin, cos on |r| <= pi/4 (webgpu's after Payne-Hanek, wasm's): sin r = r + r^3 S(r^2),
# cos r = 1 - r^2/2 + r^4 C(r^2)
SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
COS_POLY = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
# sin r = r + r^3 P(r^2) on |r| <= pi/2: Lawson's minimax fit of relative error 6.1e-9
# (benchmarks/math_fit.py), highest power first
SIN_PI_POLY = (2.605750069e-6, -1.980959059e-4, 8.333066478e-3, -1.666665971e-1)
# pi/2 in two double parts (fdlibm's pio2_1, pio2_1t): j * PIO2_HI is exact in f64
PIO2_HI = 1.57079632673412561417
PIO2_LO = 6.07710050650619224932e-11

# tanh: x + x^3 P(x^2) for |x| < 0.625, 1 - 2/(e^2|x| + 1) beyond
TANH_SMALL = 0.625
TANH_ONE = 10.0         # float32 tanh rounds to 1 from about 9.01 on
TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
             -3.33332819422e-1)

# atan: reduce |x| below tan(pi/8), then t + t^3 P(t^2)
TAN_3PI_8 = 2.414213562373095
TAN_PI_8 = 0.4142135623730950
ATAN_POLY = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)

# asin: t + t^3 P(t^2), with the half-angle identity above |x| = 1/2
ASIN_POLY = (4.2163199048e-2, 2.4181311049e-2, 4.5470025998e-2, 7.4953002686e-2,
             1.6666752422e-1)

# erfc(z) = t exp(-z^2 + ERFC_COEFFS[0] + t (c1 + t (c2 + ...))), t = 1/(1 + z/2);
# erf near 0 (|x| < ERF_SERIES_BELOW) by its Taylor series to ERF_SERIES_TERMS terms
ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)
ERFC_ZERO_ABOVE = 11.0      # float32 erfc(z) is 0 from z = 10.06 on
ERF_SERIES_BELOW = 0.5
ERF_SERIES_TERMS = 13
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def two_over_pi_bits(bits: int) -> int:
    """The first `bits` fraction bits of 2/pi as an integer, by exact integer
    arithmetic (Machin's formula for pi with 64 guard bits): Payne-Hanek reduction
    takes its words from here."""
    one = 1 << (bits + 64)

    def atan_inv(x: int) -> int:   # atan(1/x) * one
        total, term, n, sign = 0, one // x, 1, 1
        while term:
            total += sign * (term // n)
            term //= x * x
            n, sign = n + 2, -sign
        return total
    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    return (2 * one << bits) // pi


def two_over_pi_chunks(width: int, count: int) -> list[int]:
    """2/pi's fraction bits as `count` integers of `width` bits, most significant first."""
    value = two_over_pi_bits(width * count)
    mask = (1 << width) - 1
    return [(value >> (width * (count - 1 - i))) & mask for i in range(count)]


# --- float64: Taylor coefficients, exact to the last bit, and constants split so that
# an integer times the high part is exact ------------------------------------------------
def _pi(bits: int) -> Fraction:
    """pi to `bits` fraction bits, from the integer arithmetic of two_over_pi_bits."""
    return Fraction(2 << (2 * bits), two_over_pi_bits(2 * bits))


def _ln2(bits: int) -> Fraction:
    """ln 2 = sum 1/(k 2^k), to `bits` bits."""
    total = Fraction(0)
    for k in range(1, bits + 8):
        total += Fraction(1, k << k)
    return total


def split(value: Fraction, bits: int) -> tuple[float, float]:
    """(hi, lo): hi is `value` rounded to `bits` significant bits, lo the double nearest
    the rest, so that n * hi is exact for |n| < 2^(53 - bits)."""
    exponent = math.floor(math.log2(value))
    scale = Fraction(2) ** (bits - 1 - exponent)
    hi = Fraction(round(value * scale)) / scale
    return float(hi), float(value - hi)


PI_EXACT = _pi(200)
LN2_EXACT = _ln2(200)
LN2_64 = split(LN2_EXACT, 32)           # n * LN2_64[0] exact for |n| < 2^21
PIO2_64 = split(PI_EXACT / 2, 53)       # pi/2 as a double-double
PIO4_64 = split(PI_EXACT / 4, 53)
EXP64_MAX = 710.0                       # above: e^x overflows
EXP64_MIN = -746.0                      # below: e^x underflows to 0
EXP64_POLY = tuple(1 / math.factorial(k) for k in range(13, 1, -1))   # e^r = 1 + r + r^2 P(r)
# log(1 + f) = 2 atanh(s), s = f/(2 + f): R(z) = 2 (z/3 + z^2/5 + ...), z = s^2 <= 0.0295
LOG64_POLY = tuple(2 / (2 * k + 1) for k in range(12, 0, -1))
TANH64_ONE = 22.0                       # tanh(x) rounds to 1 from 19.1 on
TANH64_SMALL = 0.25                     # below: tanh x = x + x^3 P(x^2), Taylor to x^23


def _bernoulli(n: int) -> list[Fraction]:
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


# tanh x = sum 2^2n (2^2n - 1) B_2n x^(2n-1) / (2n)!, from the x^3 term on
TANH64_POLY = tuple(float(Fraction(4 ** n * (4 ** n - 1)) * _bernoulli(24)[2 * n]
                          / math.factorial(2 * n)) for n in range(12, 1, -1))
ATAN64_POLY = tuple((-1) ** k / (2 * k + 1) for k in range(21, 0, -1))   # after t: t^3 term on
ASIN64_POLY = tuple(math.comb(2 * k, k) / (4 ** k * (2 * k + 1)) for k in range(25, 0, -1))
SIN64_POLY = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(9, 0, -1))
COS64_POLY = tuple((-1) ** k / math.factorial(2 * k) for k in range(9, 1, -1))   # from r^4 on
TAN_3PI_8_64 = 2.414213562373095
TAN_PI_8_64 = 0.41421356237309503


def parts(value: Fraction, bits: int, count: int) -> tuple[float, ...]:
    """`value` as `count` doubles of `bits` significant bits each but the last, a double:
    j * part is exact for |j| < 2^(53 - bits)."""
    out = []
    for _ in range(count - 1):
        hi = split(value, bits)[0]
        out.append(hi)
        value -= Fraction(hi)
    return (*out, float(value))


PIO2_PARTS64 = parts(PI_EXACT / 2, 33, 3)   # sin/cos reduction for |x| < SINCOS64_MEDIUM
SINCOS64_MEDIUM = 2.0 ** 19                 # above: Payne-Hanek with TWO_OVER_PI_CHUNKS64
TWO_OVER_PI_CHUNKS64 = tuple(two_over_pi_chunks(24, 48))   # reach past 2^1024 * 2^-130


def float32_parts(value: Fraction, widths: Sequence[int]) -> tuple[float, ...]:
    """`value` as float32 parts of the given significant bits each (the rest after the
    last part is dropped): q * part is exact for |q| < 2^(24 - width)."""
    out = []
    for width in widths:
        part = split(value, width)[0]
        out.append(part)
        value -= Fraction(part)
    return tuple(out)


# pi in four float32 parts for Cody-Waite: q * part exact for q and q + 1/2 while
# |q pi| < 8192; 54 bits in all, so a remainder near 0 keeps its own precision
PI_PARTS = float32_parts(PI_EXACT, (8, 11, 11, 24))
