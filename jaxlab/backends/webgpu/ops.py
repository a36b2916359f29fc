"""How every AluOp is spelled in WGSL, and the helper functions some need.

Two facts drive the table (measured on lavapipe, see PLATFORM-NOTES.md):
WGSL compilers may assume NaN never occurs (`x != x` folds to false, `max`
drops NaN), so NaN tests look at the bits; and integer division by zero or a
float->int conversion out of range are left to the driver, so helpers give
ir/vocabulary.py's answers (x//0 = -1, x%0 = x, saturating casts, NaN -> 0).
Float math other than sin and cos arrives rewritten into primitive ops
(ir/mathlib.py). Each spelling that calls a helper adds its name to a `needs`
set, from which `library` writes the helpers a shader defines. int64 and uint64
values are pairs of u32 words, spelled by int64.py's table and helpers.
"""
from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np

from jaxlab.backends.webgpu import int64
from jaxlab.backends.webgpu.spelling import Call, Helper, Spelling
from jaxlab.ir import mathconst as K
from jaxlab.ir.alu import AluExp, AluOp, Divisor
from jaxlab.ir.dtypes import DType
from jaxlab.ir.vocabulary import (IDIV_BY_ZERO, SHIFT_MASK, Capabilities, Cast, Kind, cast_rule,
                                  kind_of)

# sin and cos keep their own helpers: a branch reduces a huge argument (Payne-Hanek)
# only where one occurs, which an expression of primitive ops cannot do
CAPABILITIES = Capabilities(native=frozenset({AluOp.Sin, AluOp.Cos}))


@dataclass(frozen=True)
class Lang:
    """The WGSL dialect one device accepts."""
    f16: bool = False   # shader-f16: float16 is computed and stored as f16
    subgroups: bool = False   # the subgroup builtins (wgpu's `subgroup` feature)

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

    @staticmethod
    def native(dtype: DType) -> bool:
        """Whether WGSL's own operators compute `dtype` (64-bit integers are pairs of
        words, computed by int64.py's helpers)."""
        return dtype not in int64.WIDE


# 8/16-bit integers and bfloat16 are computed in 32-bit values (see ir/widen.py)
_VTYPE = {DType.float32: "f32", DType.bfloat16: "f32", DType.int32: "i32", DType.int16: "i32",
          DType.int8: "i32", DType.uint32: "u32", DType.uint16: "u32", DType.uint8: "u32",
          DType.bool: "bool", DType.int64: int64.VTYPE, DType.uint64: int64.VTYPE}
F, I, U, B = Kind.FLOAT, Kind.INT, Kind.UINT, Kind.BOOL


ANY = None   # an OPS row's entry for every other kind
_MASK = f"(u32({{1}}) & {SHIFT_MASK}u)"

# (op -> operand kind -> spelling). {0} {1} {2} are the operands of a template.
OPS: dict[AluOp, dict[Optional[Kind], Spelling]] = {
    AluOp.Add: {B: "({0} || {1})", ANY: "({0} + {1})"},
    AluOp.Sub: {ANY: "({0} - {1})"},
    AluOp.Mul: {B: "({0} && {1})", ANY: "({0} * {1})"},
    AluOp.Div: {F: Call("div"), I: Call("idiv_i32", False), U: Call("idiv_u32", False)},
    AluOp.Idiv: {F: Call("trunc_div"), I: Call("idiv_i32", False), U: Call("idiv_u32", False)},
    AluOp.Mod: {F: Call("fmod"), I: Call("mod_i32", False), U: Call("mod_u32", False)},
    AluOp.Max: {F: Call("max"), B: "({0} || {1})", ANY: "max({0}, {1})"},
    AluOp.Min: {F: Call("min"), B: "({0} && {1})", ANY: "min({0}, {1})"},
    AluOp.Cmplt: {B: "(!{0} && {1})", ANY: "({0} < {1})"},
    AluOp.Cmpne: {F: Call("ne"), ANY: "({0} != {1})"},
    AluOp.And: {ANY: "({0} & {1})"},
    AluOp.Or: {ANY: "({0} | {1})"},
    AluOp.Xor: {B: "({0} != {1})", ANY: "({0} ^ {1})"},
    AluOp.Shl: {ANY: f"({{0}} << {_MASK})"},
    AluOp.Shr: {ANY: f"({{0}} >> {_MASK})"},
    AluOp.Where: {ANY: "select({2}, {1}, {0})"},
    AluOp.Sin: {F: Call("sin")},
    AluOp.Cos: {F: Call("cos")},
    AluOp.Sqrt: {F: "sqrt({0})"},
    AluOp.Reciprocal: {F: "(1.0 / {0})"},
    AluOp.Floor: {F: "floor({0})"},
    AluOp.Ceil: {F: "ceil({0})"},
    AluOp.Threefry2x32: {ANY: Call("threefry2x32", False)},
}

# a float division whose divisor is known to stay within 2^126 (see the `div` helper), and
# a remainder by a constant power of two, for which WGSL's a - b * trunc(a / b) is exact
_PLAIN_DIVISION = {AluOp.Div: "({0} / {1})", AluOp.Idiv: "trunc({0} / {1})",
                   AluOp.Mod: "({0} % {1})"}
_DIVISOR_LIMIT = 2.0 ** 126


def bounded_divisor(node: AluExp) -> bool:
    """Whether a float Div, Idiv or Mod node may be spelled as WGSL's bare operator: a
    Div's or Idiv's divisor is marked bounded (ir/alu.py Divisor) or is a constant of
    magnitude <= 2^126; a Mod's is a constant power of two within 2^126 (x % 2 in pow and
    round: no fmod loop)."""
    divisor = node.src[1]
    if node.op is AluOp.Mod:
        return divisor.is_const and _power_of_two(abs(float(divisor.arg)))
    return node.arg is Divisor.BOUNDED or (divisor.is_const and
                                           abs(float(divisor.arg)) <= _DIVISOR_LIMIT)


def _power_of_two(v: float) -> bool:
    return 2.0 ** -126 <= v <= _DIVISOR_LIMIT and math.frexp(v)[0] == 0.5


# Casts by rule (ir/vocabulary.py), float sources given as f32; the others are WGSL's
# own conversion T(x), which for i32 <-> u32 keeps the bits like astype.
CASTS: dict[tuple[Cast, Kind, Kind], Spelling] = {
    (Cast.SATURATE, F, I): Call("f32_to_i32", False),
    (Cast.SATURATE, F, U): Call("f32_to_u32", False),
    (Cast.NONZERO, F, B): Call("nonzero_f32", False),
    (Cast.NONZERO, I, B): "({0} != 0i)",
    (Cast.NONZERO, U, B): "({0} != 0u)",
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


def _fill(spelling: Spelling, args: list[str], t: str, needs: set[str]) -> str:
    if isinstance(spelling, Call):
        name = spelling.name(t)
        needs.add(name)
        return f"{name}({', '.join(bare(a) for a in args)})"
    # a call's arguments need no parentheses of their own; an operator's do
    if not spelling.startswith("("):
        args = [bare(a) for a in args]
    return spelling.format(*args)


# f16 builtins of these need not be correctly rounded: compute in f32 and round
# once, as NumPy does.
_F16_VIA_F32 = frozenset({AluOp.Div, AluOp.Sqrt, AluOp.Reciprocal})


def op_text(op: AluOp, operand: DType, args: list[str], lang: Lang, needs: set[str],
            bounded: bool = False) -> str:
    """WGSL for `op` on operands of dtype `operand`; `bounded`: a float division whose
    divisor bounded_divisor vouches for, spelled without the guard."""
    if operand in int64.WIDE:
        spelling = int64.spelling(op, operand)
    elif bounded and operand.is_float and op in _PLAIN_DIVISION:
        spelling = _PLAIN_DIVISION[op]
    else:
        row = OPS.get(op)
        spelling = row and (row.get(kind_of(operand)) or row.get(ANY))
    if spelling is None:
        raise NotImplementedError(f"webgpu: no WGSL for {op.name} on {operand}")
    if lang.vtype(operand) == "f16" and op in _F16_VIA_F32:
        needs.add("to_f16")
        return f"to_f16({bare(_fill(spelling, [f'f32({bare(a)})' for a in args], 'f32', needs))})"
    return _fill(spelling, args, lang.vtype(operand), needs)


@dataclass(frozen=True)
class Typed:
    """A template over typed helpers: {T} is the operand's WGSL type, {0} an operand."""
    template: str
    helpers: tuple[str, ...]

    def fill(self, t: str, needs: set[str], *args: str) -> str:
        needs.update(f"{h}_{t}" for h in self.helpers)
        return self.template.format(*args, T=t)


# Shapes compilers fold assuming no inf/NaN (x - x -> 0, x * 0 -> 0, x / 0 ->
# garbage), yet NumPy code relies on them: isfinite is x - x == 0. Spelled out
# as IEEE computes them; {0} is the operand that is not the constant.
_SAME_OPERAND = {
    AluOp.Sub: Typed("select(nan_{T}(), 0.0, finite_{T}({0}))", ("nan", "finite")),
    AluOp.Div: Typed("select(nan_{T}(), 1.0, finite_{T}({0}) && {0} != 0.0)", ("nan", "finite")),
}
_BY_ZERO = {
    AluOp.Mul: Typed("times_zero_{T}({0})", ("times_zero",)),
    AluOp.Div: Typed("over_zero_{T}({0})", ("over_zero",)),
    AluOp.Mod: Typed("nan_{T}()", ("nan",)),
}


def ieee_text(op: AluOp, srcs: tuple, args: list[str], lang: Lang, needs: set[str]) -> str | None:
    """WGSL for a float op the compiler could fold wrongly (or, for a max or min with a
    constant, more cheaply than the general helper), else None."""
    if len(srcs) != 2 or not srcs[0].dtype.is_float:
        return None
    t = lang.vtype(srcs[0].dtype)
    bounds = [i for i, s in enumerate(srcs) if s.is_const and not math.isnan(s.arg)]
    if op in _BOUNDED and len(bounds) == 1:   # only the other operand can be NaN
        name = f"{_BOUNDED[op]}_{t}"
        needs.add(name)
        return f"{name}({bare(args[1 - bounds[0]])}, {bare(args[bounds[0]])})"
    if srcs[0] is srcs[1] and op in _SAME_OPERAND:
        return _SAME_OPERAND[op].fill(t, needs, bare(args[0]))
    zero = [i for i, s in enumerate(srcs) if s.is_const and s.arg == 0.0]
    if op in _BY_ZERO and zero and (op is AluOp.Mul or zero == [1]):
        other = 1 - zero[0] if len(zero) == 1 else 0
        text = _BY_ZERO[op].fill(t, needs, bare(args[other]))
        negative = np.signbit(srcs[zero[0]].arg)
        return f"-{text}" if negative and op is not AluOp.Mod else text
    return None


_ADDITIVE = (AluOp.Add, AluOp.Sub)
_BOUNDED = {AluOp.Max: "max_bound", AluOp.Min: "min_bound"}


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


def cast_text(src: DType, dst: DType, arg: str, lang: Lang, needs: set[str]) -> str:
    if dst is DType.float16 and src in int64.WIDE:
        # through float32: exact below 2^24, and float16 is infinite long before that
        arg, src = cast_text(src, DType.float32, arg, lang, needs), DType.float32
    have, want = lang.vtype(src), lang.vtype(dst)
    if dst is DType.float16:   # narrowing rounds on the bits (see round_f16)
        wide = bare(arg) if have == "f32" else f"f32({bare(arg)})"
        rounding = "to_f16" if lang.f16 else "round_f16"
        needs.add(rounding)
        return f"{rounding}({wide})"
    if have == want:
        return arg   # float16 computed as f32 becoming float32
    if src in int64.WIDE or dst in int64.WIDE:
        return _fill(int64.cast_spelling(_side(src), _side(dst)),
                     [arg if have != "f16" else f"f32({bare(arg)})"], want, needs)
    k_src, k_dst = kind_of(src), kind_of(dst)
    key = (cast_rule(k_src, k_dst), k_src, k_dst)
    if key in CASTS:
        return _fill(CASTS[key], [arg if have != "f16" else f"f32({bare(arg)})"], want, needs)
    return f"{want}({bare(arg)})"


def _side(dtype: DType) -> Any:
    """A cast's side as int64.CASTS keys it: a 64-bit dtype itself, else its Kind."""
    return dtype if dtype in int64.WIDE else kind_of(dtype)


def const_text(value: Any, dtype: DType, lang: Lang, needs: set[str]) -> str:
    """A literal that never makes WGSL's constant evaluator overflow or see inf/NaN."""
    if dtype is DType.bool:
        return "true" if value else "false"
    if dtype in int64.WIDE:
        return int64.const_text(value)
    if dtype is DType.uint32:
        return f"{int(value)}u"
    if dtype is DType.int32:
        v = int(value)
        return f"{v}i" if v >= 0 else ("i32(-2147483648)" if v == -(1 << 31) else f"({v}i)")
    t = lang.vtype(dtype)
    suffix = "h" if t == "f16" else "f"
    v = float(value)
    if np.isnan(v):   # a NaN keeps its sign bit, as np.signbit sees it
        needs.add(f"nan_{t}")
        return f"(-nan_{t}())" if np.signbit(v) else f"nan_{t}()"
    if np.isinf(v):
        needs.add(f"inf_{t}")
        return f"inf_{t}()" if v > 0 else f"(-inf_{t}())"
    text = str(np.float16(v) if t == "f16" else np.float32(v))
    return f"{text}{suffix}" if v >= 0 else f"({text}{suffix})"


def _lit(value: float) -> str:
    """An f32 literal (with its sign in parentheses when negative)."""
    return repr(value) if value >= 0 else f"({value!r})"


def _horner(x: str, coeffs: tuple[float, ...]) -> str:
    """WGSL of coeffs[0] x^n + ... + coeffs[n], highest power first."""
    text = _lit(coeffs[0])
    for c in coeffs[1:]:
        text = f"({text} * {x} + {_lit(c)})"
    return text


# |x| from 8192 on (and inf, NaN) is reduced by Payne-Hanek: Cody-Waite's products
# q * part stay exact below it
_BIG_SINCOS_BITS = 0x46000000


def _cody_waite(x: str, j: str, parts: tuple[float, ...]) -> str:
    """x - j * (sum of parts), one part at a time: ((x - j*p0) - j*p1) - ..."""
    text = x
    for p in parts:
        text = f"({text} - {j} * {_lit(p)})"
    return text


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
    "max_bound": Helper("a, bound", "T", """
  // max with a constant that is never NaN: one bit test keeps np.maximum's NaN
  return select(max(a, bound), a, isnan_T(a));""", generic=True, deps=("isnan_T",)),
    "min_bound": Helper("a, bound", "T", """
  return select(min(a, bound), a, isnan_T(a));""", generic=True, deps=("isnan_T",)),
    "ne": Helper("a, b", "bool", """
  // NumPy: NaN is unequal to everything, itself included
  return a != b || isnan_T(a) || isnan_T(b);""", generic=True, deps=("isnan_T",)),
    "div": Helper("a, b", "T", """
  // NVIDIA divides as a * rcp(b), and rcp(b) of |b| > 2^126 is subnormal, flushed to 0
  // (WGSL promises division only for |b| in [2^-126, 2^126]): scale both by 1/4 first,
  // exact but for an |a| below 2^-124, whose quotient by such a b is 0 all the same
  let huge = abs(b) > 8.507059e37f;
  return select(a, a * 0.25, huge) / select(b, b * 0.25, huge);"""),
    "trunc_div": Helper("a, b", "T", """
  return trunc(div_T(a, b));""", deps=("div_T",)),
    "fmod": Helper("a, b", "T", """
  // C's fmod (the sign of a), exact as JAX's: |a|'s 24-bit mantissa, brought up to a's
  // exponent 8 bits at a time, reduced modulo |b|'s in integers. WGSL's % is
  // a - b * trunc(a / b), off by up to |b| where the quotient rounds (and NaN for an
  // infinite b, or a b past 2^126 on a GPU that divides as a * (1 / b))
  let ua = bitcast<u32>(a) & 0x7fffffffu;
  let ub = bitcast<u32>(b) & 0x7fffffffu;
  if (ua >= 0x7f800000u || ub > 0x7f800000u || ub == 0u) { return nan_f32(); }
  if (ua < ub) { return a; }   // an infinite b included
  let eb = max(ub >> 23u, 1u);   // subnormals: exponent 1, no leading bit
  let mb = select(ub & 0x7fffffu, (ub & 0x7fffffu) | 0x800000u, ub >= 0x800000u);
  var r = select(ua & 0x7fffffu, (ua & 0x7fffffu) | 0x800000u, ua >= 0x800000u) % mb;
  var d = max(ua >> 23u, 1u) - eb;
  while (d > 0u && r != 0u) {
    let step = min(d, 8u);
    r = (r << step) % mb;
    d = d - step;
  }
  // |result| = r 2^(eb - 150), by two powers of two that are normal (the product is exact)
  let k = i32(eb) - 150;
  let h = k >> 1u;
  let part = f32(r) * bitcast<f32>(u32(h + 127) << 23u);
  let magnitude = part * bitcast<f32>(u32(k - h + 127) << 23u);
  return bitcast<f32>(bitcast<u32>(magnitude) | (bitcast<u32>(a) & 0x80000000u));""",
                   deps=("nan_f32",)),
    "times_zero": Helper("x", "T", """
  // x * 0 keeps x's sign, and is NaN for inf and NaN
  return select(nan_f32(), bitcast<f32>(bitcast<u32>(x) & 0x80000000u), finite_f32(x));""",
                         deps=("nan_f32", "finite_f32")),
    "over_zero": Helper("x", "T", """
  // x / +0: signed inf, NaN for 0 and NaN
  return select(select(inf_f32(), -inf_f32(), x < 0.0), nan_f32(), x == 0.0 || isnan_f32(x));""",
                        deps=("nan_f32", "inf_f32", "isnan_f32")),
    "exact": Helper("x", "T", """
  // x, through a condition no compiler can decide (no output binding is empty; a
  // length past what a binding can hold would be decided): algebra cannot see through
  // it, so error-free sums are not reassociated away. The other arm is no constant
  // either: Mesa moved a "+ 0.5" into a constant arm and folded it with the sum in the other
  return select(x, x * 0.5, arrayLength(&out) == 0u);""", generic=True),
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
  // truncating; x // 0 as XLA; INT_MIN // -1 wraps instead of trapping
  let q = a / select(b, 1i, b == 0i || b == -1i);
  return select(select(q, -a, b == -1i), """ + f"{IDIV_BY_ZERO}i" + """, b == 0i);""", typed=False),
    "idiv_u32": Helper("a: u32, b: u32", "u32", """
  return select(a / select(b, 1u, b == 0u), """ + f"{IDIV_BY_ZERO % (1 << 32)}u" + """, b == 0u);""",
                       typed=False),
    "mod_i32": Helper("a: i32, b: i32", "i32", """
  // a - b * trunc(a / b): the sign of the dividend (C fmod), x % 0 = x as XLA. Not
  // WGSL's %, which NVIDIA's Vulkan driver gets wrong for negative operands
  let safe = select(b, 1i, b == 0i || b == -1i);
  return select(a - safe * (a / safe), a, b == 0i);""", typed=False),
    "mod_u32": Helper("a: u32, b: u32", "u32", """
  let safe = select(b, 1u, b == 0u);
  return select(a - safe * (a / safe), a, b == 0u);""", typed=False),
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
    "two_over_pi_word": Helper("i: i32", "u32", """
  // word i of 2/pi after the binary point (0 outside 1..8), picked by selects: a local
  // array indexed at run time would live in a GPU's slow local memory
  return """ + "".join(f"select(" for _ in range(8)) + "0u" + "".join(
        f", 0x{w:08x}u, i == {i + 1})" for i, w in enumerate(K.two_over_pi_chunks(32, 8))) +
        ";", typed=False),
    "two_over_pi_bits": Helper("q: i32", "u32", """
  // 32 bits of 2/pi starting q bits after the binary point (zeros before it)
  let p = q + 32;
  let i = p / 32;
  let s = u32(p % 32);
  let next = two_over_pi_word(i + 1);
  return (two_over_pi_word(i) << s) | select(next >> (32u - s), 0u, s == 0u);""", typed=False,
                               deps=("two_over_pi_word",)),
    "sin_poly": Helper("r: f32", "f32", """
  let z = r * r;
  return """ + _horner("z", K.SIN_POLY) + " * z * r + r;", typed=False),
    "cos_poly": Helper("r: f32", "f32", """
  let z = r * r;
  return """ + _horner("z", K.COS_POLY) + " * z * z - 0.5 * z + 1.0;", typed=False),
    "sin_big": Helper("x: f32", "f32", """
  // the rare arguments: |x| >= 8192 (Payne-Hanek), +-0, inf and NaN
  let red = sincos_reduce_big(abs(x));
  let j = u32(red.y);
  let v = select(sin_poly(red.x), cos_poly(red.x), (j & 2u) != 0u);
  let s = select(v, -v, ((j & 4u) != 0u) != (x < 0.0));
  return select(select(nan_f32(), s, finite_f32(x)), x, x == 0.0);""", typed=False,
                      deps=("sincos_reduce_big", "sin_poly", "cos_poly", "finite_f32", "nan_f32")),
    "cos_big": Helper("x: f32", "f32", """
  let red = sincos_reduce_big(abs(x));
  let j = u32(red.y);
  let v = select(cos_poly(red.x), sin_poly(red.x), (j & 2u) != 0u);
  let c = select(v, -v, ((j + 2u) & 4u) != 0u);
  return select(nan_f32(), c, finite_f32(x));""", typed=False,
                      deps=("sincos_reduce_big", "sin_poly", "cos_poly", "finite_f32", "nan_f32")),
    "sin_pi": Helper("r: f32", "f32", """
  // sin r on |r| <= pi/2: one odd minimax polynomial (no select between sin and cos)
  let z = r * r;
  return r * z * """ + _horner("z", K.SIN_PI_POLY) + """ + r;""", typed=False),
    "sin": Helper("x", "T", """
  // x = q pi + r, |r| <= pi/2: sin x = (-1)^q sin r. q = x/pi rounded by adding
  // 1.5*2^23, so q's parity is t's low bit; q itself is read from t + 1, the next float
  // (t - 1.5*2^23 is a sum compilers fold). Zero goes the slow way too: r + r^3 P(r^2)
  // would turn -0 into +0
  if ((bitcast<u32>(x) & 0x7fffffffu) - 1u >= """ + f"{_BIG_SINCOS_BITS - 1}u" + """) {
    return sin_big(x);
  }
  let t = x * """ + _lit(1 / math.pi) + " + " + _lit(K.ROUND_MAGIC) + """;
  let q = bitcast<f32>(bitcast<u32>(t) + 1u) - """ + _lit(K.ROUND_MAGIC + 1) + """;
  let r = """ + _cody_waite("x", "q", K.PI_PARTS) + """;
  return bitcast<f32>(bitcast<u32>(sin_pi(r)) ^ (bitcast<u32>(t) << 31u));""",
                  deps=("sin_big", "sin_pi")),
    "cos": Helper("x", "T", """
  // x = j pi/2 + r with j = 2q + 1 odd, |r| <= pi/2: cos x = (-1)^(q + 1) sin r. q =
  // floor(x/pi): x/pi rounded to q0 by adding 1.5*2^23, one less where x/pi < q0; j
  // is made on the bits and read back through 1.5*2^23 like q0 (no float constant next
  // to another for a compiler to fold into the wrong rounding)
  if ((bitcast<u32>(x) & 0x7fffffffu) >= """ + f"{_BIG_SINCOS_BITS}u" + """) {
    return cos_big(x);
  }
  let t = bitcast<u32>(x * """ + _lit(1 / math.pi) + " + " + _lit(K.ROUND_MAGIC) + """);
  let below = x * """ + _lit(1 / math.pi) + """ < bitcast<f32>(t + 1u) - """ + _lit(K.ROUND_MAGIC + 1) + """;
  let jbits = (t << 1u) - """ + f"{K.ROUND_MAGIC_BITS}u" + """ + select(1u, 0xffffffffu, below);
  let j = bitcast<f32>(jbits + 1u) - """ + _lit(K.ROUND_MAGIC + 1) + """;
  let r = """ + _cody_waite("x", "j", tuple(p / 2 for p in K.PI_PARTS)) + """;
  // (-1)^(q + 1): bit 1 of j + 1 (the bits' constant ends in zeros)
  return bitcast<f32>(bitcast<u32>(sin_pi(r)) ^ (((jbits + 1u) << 30u) & 0x80000000u));""",
                  deps=("cos_big", "sin_pi")),
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

LIBRARY.update(int64.LIBRARY)   # called by name like these


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


def library(needs: Iterable[str]) -> str:
    """The helpers named (and theirs), each defined before its callers."""
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

    for name in sorted(needs):
        visit(name)
    return "\n\n".join(order)
