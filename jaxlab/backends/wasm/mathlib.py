"""The wasm math library: WAT functions that kernels call.

Only what ir/mathlib.py's rewrites do not give as well: sin and cos reduce their
argument in double precision, and erf/erfc compute ir/evaluate.py's own
double-precision formula, so they agree with the cpu backend bit for bit but for
rare roundings (optable.CAPABILITIES declares them native). Float math works on
four lanes (f32x4 in, f32x4 out), so a vectorised kernel calls it once per four
elements; scalar code splats its value and takes lane 0. Constants come from
ir/mathconst.py. Edges follow NumPy: NaN in gives NaN out.

Integer division and float remainder are scalar helpers: Wasm's i32.div_s
traps on x/0 and INT_MIN/-1, which the IR defines (x//0 = -1, x%0 = x).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Sequence

from jaxlab.ir import mathconst as K


def _k(value: float, lanes: str = "f32x4") -> str:
    """A constant in every lane."""
    n = 4 if lanes in ("f32x4", "i32x4") else 2
    text = repr(float(value)) if lanes[0] == "f" else str(int(value))
    return f"(v128.const {lanes} {' '.join([text] * n)})"


def _horner(x: str, coeffs: Sequence[float], lanes: str = "f32x4") -> str:
    """coeffs[0]*x^n + ... + coeffs[n], highest power first."""
    acc = _k(coeffs[0], lanes)
    for c in coeffs[1:]:
        acc = f"({lanes}.add ({lanes}.mul {acc} {x}) {_k(c, lanes)})"
    return acc


def _get(name: str) -> str:
    return f"(local.get ${name})"


@dataclass(frozen=True)
class MathFunction:
    name: str
    text: str
    needs: tuple[str, ...] = ()


FUNCTIONS: dict[str, MathFunction] = {}


def _define(name: str, text: str, needs: tuple[str, ...] = ()) -> None:
    FUNCTIONS[name] = MathFunction(name, text.strip("\n"), needs)


X, N, R = (_get(v) for v in ("x", "n", "r"))


# --- fused multiply-adds: f32x4.relaxed_madd is one instruction where the CPU fuses (and a
# multiply then an add where it does not: every use below is exact or accurate either way)
def _fma(a: str, b: str, c: str) -> str:
    """a * b + c."""
    return f"(f32x4.relaxed_madd {a} {b} {c})"


def _fma_horner(x: str, coeffs: Sequence[float]) -> str:
    """coeffs[0]*x^n + ... + coeffs[n] by multiply-adds, highest power first."""
    acc = _k(coeffs[0])
    for c in coeffs[1:]:
        acc = _fma(acc, x, _k(c))
    return acc


_PIO2_BITS = 12


def _parts(value: Fraction, bits: int, count: int) -> tuple[float, ...]:
    """`value` as `count` parts of `bits` significant bits (the last: the rest, in f32)."""
    out = []
    for _ in range(count - 1):
        scale = Fraction(2) ** (bits - 1 - math.floor(math.log2(abs(value))))
        part = Fraction(round(value * scale)) / scale
        out.append(float(part))
        value -= part
    return (*out, float(value))


_PIO2_PARTS = _parts(K.PI_EXACT / 2, _PIO2_BITS, 4)
SMALL_ARGUMENT = 4096.0   # |j| <= 2608 < 2^12: the f32 reduction is exact enough below


def _reduce_by_parts() -> str:
    return "\n".join(f"  (local.set $r {_fma('(local.get $j)', _k(-part), R)})"
                     for part in _PIO2_PARTS)

# --- sin and cos ---------------------------------------------------------------
def _reduce_half(lanes_expr: str, j: str, r: str) -> str:
    """x (two lanes as f64) = j*pi/2 + r, with pi/2 in two parts (fdlibm's pio2_1, pio2_1t)."""
    return f"""
  (local.set ${j} (f64x2.nearest (f64x2.mul {lanes_expr} {_k(2 / math.pi, 'f64x2')})))
  (local.set ${r} (f64x2.sub (f64x2.sub {lanes_expr}
                                       (f64x2.mul (local.get ${j}) {_k(K.PIO2_HI, 'f64x2')}))
                            (f64x2.mul (local.get ${j}) {_k(K.PIO2_LO, 'f64x2')})))"""


_LOW_HALVES = "i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23"
Z = _get("z")
BIG_ARGUMENT = 1e6   # below this, two-part pi/2 in double precision reduces exactly enough

# 2/pi in 24-bit chunks (as fdlibm's ipio2): chunk k weighs 2^(-24(k+1))
_TWO_OVER_PI = K.two_over_pi_chunks(24, 9)


def _big_terms() -> str:
    out = []
    for k, chunk in enumerate(_TWO_OVER_PI):
        scale = (f"(f64.reinterpret_i64 (i64.shl (i64.add (local.get $e) "
                 f"(i64.const {1023 - 150 - 24 * (k + 1)})) (i64.const 52)))")
        out.append(f"  (local.set $t (f64.mul (f64.mul (local.get $m) (f64.const {chunk})) {scale}))")
        out.append("  (local.set $y (f64.add (local.get $y) (f64.sub (local.get $t) (f64.mul "
                   "(f64.const 4) (f64.floor (f64.mul (local.get $t) (f64.const 0.25)))))))")
    return "\n".join(out)


_define("reduce_big", f"""
(func $reduce_big (param $x f32) (result f64)  ;; x * 2/pi mod 4 for a huge finite x (Payne-Hanek)
  (local $bits i32) (local $m f64) (local $e i64) (local $t f64) (local $y f64)
  ;; |x| = m * 2^(e - 150) with m < 2^24; m times a chunk is exact in f64, and each term
  ;; is reduced mod 4 exactly, so the terms that are multiples of 4 drop out
  (local.set $bits (i32.reinterpret_f32 (f32.abs (local.get $x))))
  (local.set $m (f64.convert_i32_u (i32.or (i32.and (local.get $bits) (i32.const 0x7fffff))
                                           (i32.const 0x800000))))
  (local.set $e (i64.extend_i32_u (i32.shr_u (local.get $bits) (i32.const 23))))
{_big_terms()}
  (local.set $y (f64.sub (local.get $y) (f64.mul (f64.const 4) (f64.floor (f64.mul (local.get $y) (f64.const 0.25))))))
  (select (f64.sub (f64.const 4) (local.get $y)) (local.get $y) (f32.lt (local.get $x) (f32.const 0))))
""")


def _patch_big_lanes() -> str:
    out = []
    for lane in range(4):
        x = f"(f32x4.extract_lane {lane} (local.get $x))"
        out.append(f"""      (if (i32.and (f32.gt (f32.abs {x}) (f32.const {BIG_ARGUMENT}))
                   (f32.ne (f32.abs {x}) (f32.const inf)))
        (then
          (local.set $y (call $reduce_big {x}))
          (local.set $yj (f64.nearest (local.get $y)))
          (local.set $r (f32x4.replace_lane {lane} {R} (f32.demote_f64
              (f64.mul (f64.sub (local.get $y) (local.get $yj)) (f64.const {math.pi / 2})))))
          (local.set $q (i32x4.replace_lane {lane} (local.get $q)
              (i32.add (i32.trunc_sat_f64_s (local.get $yj)) (local.get $quarter))))))""")
    return "\n".join(out)


_define("sincos", f"""
(func $sincos (param $x v128) (param $quarter i32) (result v128)  ;; sin(x + quarter*pi/2)
  (local $j v128) (local $jlo v128) (local $jhi v128) (local $rlo v128) (local $rhi v128)
  (local $r v128) (local $q v128) (local $z v128) (local $s v128) (local $c v128)
  (local $y f64) (local $yj f64)
  ;; x = j*pi/2 + r in f32: pi/2 in parts of {_PIO2_BITS} bits, so that j times a part is exact
  ;; (fused or not) for |j| < 2^{24 - _PIO2_BITS}
  (local.set $j (f32x4.nearest (f32x4.mul (local.get $x) {_k(2 / math.pi)})))
  (local.set $r (local.get $x))
{_reduce_by_parts()}
  (local.set $q (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $j)) (i32x4.splat (local.get $quarter))))
  ;; |x| > {SMALL_ARGUMENT:g} (rare): reduce in double precision two lanes at a time
  (if (v128.any_true (f32x4.gt (f32x4.abs (local.get $x)) {_k(SMALL_ARGUMENT)}))
    (then
  {_reduce_half('(f64x2.promote_low_f32x4 (local.get $x))', 'jlo', 'rlo')}
  {_reduce_half('(f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $x) (local.get $x)))', 'jhi', 'rhi')}
      (local.set $r ({_LOW_HALVES} (f32x4.demote_f64x2_zero (local.get $rlo))
                                    (f32x4.demote_f64x2_zero (local.get $rhi))))
      (local.set $q (i32x4.add ({_LOW_HALVES} (i32x4.trunc_sat_f64x2_s_zero (local.get $jlo))
                                              (i32x4.trunc_sat_f64x2_s_zero (local.get $jhi)))
                               (i32x4.splat (local.get $quarter))))
      ;; |x| > {BIG_ARGUMENT:g}: j*pi/2 is no longer exact, reduce those lanes one by one
      (if (v128.any_true (f32x4.gt (f32x4.abs (local.get $x)) {_k(BIG_ARGUMENT)}))
        (then
{_patch_big_lanes()}))))
  ;; |r| <= pi/4: sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2)
  (local.set $z (f32x4.mul {R} {R}))
  (local.set $s {_fma(f"(f32x4.mul {R} {Z})", _fma_horner(Z, K.SIN_POLY), R)})
  (local.set $c {_fma(f"(f32x4.mul {Z} {Z})", _fma_horner(Z, K.COS_POLY), _fma(Z, _k(-0.5), _k(1.0)))})
  ;; quadrant q: odd quadrants take the cosine, quadrants 2 and 3 flip the sign
  (local.set $s (v128.bitselect (local.get $c) (local.get $s)
                                (i32x4.ne (v128.and (local.get $q) {_k(1, 'i32x4')}) {_k(0, 'i32x4')})))
  (v128.xor (local.get $s) (i32x4.shl (v128.and (local.get $q) {_k(2, 'i32x4')}) (i32.const 30))))
""", ("reduce_big",))
_define("sin", "(func $sin (param $x v128) (result v128) (call $sincos (local.get $x) (i32.const 0)))",
        ("sincos",))
_define("cos", "(func $cos (param $x v128) (result v128) (call $sincos (local.get $x) (i32.const 1)))",
        ("sincos",))

# --- exp and tanh: Cephes' expf and tanhf by multiply-adds -------------------------------
def _pow2(k: str) -> str:
    """2^k for integer lanes k in [-126, 127], as float bits."""
    return f"(i32x4.shl (i32x4.add {k} {_k(127, 'i32x4')}) (i32.const 23))"


K_, T = _get("k"), _get("t")
# n = x log2(e) rounded, by adding 1.5*2^23: t's low bits are n's (no float->int conversion,
# which Cranelift spells in seven instructions); then r = x - n ln2 in two parts
_EXP_REDUCE = f"""
  (local.set $t {_fma(X, _k(K.LOG2E), _k(K.ROUND_MAGIC))})
  (local.set $n (f32x4.sub {T} {_k(K.ROUND_MAGIC)}))
  (local.set $r {_fma(N, _k(-K.LN2_HI), X)})
  (local.set $r {_fma(N, _k(-K.LN2_LO), R)})"""
_define("exp", f"""
(func $exp (param $x v128) (result v128)  ;; e^x = 2^n e^r with x = n ln2 + r, |r| <= ln2/2
  (local $t v128) (local $n v128) (local $r v128) (local $p v128) (local $k v128)
  ;; clamped so that 2^n stays finite (pmin and pmax keep a NaN first operand)
  (local.set $x (f32x4.pmax (f32x4.pmin {X} {_k(K.EXP_MAX)}) {_k(K.EXP_MIN)})){_EXP_REDUCE}
  ;; e^r by its minimax polynomial (ir/mathconst.py)
  (local.set $p {_fma_horner(R, K.EXP_POLY)})
  (local.set $k (i32x4.sub {T} {_k(K.ROUND_MAGIC_BITS, 'i32x4')}))
  ;; |n| > 125 (rare; a NaN too): 2^n as 2^(n/2) 2^(n - n/2), so that a result near
  ;; overflow or below the normal range is rounded once; else n is added to the exponent
  (if (result v128) (v128.any_true (i32x4.gt_s (i32x4.abs {K_}) {_k(125, 'i32x4')}))
    (then (f32x4.mul (f32x4.mul (local.get $p) {_pow2(f"(i32x4.shr_s {K_} (i32.const 1))")})
                     {_pow2(f"(i32x4.sub {K_} (i32x4.shr_s {K_} (i32.const 1)))")}))
    (else (i32x4.add (local.get $p) (i32x4.shl {K_} (i32.const 23))))))
""")


def _exp_one_sided(name: str, clamp: str, shift: int) -> None:
    """e^x for an x of known sign: clamped on its one open side, n = x log2(e) lies
    within 150 of 0 on the other, so 2^(n - shift) is normal for every n and the
    polynomial's coefficients carry 2^shift (exactly): no branch, and the product is the
    one rounding (into the subnormals, or up to inf). The rounding constant carries the
    exponent's bias 127 - shift: t's low bits are then n's biased exponent, and t
    shifted left by 23 is 2^(n - shift) (one constant and one add fewer)."""
    magic = K.ROUND_MAGIC + 127 - shift
    _define(name, f"""
(func ${name} (param $x v128) (result v128)
  (local $t v128) (local $n v128) (local $r v128)
  (local.set $x {clamp})
  (local.set $t {_fma(X, _k(K.LOG2E), _k(magic))})
  (local.set $n (f32x4.sub {T} {_k(magic)}))
  (local.set $r {_fma(N, _k(-K.LN2_HI), X)})
  (local.set $r {_fma(N, _k(-K.LN2_LO), R)})
  (f32x4.mul {_fma_horner(R, [c * 2.0 ** shift for c in K.EXP_POLY5])} (i32x4.shl {T} (i32.const 23))))
""")


# x <= 0 (softmax's exp(x - max)): n in [-150, 0] (up to 103 stays exact: the one sweep of
# rows.py passes it x up to 64); x >= 0 (tanh's e^2|x|): n in [0, 128]
_exp_one_sided("exp_nonpos", f"(f32x4.pmax {X} {_k(K.EXP_MIN)})", -24)
_exp_one_sided("exp_nonneg", f"(f32x4.pmin {X} {_k(K.EXP_MAX)})", 1)

A, S = _get("a"), _get("s")
_define("tanh", f"""
(func $tanh (param $x v128) (result v128)  ;; tanh on |x|, the sign put back last
  (local $a v128) (local $z v128) (local $s v128) (local $l v128)
  (local.set $a (f32x4.abs {X}))
  (local.set $z (f32x4.mul {A} {A}))
  ;; |x| < {K.TANH_SMALL}: a + a z P(z); beyond: 1 - 2 / (e^2a + 1)
  (local.set $s {_fma(f"(f32x4.mul {A} {Z})", _fma_horner(Z, K.TANH_POLY), A)})
  (local.set $l (f32x4.sub {_k(1.0)} (f32x4.div {_k(2.0)}
      (f32x4.add (call $exp_nonneg (f32x4.add {A} {A})) {_k(1.0)}))))
  ;; tanh(-0) is -0; a NaN stays NaN (the large form)
  (v128.or (v128.bitselect {S} (local.get $l) (f32x4.lt {A} {_k(K.TANH_SMALL)}))
           (v128.and {X} {_k(1 << 31, 'i32x4')})))
""", ("exp_nonneg",))


# --- erf and erfc: ir/evaluate.py's formula, in double precision ----------------------
def _exp64_poly() -> list[float]:
    return [1 / math.factorial(k) for k in range(13, -1, -1)]


_define("exp64", f"""
(func $exp64 (param $x v128) (result v128)  ;; e^x on two f64 lanes
  (local $n v128) (local $r v128) (local $ni v128) (local $half v128)
  (local.set $x (f64x2.pmax (f64x2.pmin {X} {_k(710.0, 'f64x2')}) {_k(-746.0, 'f64x2')}))
  (local.set $n (f64x2.nearest (f64x2.mul {X} {_k(1 / math.log(2), 'f64x2')})))
  (local.set $r (f64x2.sub (f64x2.sub {X} (f64x2.mul {N} {_k(6.93147180369123816490e-01, 'f64x2')}))
                           (f64x2.mul {N} {_k(1.90821492927058770002e-10, 'f64x2')})))
  ;; e^r for |r| <= ln2/2 by its Taylor series to r^13 (error below 1e-17)
  (local.set $ni (i64x2.extend_low_i32x4_s (i32x4.trunc_sat_f64x2_s_zero {N})))
  (local.set $half (i64x2.shr_s (local.get $ni) (i32.const 1)))
  (f64x2.mul (f64x2.mul {_horner(R, _exp64_poly(), 'f64x2')}
                        (i64x2.shl (i64x2.add (local.get $half) {_k(1023, 'i64x2')}) (i32.const 52)))
             (i64x2.shl (i64x2.add (i64x2.sub (local.get $ni) (local.get $half))
                                   {_k(1023, 'i64x2')}) (i32.const 52))))
""")


def _erfc_poly() -> str:
    poly = _k(0.0, "f64x2")
    for c in reversed(K.ERFC_COEFFS[1:]):
        poly = f"(f64x2.mul (f64x2.add {poly} {_k(c, 'f64x2')}) {T})"
    return poly


_define("erfc64", f"""
(func $erfc64 (param $x v128) (result v128)  ;; two f64 lanes, Chebyshev fit (error < 1.2e-7)
  (local $z v128) (local $t v128) (local $r v128)
  (local.set $z (f64x2.abs {X}))
  (local.set $t (f64x2.div {_k(1.0, 'f64x2')} (f64x2.add {_k(1.0, 'f64x2')}
                                                        (f64x2.mul {_k(0.5, 'f64x2')} {Z}))))
  (local.set $r (f64x2.mul {T} (call $exp64 (f64x2.add (f64x2.add
      (f64x2.neg (f64x2.mul {Z} {Z})) {_k(K.ERFC_COEFFS[0], 'f64x2')}) {_erfc_poly()}))))
  (v128.bitselect {R} (f64x2.sub {_k(2.0, 'f64x2')} {R}) (f64x2.ge {X} {_k(0.0, 'f64x2')})))
""", ("exp64",))


def _erf_series() -> str:
    """|x| < 0.5: Taylor series of erf, term by term as evaluate.py sums it."""
    lines = []
    for n in range(1, K.ERF_SERIES_TERMS + 1):
        lines.append(f"  (local.set $term (f64x2.div (f64x2.mul (local.get $term) (local.get $mx2)) "
                     f"{_k(n, 'f64x2')}))")
        lines.append(f"  (local.set $sum (f64x2.add (local.get $sum) (f64x2.div (local.get $term) "
                     f"{_k(2 * n + 1, 'f64x2')})))")
    return "\n".join(lines)


_define("erf64", f"""
(func $erf64 (param $x v128) (result v128)  ;; two f64 lanes
  (local $mx2 v128) (local $term v128) (local $sum v128)
  (local.set $mx2 (f64x2.neg (f64x2.mul {X} {X})))
  (local.set $term {X})
  (local.set $sum {X})
{_erf_series()}
  (v128.bitselect (f64x2.mul (local.get $sum) {_k(K.TWO_OVER_SQRT_PI, 'f64x2')})
                  (f64x2.sub {_k(1.0, 'f64x2')} (call $erfc64 {X}))
                  (f64x2.lt (f64x2.abs {X}) {_k(K.ERF_SERIES_BELOW, 'f64x2')})))
""", ("erfc64",))


def _via_f64(name: str, inner: str) -> None:
    _define(name, f"""
(func ${name} (param $x v128) (result v128)  ;; four lanes, two at a time in double precision
  ({_LOW_HALVES}
    (f32x4.demote_f64x2_zero (call ${inner} (f64x2.promote_low_f32x4 {X})))
    (f32x4.demote_f64x2_zero (call ${inner} (f64x2.promote_low_f32x4
        (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 {X} {X}))))))
""", (inner,))


_via_f64("erf", "erf64")
_via_f64("erfc", "erfc64")


# --- threefry2x32 ----------------------------------------------------------------
def _threefry_rounds() -> str:
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    x0, x1 = _get("x0"), _get("x1")
    out = []
    for group in range(5):
        for r in rotations[group % 2]:
            out.append(f"  (local.set $x0 (i32x4.add {x0} {x1}))")
            out.append(f"  (local.set $x1 (v128.xor (v128.or (i32x4.shl {x1} (i32.const {r})) "
                       f"(i32x4.shr_u {x1} (i32.const {32 - r}))) {x0}))")
        out.append(f"  ;; key injection {group + 1}")
        out.append(f"  (local.set $x0 (i32x4.add {x0} (local.get $ks{(group + 1) % 3})))")
        out.append(f"  (local.set $x1 (i32x4.add (i32x4.add {x1} (local.get $ks{(group + 2) % 3})) "
                   f"{_k(group + 1, 'i32x4')}))")
    return "\n".join(out)


_define("threefry2x32", f"""
(func $threefry2x32 (param $k0 v128) (param $k1 v128) (param $c0 v128) (param $c1 v128)
                    (param $word i32) (result v128)
  ;; Threefry-2x32, 20 rounds (Salmon et al. 2011), four counters at once; returns word 0 or 1
  (local $ks0 v128) (local $ks1 v128) (local $ks2 v128) (local $x0 v128) (local $x1 v128)
  (local.set $ks0 (local.get $k0))
  (local.set $ks1 (local.get $k1))
  (local.set $ks2 (v128.xor (v128.xor (local.get $k0) (local.get $k1)) {_k(0x1BD11BDA, 'i32x4')}))
  (local.set $x0 (i32x4.add (local.get $c0) (local.get $ks0)))
  (local.set $x1 (i32x4.add (local.get $c1) (local.get $ks1)))
{_threefry_rounds()}
  (select (local.get $x1) (local.get $x0) (local.get $word)))
""")

# --- float16 <-> float32 (IEEE half bit patterns in the low 16 bits of i32 lanes) ---------
A, H = _get("a"), _get("h")
_define("f16_to_f32", f"""
(func $f16_to_f32 (param $h v128) (result v128)
  (local $body v128)
  ;; exponent and mantissa moved into f32 position, then rebiased by 2^112: exact for
  ;; normals and subnormals alike
  (local.set $body (i32x4.shl (v128.and {H} {_k(0x7fff, 'i32x4')}) (i32.const 13)))
  (v128.or
    (v128.bitselect (v128.or (local.get $body) {_k(0x7f800000, 'i32x4')})
                    (f32x4.mul (local.get $body) {_k(2.0 ** 112)})
                    (i32x4.eq (v128.and {H} {_k(0x7c00, 'i32x4')}) {_k(0x7c00, 'i32x4')}))
    (i32x4.shl (v128.and {H} {_k(0x8000, 'i32x4')}) (i32.const 16))))
""")

_define("f32_to_f16", f"""
(func $f32_to_f16 (param $x v128) (result v128)  ;; round to nearest even, as NumPy
  (local $a v128) (local $h v128)
  (local.set $a (v128.and {X} {_k(0x7fffffff, 'i32x4')}))
  ;; normal halves: add half an ulp (ties to even) and rebias the exponent by -112
  (local.set $h (i32x4.shr_u (i32x4.add (i32x4.add {A} {_k(-0x37fff001, 'i32x4')})
                                        (v128.and (i32x4.shr_u {A} (i32.const 13)) {_k(1, 'i32x4')})) (i32.const 13)))
  ;; subnormal halves (|x| < 2^-14): adding 0.5 rounds to a multiple of 2^-24
  (local.set $h (v128.bitselect
      (i32x4.sub (f32x4.add {A} {_k(0.5)}) {_k(0x3f000000, 'i32x4')}) (local.get $h)
      (i32x4.lt_s {A} {_k(0x38800000, 'i32x4')})))
  ;; too large for a half (65520 and up round to inf), inf, NaN
  (local.set $h (v128.bitselect {_k(0x7c00, 'i32x4')} (local.get $h)
                                (i32x4.ge_s {A} {_k(0x477ff000, 'i32x4')})))
  (local.set $h (v128.bitselect {_k(0x7e00, 'i32x4')} (local.get $h)
                                (i32x4.gt_s {A} {_k(0x7f800000, 'i32x4')})))
  (v128.or (local.get $h) (v128.and (i32x4.shr_u {X} (i32.const 16)) {_k(0x8000, 'i32x4')})))
""")

_define("f16_round", """
(func $f16_round (param $x v128) (result v128)  ;; nearest float16 value, as an f32
  (call $f16_to_f32 (call $f32_to_f16 (local.get $x))))
""", ("f16_to_f32", "f32_to_f16"))

# --- scalar integer division and float remainder ----------------------------------------
for _bits, _t in (("", "i32"), ("64", "i64")):
    _define(f"idiv{_bits}_s", f"""
(func $idiv{_bits}_s (param $a {_t}) (param $b {_t}) (result {_t})  ;; x//0 = -1, MIN//-1 = MIN
  (if (result {_t}) ({_t}.eqz (local.get $b)) (then ({_t}.const -1))
    (else (if (result {_t}) ({_t}.eq (local.get $b) ({_t}.const -1))
      (then ({_t}.sub ({_t}.const 0) (local.get $a)))
      (else ({_t}.div_s (local.get $a) (local.get $b)))))))
""")
    _define(f"idiv{_bits}_u", f"""
(func $idiv{_bits}_u (param $a {_t}) (param $b {_t}) (result {_t})  ;; x//0 = all bits set
  (if (result {_t}) ({_t}.eqz (local.get $b)) (then ({_t}.const -1))
    (else ({_t}.div_u (local.get $a) (local.get $b)))))
""")
    for _sign in "su":
        _define(f"rem{_bits}_{_sign}", f"""
(func $rem{_bits}_{_sign} (param $a {_t}) (param $b {_t}) (result {_t})  ;; x%0 = x
  (if (result {_t}) ({_t}.eqz (local.get $b)) (then (local.get $a))
    (else ({_t}.rem_{_sign} (local.get $a) (local.get $b)))))
""")

_define("fmod", """
(func $fmod (param $a f32) (param $b f32) (result f32)  ;; C fmod, exact, as np.fmod
  (local $x f64) (local $y f64) (local $s f64) (local $q f64) (local $shift i64)
  ;; fmod(x, 0), fmod(+-inf, y) and NaNs give NaN; fmod(x, inf) = x
  (if (i32.or (i32.or (f32.eq (local.get $b) (f32.const 0)) (f32.eq (f32.abs (local.get $a)) (f32.const inf)))
              (i32.or (f32.ne (local.get $a) (local.get $a)) (f32.ne (local.get $b) (local.get $b))))
    (then (return (f32.const nan))))
  (local.set $x (f64.promote_f32 (f32.abs (local.get $a))))
  (local.set $y (f64.promote_f32 (f32.abs (local.get $b))))
  (block $done
    (loop $reduce
      (br_if $done (f64.lt (local.get $x) (local.get $y)))
      ;; s = y * 2^shift with x/s < 2^27, so q*s is exact in f64 and so is x - q*s
      (local.set $shift (i64.sub (i64.sub (i64.shr_u (i64.reinterpret_f64 (local.get $x)) (i64.const 52))
                                          (i64.shr_u (i64.reinterpret_f64 (local.get $y)) (i64.const 52)))
                                 (i64.const 26)))
      (local.set $shift (select (local.get $shift) (i64.const 0) (i64.gt_s (local.get $shift) (i64.const 0))))
      (local.set $s (f64.reinterpret_i64 (i64.add (i64.reinterpret_f64 (local.get $y))
                                                  (i64.shl (local.get $shift) (i64.const 52)))))
      (local.set $q (f64.floor (f64.div (local.get $x) (local.get $s))))
      (local.set $x (f64.sub (local.get $x) (f64.mul (local.get $q) (local.get $s))))
      ;; x/s rounded up to the next integer: one s too many was taken
      (if (f64.lt (local.get $x) (f64.const 0)) (then (local.set $x (f64.add (local.get $x) (local.get $s)))))
      (br $reduce)))
  (f32.copysign (f32.demote_f64 (local.get $x)) (local.get $a)))
""")

_define("fmod64", """
(func $fmod64 (param $a f64) (param $b f64) (result f64)  ;; C fmod in double, exact
  (local $x f64) (local $y f64) (local $s f64)
  (if (i32.or (i32.or (f64.eq (local.get $b) (f64.const 0)) (f64.eq (f64.abs (local.get $a)) (f64.const inf)))
              (i32.or (f64.ne (local.get $a) (local.get $a)) (f64.ne (local.get $b) (local.get $b))))
    (then (return (f64.const nan))))
  (local.set $x (f64.abs (local.get $a)))
  (local.set $y (f64.abs (local.get $b)))
  ;; long division, one binary digit a step: s = y * 2^k, largest first, with s <= x < 2s
  ;; so x - s is exact (Sterbenz); at most 2098 steps for the widest exponent gap
  (block $done
    (loop $reduce
      (br_if $done (f64.lt (local.get $x) (local.get $y)))
      (local.set $s (f64.reinterpret_i64 (i64.add (i64.reinterpret_f64 (local.get $y))
          (i64.shl (i64.sub (i64.shr_u (i64.reinterpret_f64 (local.get $x)) (i64.const 52))
                            (i64.shr_u (i64.reinterpret_f64 (local.get $y)) (i64.const 52)))
                   (i64.const 52)))))
      ;; a subnormal y (exponent field 0) scales by doubling instead
      (if (f64.lt (local.get $y) (f64.const 0x1p-1022))
        (then (local.set $s (local.get $y))
              (block $up (loop $double
                (br_if $up (f64.gt (f64.add (local.get $s) (local.get $s)) (local.get $x)))
                (local.set $s (f64.add (local.get $s) (local.get $s)))
                (br $double)))))
      (if (f64.gt (local.get $s) (local.get $x))
        (then (local.set $s (f64.mul (local.get $s) (f64.const 0.5)))))
      (local.set $x (f64.sub (local.get $x) (local.get $s)))
      (br $reduce)))
  (f64.copysign (local.get $x) (local.get $a)))
""")

# --- float64 sin and cos (scalar) ---------------------------------------------------------
def _f64_horner(x: str, coeffs: Sequence[float]) -> str:
    acc = f"(f64.const {coeffs[0]!r})"
    for c in coeffs[1:]:
        acc = f"(f64.add (f64.mul {acc} {x}) (f64.const {c!r}))"
    return acc


_define("ph_add", """
(func $ph_add (param $yh f64) (param $yl f64) (param $p f64) (param $s i32) (result f64 f64)
  ;; (yh, yl) + (p 2^s mod 4), a double-double sum; p 2^s is a multiple of 4 when s >= 2
  (local $t f64) (local $sum f64) (local $bb f64)
  (if (i32.ge_s (local.get $s) (i32.const 2)) (then (return (local.get $yh) (local.get $yl))))
  (local.set $t (f64.mul (local.get $p) (f64.reinterpret_i64 (i64.shl (i64.extend_i32_s
      (i32.add (select (local.get $s) (i32.const -1000) (i32.gt_s (local.get $s) (i32.const -1000)))
               (i32.const 1023))) (i64.const 52)))))
  ;; t mod 4, exactly: t and 4 floor(t/4) share their low bits
  (local.set $t (f64.sub (local.get $t) (f64.mul (f64.const 4) (f64.floor (f64.mul (local.get $t) (f64.const 0.25))))))
  (local.set $sum (f64.add (local.get $yh) (local.get $t)))
  (local.set $bb (f64.sub (local.get $sum) (local.get $yh)))
  (local.get $sum)
  (f64.add (local.get $yl) (f64.add (f64.sub (local.get $yh) (f64.sub (local.get $sum) (local.get $bb)))
                                    (f64.sub (local.get $t) (local.get $bb)))))
""")


def _payne_hanek_terms() -> str:
    """x 2/pi mod 4 over 2/pi's 24-bit chunks: |x| = (mh 2^26 + ml) 2^e, each product of a
    half and a chunk exact in f64."""
    out = []
    for k, chunk in enumerate(K.TWO_OVER_PI_CHUNKS64):
        for half, extra in (("mh", 26), ("ml", 0)):
            out.append(f"  (call $ph_add (local.get $yh) (local.get $yl) (f64.mul (local.get ${half}) "
                       f"(f64.const {chunk})) (i32.add (local.get $e) (i32.const {extra - 24 * (k + 1)})))"
                       " (local.set $yl) (local.set $yh)")
    return "\n".join(out)


_P1, _P2, _P3 = K.PIO2_PARTS64
_SPLIT = float(2 ** 27 + 1)   # Veltkamp: splits a double into two 26-bit halves
_define("sincos64", f"""
(func $sincos64 (param $x f64) (param $quarter i32) (result f64)  ;; sin(x + quarter pi/2)
  (local $j f64) (local $a f64) (local $w f64) (local $hi f64) (local $lo f64) (local $t f64)
  (local $bits i64) (local $e i32) (local $mh f64) (local $ml f64) (local $yh f64) (local $yl f64)
  (local $h1 f64) (local $h2 f64) (local $z f64) (local $hz f64) (local $s f64)
  (local $q i32)
  (if (i32.and (f64.eq (local.get $x) (f64.const 0)) (i32.eqz (local.get $quarter)))
    (then (return (local.get $x))))   ;; sin(-0) is -0
  (if (i32.or (f64.lt (f64.abs (local.get $x)) (f64.const {K.SINCOS64_MEDIUM!r}))
              (i32.eqz (f64.lt (f64.abs (local.get $x)) (f64.const inf))))   ;; NaN and inf too
    (then
      ;; x = j pi/2 + (hi + lo): pi/2 in three parts of 33 bits, j p1 and j p2 exact
      (local.set $j (f64.nearest (f64.mul (local.get $x) (f64.const {2 / math.pi!r}))))
      (local.set $a (f64.sub (local.get $x) (f64.mul (local.get $j) (f64.const {_P1!r}))))
      (local.set $w (f64.neg (f64.mul (local.get $j) (f64.const {_P2!r}))))
      (local.set $hi (f64.add (local.get $a) (local.get $w)))
      (local.set $t (f64.sub (local.get $hi) (local.get $a)))
      (local.set $lo (f64.sub (f64.add (f64.sub (local.get $a) (f64.sub (local.get $hi) (local.get $t)))
                                       (f64.sub (local.get $w) (local.get $t)))
                              (f64.mul (local.get $j) (f64.const {_P3!r})))))
    (else
      ;; |x| >= 2^19 (Payne-Hanek): y = |x| 2/pi mod 4 as a double-double, j = nearest(y)
      (local.set $bits (i64.reinterpret_f64 (f64.abs (local.get $x))))
      (local.set $e (i32.sub (i32.wrap_i64 (i64.shr_u (local.get $bits) (i64.const 52))) (i32.const 1075)))
      (local.set $bits (i64.or (i64.and (local.get $bits) (i64.const 0xfffffffffffff)) (i64.const 0x10000000000000)))
      (local.set $mh (f64.convert_i64_u (i64.shr_u (local.get $bits) (i64.const 26))))
      (local.set $ml (f64.convert_i64_u (i64.and (local.get $bits) (i64.const 0x3ffffff))))
{_payne_hanek_terms()}
      (local.set $t (f64.add (local.get $yh) (local.get $yl)))
      (local.set $yl (f64.sub (local.get $yl) (f64.sub (local.get $t) (local.get $yh))))
      (local.set $yh (f64.sub (local.get $t) (f64.mul (f64.const 4) (f64.floor (f64.mul (local.get $t) (f64.const 0.25))))))
      (local.set $j (f64.nearest (local.get $yh)))
      (local.set $t (f64.sub (local.get $yh) (local.get $j)))
      (local.set $a (f64.add (local.get $t) (local.get $yl)))
      (local.set $w (f64.sub (local.get $yl) (f64.sub (local.get $a) (local.get $t))))
      ;; (a + w) pi/2 as a double-double: a p exactly by Veltkamp's split (no FMA in Wasm)
      (local.set $hi (f64.mul (local.get $a) (f64.const {K.PIO2_64[0]!r})))
      (local.set $t (f64.mul (local.get $a) (f64.const {_SPLIT!r})))
      (local.set $h1 (f64.sub (local.get $t) (f64.sub (local.get $t) (local.get $a))))
      (local.set $h2 (f64.sub (local.get $a) (local.get $h1)))
      (local.set $t (f64.mul (f64.const {K.PIO2_64[0]!r}) (f64.const {_SPLIT!r})))
      (local.set $yh (f64.sub (local.get $t) (f64.sub (local.get $t) (f64.const {K.PIO2_64[0]!r}))))
      (local.set $yl (f64.sub (f64.const {K.PIO2_64[0]!r}) (local.get $yh)))
      (local.set $lo (f64.add (f64.add (f64.add (f64.add (f64.sub (f64.mul (local.get $h1) (local.get $yh)) (local.get $hi))
                                                         (f64.mul (local.get $h1) (local.get $yl)))
                                                (f64.mul (local.get $h2) (local.get $yh)))
                                       (f64.mul (local.get $h2) (local.get $yl)))
                              (f64.add (f64.mul (local.get $a) (f64.const {K.PIO2_64[1]!r}))
                                       (f64.mul (local.get $w) (f64.const {K.PIO2_64[0]!r})))))
      (if (f64.lt (local.get $x) (f64.const 0))
        (then (local.set $j (f64.neg (local.get $j))) (local.set $hi (f64.neg (local.get $hi)))
              (local.set $lo (f64.neg (local.get $lo)))))))
  (local.set $t (f64.add (local.get $hi) (local.get $lo)))
  (local.set $lo (f64.sub (local.get $lo) (f64.sub (local.get $t) (local.get $hi))))
  (local.set $hi (local.get $t))
  ;; sin(hi + lo) = hi + hi z S(z) + lo (1 - z/2); cos(hi + lo) = 1 - z/2 + z^2 C(z) - hi lo,
  ;; with the rounding of 1 - z/2 added back (Taylor series to r^19 and r^18: mathconst)
  (local.set $z (f64.mul (local.get $hi) (local.get $hi)))
  (local.set $q (i32.add (i32.trunc_sat_f64_s (local.get $j)) (local.get $quarter)))
  ;; quadrant q: odd quadrants take the cosine (only the one asked for is computed),
  ;; quadrants 2 and 3 flip the sign
  (if (i32.and (local.get $q) (i32.const 1))
    (then
      (local.set $hz (f64.mul (local.get $z) (f64.const 0.5)))
      (local.set $w (f64.sub (f64.const 1) (local.get $hz)))
      (local.set $s (f64.add (local.get $w) (f64.add (f64.sub (f64.sub (f64.const 1) (local.get $w)) (local.get $hz))
          (f64.sub (f64.mul (f64.mul (local.get $z) (local.get $z))
                            {_f64_horner('(local.get $z)', K.COS64_POLY)})
                   (f64.mul (local.get $hi) (local.get $lo)))))))
    (else
      (local.set $s (f64.add (local.get $hi) (f64.add (f64.mul (f64.mul (local.get $hi) (local.get $z))
          {_f64_horner('(local.get $z)', K.SIN64_POLY)})
          (f64.mul (local.get $lo) (f64.sub (f64.const 1) (f64.mul (local.get $z) (f64.const 0.5)))))))))
  (select (f64.neg (local.get $s)) (local.get $s) (i32.and (local.get $q) (i32.const 2))))
""", ("ph_add",))



def vector_ops(name: str) -> int:
    """SIMD instructions in a function's text (its own, not what it calls): what a call
    of it weighs against one op (tune.py counts a body's work by it)."""
    return len(re.findall(r"\((?:f32x4|i32x4|f64x2|i64x2|v128|i8x16)\.(?!const)", FUNCTIONS[name].text))


def texts(names: Iterable[str]) -> list[str]:
    """The texts of the functions named, with their own needs, each once."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        fn = FUNCTIONS[name]
        for dep in fn.needs:
            visit(dep)
        order.append(name)

    for name in sorted(names):
        visit(name)
    return [FUNCTIONS[n].text for n in order]


# --- inlining: a function's body pasted where it is called ---------------------------------
# A call costs a few instructions and, worse, every live vector register (the ABI saves
# none of them); pasting the body in measured 18% faster on exp.
INLINE = frozenset({"exp", "exp_nonpos", "exp_nonneg", "log", "tanh", "atan", "asin", "sincos"})
_PARAMS = re.compile(r"\(param \$(\w+) (\w+)\)")
_LOCALS = re.compile(r"\(local \$(\w+) (\w+)\)")


def inline(name: str, args: Sequence[str], prefix: str) -> tuple[dict[str, str], str]:
    """(locals to declare, a block computing name(*args)) with names prefixed by `prefix`."""
    head, body = FUNCTIONS[name].text.split("\n", 1)
    params = _PARAMS.findall(head)
    names = dict(params + _LOCALS.findall(body))
    body = _LOCALS.sub("", body).rstrip()[:-1]           # drop declarations and "(func" ')'
    body = re.sub(r"\$(\w+)\b", lambda m: f"${prefix}{m[1]}" if m[1] in names else m[0], body)
    lines = [line for line in body.splitlines() if line.strip()]
    sets = [f"  (local.set ${prefix}{p} {a})" for (p, _), a in zip(params, args)]
    text = "\n".join([f"(block (result v128)  ;; ${name}, inlined"] + sets + lines) + ")"
    decls = {prefix + n: t for n, t in names.items()}
    for dep in FUNCTIONS[name].needs:
        if dep in INLINE:
            text = _inline_calls(text, dep, f"{prefix}{dep}_", decls)
    return decls, text


def _inline_calls(text: str, name: str, prefix: str, decls: dict[str, str]) -> str:
    """Replace each (call $name ARG) in text by the inlined body."""
    call = f"(call ${name} "
    while call in text:
        start = text.index(call)
        depth, i = 0, start
        while True:   # the matching parenthesis of this call
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        arg = text[start + len(call):i]
        more, body = inline(name, [arg], prefix)
        decls.update(more)
        text = text[:start] + body + text[i + 1:]
    return text
