"""The op vocabulary every renderer shares: kinds of values, casting rules and the
meaning of edge cases, defined once (ir/evaluate.py computes them with NumPy; a
renderer spells them in its language from these names).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType


class Kind(enum.Enum):
    """How a value is computed on: what a renderer picks instructions by."""
    FLOAT = "f"    # float32, and float16 computed as float32 then rounded
    INT = "i"      # int32, two's complement
    UINT = "u"     # uint32
    BOOL = "b"     # true/false: 0/1 in a scalar (a SIMD lane holds a 0/-1 mask)


# 8/16-bit integers and bfloat16 are computed in 32-bit values (ir/widen.py)
_KIND = {DType.float32: Kind.FLOAT, DType.float16: Kind.FLOAT, DType.bfloat16: Kind.FLOAT,
         DType.int32: Kind.INT, DType.int16: Kind.INT, DType.int8: Kind.INT,
         DType.uint32: Kind.UINT, DType.uint16: Kind.UINT, DType.uint8: Kind.UINT,
         DType.bool: Kind.BOOL}


def kind_of(dtype: DType) -> Kind:
    return _KIND[dtype]


class Cast(enum.Enum):
    """What a cast between two kinds does to the value."""
    SAME = "same value"                       # the value (and the 32 bits) unchanged
    WRAP = "same bits"                        # int32 <-> uint32: the bits, as astype
    SATURATE = "truncate, saturate, NaN -> 0"  # float -> int: XLA's rule, never a trap
    CONVERT = "nearest float"                 # int -> float, rounded to nearest
    NONZERO = "x != 0 (NaN is nonzero)"       # anything -> bool
    FROM_BOOL = "false -> 0, true -> 1"       # bool -> a number


def cast_rule(src: Kind, dst: Kind) -> Cast:
    if src is dst:
        return Cast.SAME
    if dst is Kind.BOOL:
        return Cast.NONZERO
    if src is Kind.BOOL:
        return Cast.FROM_BOOL
    if src is Kind.FLOAT:
        return Cast.SATURATE
    return Cast.CONVERT if dst is Kind.FLOAT else Cast.WRAP


# --- edge cases: what every backend must give (ir/evaluate.py is the reference) -------
IDIV_BY_ZERO = -1         # x // 0, as XLA: -1 (all bits set; 0xffffffff for uint32)
# x % 0 is x; int32 INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0 (never a trap)
SHIFT_MASK = 31           # shifts use the low 5 bits of the amount
NAN_PROPAGATING = frozenset({AluOp.Min, AluOp.Max})   # like np.minimum / np.maximum
# Cmpne(NaN, NaN) is true; a float Mod is C's fmod (the dividend's sign)

# Ops whose result a renderer may compute in float32 and round once to float16.
FLOAT_MATH = frozenset({AluOp.Sin, AluOp.Cos, AluOp.Asin, AluOp.Atan, AluOp.Exp, AluOp.Log,
                        AluOp.Erf, AluOp.Erfc, AluOp.Tanh})


@dataclass(frozen=True)
class Capabilities:
    """What a renderer spells itself. Float math outside `native` is rewritten into
    primitive ops (ir/mathlib.py) before rendering."""
    native: frozenset[AluOp]

    def expands(self, op: AluOp) -> bool:
        return op in FLOAT_MATH and op not in self.native
