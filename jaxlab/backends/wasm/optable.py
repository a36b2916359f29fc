"""WAT text for each IR op: the one place an AluOp meets a Wasm instruction.

Values have a kind (ir/vocabulary.Kind): a FLOAT is an f32 (float16 is held in an
f32 rounded to half precision), INT and UINT an i32, and a BOOL is 0/1 in an i32
scalar; in a vector each lane is a mask, 0 or -1, which is what SIMD comparisons
give and v128.bitselect takes. The 64-bit kinds (Wide: f64, i64) are two to a
vector (f64x2, i64x2): a kernel that holds one computes two lanes per vector
(tune.py), its 32-bit values (index math, masks) in the first two lanes of theirs;
a 64-bit comparison's mask is narrowed to that form (low_words).

Every entry is (scalar template, vector template). None means the form does
not exist: the code generator then computes the scalar form through the
vector one (splat, then lane 0) or the vector form lane by lane.
Templates name operands {a} {b} {c} {d}; {b_s} asks for operand b as a scalar
that is the same in every lane (i32x4.shl shifts all lanes by one amount).
Ops done by a function of mathlib.py name it in CALLS; the kernel's module
includes the functions its IR's ops name (functions_for).
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Optional, Union

from jaxlab.backends.wasm.mathlib import FUNCTIONS
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.floatsign import Sign
from jaxlab.ir.vocabulary import IDIV_BY_ZERO, Capabilities, Kind, kind_of

Templates = tuple[Optional[str], Optional[str]]
F, I, U, B = Kind.FLOAT, Kind.INT, Kind.UINT, Kind.BOOL


class Wide(enum.Enum):
    """The 64-bit kinds: computed in Wasm's own f64 and i64 (f64x2, i64x2 in vectors)."""
    FLOAT64 = "f64"
    INT64 = "i64"
    UINT64 = "u64"


F64, I64, U64 = Wide.FLOAT64, Wide.INT64, Wide.UINT64
ValueKind = Union[Kind, Wide]
_WIDE_KINDS = frozenset(Wide)
_WIDE = {DType.float64: F64, DType.int64: I64, DType.uint64: U64}


def kind(dtype: DType) -> ValueKind:
    """How a value of `dtype` is computed on in Wasm."""
    return _WIDE[dtype] if dtype in _WIDE else kind_of(dtype)


def is_wide(dtype: DType) -> bool:
    return dtype in _WIDE


SCALAR_TYPE = {F: "f32", I: "i32", U: "i32", B: "i32", F64: "f64", I64: "i64", U64: "i64"}
LANES = {F: "f32x4", I: "i32x4", U: "i32x4", B: "i32x4", F64: "f64x2", I64: "i64x2", U64: "i64x2"}
SIGN = {I: "s", U: "u"}
SIGN64 = {I64: "s", U64: "u"}

# Float math this renderer spells itself (mathlib.py: in double precision where that
# is what keeps 4 ulp, by fused multiply-adds for exp and tanh); the rest is rewritten into primitive ops by ir/mathlib.py.
CAPABILITIES = Capabilities(native=frozenset({AluOp.Sin, AluOp.Cos, AluOp.Erf, AluOp.Erfc,
                                             AluOp.Exp, AluOp.Tanh}))


def _both(s: str, v: str) -> Templates:
    return (s, v)


# Ops computed by a function of mathlib.py: (op, operand kind) -> its name. Wasm
# division traps on x/0 and INT_MIN/-1: the helpers give the IR's answers instead.
CALLS: dict[tuple[AluOp, ValueKind], str] = {
    (AluOp.Mod, F): "fmod", (AluOp.Idiv, I): "idiv_s", (AluOp.Idiv, U): "idiv_u",
    (AluOp.Mod, I): "rem_s", (AluOp.Mod, U): "rem_u",
    (AluOp.Mod, F64): "fmod64", (AluOp.Idiv, I64): "idiv64_s", (AluOp.Idiv, U64): "idiv64_u",
    (AluOp.Mod, I64): "rem64_s", (AluOp.Mod, U64): "rem64_u",
    (AluOp.Sin, F): "sin", (AluOp.Cos, F): "cos", (AluOp.Erf, F): "erf", (AluOp.Erfc, F): "erfc",
    (AluOp.Exp, F): "exp", (AluOp.Tanh, F): "tanh",
    (AluOp.Threefry2x32, U): "threefry2x32",
    (AluOp.Sin, F64): "sincos64", (AluOp.Cos, F64): "sincos64",
    (AluOp.Erf, F64): "erf64", (AluOp.Erfc, F64): "erfc64",
}
# Ops whose function is pasted into the kernel (mathlib.INLINE): (function, extra args)
INLINED: dict[AluOp, tuple[str, tuple[str, ...]]] = {
    AluOp.Sin: ("sincos", ("(i32.const 0)",)), AluOp.Cos: ("sincos", ("(i32.const 1)",)),
    AluOp.Exp: ("exp", ()), AluOp.Tanh: ("tanh", ()),
}
# ... where the argument's sign is known (ir/floatsign.py): a one-sided function
INLINED_BY_SIGN: dict[tuple[AluOp, Sign], tuple[str, tuple[str, ...]]] = {
    (AluOp.Exp, Sign.NONPOS): ("exp_nonpos", ()), (AluOp.Exp, Sign.NONNEG): ("exp_nonneg", ()),
}


def _call(name: str, operands: str) -> str:
    return f"(call ${name} {operands})"


_ARITH: dict[tuple[AluOp, ValueKind], Templates] = {
    (AluOp.Add, F): _both("(f32.add {a} {b})", "(f32x4.add {a} {b})"),
    (AluOp.Sub, F): _both("(f32.sub {a} {b})", "(f32x4.sub {a} {b})"),
    (AluOp.Mul, F): _both("(f32.mul {a} {b})", "(f32x4.mul {a} {b})"),
    (AluOp.Div, F): _both("(f32.div {a} {b})", "(f32x4.div {a} {b})"),
    (AluOp.Mod, F): (_call(CALLS[AluOp.Mod, F], "{a} {b}"), None),
    (AluOp.Min, F): _both("(f32.min {a} {b})", "(f32x4.min {a} {b})"),  # both propagate NaN
    (AluOp.Max, F): _both("(f32.max {a} {b})", "(f32x4.max {a} {b})"),
    (AluOp.Cmplt, F): _both("(f32.lt {a} {b})", "(f32x4.lt {a} {b})"),
    (AluOp.Cmpne, F): _both("(f32.ne {a} {b})", "(f32x4.ne {a} {b})"),  # true on NaN
    # bool arithmetic is logic, as NumPy's bool + bool and bool * bool
    (AluOp.Add, B): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
    (AluOp.Mul, B): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
    (AluOp.Max, B): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
    (AluOp.Min, B): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
    (AluOp.Cmplt, B): _both("(i32.lt_u {a} {b})", "(i32x4.lt_u {a} {b})"),  # -1 > 0 unsigned
    (AluOp.Shr, I): _both("(i32.shr_s {a} {b})", "(i32x4.shr_s {a} {b_s})"),
    (AluOp.Shr, U): _both("(i32.shr_u {a} {b})", "(i32x4.shr_u {a} {b_s})"),
    **{(op, k): (_call(CALLS[op, k], "{a} {b}"), None)
       for op in (AluOp.Idiv, AluOp.Mod) for k in (I, U)},
}
for _k, _sign in SIGN.items():
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
for _k in (I, U, B):
    _ARITH.update({
        (AluOp.Cmpne, _k): _both("(i32.ne {a} {b})", "(i32x4.ne {a} {b})"),
        (AluOp.And, _k): _both("(i32.and {a} {b})", "(v128.and {a} {b})"),
        (AluOp.Or, _k): _both("(i32.or {a} {b})", "(v128.or {a} {b})"),
        (AluOp.Xor, _k): _both("(i32.xor {a} {b})", "(v128.xor {a} {b})"),
    })

# 64-bit values: a vector holds two (f64x2, i64x2) beside 32-bit values whose first two
# lanes count (see Wide). A 64-bit comparison's mask is narrowed to the 32-bit lanes
# every bool has; a select on 64-bit values widens it back.
def low_words(v: str) -> str:
    """The low 32 bits of each of two 64-bit lanes as the first two i32 lanes (the
    others 0): a 64-bit mask becomes a bool's, an int64 wraps to 32 bits."""
    return f"(i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 16 17 18 19 {v} (v128.const i64x2 0 0))"


_ARITH.update({(op, F64): (f"(f64.{name} {{a}} {{b}})", f"(f64x2.{name} {{a}} {{b}})")
               for op, name in ((AluOp.Add, "add"), (AluOp.Sub, "sub"), (AluOp.Mul, "mul"),
                                (AluOp.Div, "div"), (AluOp.Min, "min"), (AluOp.Max, "max"))})
_ARITH.update({(op, F64): (f"(f64.{name} {{a}} {{b}})", low_words(f"(f64x2.{name} {{a}} {{b}})"))
               for op, name in ((AluOp.Cmplt, "lt"), (AluOp.Cmpne, "ne"))})
_ARITH[AluOp.Mod, F64] = (_call(CALLS[AluOp.Mod, F64], "{a} {b}"), None)
_BIAS64 = "(v128.const i64x2 -9223372036854775808 -9223372036854775808)"
for _k, _sign in SIGN64.items():
    # i64x2 compares signed only: unsigned order is signed order of the sign-flipped bits
    _lt = ("(i64x2.lt_s {a} {b})" if _k is I64 else
           f"(i64x2.lt_s (v128.xor {{a}} {_BIAS64}) (v128.xor {{b}} {_BIAS64}))")
    _ARITH.update({(op, _k): (f"(i64.{name} {{a}} {{b}})", f"({vec} {{a}} {{b}})")
                   for op, name, vec in ((AluOp.Add, "add", "i64x2.add"),
                                         (AluOp.Sub, "sub", "i64x2.sub"),
                                         (AluOp.Mul, "mul", "i64x2.mul"),
                                         (AluOp.And, "and", "v128.and"), (AluOp.Or, "or", "v128.or"),
                                         (AluOp.Xor, "xor", "v128.xor"))})
    _ARITH.update({   # shifts: count mod 64 (a vector shift takes an i32 count)
        (AluOp.Shl, _k): ("(i64.shl {a} {b})", "(i64x2.shl {a} (i32.wrap_i64 {b_s}))"),
        (AluOp.Shr, _k): (f"(i64.shr_{_sign} {{a}} {{b}})",
                          f"(i64x2.shr_{_sign} {{a}} (i32.wrap_i64 {{b_s}}))"),
        (AluOp.Cmplt, _k): (f"(i64.lt_{_sign} {{a}} {{b}})", low_words(_lt)),
        (AluOp.Cmpne, _k): ("(i64.ne {a} {b})", low_words("(i64x2.ne {a} {b})")),
        (AluOp.Min, _k): (f"(select {{a}} {{b}} (i64.lt_{_sign} {{a}} {{b}}))",
                          f"(v128.bitselect {{a}} {{b}} {_lt})"),
        (AluOp.Max, _k): (f"(select {{a}} {{b}} (i64.gt_{_sign} {{a}} {{b}}))",
                          f"(v128.bitselect {{b}} {{a}} {_lt})"),
        **{(op, _k): (_call(CALLS[op, _k], "{a} {b}"), None) for op in (AluOp.Idiv, AluOp.Mod)},
    })

# Float math: the primitive ops, and the vector functions of mathlib.py (the scalar form
# goes through lane 0). float64 math other than these is rewritten (ir/mathlib.py).
_UNARY: dict[tuple[AluOp, ValueKind], Templates] = {
    (AluOp.Sqrt, F): _both("(f32.sqrt {a})", "(f32x4.sqrt {a})"),
    (AluOp.Floor, F): _both("(f32.floor {a})", "(f32x4.floor {a})"),
    (AluOp.Ceil, F): _both("(f32.ceil {a})", "(f32x4.ceil {a})"),
    (AluOp.Reciprocal, F): _both("(f32.div (f32.const 1) {a})",
                                 "(f32x4.div (v128.const f32x4 1 1 1 1) {a})"),
    **{(op, F): (None, _call(CALLS[op, F], "{a}"))
       for op in (AluOp.Sin, AluOp.Cos, AluOp.Erf, AluOp.Erfc, AluOp.Exp, AluOp.Tanh)},
    (AluOp.Sqrt, F64): _both("(f64.sqrt {a})", "(f64x2.sqrt {a})"),
    (AluOp.Floor, F64): _both("(f64.floor {a})", "(f64x2.floor {a})"),
    (AluOp.Ceil, F64): _both("(f64.ceil {a})", "(f64x2.ceil {a})"),
    (AluOp.Reciprocal, F64): _both("(f64.div (f64.const 1) {a})",
                                   "(f64x2.div (v128.const f64x2 1 1) {a})"),
    (AluOp.Sin, F64): (_call("sincos64", "{a} (i32.const 0)"), None),
    (AluOp.Cos, F64): (_call("sincos64", "{a} (i32.const 1)"), None),
    # erf and erfc: the cpu device's double-precision formula (ir/evaluate.py), two lanes
    **{(op, F64): (f"(f64x2.extract_lane 0 {_call(CALLS[op, F64], '(f64x2.splat {a})')})",
                   _call(CALLS[op, F64], "{a}")) for op in (AluOp.Erf, AluOp.Erfc)},
}

# Cast by (from kind, to kind); a cast to float16 is a cast to FLOAT then a rounding.
_CAST: dict[tuple[ValueKind, ValueKind], Templates] = {
    (F, F): _both("{a}", "{a}"),
    (F, I): _both("(i32.trunc_sat_f32_s {a})", "(i32x4.trunc_sat_f32x4_s {a})"),
    (F, U): _both("(i32.trunc_sat_f32_u {a})", "(i32x4.trunc_sat_f32x4_u {a})"),
    (F, B): _both("(f32.ne {a} (f32.const 0))", "(f32x4.ne {a} (v128.const f32x4 0 0 0 0))"),
    (I, F): _both("(f32.convert_i32_s {a})", "(f32x4.convert_i32x4_s {a})"),
    (U, F): _both("(f32.convert_i32_u {a})", "(f32x4.convert_i32x4_u {a})"),
    (B, F): _both("(f32.convert_i32_u {a})", "(f32x4.convert_i32x4_u (i32x4.neg {a}))"),
    (B, I): _both("{a}", "(i32x4.neg {a})"),
    (B, U): _both("{a}", "(i32x4.neg {a})"),
}
for _f in (I, U):
    _CAST[(_f, B)] = _both("(i32.ne {a} (i32.const 0))", "(i32x4.ne {a} (v128.const i32x4 0 0 0 0))")
    for _t in (I, U):
        _CAST[(_f, _t)] = _both("{a}", "{a}")

# Casts that meet a 64-bit kind: float -> int truncates and saturates (NaN -> 0),
# int -> float rounds to nearest, an int widens by its own sign and narrows to its low bits.
_FLOATS = {F: "f32", F64: "f64"}
_INTS = {I: ("i32", "s"), U: ("i32", "u"), B: ("i32", "u"), I64: ("i64", "s"), U64: ("i64", "u")}


def _cast64(src: ValueKind, dst: ValueKind) -> str:
    if src is dst:
        return "{a}"
    if src in _FLOATS and dst in _FLOATS:
        return "(f64.promote_f32 {a})" if dst is F64 else "(f32.demote_f64 {a})"
    if dst is B:
        t = _FLOATS.get(src) or _INTS[src][0]
        return f"({t}.ne {{a}} ({t}.const 0))"
    if src in _FLOATS:
        return f"({_INTS[dst][0]}.trunc_sat_{_FLOATS[src]}_{_INTS[dst][1]} {{a}})"
    (s_type, s_sign) = _INTS[src]
    if dst in _FLOATS:
        return f"({_FLOATS[dst]}.convert_{s_type}_{s_sign} {{a}})"
    d_type = _INTS[dst][0]
    if s_type == d_type:
        return "{a}"
    return "(i32.wrap_i64 {a})" if d_type == "i32" else f"(i64.extend_i32_{s_sign} {{a}})"


# the same on vectors (a 32-bit side in the first two lanes); None: lane by lane
_FROM_BOOL = "(i32x4.neg {a})"   # a mask lane -1 is the value 1
_CAST64_VECTOR: dict[tuple[ValueKind, ValueKind], str] = {
    (F, F64): "(f64x2.promote_low_f32x4 {a})", (F64, F): "(f32x4.demote_f64x2_zero {a})",
    (I, F64): "(f64x2.convert_low_i32x4_s {a})", (U, F64): "(f64x2.convert_low_i32x4_u {a})",
    (B, F64): f"(f64x2.convert_low_i32x4_u {_FROM_BOOL})",
    (F64, I): "(i32x4.trunc_sat_f64x2_s_zero {a})", (F64, U): "(i32x4.trunc_sat_f64x2_u_zero {a})",
    (F64, B): low_words("(f64x2.ne {a} (v128.const f64x2 0 0))"),
    **{(k, B): low_words("(i64x2.ne {a} (v128.const i64x2 0 0))") for k in (I64, U64)},
    **{(I, k): "(i64x2.extend_low_i32x4_s {a})" for k in (I64, U64)},
    **{(U, k): "(i64x2.extend_low_i32x4_u {a})" for k in (I64, U64)},
    **{(B, k): f"(i64x2.extend_low_i32x4_u {_FROM_BOOL})" for k in (I64, U64)},
    **{(f, t): low_words("{a}") for f in (I64, U64) for t in (I, U)},
    **{(f, t): "{a}" for f in (I64, U64) for t in (I64, U64)}, (F64, F64): "{a}",
}


for _f in (F, I, U, B, F64, I64, U64):
    for _t in (F, I, U, B, F64, I64, U64):
        if _WIDE_KINDS & {_f, _t}:
            _CAST[(_f, _t)] = (_cast64(_f, _t), _CAST64_VECTOR.get((_f, _t)))

# Bitcasts join types of one width: v128 is untyped, so vectors need nothing.
_BITCAST: dict[tuple[ValueKind, ValueKind], Templates] = {
    (F, I): _both("(i32.reinterpret_f32 {a})", "{a}"),
    (F, U): _both("(i32.reinterpret_f32 {a})", "{a}"),
    (I, F): _both("(f32.reinterpret_i32 {a})", "{a}"),
    (U, F): _both("(f32.reinterpret_i32 {a})", "{a}"),
    (I, U): _both("{a}", "{a}"),
    (U, I): _both("{a}", "{a}"),
    (F64, I64): _both("(i64.reinterpret_f64 {a})", "{a}"),
    (F64, U64): _both("(i64.reinterpret_f64 {a})", "{a}"),
    (I64, F64): _both("(f64.reinterpret_i64 {a})", "{a}"),
    (U64, F64): _both("(f64.reinterpret_i64 {a})", "{a}"),
    (I64, U64): _both("{a}", "{a}"), (U64, I64): _both("{a}", "{a}"),
}

WHERE: Templates = _both("(select {b} {c} {a})", "(v128.bitselect {b} {c} {a})")
WHERE64: Templates = _both("(select {b} {c} {a})",
                           "(v128.bitselect {b} {c} (i64x2.extend_low_i32x4_s {a}))")
THREEFRY = _call(CALLS[AluOp.Threefry2x32, U], "{a} {b} {c} {d} (i32.const {arg})")

# Ops whose float16 result needs no rounding: they return one of their inputs
# or an integer-valued float that half precision holds exactly.
F16_EXACT = frozenset({AluOp.Min, AluOp.Max, AluOp.Where, AluOp.Floor, AluOp.Ceil,
                       AluOp.Const, AluOp.GlobalIndex, AluOp.Variable})


def templates(op: AluOp, out_kind: ValueKind, in_kind: ValueKind) -> Templates:
    """(scalar, vector) templates of `op` with operands of in_kind and result out_kind."""
    if op is AluOp.Where:
        return WHERE64 if in_kind in _WIDE_KINDS else WHERE
    if op is AluOp.Cast:
        return _CAST[(in_kind, out_kind)]
    if op is AluOp.Bitcast:
        return _BITCAST[(in_kind, out_kind)]
    if op is AluOp.Threefry2x32:
        return (None, THREEFRY)
    key = (op, in_kind)
    if key in _UNARY:
        return _UNARY[key]
    if key not in _ARITH:
        raise NotImplementedError(f"wasm backend: no lowering of {op.name} on {in_kind!r} values")
    return _ARITH[key]


# --- constants and moving between scalar and vector forms --------------------
def _float_text(v: float) -> str:
    if math.isnan(v):   # a NaN keeps its sign bit, as np.signbit sees it
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))   # the shortest text that parses back to the same f32


def const(value, dtype: DType, vector: bool) -> str:
    k = kind(dtype)
    if k is F64:
        text = _float_text(value)
        return f"(v128.const f64x2 {text} {text})" if vector else f"(f64.const {text})"
    if k in SIGN64:   # the bits as a signed literal (uint64's top half too)
        v = int(value) % (1 << 64)
        v = v - (1 << 64) if v >= 1 << 63 else v
        return f"(v128.const i64x2 {v} {v})" if vector else f"(i64.const {v})"
    if k is F:
        text = _float_text(value)
        return f"(v128.const f32x4 {text} {text} {text} {text})" if vector else f"(f32.const {text})"
    v = int(value)
    if vector:
        lane = -v if k is B else v     # a true bool lane is the mask -1
        return f"(v128.const i32x4 {lane} {lane} {lane} {lane})"
    return f"(i32.const {v})"


def splat(dtype: DType, scalar: str) -> str:
    k = kind(dtype)
    if k is B:
        return f"(i32x4.neg (i32x4.splat {scalar}))"
    return f"({LANES[k]}.splat {scalar})"


def extract(dtype: DType, vector: str, lane: int) -> str:
    k = kind(dtype)
    if k is B:
        return f"(i32.and (i32x4.extract_lane {lane} {vector}) (i32.const 1))"
    return f"({LANES[k]}.extract_lane {lane} {vector})"


def replace(dtype: DType, vector: str, lane: int, scalar: str) -> str:
    k = kind(dtype)
    if k is B:
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
    # 64-bit: two to a vector (Wide)
    DType.float64: MemOps("f64.load", "f64.store", "f64x2", "(v128.load offset={off} {addr})",
                          "(v128.store offset={off} {addr} {v})"),
    DType.int64: MemOps("i64.load", "i64.store", "i64x2", "(v128.load offset={off} {addr})",
                        "(v128.store offset={off} {addr} {v})"),
    DType.uint64: MemOps("i64.load", "i64.store", "i64x2", "(v128.load offset={off} {addr})",
                         "(v128.store offset={off} {addr} {v})"),
    DType.int8: _narrow_int(8, "s"), DType.uint8: _narrow_int(8, "u"),
    DType.int16: _narrow_int(16, "s"), DType.uint16: _narrow_int(16, "u"),
}


def vector_memory(dtype: DType, lanes: int) -> Optional[tuple[str, str]]:
    """(load, store) templates of `lanes` contiguous elements as one vector, where one
    instruction moves them: four of any type, or two of a 4- or 8-byte type (a 64-bit
    kernel's vectors); None: lane by lane."""
    mem = MEM[dtype]
    if lanes == 4 or dtype.itemsize == 8:
        return mem.load_vector, mem.store_vector
    if dtype.itemsize == 4:
        return ("(v128.load64_zero offset={off} {addr})",
                "(v128.store64_lane offset={off} 0 {addr} {v})")
    return None


def bound_by_constant(op: AluOp, in_kind: ValueKind, c: float) -> Optional[Templates]:
    """Float min/max with a constant that is neither NaN nor zero as operand b: pmin/pmax
    (b < a ? b : a, one instruction) give np.minimum's answer, NaN in a included, where
    f32x4.min spends several instructions on a NaN in b and on signed zeros."""
    if in_kind is not F or op not in (AluOp.Min, AluOp.Max) or math.isnan(c) or c == 0:
        return None
    scalar = _ARITH[op, F][0]
    return (scalar, f"(f32x4.p{'min' if op is AluOp.Min else 'max'} {{a}} {{b}})")


def divide_by_constant(op: AluOp, in_kind: ValueKind, c: int, nonneg: bool) -> Optional[Templates]:
    """Integer // and % by a constant: no trap is possible, and powers of two are shifts."""
    if in_kind not in SIGN:
        return None
    idiv = op is AluOp.Idiv
    if c == 0:   # x // 0 = IDIV_BY_ZERO, x % 0 = x
        z = IDIV_BY_ZERO
        return (f"(i32.const {z})", f"(v128.const i32x4 {z} {z} {z} {z})") if idiv else ("{a}", "{a}")
    if in_kind is I and c == -1:   # INT_MIN // -1 wraps instead of trapping
        return ("(i32.sub (i32.const 0) {a})", "(i32x4.neg {a})") if idiv else \
            ("(i32.const 0)", "(v128.const i32x4 0 0 0 0)")
    if c > 0 and c & (c - 1) == 0 and (nonneg or in_kind == U):
        shift = c.bit_length() - 1
        return ((f"(i32.shr_u {{a}} (i32.const {shift}))", f"(i32x4.shr_u {{a}} (i32.const {shift}))")
                if idiv else (f"(i32.and {{a}} (i32.const {c - 1}))",
                              f"(v128.and {{a}} (v128.const i32x4 {c - 1} {c - 1} {c - 1} {c - 1}))"))
    sign = SIGN[in_kind]
    return (f"(i32.{'div' if idiv else 'rem'}_{sign} {{a}} (i32.const {c}))", None)


def functions_for(roots: list[AluExp], dtypes: set[DType]) -> set[str]:
    """The mathlib functions a kernel calls, from the ops in its (expanded) IR and the
    dtypes it loads, stores and computes."""
    names = {"f16_round", "f16_to_f32", "f32_to_f16"} if DType.float16 in dtypes else set()
    for root in roots:
        for node in root.toposort():
            if not node.src or node.op is AluOp.Cast:
                continue
            operand = kind(node.src[-1].dtype)
            if node.op in (AluOp.Idiv, AluOp.Mod) and operand in SIGN and node.src[1].is_const:
                continue   # divide_by_constant: no call
            if (node.op, operand) in CALLS:
                names.add(CALLS[node.op, operand])
            if node.op in INLINED and operand is F:   # what the pasted body calls
                names.update(FUNCTIONS[INLINED[node.op][0]].needs)
    return names
