"""int64 and uint64 in WGSL, which has no 64-bit types: a value is a vec2<u32> (low
word, high word), NumPy's own little-endian layout, so a buffer holds 8 bytes per element
and uploads and reads stay byte copies.

Every op on such values is a call of a helper below, written with 32-bit pieces, with
ir/vocabulary.py's edge cases (x // 0 = -1, x % 0 = x, INT64_MIN // -1 wraps, shifts by
the amount's low 6 bits, float -> int truncates and saturates with NaN -> 0). As for
ops.py's helpers, a shader defines only those its kernel calls. float64 has no such path
(emulating IEEE doubles is out of scope): the device refuses it (runtime.py).
"""
from __future__ import annotations

from typing import Any, Optional

from jaxlab.backends.webgpu.spelling import Call, Helper, Spelling
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.vocabulary import IDIV_BY_ZERO, Kind

WIDE = frozenset({DType.int64, DType.uint64})
VTYPE = "vec2<u32>"
S, U = DType.int64, DType.uint64
BOTH = None   # an OPS row's entry for int64 and uint64 alike


def _call(name: str) -> Call:
    return Call(name, typed=False)


# (op -> operand dtype -> spelling); {0} {1} {2} are the operands of a template
OPS: dict[AluOp, dict[Optional[DType], Spelling]] = {
    AluOp.Add: {BOTH: _call("add64")},
    AluOp.Sub: {BOTH: _call("sub64")},
    AluOp.Mul: {BOTH: _call("mul64")},
    AluOp.Div: {S: _call("div_i64"), U: _call("div_u64")},
    AluOp.Idiv: {S: _call("div_i64"), U: _call("div_u64")},
    AluOp.Mod: {S: _call("mod_i64"), U: _call("mod_u64")},
    AluOp.Max: {S: _call("max_i64"), U: _call("max_u64")},
    AluOp.Min: {S: _call("min_i64"), U: _call("min_u64")},
    AluOp.Cmplt: {S: _call("lt_i64"), U: _call("lt_u64")},
    AluOp.Cmpne: {BOTH: "(any({0} != {1}))"},
    # bitwise ops and select work on both words at once
    AluOp.And: {BOTH: "({0} & {1})"},
    AluOp.Or: {BOTH: "({0} | {1})"},
    AluOp.Xor: {BOTH: "({0} ^ {1})"},
    AluOp.Where: {BOTH: "select({2}, {1}, {0})"},
    AluOp.Shl: {BOTH: _call("shl64")},
    AluOp.Shr: {S: _call("shr_i64"), U: _call("shr_u64")},
}

# Casts to and from the other kinds a renderer meets (8/16-bit types and bfloat16 arrive
# as their 32-bit registers, ir/widen.py): (source, destination) -> spelling, a 64-bit
# side by its dtype. Float sources are given as f32.
CASTS: dict[tuple[Any, Any], Spelling] = {
    **{(Kind.INT, d): _call("i32_to_64") for d in WIDE},          # sign-extends, as astype
    **{(Kind.UINT, d): f"{VTYPE}({{0}}, 0u)" for d in WIDE},
    **{(Kind.BOOL, d): f"{VTYPE}(u32({{0}}), 0u)" for d in WIDE},
    (Kind.FLOAT, S): _call("f32_to_i64"),
    (Kind.FLOAT, U): _call("f32_to_u64"),
    **{(d, Kind.INT): _call("low_i32") for d in WIDE},            # the low word, as astype
    **{(d, Kind.UINT): _call("low_u32") for d in WIDE},
    **{(d, Kind.BOOL): f"(any({{0}} != {VTYPE}(0u)))" for d in WIDE},
    (S, Kind.FLOAT): _call("i64_to_f32"),
    (U, Kind.FLOAT): _call("u64_to_f32"),
}


def spelling(op: AluOp, operand: DType) -> Optional[Spelling]:
    """How `op` on 64-bit operands of `operand` is written, or None."""
    row = OPS.get(op, {})
    return row.get(operand) or row.get(BOTH)


def cast_spelling(src: Any, dst: Any) -> Spelling:
    """A cast between a 64-bit dtype and a Kind (int64 <-> uint64 keeps the value's
    words: no cast at all)."""
    if (src, dst) not in CASTS:
        raise NotImplementedError(f"webgpu: no WGSL cast from {src} to {dst}")
    return CASTS[(src, dst)]


def words(value: Any) -> tuple[int, int]:
    """An integer's two's complement bits as (low word, high word)."""
    bits = int(value) % (1 << 64)
    return bits & 0xFFFFFFFF, bits >> 32


def const_text(value: Any) -> str:
    lo, hi = words(value)
    return f"{VTYPE}(0x{lo:x}u, 0x{hi:x}u)"


_V = f"a: {VTYPE}"
_VV = f"a: {VTYPE}, b: {VTYPE}"
_BY_ZERO = const_text(IDIV_BY_ZERO)
_ZERO, _ONE = const_text(0), const_text(1)


def _helper(params: str, returns: str, body: str, *deps: str) -> Helper:
    return Helper(params, returns, body, typed=False, deps=deps)


LIBRARY: dict[str, Helper] = {
    "add64": _helper(_VV, VTYPE, """
  // the low words' carry goes into the high word
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));"""),
    "sub64": _helper(_VV, VTYPE, """
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));"""),
    "neg64": _helper(_V, VTYPE, f"""
  return sub64({_ZERO}, a);""", "sub64"),
    "mul64": _helper(_VV, VTYPE, """
  // the low 64 bits of the product (the same bits signed or unsigned): the low words'
  // full product, plus the cross products' low words in the high word
  let low = mul_wide(a.x, b.x);
  return vec2<u32>(low.y, low.x + a.x * b.y + a.y * b.x);""", "mul_wide"),
    "lt_u64": _helper(_VV, "bool", """
  return a.y < b.y || (a.y == b.y && a.x < b.x);"""),
    "lt_i64": _helper(_VV, "bool", """
  // the high words carry the sign
  return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x < b.x);"""),
    "min_i64": _helper(_VV, VTYPE, """
  return select(a, b, lt_i64(b, a));""", "lt_i64"),
    "max_i64": _helper(_VV, VTYPE, """
  return select(a, b, lt_i64(a, b));""", "lt_i64"),
    "min_u64": _helper(_VV, VTYPE, """
  return select(a, b, lt_u64(b, a));""", "lt_u64"),
    "max_u64": _helper(_VV, VTYPE, """
  return select(a, b, lt_u64(a, b));""", "lt_u64"),
    "shl64": _helper(_VV, VTYPE, """
  // by the amount's low 6 bits; WGSL shifts a u32 by 0..31 only
  let s = b.x & 63u;
  if (s == 0u) { return a; }
  if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
  return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));"""),
    "shr_u64": _helper(_VV, VTYPE, """
  let s = b.x & 63u;
  if (s == 0u) { return a; }
  if (s >= 32u) { return vec2<u32>(a.y >> (s - 32u), 0u); }
  return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);"""),
    "shr_i64": _helper(_VV, VTYPE, """
  // arithmetic: the sign fills from the top
  let s = b.x & 63u;
  let hi = bitcast<i32>(a.y);
  if (s == 0u) { return a; }
  if (s >= 32u) { return vec2<u32>(bitcast<u32>(hi >> (s - 32u)), bitcast<u32>(hi >> 31u)); }
  return vec2<u32>((a.x >> s) | (a.y << (32u - s)), bitcast<u32>(hi >> s));"""),
    "divmod_u64": _helper(f"n: {VTYPE}, d: {VTYPE}", "vec4<u32>", """
  // (quotient, remainder) of n / d for d != 0
  if ((n.y | d.y) == 0u) {
    let q = n.x / d.x;
    return vec4<u32>(q, 0u, n.x - q * d.x, 0u);
  }
  // binary long division, one quotient bit per step from n's leading one (none for
  // n = 0). r < d before a step, so 2r + 1 needs 65 bits: a bit shifted out of r's top
  // means 2r + 1 > d
  var q = vec2<u32>(0u, 0u);
  var r = vec2<u32>(0u, 0u);
  let top = select(31i - i32(countLeadingZeros(n.x)), 63i - i32(countLeadingZeros(n.y)),
                   n.y != 0u);
  for (var i = top; i >= 0i; i--) {
    let bit = u32(i) & 31u;
    let carry = r.y >> 31u;
    let next = (select(n.x, n.y, i >= 32i) >> bit) & 1u;
    r = vec2<u32>((r.x << 1u) | next, (r.y << 1u) | (r.x >> 31u));
    if (carry != 0u || !lt_u64(r, d)) {
      r = sub64(r, d);
      if (i >= 32i) { q.y |= 1u << bit; } else { q.x |= 1u << bit; }
    }
  }
  return vec4<u32>(q, r);""", "lt_u64", "sub64"),
    "abs64": _helper(_V, VTYPE, """
  // the magnitude as unsigned bits: INT64_MIN's is 2^63, its own bits
  return select(a, neg64(a), bitcast<i32>(a.y) < 0i);""", "neg64"),
    "div_u64": _helper(_VV, VTYPE, f"""
  // x // 0 as XLA
  let zero = all(b == {_ZERO});
  return select(divmod_u64(a, select(b, {_ONE}, zero)).xy, {_BY_ZERO}, zero);""",
                       "divmod_u64"),
    "mod_u64": _helper(_VV, VTYPE, f"""
  // x % 0 = x as XLA
  let zero = all(b == {_ZERO});
  return select(divmod_u64(a, select(b, {_ONE}, zero)).zw, a, zero);""", "divmod_u64"),
    "div_i64": _helper(_VV, VTYPE, f"""
  // truncating: the magnitudes' quotient, negated when the signs differ, so
  // INT64_MIN // -1 wraps to INT64_MIN; x // 0 as XLA
  let zero = all(b == {_ZERO});
  let q = divmod_u64(abs64(a), select(abs64(b), {_ONE}, zero)).xy;
  let negative = (bitcast<i32>(a.y) < 0i) != (bitcast<i32>(b.y) < 0i);
  return select(select(q, neg64(q), negative), {_BY_ZERO}, zero);""",
                       "divmod_u64", "abs64", "neg64"),
    "mod_i64": _helper(_VV, VTYPE, f"""
  // the sign of the dividend (C's %), x % 0 = x as XLA
  let zero = all(b == {_ZERO});
  let r = divmod_u64(abs64(a), select(abs64(b), {_ONE}, zero)).zw;
  return select(select(r, neg64(r), bitcast<i32>(a.y) < 0i), a, zero);""",
                       "divmod_u64", "abs64", "neg64"),
    "i32_to_64": _helper("x: i32", VTYPE, """
  return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0i));"""),
    "low_i32": _helper(_V, "i32", """
  return bitcast<i32>(a.x);"""),
    "low_u32": _helper(_V, "u32", """
  return a.x;"""),
    "f32_to_u64": _helper("x: f32", VTYPE, """
  // truncate and saturate, NaN -> 0, from the bits (x = m * 2^e)
  if (isnan_f32(x) || x < 1.0) { return vec2<u32>(0u, 0u); }
  if (x >= 18446744073709551616.0) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  let bits = bitcast<u32>(x);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let e = i32(bits >> 23u) - 150i;
  if (e < 0i) { return vec2<u32>(m >> u32(-e), 0u); }
  return shl64(vec2<u32>(m, 0u), vec2<u32>(u32(e), 0u));""", "isnan_f32", "shl64"),
    "f32_to_i64": _helper("x: f32", VTYPE, """
  if (x >= 9223372036854775808.0) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  if (x <= -9223372036854775808.0) { return vec2<u32>(0u, 0x80000000u); }
  let m = f32_to_u64(abs(x));
  return select(m, neg64(m), x < 0.0);""", "f32_to_u64", "neg64"),
    "u64_to_f32": _helper(_V, "f32", """
  // rounded to nearest even from the bits (f32(hi) * 2^32 + f32(lo) would round twice)
  if (all(a == vec2<u32>(0u))) { return 0.0; }
  let lz = select(countLeadingZeros(a.y), 32u + countLeadingZeros(a.x), a.y == 0u);
  let n = shl64(a, vec2<u32>(lz, 0u));   // the leading one at bit 63
  let mantissa = n.y >> 8u;              // 24 bits, the leading one included
  let half = (n.y >> 7u) & 1u;
  let rest = (n.y & 0x7fu) | n.x;
  let up = select(0u, 1u, half == 1u && (rest != 0u || (mantissa & 1u) == 1u));
  // the leading one adds 1 to the exponent field 189 - lz; rounding up into
  // the next power of two carries on into the exponent, as it should
  return bitcast<f32>(((189u - lz) << 23u) + mantissa + up);""", "shl64"),
    "i64_to_f32": _helper(_V, "f32", """
  let m = u64_to_f32(abs64(a));
  return select(m, -m, bitcast<i32>(a.y) < 0i);""", "u64_to_f32", "abs64"),
}
