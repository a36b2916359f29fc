"""lax's bit-level functions: population_count, clz, shift_right_logical (integers)
and nextafter, reduce_precision (floats through their bit patterns). Each works on
the unsigned integer of the operand's width, with shifts, masks and adds only."""
from __future__ import annotations

import operator
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.elementwise import convert_element_type_p
from jaxlab.ir.dtypes import DType
from jaxlab.lax import ops
from jaxlab.lax.dtype_rules import FLOAT, INTEGER, accepted

__all__ = ["population_count", "clz", "shift_right_logical", "nextafter", "reduce_precision"]

_UNSIGNED = {1: DType.uint8, 2: DType.uint16, 4: DType.uint32, 8: DType.uint64}
# float dtype -> (exponent bits, mantissa bits) of its storage format
_FLOAT_FORMAT = {DType.float16: (5, 10), DType.bfloat16: (8, 7), DType.float32: (8, 23),
                 DType.float64: (11, 52)}


def _bits(x: Array) -> Array:
    """x's bit pattern as the unsigned integer of its width."""
    twin = _UNSIGNED[x.jdtype.itemsize]
    return x if x.jdtype is twin else ops.bitcast_convert_type(x, twin)


def _like(value: int, u: Array) -> Array:
    """A constant of u's unsigned dtype (a Python int above int32's range would not
    convert on its own)."""
    return jnp.asarray(value, u.jdtype)


def _repeated(byte: int, u: Array) -> Array:
    return _like(int.from_bytes(bytes([byte]) * u.jdtype.itemsize, "little"), u)


def _popcount_unsigned(u: Array) -> Array:
    """Bits set in each element (SWAR: pairs, nibbles, then bytes summed by shifts)."""
    width = 8 * u.jdtype.itemsize
    u = u - ((u >> 1) & _repeated(0x55, u))
    u = (u & _repeated(0x33, u)) + ((u >> 2) & _repeated(0x33, u))
    u = (u + (u >> 4)) & _repeated(0x0F, u)
    shift = 8
    while shift < width:
        u = u + (u >> shift)
        shift *= 2
    return u & 0xFF if width > 8 else u


def population_count(x: Any) -> Array:
    """The number of bits set in each element, in x's dtype."""
    (x,) = accepted("population_count", [x], INTEGER)
    return _as_input(_popcount_unsigned(_bits(x)), x)


def clz(x: Any) -> Array:
    """The number of leading zero bits of each element, in x's dtype."""
    (x,) = accepted("clz", [x], INTEGER)
    u = _bits(x)
    width = 8 * u.jdtype.itemsize
    shift = 1
    while shift < width:   # every bit below the highest set one set too
        u = u | (u >> shift)
        shift *= 2
    return _as_input(width - _popcount_unsigned(u), x)


def _as_input(counts: Array, x: Array) -> Array:
    """Bit counts in x's dtype, weakly typed when x is (lax.population_count(7))."""
    return convert_element_type_p.bind(counts, new_dtype=x.jdtype, weak_type=x.weak_type)


def shift_right_logical(x: Any, y: Any) -> Array:
    """x >> y filling with zeros; amounts outside [0, width) give 0, as in JAX."""
    x, y = ops._lax_args("shift_right_logical", x, y)
    accepted("shift_right_logical", [x, y], INTEGER)
    width = 8 * x.jdtype.itemsize
    in_range = (y >= 0) & (y < width)
    shifted = _bits(x) >> ops.convert_element_type(jnp.where(in_range, y, 0), _bits(x).jdtype)
    return jnp.where(in_range, ops.bitcast_convert_type(shifted, x.jdtype)
                     if x.jdtype.is_signed else shifted, jnp.zeros((), x.jdtype))


def nextafter(x1: Any, x2: Any) -> Array:
    """The next float after x1 towards x2 (float32 in jaxlab, see JAX-DIFFERENCES)."""
    a, b = ops._lax_args("nextafter", x1, x2)
    accepted("nextafter", [a, b], FLOAT)
    return jnp.nextafter(a, b)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Array:
    """operand rounded (to nearest even) to a float format with the given exponent and
    mantissa widths, overflowing to inf and flushing below its normal range to zero."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    (x,) = accepted("reduce_precision", [operand], FLOAT)
    exp_width, man_width = _FLOAT_FORMAT[x.jdtype]
    u = _bits(x)
    if mantissa_bits < man_width:
        u = _round_mantissa(u, man_width - mantissa_bits)
    if exponent_bits < exp_width:
        u = _clamp_exponent(u, exp_width, man_width, exponent_bits)
    return jnp.where(jnp.isnan(x), x, ops.bitcast_convert_type(u, x.jdtype))


def _round_mantissa(u: Array, dropped: int) -> Array:
    """The bit pattern with its low `dropped` mantissa bits rounded off, to nearest and
    ties to even: adding half an ulp (less one, plus the last kept bit) carries into
    the exponent where the mantissa overflows, as a rounding up should."""
    last_kept = (u >> dropped) & 1
    half_less_one = (1 << (dropped - 1)) - 1
    keep = ((1 << (8 * u.jdtype.itemsize)) - 1) ^ ((1 << dropped) - 1)
    return (u + _like(half_less_one, u) + last_kept) & _like(keep, u)


def _clamp_exponent(u: Array, exp_width: int, man_width: int, exponent_bits: int) -> Array:
    """Exponents above the narrow format's range become inf, those at or below its
    smallest normal exponent zero (signs kept)."""
    bias, narrow_bias = (1 << (exp_width - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    exponent_mask = ((1 << exp_width) - 1) << man_width
    sign = u & _like(1 << (exp_width + man_width), u)
    exponent = u & _like(exponent_mask, u)
    overflow = exponent > _like((bias + narrow_bias) << man_width, u)
    underflow = exponent <= _like((bias - narrow_bias) << man_width, u)
    return jnp.where(overflow, sign | _like(exponent_mask, u), jnp.where(underflow, sign, u))
