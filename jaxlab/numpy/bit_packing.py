"""packbits and unpackbits: booleans to and from the bits of uint8 values."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.ir.dtypes import DType
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, astype_, canonical_axis
from jaxlab.numpy.creation import array
from jaxlab.numpy.shape_ops import moveaxis, pad, ravel, reshape

__all__ = ["packbits", "unpackbits"]

# bit order -> the place value of each of a byte's 8 bits, first to last
_PLACES = {"big": [128, 64, 32, 16, 8, 4, 2, 1], "little": [1, 2, 4, 8, 16, 32, 64, 128]}


def _places(bitorder: str) -> list[int]:
    if bitorder not in _PLACES:
        raise ValueError("'order' must be either 'little' or 'big'")
    return _PLACES[bitorder]


def _flat_or_last(x: Array, axis: int | None) -> tuple[Array, int]:
    """x with the working axis last (flattened when axis is None), and where it goes back."""
    if axis is None:
        return ravel(x), 0
    axis = canonical_axis(axis, x.ndim)
    return moveaxis(x, axis, -1), axis


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Array:
    """Each run of 8 truth values along `axis` (flattened when None) as one uint8, padded
    with zeros at the end."""
    x = arraylike_("packbits", a)
    if not (x.jdtype.is_int or x.jdtype.is_bool):
        raise TypeError("Expected an input array of integer or boolean data type")
    places = _places(bitorder)
    bits, axis_out = _flat_or_last(astype_(x != 0, DType.uint8), axis)
    n = bits.shape[-1]
    bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)])
    groups = reshape(bits, bits.shape[:-1] + (-1, 8))
    packed = reductions.sum(groups * array(places, DType.uint8), axis=-1, dtype=DType.uint8)
    return moveaxis(packed, -1, axis_out)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Array:
    """The 8 bits of each uint8 along `axis` (flattened when None) as 0/1 uint8 values;
    `count` keeps that many (negative: drops that many from the end; past the end: pads
    zeros)."""
    x = arraylike_("unpackbits", a)
    if x.jdtype is not DType.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    shifts = array([7 - i if bitorder == "big" else i for i in range(8)], DType.uint8)
    _places(bitorder)   # checks bitorder
    values, axis_out = _flat_or_last(x, axis)
    bits = ufuncs.right_shift(values[..., None], shifts) & 1
    bits = reshape(bits, bits.shape[:-2] + (-1,))
    if count is not None:
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        bits = bits[..., :keep] if keep <= n else \
            pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
    return moveaxis(bits, -1, axis_out)
