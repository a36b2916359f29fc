"""WAT text for each IR op: the one place an AluOp meets a Wasm instruction.

Values have a kind: "f" (float32, and float16 held in an f32 rounded to half
precision), "i" (int32), "u" (uint32) and "b" (bool: 0/1 in an i32 scalar; in
a vector each lane is a mask, 0 or -1, which is what SIMD comparisons give and
v128.bitselect takes).

Every entry is (scalar template, vector template). None means the form does
not exist: the code generator then computes the scalar form through the
vector one (splat, then lane 0) or the vector form lane by lane.
Templates name operands {a} {b} {c} {d}; {b_s} asks for operand b as a scalar
that is the same in every lane (i32x4.shl shifts all lanes by one amount).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType

Templates = tuple[Optional[str], Optional[str]]

# 8/16-bit integers and bfloat16 are held in 32-bit values (see ir/widen.py)
KIND = {DType.float32: "f", DType.float16: "f", DType.bfloat16: "f", DType.int32: "i",
        DType.int16: "i", DType.int8: "i", DType.uint32: "u", DType.uint16: "u",
        DType.uint8: "u", DType.bool: "b"}
SCALAR_TYPE = {"f": "f32", "i": "i32", "u": "i32", "b": "i32"}
LANES = {"f": "f32x4", "i": "i32x4", "u": "i32x4", "b": "i32x4"}


def kind(dtype: DType) -> str:
    return KIND[dtype]


def _both(s: str, v: str) -> Templates:
    return (s, v)


_ARITH: dict[tuple[AluOp, str], Templates] = {
    (AluOp.Add, "f"): _both("(f32.add {a} {b})", "(f32x4.add {a} {b})"),
    (AluOp.Sub, "f"): _both("(f32.sub {a} {b})", "(f32x4.sub {a} {b})"),
    (AluOp.Mul, "f"): _both("(f32.mul {a} {b})", "(f32x4.mul {a} {b})"),
    (AluOp.Div, "f"): _both("(f32.div {a} {b})", "(f32x4.div {a} {b})"),
    (AluOp.Mod, "f"): ("(call $fmod {a} {b})", None),
    (AluOp.Min, "f"): _both("(f32.min {a} {b})", "(f32x4.min {a} {b})"),  # both propagate NaN
    (AluOp.Max, "f"): _both("(f32.max {a} {b})", "(f32x4.max {a} {b})"),
    (AluOp.Cmplt, "f"): _both("(f32.lt {a} {b})", "(f32x4.lt {a} {b})"),
    (AluOp.Cmpne, "f"): _both("(f32.ne {a} {b})", "(f32x4.ne {a} {b})"),  # true on NaN
    # bool arithmetic is logic, as NumPy's bool + bool and bool * bool
    (AluOp.Add, "b"): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
    (AluOp.Mul, "b"): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
    (AluOp.Max, "b"): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
    (AluOp.Min, "b"): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
    (AluOp.Cmplt, "b"): _both("(i32.lt_u {a} {b})", "(i32x4.lt_u {a} {b})"),  # -1 > 0 unsigned
    (AluOp.Shr, "i"): _both("(i32.shr_s {a} {b})", "(i32x4.shr_s {a} {b_s})"),
    (AluOp.Shr, "u"): _both("(i32.shr_u {a} {b})", "(i32x4.shr_u {a} {b_s})"),
    # Wasm division traps on x/0 and INT_MIN/-1: the helpers give x//0 = -1, x%0 = x
    (AluOp.Idiv, "i"): ("(call $idiv_s {a} {b})", None),
    (AluOp.Idiv, "u"): ("(call $idiv_u {a} {b})", None),
    (AluOp.Mod, "i"): ("(call $rem_s {a} {b})", None),
    (AluOp.Mod, "u"): ("(call $rem_u {a} {b})", None),
}
for _k, _sign in (("i", "s"), ("u", "u")):
    _ARITH.update({
        (AluOp.Add, _k): _both("(i32.add {a} {b})", "(i32x4.add {a} {b})"),
        (AluOp.Sub, _k): _both("(i32.sub {a} {b})", "(i32x4.sub {a} {b})"),
        (AluOp.Mul, _k): _both("(i32.mul {a} {b})", "(i32x4.mul {a} {b})"),
        (AluOp.Min, _k): _both(f"(select {{a}} {{b}} (i32.lt_{_sign} {{a}} {{b}}))",
                               f"(i32x4.min_{_sign} {{a}} {{b}})"),
        (AluOp.Max, _k): _both(f"(select {{a}} {{b}} (i32.gt_{_sign} {{a}} {{b}}))",
                               f"(i32x4.max_{_sign} {{a}} {{b}})"),
        (AluOp.Cmplt, _k): _both(f"(i32.lt_{_sign} {{a}} {{b}})", f"(i32x4.lt_{_sign} {{a}} {{b}})"),
        (AluOp.Shl, _k): _both("(i32.shl {a} {b})", "(i32x4.shl {a} {b_s})"),  # count mod 32
    })
for _k in "iub":
    _ARITH.update({
        (AluOp.Cmpne, _k): _both("(i32.ne {a} {b})", "(i32x4.ne {a} {b})"),
        (AluOp.And, _k): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
        (AluOp.Or, _k): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
        (AluOp.Xor, _k): _both("(i32.xor {a} {b})", "(v128.xor {a} {b})"),
    })

# Float math: the vector functions of mathlib.py (the scalar form goes through lane 0).
_UNARY: dict[AluOp, Templates] = {
    AluOp.Sqrt: _both("(f32.sqrt {a})", "(f32x4.sqrt {a})"),
    AluOp.Floor: _both("(f32.floor {a})", "(f32x4.floor {a})"),
    AluOp.Ceil: _both("(f32.ceil {a})", "(f32x4.ceil {a})"),
    AluOp.Reciprocal: _both("(f32.div (f32.const 1) {a})",
                            "(f32x4.div (v128.const f32x4 1 1 1 1) {a})"),
    **{op: (None, f"(call ${op.name.lower()} {{a}})")
       for op in (AluOp.Exp, AluOp.Log, AluOp.Sin, AluOp.Cos, AluOp.Asin, AluOp.Atan,
                  AluOp.Erf, AluOp.Erfc, AluOp.Tanh)},
}

# Vector math pasted into the kernel (mathlib.INLINE) instead of called: (function, extra args)
INLINED: dict[AluOp, tuple[str, tuple[str, ...]]] = {
    AluOp.Exp: ("exp", ()), AluOp.Log: ("log", ()), AluOp.Tanh: ("tanh", ()),
    AluOp.Atan: ("atan", ()), AluOp.Asin: ("asin", ()),
    AluOp.Sin: ("sincos", ("(i32.const 0)",)), AluOp.Cos: ("sincos", ("(i32.const 1)",)),
}

# Cast by (from kind, to kind); a cast to float16 is a cast to "f" then a rounding.
_CAST: dict[tuple[str, str], Templates] = {
    ("f", "f"): _both("{a}", "{a}"),
    ("f", "i"): _both("(i32.trunc_sat_f32_s {a})", "(i32x4.trunc_sat_f32x4_s {a})"),
    ("f", "u"): _both("(i32.trunc_sat_f32_u {a})", "(i32x4.trunc_sat_f32x4_u {a})"),
    ("f", "b"): _both("(f32.ne {a} (f32.const 0))", "(f32x4.ne {a} (v128.const f32x4 0 0 0 0))"),
    ("i", "f"): _both("(f32.convert_i32_s {a})", "(f32x4.convert_i32x4_s {a})"),
    ("u", "f"): _both("(f32.convert_i32_u {a})", "(f32x4.convert_i32x4_u {a})"),
    ("b", "f"): _both("(f32.convert_i32_u {a})", "(f32x4.convert_i32x4_u (i32x4.neg {a}))"),
    ("b", "i"): _both("{a}", "(i32x4.neg {a})"),
    ("b", "u"): _both("{a}", "(i32x4.neg {a})"),
}
for _f in "iu":
    _CAST[(_f, "b")] = _both("(i32.ne {a} (i32.const 0))", "(i32x4.ne {a} (v128.const i32x4 0 0 0 0))")
    for _t in "iu":
        _CAST[(_f, _t)] = _both("{a}", "{a}")

# Bitcasts only join 4-byte types: v128 is untyped, so vectors need nothing.
_BITCAST: dict[tuple[str, str], Templates] = {
    ("f", "i"): _both("(i32.reinterpret_f32 {a})", "{a}"),
    ("f", "u"): _both("(i32.reinterpret_f32 {a})", "{a}"),
    ("i", "f"): _both("(f32.reinterpret_i32 {a})", "{a}"),
    ("u", "f"): _both("(f32.reinterpret_i32 {a})", "{a}"),
    ("i", "u"): _both("{a}", "{a}"),
    ("u", "i"): _both("{a}", "{a}"),
}

WHERE: Templates = _both("(select {b} {c} {a})", "(v128.bitselect {b} {c} {a})")
THREEFRY = "(call $threefry2x32 {a} {b} {c} {d} (i32.const {arg}))"

# Ops whose float16 result needs no rounding: they return one of their inputs
# or an integer-valued float that half precision holds exactly.
F16_EXACT = frozenset({AluOp.Min, AluOp.Max, AluOp.Where, AluOp.Floor, AluOp.Ceil,
                       AluOp.Const, AluOp.GlobalIndex, AluOp.Variable})


def templates(op: AluOp, out_kind: str, in_kind: str) -> Templates:
    """(scalar, vector) templates of `op` with operands of in_kind and result out_kind."""
    if op is AluOp.Where:
        return WHERE
    if op is AluOp.Cast:
        return _CAST[(in_kind, out_kind)]
    if op is AluOp.Bitcast:
        return _BITCAST[(in_kind, out_kind)]
    if op is AluOp.Threefry2x32:
        return (None, THREEFRY)
    if op in _UNARY:
        return _UNARY[op]
    key = (op, in_kind)
    if key not in _ARITH:
        raise NotImplementedError(f"wasm backend: no lowering of {op.name} on {in_kind!r} values")
    return _ARITH[key]


# --- constants and moving between scalar and vector forms --------------------
def _float_text(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))   # the shortest text that parses back to the same f32


def const(value, dtype: DType, vector: bool) -> str:
    k = KIND[dtype]
    if k == "f":
        text = _float_text(value)
        return f"(v128.const f32x4 {text} {text} {text} {text})" if vector else f"(f32.const {text})"
    v = int(value)
    if vector:
        lane = -v if k == "b" else v     # a true bool lane is the mask -1
        return f"(v128.const i32x4 {lane} {lane} {lane} {lane})"
    return f"(i32.const {v})"


def splat(dtype: DType, scalar: str) -> str:
    k = KIND[dtype]
    if k == "b":
        return f"(i32x4.neg (i32x4.splat {scalar}))"
    return f"({LANES[k]}.splat {scalar})"


def extract(dtype: DType, vector: str, lane: int) -> str:
    k = KIND[dtype]
    if k == "b":
        return f"(i32.and (i32x4.extract_lane {lane} {vector}) (i32.const 1))"
    return f"({LANES[k]}.extract_lane {lane} {vector})"


def replace(dtype: DType, vector: str, lane: int, scalar: str) -> str:
    k = KIND[dtype]
    if k == "b":
        scalar = f"(i32.sub (i32.const 0) {scalar})"
    return f"({LANES[k]}.replace_lane {lane} {vector} {scalar})"


# --- memory: how each dtype is loaded and stored --------------------------------
@dataclass(frozen=True)
class MemOps:
    load: str            # scalar load of the raw element (an f32 or an i32)
    store: str           # scalar store of the raw element
    raw_lanes: str       # the SIMD shape of four raw elements
    load_vector: str     # four contiguous raw elements, widened to 32-bit lanes
    store_vector: str    # the reverse; {v} holds 32-bit raw lanes
    decode: str = ""     # raw lanes -> values (vector function), where they differ
    encode: str = ""     # values -> raw lanes
    decode_scalar: str = ""   # the same for one raw element, where it has a scalar form
    encode_scalar: str = ""


def _narrow_int(bits: int, sign: str) -> MemOps:
    """8- or 16-bit integers, extended to (and narrowed from) i32 lanes; values are
    already in range (ir/widen.py), so the saturating narrows keep them."""
    if bits == 8:
        return MemOps(f"i32.load8_{sign}", "i32.store8", "i32x4",
                      f"(i32x4.extend_low_i16x8_{sign} (i16x8.extend_low_i8x16_{sign} "
                      "(v128.load32_zero offset={off} {addr})))",
                      "(v128.store32_lane offset={off} 0 {addr} "
                      f"(i8x16.narrow_i16x8_{sign} (i16x8.narrow_i32x4_{sign} {{v}} {{v}}) "
                      f"(i16x8.narrow_i32x4_{sign} {{v}} {{v}})))")
    return MemOps(f"i32.load16_{sign}", "i32.store16", "i32x4",
                  f"(i32x4.extend_low_i16x8_{sign} (v128.load64_zero offset={{off}} {{addr}}))",
                  "(v128.store64_lane offset={off} 0 {addr} "
                  f"(i16x8.narrow_i32x4_{sign} {{v}} {{v}}))")


MEM = {
    DType.float32: MemOps("f32.load", "f32.store", "f32x4", "(v128.load offset={off} {addr})",
                          "(v128.store offset={off} {addr} {v})"),
    DType.int32: MemOps("i32.load", "i32.store", "i32x4", "(v128.load offset={off} {addr})",
                        "(v128.store offset={off} {addr} {v})"),
    DType.uint32: MemOps("i32.load", "i32.store", "i32x4", "(v128.load offset={off} {addr})",
                         "(v128.store offset={off} {addr} {v})"),
    # bool: one byte each, 0 or 1
    DType.bool: MemOps("i32.load8_u", "i32.store8", "i32x4",
                       "(i32x4.extend_low_i16x8_u (i16x8.extend_low_i8x16_u "
                       "(v128.load32_zero offset={off} {addr})))",
                       "(v128.store32_lane offset={off} 0 {addr} (i8x16.narrow_i16x8_u "
                       "(i16x8.narrow_i32x4_u {v} {v}) (i16x8.narrow_i32x4_u {v} {v})))",
                       decode="(i32x4.neg {v})", encode="(i32x4.neg {v})"),
    # float16: two bytes each, the IEEE half bit pattern
    DType.float16: MemOps("i32.load16_u", "i32.store16", "i32x4",
                          "(i32x4.extend_low_i16x8_u (v128.load64_zero offset={off} {addr}))",
                          "(v128.store64_lane offset={off} 0 {addr} "
                          "(i16x8.narrow_i32x4_u {v} {v}))",
                          decode="(call $f16_to_f32 {v})", encode="(call $f32_to_f16 {v})"),
    # bfloat16: the high half of an f32 (values are pre-rounded: ir/widen.py)
    DType.bfloat16: MemOps("i32.load16_u", "i32.store16", "i32x4",
                           "(i32x4.extend_low_i16x8_u (v128.load64_zero offset={off} {addr}))",
                           "(v128.store64_lane offset={off} 0 {addr} "
                           "(i16x8.narrow_i32x4_u {v} {v}))",
                           decode="(i32x4.shl {v} (i32.const 16))",
                           encode="(i32x4.shr_u {v} (i32.const 16))",
                           decode_scalar="(f32.reinterpret_i32 (i32.shl {v} (i32.const 16)))",
                           encode_scalar="(i32.shr_u (i32.reinterpret_f32 {v}) (i32.const 16))"),
    DType.int8: _narrow_int(8, "s"), DType.uint8: _narrow_int(8, "u"),
    DType.int16: _narrow_int(16, "s"), DType.uint16: _narrow_int(16, "u"),
}


def divide_by_constant(op: AluOp, in_kind: str, c: int, nonneg: bool) -> Optional[Templates]:
    """Integer // and % by a constant: no trap is possible, and powers of two are shifts."""
    if in_kind not in "iu":
        return None
    idiv = op is AluOp.Idiv
    if c == 0:   # x // 0 = -1, x % 0 = x
        return ("(i32.const -1)", "(v128.const i32x4 -1 -1 -1 -1)") if idiv else ("{a}", "{a}")
    if in_kind == "i" and c == -1:   # INT_MIN // -1 wraps instead of trapping
        return ("(i32.sub (i32.const 0) {a})", "(i32x4.neg {a})") if idiv else \
            ("(i32.const 0)", "(v128.const i32x4 0 0 0 0)")
    if c > 0 and c & (c - 1) == 0 and (nonneg or in_kind == "u"):
        shift = c.bit_length() - 1
        return ((f"(i32.shr_u {{a}} (i32.const {shift}))", f"(i32x4.shr_u {{a}} (i32.const {shift}))")
                if idiv else (f"(i32.and {{a}} (i32.const {c - 1}))",
                              f"(v128.and {{a}} (v128.const i32x4 {c - 1} {c - 1} {c - 1} {c - 1}))"))
    sign = "s" if in_kind == "i" else "u"
    return (f"(i32.{'div' if idiv else 'rem'}_{sign} {{a}} (i32.const {c}))", None)
