"""jax.lax.fft: the fft primitive with JAX's operand conversions."""
from __future__ import annotations

from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.core.fft import FftType, fft_p
from jaxlab.ir.dtypes import complex_dtype
from jaxlab.numpy._util import astype_, asarray_

_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
            "irfft": FftType.IRFFT}


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Array:
    """The transform of type fft_type over the trailing len(fft_lengths) axes."""
    if isinstance(fft_type, str):
        if fft_type.lower() not in _BY_NAME:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        typ = _BY_NAME[fft_type.lower()]
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    x = asarray_(x)
    if typ is FftType.RFFT:
        if x.jdtype.is_complex:
            raise ValueError("only real valued inputs supported for rfft")
        x = astype_(x, x.jdtype if x.jdtype.is_float else "float32")
    else:
        x = astype_(x, complex_dtype(x.jdtype.real_dtype))
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(int(n) for n in fft_lengths))


__all__ = ["fft", "FftType"]
