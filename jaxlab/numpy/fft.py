"""jax.numpy.fft: NumPy's FFT functions over the fft primitive, with JAX's arguments,
checks and normalisations."""
from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence

from jaxlab.array import Array
from jaxlab.core.fft import FftType
from jaxlab.lax.fft import fft as _lax_fft
from jaxlab.numpy import complex_functions, shape_ops
from jaxlab.ir.dtypes import to_dtype
from jaxlab.numpy._util import arraylike_
from jaxlab.numpy.creation import arange

Shape = Sequence[int]
_NORMS = ("backward", "ortho", "forward")


def _norm_factor(s: Shape, func_name: str, norm: Optional[str]) -> float:
    """What multiplies the unnormalised result: NumPy's norm= ("backward": the inverse
    divides by n; "ortho": both by sqrt(n); "forward": the forward one by n)."""
    if norm is None or norm == "backward":
        return 1.0
    n = math.prod(s)
    if norm == "ortho":
        return math.sqrt(n) if func_name.startswith("i") else 1 / math.sqrt(n)
    if norm == "forward":
        return float(n) if func_name.startswith("i") else 1.0 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name: str, fft_type: FftType, a: Any, s: Optional[Shape],
              axes: Optional[Sequence[int]], norm: Optional[str]) -> Array:
    full_name = f"jax.numpy.fft.{func_name}"
    arr = arraylike_(full_name, a)
    if norm is not None and norm not in _NORMS:
        _norm_factor((), func_name, norm)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(d <= 0 for d in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = shape_ops.moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, size in zip(axes, s):
            in_s[axis] = size
        if fft_type is FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(d) for d in in_s)]
        arr = shape_ops.pad(arr, [(0, want - have) for want, have in zip(in_s, arr.shape)])
    elif fft_type is FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[axis] for axis in axes]
    out = _lax_fft(arr, fft_type, tuple(s))
    factor = _norm_factor(s, func_name, norm)
    if factor != 1.0:
        out = out * factor
    if orig_axes is not None:
        out = shape_ops.moveaxis(out, axes, orig_axes)
    return out


def _check_1d(func_name: str, axis: Any) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _core_1d(func_name: str, fft_type: FftType, a: Any, n: Optional[int], axis: int,
             norm: Optional[str]) -> Array:
    _check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def _core_2d(func_name: str, fft_type: FftType, a: Any, s: Optional[Shape],
             axes: Sequence[int], norm: Optional[str]) -> Array:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The 1-D discrete Fourier transform along `axis` (cut or zero-padded to n)."""
    return _core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The 1-D inverse transform."""
    return _core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The transform of a real signal: the n//2 + 1 non-negative frequencies."""
    return _core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The real signal of length n (default 2 (m - 1)) with spectrum `a`'s m values."""
    return _core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The transform of a signal with Hermitian symmetry (a real spectrum)."""
    conj_a = complex_functions.conjugate(a)
    _check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Array:
    """The inverse of hfft: n//2 + 1 values of a Hermitian spectrum."""
    _check_1d("ihfft", axis)
    arr = arraylike_("jax.numpy.fft.ihfft", a)
    nn = arr.shape[axis] if n is None else n
    out = _core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return complex_functions.conjugate(out) * (1 / nn)


def fft2(a: Any, s: Optional[Shape] = None, axes: Sequence[int] = (-2, -1),
         norm: Optional[str] = None) -> Array:
    return _core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Optional[Shape] = None, axes: Sequence[int] = (-2, -1),
          norm: Optional[str] = None) -> Array:
    return _core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Optional[Shape] = None, axes: Sequence[int] = (-2, -1),
          norm: Optional[str] = None) -> Array:
    return _core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Optional[Shape] = None, axes: Sequence[int] = (-2, -1),
           norm: Optional[str] = None) -> Array:
    return _core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a: Any, s: Optional[Shape] = None, axes: Optional[Sequence[int]] = None,
         norm: Optional[str] = None) -> Array:
    """The n-D transform over `axes` (every axis by default)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Optional[Shape] = None, axes: Optional[Sequence[int]] = None,
          norm: Optional[str] = None) -> Array:
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Optional[Shape] = None, axes: Optional[Sequence[int]] = None,
          norm: Optional[str] = None) -> Array:
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Optional[Shape] = None, axes: Optional[Sequence[int]] = None,
           norm: Optional[str] = None) -> Array:
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an n-point transform: [0, 1, ..., -1] / (d n)."""
    return _frequencies("fftfreq", n, d, dtype, device,
                        lambda i: (i + n // 2) % n - n // 2, n)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Array:
    """The non-negative sample frequencies: [0, 1, ..., n//2] / (d n)."""
    return _frequencies("rfftfreq", n, d, dtype, device, lambda i: i, n // 2 + 1)


def _frequencies(name: str, n: Any, d: Any, dtype: Any, device: Any,
                 index: Any, count: int) -> Array:
    """index(0..count-1) / (d n), with JAX's checks of n and d."""
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")
    dt = to_dtype(dtype or "float32", name)
    k = index(arange(count, dtype=dt.real_dtype))
    return _placed((k / (d * n)).astype(dt), device)


def _placed(x: Array, device: Any) -> Array:
    return x if device is None else x.to_device(device)


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """Zero frequency moved to the centre (np.roll by n // 2 along `axes`)."""
    return _roll_half("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Array:
    """The inverse of fftshift (np.roll by -(n // 2))."""
    return _roll_half("ifftshift", x, axes, -1)


def _roll_half(name: str, x: Any, axes: Any, sign: int) -> Array:
    x = arraylike_(name, x)
    if axes is None:
        axes = tuple(range(x.ndim))
    if isinstance(axes, int):
        return shape_ops.roll(x, sign * (x.shape[axes] // 2), axes)
    return shape_ops.roll(x, [sign * (x.shape[ax] // 2) for ax in axes], axes)


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]
