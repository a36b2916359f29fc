"""How every AluOp is spelled in WGSL, and the helper functions some need.

Two facts drive the table (measured on lavapipe, see PLATFORM-NOTES.md):
WGSL compilers may assume NaN never occurs (`x != x` folds to false, `max`
drops NaN), so NaN tests look at the bits; and integer division by zero or a
float->int conversion out of range are left to the driver, so helpers give
ir/evaluate.py's answers (x//0 = -1, x%0 = x, saturating casts, NaN -> 0).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType


@dataclass(frozen=True)
class Lang:
    """The WGSL dialect one device accepts."""
    f16: bool = False   # shader-f16: float16 is computed and stored as f16

    def vtype(self, dtype: DType) -> str:
        """The type a value of `dtype` has inside a shader."""
        if dtype is DType.float16:
            return "f16" if self.f16 else "f32"
        return _VTYPE[dtype]

    def packed(self, dtype: DType) -> int:
        """Elements of `dtype` per u32 word when it has no WGSL storage type, else 1."""
        if dtype is DType.float16:
            return 1 if self.f16 else 2
        return 4 // dtype.itemsize if dtype.itemsize < 4 else 1

    def storage(self, dtype: DType) -> str:
        return "u32" if self.packed(dtype) > 1 else self.vtype(dtype)


# 8/16-bit integers and bfloat16 are computed in 32-bit values (see ir/widen.py)
_VTYPE = {DType.float32: "f32", DType.bfloat16: "f32", DType.int32: "i32", DType.int16: "i32",
          DType.int8: "i32", DType.uint32: "u32", DType.uint16: "u32", DType.uint8: "u32",
          DType.bool: "bool"}


def kind(dtype: DType) -> str:
    return "f" if dtype.is_float else "b" if dtype.is_bool else "i" if dtype.is_signed else "u"


# (op -> operand kind -> template). {0} {1} {2} are the operands, {T} their
# WGSL type; "*" is any kind. Helpers named `name_{T}` come from LIBRARY.
OPS: dict[AluOp, dict[str, str]] = {
    AluOp.Add: {"b": "({0} || {1})", "*": "({0} + {1})"},
    AluOp.Sub: {"*": "({0} - {1})"},
    AluOp.Mul: {"b": "({0} && {1})", "*": "({0} * {1})"},
    AluOp.Div: {"f": "({0} / {1})", "i": "idiv_i32({0}, {1})", "u": "idiv_u32({0}, {1})"},
    AluOp.Idiv: {"f": "trunc({0} / {1})", "i": "idiv_i32({0}, {1})",
                 "u": "idiv_u32({0}, {1})"},
    AluOp.Mod: {"f": "({0} % {1})", "i": "mod_i32({0}, {1})", "u": "mod_u32({0}, {1})"},
    AluOp.Max: {"f": "max_{T}({0}, {1})", "b": "({0} || {1})", "*": "max({0}, {1})"},
    AluOp.Min: {"f": "min_{T}({0}, {1})", "b": "({0} && {1})", "*": "min({0}, {1})"},
    AluOp.Cmplt: {"b": "(!{0} && {1})", "*": "({0} < {1})"},
    AluOp.Cmpne: {"f": "ne_{T}({0}, {1})", "*": "({0} != {1})"},
    AluOp.And: {"*": "({0} & {1})"},
    AluOp.Or: {"*": "({0} | {1})"},
    AluOp.Xor: {"b": "({0} != {1})", "*": "({0} ^ {1})"},
    AluOp.Shl: {"*": "({0} << (u32({1}) & 31u))"},
    AluOp.Shr: {"*": "({0} >> (u32({1}) & 31u))"},
    AluOp.Where: {"*": "select({2}, {1}, {0})"},
    AluOp.Sin: {"f": "sin_{T}({0})"},
    AluOp.Cos: {"f": "cos_{T}({0})"},
    AluOp.Asin: {"f": "asin_{T}({0})"},
    AluOp.Atan: {"f": "atan_{T}({0})"},
    AluOp.Tanh: {"f": "tanh_{T}({0})"},
    AluOp.Erf: {"f": "erf_{T}({0})"},
    AluOp.Erfc: {"f": "erfc_{T}({0})"},
    AluOp.Exp: {"f": "exp_{T}({0})"},
    AluOp.Log: {"f": "log_{T}({0})"},
    AluOp.Sqrt: {"f": "sqrt({0})"},
    AluOp.Reciprocal: {"f": "(1.0 / {0})"},
    AluOp.Floor: {"f": "floor({0})"},
    AluOp.Ceil: {"f": "ceil({0})"},
    AluOp.Threefry2x32: {"*": "threefry2x32({0}, {1}, {2}, {3})"},
}

# Casts by (from kind, to kind), float sources given as f32; absent pairs are
# WGSL's own conversion T(x), which for i32 <-> u32 keeps the bits like astype.
CASTS: dict[tuple[str, str], str] = {
    ("f", "i"): "f32_to_i32({0})",
    ("f", "u"): "f32_to_u32({0})",
    ("f", "b"): "nonzero_f32({0})",
    ("i", "b"): "({0} != 0i)",
    ("u", "b"): "({0} != 0u)",
}


def bare(text: str) -> str:
    """`text` without redundant outer parentheses."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and i < len(text) - 1:
            return text   # "(a) + (b)": the first parenthesis closes early
    return text[1:-1]


def _fill(template: str, args: list[str], **names: str) -> str:
    # a call's arguments need no parentheses of their own; an operator's do
    if not template.startswith("("):
        args = [bare(a) for a in args]
    return template.format(*args, **names)


# f16 builtins of these need not be correctly rounded: compute in f32 and round
# once, as NumPy does.
_F16_VIA_F32 = frozenset({AluOp.Div, AluOp.Sqrt, AluOp.Reciprocal})


def op_text(op: AluOp, operand: DType, args: list[str], lang: Lang) -> str:
    row = OPS.get(op)
    template = row and (row.get(kind(operand)) or row.get("*"))
    if template is None:
        raise NotImplementedError(f"webgpu: no WGSL for {op.name} on {operand}")
    if lang.vtype(operand) == "f16" and op in _F16_VIA_F32:
        return f"to_f16({bare(_fill(template, [f'f32({bare(a)})' for a in args], T='f32'))})"
    return _fill(template, args, T=lang.vtype(operand))


# Shapes compilers fold assuming no inf/NaN (x - x -> 0, x * 0 -> 0, x / 0 ->
# garbage), yet NumPy code relies on them: isfinite is x - x == 0. Spelled out
# as IEEE computes them; {0} is the operand that is not the constant.
_SAME_OPERAND = {
    AluOp.Sub: "select(nan_{T}(), 0.0, finite_{T}({0}))",
    AluOp.Div: "select(nan_{T}(), 1.0, finite_{T}({0}) && {0} != 0.0)",
}
_BY_ZERO = {
    AluOp.Mul: "times_zero_{T}({0})",
    AluOp.Div: "over_zero_{T}({0})",
    AluOp.Mod: "nan_{T}()",
}


def ieee_text(op: AluOp, srcs: tuple, args: list[str], lang: Lang) -> str | None:
    """WGSL for a float op the compiler could fold wrongly, else None."""
    if len(srcs) != 2 or not srcs[0].dtype.is_float:
        return None
    t = lang.vtype(srcs[0].dtype)
    if srcs[0] is srcs[1] and op in _SAME_OPERAND:
        return _SAME_OPERAND[op].format(bare(args[0]), T=t)
    zero = [i for i, s in enumerate(srcs) if s.is_const and s.arg == 0.0]
    if op in _BY_ZERO and zero and (op is AluOp.Mul or zero == [1]):
        other = 1 - zero[0] if len(zero) == 1 else 0
        text = _BY_ZERO[op].format(bare(args[other]), T=t)
        negative = np.signbit(srcs[zero[0]].arg)
        return f"-{text}" if negative and op is not AluOp.Mod else text
    return None


_ADDITIVE = (AluOp.Add, AluOp.Sub)


def reassociation_hazards(root: AluExp) -> set[AluExp]:
    """Float sums a compiler allowed to reassociate would fold away: the inner one of
    (a + b) - a, a - (a - b), or (a + #c) + #d. Compensated (error-free) arithmetic
    is written exactly so; these get wrapped in exact_T to keep their rounding."""
    hazards = set()
    for node in root.toposort():
        if node.op not in _ADDITIVE or not node.dtype.is_float:
            continue
        for inner, other in ((node.src[0], node.src[1]), (node.src[1], node.src[0])):
            if inner.op in _ADDITIVE and (other in inner.src or other.is_const and
                                          any(s.is_const for s in inner.src)):
                hazards.add(inner)
    return hazards


def cast_text(src: DType, dst: DType, arg: str, lang: Lang) -> str:
    have, want = lang.vtype(src), lang.vtype(dst)
    if dst is DType.float16:   # narrowing rounds on the bits (see round_f16)
        wide = bare(arg) if have == "f32" else f"f32({bare(arg)})"
        return f"{'to_f16' if lang.f16 else 'round_f16'}({wide})"
    if have == want:
        return arg   # float16 computed as f32 becoming float32
    key = (kind(src), kind(dst))
    if key in CASTS:
        return _fill(CASTS[key], [arg if have != "f16" else f"f32({bare(arg)})"])
    return f"{want}({bare(arg)})"


def const_text(value: Any, dtype: DType, lang: Lang) -> str:
    """A literal that never makes WGSL's constant evaluator overflow or see inf/NaN."""
    if dtype is DType.bool:
        return "true" if value else "false"
    if dtype is DType.uint32:
        return f"{int(value)}u"
    if dtype is DType.int32:
        v = int(value)
        return f"{v}i" if v >= 0 else ("i32(-2147483648)" if v == -(1 << 31) else f"({v}i)")
    t = lang.vtype(dtype)
    suffix = "h" if t == "f16" else "f"
    v = float(value)
    if np.isnan(v):
        return f"nan_{t}()"
    if np.isinf(v):
        return f"inf_{t}()" if v > 0 else f"(-inf_{t}())"
    text = str(np.float16(v) if t == "f16" else np.float32(v))
    return f"{text}{suffix}" if v >= 0 else f"({text}{suffix})"


@dataclass(frozen=True)
class Helper:
    """A WGSL function. A `typed` one takes T = f32 or f16 and is called as
    name_f32 / name_f16: `generic` bodies are valid for both, the others are
    written for f32 and reached from f16 through a converting wrapper."""
    params: str              # "x" or "a, b" (of type T), or fully typed "a: i32, b: i32"
    returns: str             # "T" or a fixed type
    body: str
    typed: bool = True
    generic: bool = False
    deps: tuple[str, ...] = ()   # helpers called; name_T means "of my own type"


def two_over_pi_words(count: int) -> list[int]:
    """The first 32*count fraction bits of 2/pi, by exact integer arithmetic
    (Machin's formula for pi with 64 guard bits)."""
    bits = 32 * count
    one = 1 << (bits + 64)

    def atan_inv(x: int) -> int:   # atan(1/x) * one
        total, term, n, sign = 0, one // x, 1, 1
        while term:
            total += sign * (term // n)
            term //= x * x
            n, sign = n + 2, -sign
        return total
    pi = 16 * atan_inv(5) - 4 * atan_inv(239)
    value = (2 * one << bits) // pi   # 2/pi * 2^bits
    return [(value >> (32 * (count - 1 - i))) & 0xFFFFFFFF for i in range(count)]


LIBRARY: dict[str, Helper] = {
    "isnan": Helper("x", "bool", """
  // a bit test: WGSL compilers may assume NaN never occurs and fold x != x
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;"""),
    "finite": Helper("x", "bool", """
  return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u;"""),
    "nonzero": Helper("x", "bool", """
  // x != 0 with NaN nonzero, whatever the compiler assumes about NaN
  return (bitcast<u32>(x) & 0x7fffffffu) != 0u;"""),
    "nan": Helper("", "T", """
  let bits = 0x7fc00000u;  // a runtime value: constant NaN is a WGSL error
  return bitcast<f32>(bits);"""),
    "inf": Helper("", "T", """
  let bits = 0x7f800000u;
  return bitcast<f32>(bits);"""),
    "max": Helper("a, b", "T", """
  // NaN-propagating like np.maximum (WGSL's max may return either operand)
  return select(select(max(a, b), b, isnan_T(b)), a, isnan_T(a));""",
                  generic=True, deps=("isnan_T",)),
    "min": Helper("a, b", "T", """
  return select(select(min(a, b), b, isnan_T(b)), a, isnan_T(a));""",
                  generic=True, deps=("isnan_T",)),
    "ne": Helper("a, b", "bool", """
  // NumPy: NaN is unequal to everything, itself included
  return a != b || isnan_T(a) || isnan_T(b);""", generic=True, deps=("isnan_T",)),
    "times_zero": Helper("x", "T", """
  // x * 0 keeps x's sign, and is NaN for inf and NaN
  return select(nan_f32(), bitcast<f32>(bitcast<u32>(x) & 0x80000000u), finite_f32(x));""",
                         deps=("nan_f32", "finite_f32")),
    "over_zero": Helper("x", "T", """
  // x / +0: signed inf, NaN for 0 and NaN
  return select(select(inf_f32(), -inf_f32(), x < 0.0), nan_f32(), x == 0.0 || isnan_f32(x));""",
                        deps=("nan_f32", "inf_f32", "isnan_f32")),
    "exact": Helper("x", "T", """
  // x, through a condition no compiler can decide (no buffer has 2^32 - 1 words):
  // algebra cannot see through it, so error-free sums are not reassociated away
  return select(x, 0.0, arrayLength(&out) == 0xffffffffu);""", generic=True),
    "round_f16": Helper("x: f32", "f32", """
  // x rounded to the nearest float16 (ties to even), as an f32, on the bits: drivers
  // may narrow f32 -> f16 by truncation (NVIDIA's Vulkan driver does)
  let b = bitcast<u32>(x);
  let e = (b >> 23u) & 0xffu;
  let sign = b & 0x80000000u;
  if (e == 255u) { return x; }   // inf and NaN
  if (e <= 102u) {
    // under the smallest subnormal 2^-24: 0, or 2^-24 above the tie at 2^-25
    return bitcast<f32>(sign | select(0u, 0x33800000u, e == 102u && (b & 0x7fffffu) != 0u));
  }
  let drop = select(13u, 126u - e, e < 113u);   // bits below the float16 grid
  let kept = (b + (1u << (drop - 1u)) - 1u + ((b >> drop) & 1u)) & ~((1u << drop) - 1u);
  // from 65520 (rounded to 65536) on, float16 is infinite
  return bitcast<f32>(select(kept, sign | 0x7f800000u, (kept & 0x7fffffffu) >= 0x47800000u));""",
                        typed=False),
    "to_f16": Helper("x: f32", "f16", """
  return f16(round_f16(x));   // exact: round_f16 already chose the float16""",
                     typed=False, deps=("round_f16",)),
    "f32_to_i32": Helper("x: f32", "i32", """
  // truncate and saturate, NaN -> 0 (WGSL leaves out-of-range conversion to the driver)
  let inside = i32(clamp(x, -2147483648.0, 2147483520.0));
  return select(select(inside, 2147483647i, x >= 2147483648.0), 0i, isnan_f32(x));""",
                         typed=False, deps=("isnan_f32",)),
    "f32_to_u32": Helper("x: f32", "u32", """
  let inside = u32(clamp(x, 0.0, 4294967040.0));
  return select(select(inside, 4294967295u, x >= 4294967296.0), 0u, isnan_f32(x));""",
                         typed=False, deps=("isnan_f32",)),
    "idiv_i32": Helper("a: i32, b: i32", "i32", """
  // truncating; x // 0 = -1 as XLA; INT_MIN // -1 wraps instead of trapping
  let q = a / select(b, 1i, b == 0i || b == -1i);
  return select(select(q, -a, b == -1i), -1i, b == 0i);""", typed=False),
    "idiv_u32": Helper("a: u32, b: u32", "u32", """
  return select(a / select(b, 1u, b == 0u), 4294967295u, b == 0u);""", typed=False),
    "mod_i32": Helper("a: i32, b: i32", "i32", """
  // a - b * trunc(a / b): the sign of the dividend (C fmod), x % 0 = x as XLA. Not
  // WGSL's %, which NVIDIA's Vulkan driver gets wrong for negative operands
  let safe = select(b, 1i, b == 0i || b == -1i);
  return select(a - safe * (a / safe), a, b == 0i);""", typed=False),
    "mod_u32": Helper("a: u32, b: u32", "u32", """
  let safe = select(b, 1u, b == 0u);
  return select(a - safe * (a / safe), a, b == 0u);""", typed=False),
    "sincos_reduce": Helper("x: f32", "vec2<f32>", """
  // |x| = j*pi/4 + r with j even and |r| <= pi/4; returns (r, j mod 8)
  let ax = abs(x);
  if (ax >= 8192.0) {
    return sincos_reduce_big(ax);
  }
  // Cody-Waite with pi/4 in three parts (Cephes sinf): exact products for j < 2^13
  var j = u32(ax * 1.27323954473516);
  j = j + (j & 1u);
  let y = f32(j);
  let r = ((ax - y * 0.78515625) - y * 2.4187564849853515625e-4) - y * 3.77489497744594108e-8;
  return vec2<f32>(r, f32(j & 7u));""", typed=False, deps=("sincos_reduce_big",)),
    "sincos_reduce_big": Helper("ax: f32", "vec2<f32>", """
  // Payne-Hanek: the 24-bit mantissa times 96 bits of 2/pi taken at its exponent
  // gives the quarter turns (mod 4) and 64 bits of the fraction exactly
  let bits = bitcast<u32>(ax);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let q = i32(bits >> 23u) - 152;   // ax = m * 2^(q + 2)
  let p2 = mul_wide(m, two_over_pi_bits(q + 64));
  let p1 = mul_wide(m, two_over_pi_bits(q + 32));
  let p0 = mul_wide(m, two_over_pi_bits(q));
  // the product's words 1 and 2 (bits 32..95), with carries; bit 94 up are turns
  let r1 = p2.x + p1.y;
  let s2 = p1.x + p0.y;
  let r2 = s2 + select(0u, 1u, r1 < p2.x);
  var turns = r2 >> 30u;
  var hi = (r2 << 2u) | (r1 >> 30u);
  var lo = (r1 << 2u) | (p2.y >> 30u);
  let upper = hi >= 0x80000000u;   // a fraction past 1/2 counts from the next turn
  if (upper) {
    lo = ~lo + 1u;
    hi = ~hi + select(0u, 1u, lo == 0u);
    turns = turns + 1u;
  }
  let fraction = f32(hi) * 2.3283064365386963e-10 + f32(lo) * 5.421010862427522e-20;
  let r = fraction * 1.5707963267948966;
  return vec2<f32>(select(r, -r, upper), f32((turns * 2u) & 7u));""", typed=False,
                                deps=("mul_wide", "two_over_pi_bits")),
    "mul_wide": Helper("a: u32, b: u32", "vec2<u32>", """
  // the 64-bit product a * b as (high word, low word), from 16-bit halves
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>(a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u),
                   (p00 & 0xffffu) | (mid << 16u));""", typed=False),
    "two_over_pi_bits": Helper("q: i32", "u32", """
  // 32 bits of 2/pi starting q bits after the binary point (zeros before it)
  var words = array<u32, 10>(0u, WORDS, 0u);
  let p = q + 32;
  let i = p / 32;
  let s = u32(p % 32);
  return (words[i] << s) | select(words[i + 1] >> (32u - s), 0u, s == 0u);""".replace(
        "WORDS", ", ".join(f"0x{w:08x}u" for w in two_over_pi_words(8))), typed=False),
    "sin_poly": Helper("r: f32", "f32", """
  let z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;""",
                       typed=False),
    "cos_poly": Helper("r: f32", "f32", """
  let z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z
      - 0.5 * z + 1.0;""", typed=False),
    "sin": Helper("x", "T", """
  let red = sincos_reduce(x);
  let j = u32(red.y);
  let v = select(sin_poly(red.x), cos_poly(red.x), (j & 2u) != 0u);
  let s = select(v, -v, ((j & 4u) != 0u) != (x < 0.0));
  return select(nan_f32(), s, finite_f32(x));""",
                  deps=("sincos_reduce", "sin_poly", "cos_poly", "finite_f32", "nan_f32")),
    "cos": Helper("x", "T", """
  let red = sincos_reduce(x);
  let j = u32(red.y);
  let v = select(cos_poly(red.x), sin_poly(red.x), (j & 2u) != 0u);
  let c = select(v, -v, ((j + 2u) & 4u) != 0u);
  return select(nan_f32(), c, finite_f32(x));""",
                  deps=("sincos_reduce", "sin_poly", "cos_poly", "finite_f32", "nan_f32")),
    "exp": Helper("x", "T", """
  // Cephes expf: x = n ln2 + r with ln2 in two parts, a polynomial for e^r, times 2^n
  // (the hardware exp is several ulp off)
  let n = floor(1.44269504088896341 * x + 0.5);
  let r = (x - n * 0.693359375) - n * -2.12194440e-4;
  let p = ((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r
      + 4.1665795894e-2) * r + 1.6666665459e-1) * r + 5.0000001201e-1;
  let e = p * r * r + r + 1.0;
  let k = i32(clamp(n, -160.0, 160.0));
  // 2^k as two factors: one would overflow before the product underflows to subnormal
  let h = k / 2;
  let v = e * bitcast<f32>(u32(h + 127) << 23u) * bitcast<f32>(u32(k - h + 127) << 23u);
  let big = select(v, inf_f32(), x > 88.72283935546875);
  return select(select(big, 0.0, x < -103.97208404541015625), x, isnan_f32(x));""",
                  deps=("inf_f32", "isnan_f32")),
    "log": Helper("x", "T", """
  // Cephes logf: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), a polynomial in m - 1
  let bits = bitcast<u32>(x);
  let tiny = (bits & 0x7f800000u) == 0u;   // subnormal: scale into the normal range
  let b = bitcast<u32>(select(x, x * 33554432.0, tiny));
  let m = bitcast<f32>((b & 0x807fffffu) | 0x3f000000u);   // in [0.5, 1)
  let low = m < 0.70710678118654752440;
  let e = f32(i32((b >> 23u) & 0xffu) - select(126, 151, tiny) - select(0, 1, low));
  let t = select(m - 1.0, m + m - 1.0, low);
  let z = t * t;
  let p = ((((((((7.0376836292e-2 * t - 1.1514610310e-1) * t + 1.1676998740e-1) * t
      - 1.2420140846e-1) * t + 1.4249322787e-1) * t - 1.6668057665e-1) * t
      + 2.0000714765e-1) * t - 2.4999993993e-1) * t + 3.3333331174e-1) * t * z;
  let r = t + (p - 2.12194440e-4 * e - 0.5 * z) + 0.693359375 * e;
  // zero -> -inf, negative -> NaN, +inf and NaN -> themselves
  let special = select(select(x, nan_f32(), bits > 0x80000000u), -inf_f32(),
                       (bits & 0x7fffffffu) == 0u);
  return select(r, special, (bits & 0x7fffffffu) == 0u || bits >= 0x7f800000u);""",
                  deps=("inf_f32", "nan_f32")),
    "asin": Helper("x", "T", """
  // Cephes asinf: a polynomial near 0, the half-angle identity towards +-1
  let a = abs(x);
  let big = a > 0.5;
  let z = select(a * a, 0.5 * (1.0 - a), big);
  let s = select(a, sqrt(z), big);
  let p = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z
      + 7.4953002686e-2) * z + 1.6666752422e-1) * z * s + s;
  let r = select(p, 1.5707963267948966 - 2.0 * p, big);
  return select(select(r, -r, x < 0.0), nan_f32(), a > 1.0);""", deps=("nan_f32",)),
    "atan": Helper("x", "T", """
  // Cephes atanf: reduce |x| below tan(pi/8), then a polynomial
  let a = abs(x);
  let hi = a > 2.414213562373095;
  let mid = a > 0.4142135623730950 && !hi;
  let t = select(select(a, (a - 1.0) / (a + 1.0), mid), -1.0 / a, hi);
  let base = select(select(0.0, 0.7853981633974483, mid), 1.5707963267948966, hi);
  let z = t * t;
  let r = base + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
      - 3.33329491539e-1) * z * t + t);
  return select(r, -r, x < 0.0);"""),
    "tanh": Helper("x", "T", """
  // Cephes tanhf: a polynomial near 0, 1 - 2/(e^2|x| + 1) elsewhere (finite for large |x|)
  let a = abs(x);
  let z = x * x;
  let small = ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z
      + 1.33314422036e-1) * z - 3.33332819422e-1) * z * x + x;
  let large = 1.0 - 2.0 / (exp_f32(2.0 * a) + 1.0);
  return select(select(large, -large, x < 0.0), small, a < 0.625);""", deps=("exp_f32",)),
    "erfc": Helper("x", "T", """
  // Chebyshev-fitted erfc (fractional error < 1.2e-7), the formula of ir/evaluate.py
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.5 * z);
  let poly = t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806
      + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223
      + t * 0.17087277))))))));
  let r = t * exp_f32(-z * z - 1.26551223 + poly);
  return select(2.0 - r, r, x >= 0.0);""", deps=("exp_f32",)),
    "erf": Helper("x", "T", """
  let x2 = x * x;
  var term = x;
  var series = x;
  // Taylor series near 0, where 1 - erfc(x) would cancel
  for (var n = 1; n < 14; n++) {
    term = term * -x2 / f32(n);
    series = series + term / f32(2 * n + 1);
  }
  return select(1.0 - erfc_f32(x), series * 1.1283791670955126, abs(x) < 0.5);""",
                  deps=("erfc_f32",)),
    "threefry2x32": Helper("k0: u32, k1: u32, c0: u32, c1: u32", "vec2<u32>", """
  // Threefry-2x32 with 20 rounds (Salmon et al. 2011), as JAX
  var ks = array<u32, 3>(k0, k1, k0 ^ k1 ^ 0x1BD11BDAu);
  var rot = array<u32, 8>(13u, 15u, 26u, 6u, 17u, 29u, 16u, 24u);
  var x0 = c0 + k0;
  var x1 = c1 + k1;
  // five groups of four rounds, each group followed by a key injection
  for (var g = 0u; g < 5u; g++) {
    // four rounds of add, rotate, xor
    for (var r = 0u; r < 4u; r++) {
      let s = rot[(g % 2u) * 4u + r];
      x0 += x1;
      x1 = ((x1 << s) | (x1 >> (32u - s))) ^ x0;
    }
    x0 += ks[(g + 1u) % 3u];
    x1 += ks[(g + 2u) % 3u] + g + 1u;
  }
  return vec2<u32>(x0, x1);""", typed=False),
}

_CALL = re.compile(r"\b([a-z][a-z0-9_]*)\(")


def _resolve(name: str) -> tuple[str, Helper, str] | None:
    """'max_f16' -> ('max', its Helper, 'f16'); untyped helpers by their own name."""
    h = LIBRARY.get(name)
    if h is not None and not h.typed:
        return name, h, ""
    base, _, t = name.rpartition("_")
    h = LIBRARY.get(base)
    if h is not None and h.typed and t in ("f32", "f16"):
        return base, h, t
    return None


def helper_source(name: str) -> tuple[str, list[str]]:
    """The WGSL function `name` (e.g. 'max_f16') and the helpers it calls."""
    base, h, t = _resolve(name)
    names = [p.strip() for p in h.params.split(",") if p.strip()]
    params = ", ".join(p if ":" in p else f"{p}: {t}" for p in names)
    returns = t if h.returns == "T" else h.returns
    if t == "f16" and not h.generic:   # an f32 algorithm behind an f16 signature
        call = f"{base}_f32({', '.join(f'f32({p})' for p in names)})"
        wrap = f"to_f16({call})" if returns == "f16" else call
        return (f"fn {name}({params}) -> {returns} {{\n  return {wrap};\n}}",
                [f"{base}_f32"] + (["to_f16"] if returns == "f16" else []))
    own = t if h.generic else "f32"
    body = h.body.strip("\n").replace("_T(", f"_{own}(")
    return f"fn {name}({params}) -> {returns} {{\n{body}\n}}", \
        [d.replace("_T", f"_{own}") for d in h.deps]


def library_for(text: str) -> str:
    """Every helper `text` calls (and theirs), each defined before its callers."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        src, deps = helper_source(name)
        for d in deps:
            visit(d)
        order.append(src)

    for name in sorted({m.group(1) for m in _CALL.finditer(text)}):
        if _resolve(name) is not None:
            visit(name)
    return "\n\n".join(order)
