"""A float type's bit layout, for the math rewrites written on a float's bits
(ir/mathlib.py in float32, ir/mathlib64.py in float64)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType


@dataclass(frozen=True)
class FloatBits:
    float: DType          # the float type
    bits: DType           # the unsigned integer of its width
    int: DType            # the signed one
    mantissa_bits: int    # fraction bits of a normal value
    bias: int             # of its exponent

    @property
    def sign(self) -> int:
        return 1 << (8 * self.float.itemsize - 1)

    @property
    def magnitude(self) -> int:
        return self.sign - 1

    @property
    def exponent(self) -> int:
        return self.magnitude ^ ((1 << self.mantissa_bits) - 1)

    def const(self, value: float) -> AluExp:
        return AluExp.const(value, self.float)

    def bits_of(self, x: AluExp) -> AluExp:
        return x.bitcast(self.bits)

    def from_bits(self, bits: AluExp) -> AluExp:
        return bits.bitcast(self.float)

    def rounded_back(self, t: AluExp) -> AluExp:
        """n from t = n + 1.5*2^mantissa_bits (n an integer, |n| < 2^(mantissa_bits - 1)),
        as a float. Not t - 1.5*2^m: a compiler may fold (y + c) - c to y (NVIDIA's and
        Mesa's did). The next float up is t + 1 exactly, and no algebra sees through
        the bits."""
        magic = 1.5 * 2.0 ** self.mantissa_bits
        return self.from_bits(self.bits_of(t) + 1) - (magic + 1.0)

    def abs(self, x: AluExp) -> AluExp:
        return self.from_bits(self.bits_of(x) & self.magnitude)

    def signed(self, magnitude: AluExp, sign_of: AluExp) -> AluExp:
        """copysign for a magnitude known to be >= 0 (or NaN): its sign bit is clear."""
        return self.from_bits(self.bits_of(magnitude) | (self.bits_of(sign_of) & self.sign))

    def horner(self, x: AluExp, coeffs: Sequence[float]) -> AluExp:
        """coeffs[0] x^n + ... + coeffs[n], highest power first."""
        acc = self.const(coeffs[0])
        for c in coeffs[1:]:
            acc = acc * x + c
        return acc

    def power_of_two(self, k: AluExp) -> AluExp:
        """2^k for an integer k (of self.int) in the normal exponent range, from its bits."""
        return (k + self.bias).binary(AluOp.Shl, AluExp.const(self.mantissa_bits, self.int)) \
            .bitcast(self.float)

    def log_reduce(self, x: AluExp) -> tuple[AluExp, AluExp]:
        """(f, e) with x = 2^e (1 + f) and 1 + f in [sqrt(1/2), sqrt(2)), both exact
        (subnormals are scaled into the normal range first), for a positive finite x."""
        mb, scale = self.mantissa_bits, self.mantissa_bits + 2
        bits = self.bits_of(x)
        tiny = (bits & self.exponent).lt(1 << mb)           # zero or subnormal
        b = self.bits_of(tiny.where(x * float(2 ** scale), x))
        m = self.from_bits((b & (self.sign | ((1 << mb) - 1))) | ((self.bias - 1) << mb))  # [0.5, 1)
        low = m.lt(math.sqrt(0.5))
        biased = (b.binary(AluOp.Shr, mb) & (self.exponent >> mb)).cast(self.int)
        exponent = biased - tiny.where(AluExp.const(self.bias - 1 + scale, self.int), self.bias - 1) \
            - low.where(AluExp.const(1, self.int), 0)
        return low.where(m + m - 1.0, m - 1.0), exponent.cast(self.float)

    def log_edges(self, x: AluExp, r: AluExp) -> AluExp:
        """A log's value `r` with NumPy's edges: +-0 -> -inf, negative -> NaN, +inf and NaN
        -> themselves."""
        bits = self.bits_of(x)
        special = AluExp.const(self.exponent - 1, self.bits).lt(bits)   # inf, NaN or negative
        edge = AluExp.const(self.sign, self.bits).lt(bits).where(self.const(math.nan), x)
        return (bits & self.magnitude).lt(1).where(self.const(-math.inf), special.where(edge, r))


FLOAT32 = FloatBits(DType.float32, DType.uint32, DType.int32, 23, 127)
FLOAT64 = FloatBits(DType.float64, DType.uint64, DType.int64, 52, 1023)
