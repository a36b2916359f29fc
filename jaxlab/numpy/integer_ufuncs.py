"""Integer elementwise functions: gcd, lcm (Euclid's algorithm in a while_loop, as JAX)
and bitwise_count (a SWAR population count)."""
from __future__ import annotations

from typing import Any

from jaxlab import lax
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, astype_, promote_args

__all__ = ["gcd", "lcm", "bitwise_count"]


def _integers(name: str, x1: Any, x2: Any) -> tuple[Array, Array]:
    a, b = promote_args(arraylike_(name, x1), arraylike_(name, x2, 1))
    if not (a.jdtype.is_int or a.jdtype.is_bool):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return a, b


def _gcd(a: Array, b: Array) -> Array:
    def unfinished(pair: tuple[Array, Array]) -> Array:
        return reductions.any(pair[1] != 0)

    def step(pair: tuple[Array, Array]) -> tuple[Array, Array]:
        x, y = pair
        done = y == 0
        return ufuncs.where(done, x, y), ufuncs.where(done, 0, ufuncs.remainder(x, ufuncs.where(done, 1, y)))

    return lax.while_loop(unfinished, step, (ufuncs.abs(a), ufuncs.abs(b)))[0]


def gcd(x1: Any, x2: Any) -> Array:
    """Greatest common divisor of |x1| and |x2| (0 for two zeros)."""
    a, b = _integers("gcd", x1, x2)
    return _gcd(a, b)


def lcm(x1: Any, x2: Any) -> Array:
    """Least common multiple of |x1| and |x2| (0 when either is 0)."""
    a, b = _integers("lcm", x1, x2)
    divisor = _gcd(a, b)
    safe = ufuncs.where(divisor == 0, 1, divisor)
    return ufuncs.where(divisor == 0, 0, ufuncs.abs(ufuncs.floor_divide(a, safe) * b))


# unsigned type of each width and its SWAR masks (every 2nd bit, every 2nd pair, nibble)
_UNSIGNED = {1: DType.uint32, 2: DType.uint32, 4: DType.uint32, 8: DType.uint64}


def _mask(pattern: int, width: int) -> int:
    return int.from_bytes(bytes([pattern]) * width, "little")


def bitwise_count(x: Any, /) -> Array:
    """The number of 1 bits in |x|, as uint8."""
    x = arraylike_("bitwise_count", x)
    if not (x.jdtype.is_int or x.jdtype.is_bool):
        raise TypeError(f"population_count does not accept dtype {x.jdtype}. Accepted "
                        f"dtypes are subtypes of integer.")
    unsigned = _UNSIGNED[x.jdtype.itemsize]
    width = unsigned.itemsize
    # |x| of the most negative value wraps to itself, whose unsigned bits count right
    v = astype_(ufuncs.abs(x) if x.jdtype.is_signed else x, unsigned)
    v = v - (ufuncs.right_shift(v, 1) & _mask(0x55, width))
    v = (v & _mask(0x33, width)) + (ufuncs.right_shift(v, 2) & _mask(0x33, width))
    v = (v + ufuncs.right_shift(v, 4)) & _mask(0x0F, width)
    per_byte_sum = ufuncs.right_shift(v * _mask(0x01, width), 8 * (width - 1))
    return astype_(per_byte_sum, DType.uint8)
