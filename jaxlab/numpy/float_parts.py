"""Functions on a float's parts (mantissa, exponent, integral part): frexp, ldexp, modf,
spacing. They work on the bit pattern through bitcast_convert_type, so they are exact."""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from jaxlab import lax
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, to_inexact
from jaxlab.numpy import ufuncs
from jaxlab.numpy._util import arraylike_, astype_

__all__ = ["frexp", "ldexp", "modf", "spacing"]


@dataclass(frozen=True)
class _Layout:
    """A float type's bit layout: the integer type of its width, stored mantissa bits,
    exponent bias."""
    bits: DType
    mantissa: int
    bias: int

    @property
    def exponent_mask(self) -> int:
        return (2 * self.bias + 1) << self.mantissa


_LAYOUTS = {DType.float32: _Layout(DType.int32, 23, 127),
            DType.float64: _Layout(DType.int64, 52, 1023)}
# 16-bit floats are worked on as float32, which holds each of them (and 2**n times
# each, for ldexp's range) exactly; wasm and webgpu have no 16-bit bitcasts
_WORKED_AS = {DType.float16: DType.float32, DType.bfloat16: DType.float32}


def _float_arg(name: str, x: Any) -> Array:
    x = arraylike_(name, x)
    if x.jdtype.is_complex:
        raise TypeError(f"{name} does not support complex-valued inputs.")
    return astype_(x, to_inexact(x.jdtype))


def _wide(x: Array) -> Array:
    return astype_(x, _WORKED_AS.get(x.jdtype, x.jdtype))


def _power_of_two(k: Array, dtype: DType) -> Array:
    """2**k for integer k in the normal range of `dtype`, built from its bits."""
    layout = _LAYOUTS[dtype]
    biased = astype_(k + layout.bias, layout.bits)
    return lax.bitcast_convert_type(ufuncs.left_shift(biased, layout.mantissa), dtype)


def frexp(x: Any, /) -> tuple[Array, Array]:
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1;
    zeros, infinities and NaNs give (x, 0)."""
    narrow = _float_arg("frexp", x)
    x = _wide(narrow)
    dt, layout = x.jdtype, _LAYOUTS[x.jdtype]
    tiny = float(np.finfo(x.dtype).smallest_normal)
    subnormal = ufuncs.abs(x) < tiny
    # subnormals are scaled into the normal range first (exactly: a power of two)
    scaled = ufuncs.where(subnormal, x * float(2 ** layout.mantissa), x)
    bits = lax.bitcast_convert_type(scaled, layout.bits)
    field = ufuncs.right_shift(bits & layout.exponent_mask, layout.mantissa)
    exponent = astype_(field, DType.int32) - (layout.bias - 1) \
        - ufuncs.where(subnormal, layout.mantissa, 0)
    half_exponent = (layout.bias - 1) << layout.mantissa
    mantissa_bits = (bits & ~layout.exponent_mask) | half_exponent
    mantissa = lax.bitcast_convert_type(astype_(mantissa_bits, layout.bits), dt)
    special = (x == 0) | ~ufuncs.isfinite(x)
    return (astype_(ufuncs.where(special, x, mantissa), narrow.jdtype),
            ufuncs.where(special, 0, exponent))


def ldexp(x1: Any, x2: Any, /) -> Array:
    """x1 * 2**x2 for an integer x2, in three exact power-of-two steps so that no step
    overflows where the result does not."""
    narrow = _float_arg("ldexp", x1)
    n = arraylike_("ldexp", x2, 1)
    if not (n.jdtype.is_int or n.jdtype.is_bool):
        raise ValueError(f"ldexp not supported for input types ({narrow.dtype!r}, "
                         f"{n.dtype!r})")
    x = _wide(narrow)
    layout = _LAYOUTS[x.jdtype]
    low, high = 1 - layout.bias, layout.bias
    rest = astype_(n, DType.int32)
    for _ in range(3):
        step = ufuncs.clip(rest, low, high)
        x = x * _power_of_two(step, x.jdtype)
        rest = rest - step
    return astype_(x, narrow.jdtype)


def modf(x: Any, /, out: None = None) -> tuple[Array, Array]:
    """(fractional part, integral part), both with x's sign."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    x = _float_arg("modf", x)
    whole = ufuncs.trunc(x)
    return x - whole, whole


def spacing(x: Any, /) -> Array:
    """The distance from x to the next float away from zero (negative for negative x)."""
    x = _float_arg("spacing", x)
    gap = _half_gap(x) if x.jdtype in _WORKED_AS else _gap(x)
    return astype_(ufuncs.where(ufuncs.signbit(x), -gap, gap), x.jdtype)


def _gap(x: Array) -> Array:
    """next float above |x| minus |x|, stepping the bit pattern."""
    layout = _LAYOUTS[x.jdtype]
    magnitude = ufuncs.abs(x)
    bits = lax.bitcast_convert_type(magnitude, layout.bits)
    following = lax.bitcast_convert_type(astype_(bits + 1, layout.bits), x.jdtype)
    return following - magnitude


def _half_gap(x: Array) -> Array:
    """_gap of a 16-bit float, from its exponent: 2**(e - 1 - mantissa bits), the
    subnormals' spacing below the normal range; NaN for infinities and NaNs."""
    info = np.finfo(x.dtype)
    _, exponent = frexp(x)
    lowest = int(info.minexp) + 1   # frexp's exponent of the smallest normal
    exponent = ufuncs.where(x == 0, lowest, ufuncs.maximum(exponent, lowest))
    gap = ldexp(np.float32(1), exponent - 1 - int(info.nmant))
    return ufuncs.where(ufuncs.isfinite(x), gap, math.nan)
