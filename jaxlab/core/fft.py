"""The fft primitive (jax.lax.fft): its lowering onto the "fft" routine, and its rules.

Every transform becomes 1-D transforms along one axis at a time, each on rows
of a contiguous (rows, n) complex array:
- n a power of two: the backend's "fft" routine (Stockham radix-4/2, generated
  per backend; NumPy's pocketfft on the cpu device), unscaled, on the array's
  interleaved storage with a table of twiddle factors computed here in float64;
- any other n: Bluestein's chirp-z transform, three power-of-two transforms of
  length m >= 2n - 1 (the signal, the chirp, their product) and elementwise
  chirp multiplications, all of it on the power-of-two path.
RFFT is the complex transform of the real input, cut to n//2 + 1 outputs; IRFFT
rebuilds the Hermitian spectrum along the last axis and keeps the real part.
"""
from __future__ import annotations

import enum
import functools
import math
from typing import Any, Sequence

import numpy as np

from jaxlab.core import complex_rules as cr
from jaxlab.core import movement
from jaxlab.core.linalg import run_routine
from jaxlab.core.primitives import complex_lowerings, lowerings, primitive
from jaxlab.engine import complex as cx
from jaxlab.engine import lazy as lz
from jaxlab.engine.complex import ComplexLazy
from jaxlab.engine.devices import Device
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType


class FftType(enum.IntEnum):
    """jax.lax.FftType."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


fft_p = primitive("fft")


# --- checks (jax.lax.fft's, with its messages) ------------------------------------------

def _check(x: Any, fft_type: FftType, fft_lengths: tuple) -> None:
    k = len(fft_lengths)
    if k > len(x.shape):
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    minor = tuple(x.shape[len(x.shape) - k:])
    if fft_type is FftType.RFFT:
        if not x.dtype.is_float:
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
    elif fft_type is FftType.IRFFT:
        if not x.dtype.is_complex:
            raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
        if minor[:-1] != fft_lengths[:-1] or minor[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got fft_lengths={fft_lengths}")
    else:
        if not x.dtype.is_complex:
            raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")


# --- the lowering -------------------------------------------------------------------

def _lower_fft(x: Any, *, fft_type: FftType, fft_lengths: tuple) -> Any:
    fft_type, fft_lengths = FftType(fft_type), tuple(fft_lengths)
    _check(x, fft_type, fft_lengths)
    nd = len(x.shape)
    axes = list(range(nd - len(fft_lengths), nd))
    if fft_type is FftType.RFFT:
        z = cx.from_parts(x, lz.full(x.shape, 0.0, x.dtype, x.device))
        for axis in reversed(axes):
            z = _along(z, axis, inverse=False)
        return _slice_last(z, 0, fft_lengths[-1] // 2 + 1)
    if fft_type is FftType.IRFFT:
        z = x
        for axis in reversed(axes[:-1]):
            z = _along(z, axis, inverse=True)
        z = _along(_hermitian(z, fft_lengths[-1]), nd - 1, inverse=True)
        return z.re
    for axis in reversed(axes):
        x = _along(x, axis, inverse=fft_type is FftType.IFFT)
    return x


def _along(z: ComplexLazy, axis: int, inverse: bool) -> ComplexLazy:
    """The 1-D transform along `axis` (inverse: scaled by 1/n, as jax.lax.fft's IFFT)."""
    n = z.shape[axis]
    if n <= 1 or math.prod(z.shape) == 0:
        return z
    last = len(z.shape) - 1
    order = [d for d in range(len(z.shape)) if d != axis] + [axis]
    moved = _permute(z, order) if axis != last else z
    rows = math.prod(moved.shape[:-1])
    flat = _reshape(moved, (rows, n))
    out = _transform_rows(flat, inverse)
    if inverse:
        out = _scale(out, 1.0 / n)
    out = _reshape(out, moved.shape)
    return _permute(out, [order.index(d) for d in range(len(order))]) if axis != last else out


def _transform_rows(z: ComplexLazy, inverse: bool) -> ComplexLazy:
    """The unscaled DFT of each row of a (rows, n) array."""
    n = z.shape[-1]
    if n & (n - 1) == 0:
        return _pow2_rows(z, inverse)
    return _bluestein_rows(z, inverse)


def _pow2_rows(z: ComplexLazy, inverse: bool) -> ComplexLazy:
    rows, n = z.shape
    twiddles = _twiddles(z.device, n, inverse, z.dtype)
    (out,) = run_routine("fft", [z.pair, twiddles], [((rows, n, 2), z.dtype.real_dtype)],
                         inverse=inverse)
    return cx.from_pair(out, z.dtype)


def _bluestein_rows(z: ComplexLazy, inverse: bool) -> ComplexLazy:
    """X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), w_k = exp(-+ i pi k^2 / n): a circular
    convolution of length m (a power of two >= 2n - 1), by power-of-two transforms."""
    rows, n = z.shape
    m = 1 << (2 * n - 2).bit_length()
    chirp = _chirp(z.device, n, inverse, z.dtype)           # (1, n)
    chirped = _pad_last(cr.multiply(z, _broadcast(chirp, z.shape)), m)
    spectrum = _pow2_rows(chirped, inverse=False)
    kernel = _pow2_rows(_chirp_kernel(z.device, n, m, inverse, z.dtype), inverse=False)
    product = cr.multiply(spectrum, _broadcast(kernel, spectrum.shape))
    back = _pow2_rows(product, inverse=True)
    result = _slice_last(_scale(back, 1.0 / m), 0, n)
    return cr.multiply(result, _broadcast(chirp, result.shape))


# --- constants computed on the host in float64, cached per device ----------------------

@functools.lru_cache(maxsize=8)
def _twiddles(device: Device, n: int, inverse: bool, dtype: DType) -> Lazy:
    """exp(-+2 pi i t / n) for t < n, interleaved as (1, n, 2) parts: a batch of one,
    which every row of the routine's batch reads."""
    angle = (2.0 if inverse else -2.0) * np.pi * np.arange(n) / n
    return _upload(np.exp(1j * angle)[None], device, dtype)


def _chirp_values(n: int, inverse: bool) -> np.ndarray:
    k = np.arange(n, dtype=np.int64)
    # k^2 mod 2n keeps the angle small (exact for any n this engine can index)
    return np.exp((1j if inverse else -1j) * np.pi * ((k * k) % (2 * n)) / n)


@functools.lru_cache(maxsize=8)
def _chirp(device: Device, n: int, inverse: bool, dtype: DType) -> ComplexLazy:
    pair = _upload(_chirp_values(n, inverse), device, dtype)
    return cx.from_pair(lz.movement(pair, "reshape", (1, n, 2)), dtype)


@functools.lru_cache(maxsize=8)
def _chirp_kernel(device: Device, n: int, m: int, inverse: bool, dtype: DType) -> ComplexLazy:
    """conj(w) at 0..n-1 and, wrapped around, at m-n+1..m-1 (the negative lags)."""
    w = np.conj(_chirp_values(n, inverse))
    b = np.zeros(m, np.complex128)
    b[:n] = w
    b[m - n + 1:] = w[1:][::-1]
    pair = _upload(b, device, dtype)
    return cx.from_pair(lz.movement(pair, "reshape", (1, m, 2)), dtype)


def _upload(values: np.ndarray, device: Device, dtype: DType) -> Lazy:
    """Complex values as the interleaved parts of `dtype`."""
    real = dtype.real_dtype
    parts = values.astype(dtype.np).view(real.np).reshape(values.shape + (2,))
    return lz.from_numpy(parts, real, device)


# --- movement and arithmetic on complex values ----------------------------------------

def _permute(z: ComplexLazy, order: Sequence[int]) -> ComplexLazy:
    return cx.from_parts(*(lz.movement(p, "permute", tuple(order)) for p in (z.re, z.im)))


def _reshape(z: ComplexLazy, shape: tuple) -> ComplexLazy:
    if z.shape == tuple(shape):
        return z
    return cx.from_pair(lz.movement(lz.realize(z.pair, "input of a transform"), "reshape",
                                    tuple(shape) + (2,)), z.dtype)


def _broadcast(z: ComplexLazy, shape: tuple) -> ComplexLazy:
    return cx.from_parts(*(lz.movement(p, "expand", tuple(shape)) for p in (z.re, z.im)))


def _scale(z: ComplexLazy, factor: float) -> ComplexLazy:
    real = z.dtype.real_dtype
    return cx.from_parts(*(lz.elementwise(AluOp.Mul, [p, lz.full(p.shape, factor, real,
                                                                  p.device)])
                           for p in (z.re, z.im)))


def _slice_last(z: ComplexLazy, lo: int, hi: int) -> ComplexLazy:
    bounds = tuple((0, d) for d in z.shape[:-1]) + ((lo, hi),)
    return cx.from_parts(*(lz.movement(p, "shrink", bounds) for p in (z.re, z.im)))


def _pad_last(z: ComplexLazy, width: int) -> ComplexLazy:
    pads = tuple((0, 0) for _ in z.shape[:-1]) + ((0, width - z.shape[-1]),)
    return cx.from_parts(*(lz.movement(p, "pad", pads) for p in (z.re, z.im)))


def _hermitian(z: ComplexLazy, n: int) -> ComplexLazy:
    """The full length-n spectrum of a real signal from its first n//2 + 1 values:
    X[n - k] = conj(X[k])."""
    half = z.shape[-1]
    tail = n - half   # the entries n//2+1 .. n-1: conj of X[n//2 - (n % 2 == 0)] .. X[1]
    if tail <= 0:
        return _slice_last(z, 0, n)
    mirrored = _slice_last(z, 1, 1 + tail)
    mirrored = cx.from_parts(*(lz.movement(p, "flip", (len(z.shape) - 1,))
                               for p in (mirrored.re, mirrored.im)))
    conj = cx.from_parts(mirrored.re, cr.negate(mirrored.im))
    concat = lowerings[movement.concatenate_p]
    return cx.from_parts(concat(z.re, conj.re, dimension=len(z.shape) - 1),
                         concat(z.im, conj.im, dimension=len(z.shape) - 1))


lowerings[fft_p] = _lower_fft
complex_lowerings[fft_p] = _lower_fft


# --- differentiation and batching (JAX's rules) -----------------------------------------
from jaxlab.core import elementwise as ew, rule_ops, values  # noqa: E402
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import batch_at_front, jvp_linear  # noqa: E402


def _hermitian_weights(like: Any, n: int, scale: float) -> Any:
    """scale x (1 for the entries a real signal's spectrum holds once: 0 and, n even,
    n/2; 2 for those standing for a conjugate pair too), along the last axis, as an
    array of like's shape and dtype."""
    m = like.shape[-1]
    weights = np.full(m, 2.0 * scale)
    weights[0] = scale
    if n % 2 == 0:
        weights[-1] = scale
    return rule_ops.broadcast_to(values.from_host(weights, like.jdtype), like.shape)


def _t_fft(cts, x, *, fft_type, fft_lengths):
    (ct,) = cts
    fft_type = FftType(fft_type)
    size = math.prod(fft_lengths)
    if fft_type is FftType.RFFT:
        conj = cr.conj_p.bind(ct)
        halved = ew.div_p.bind(conj, _hermitian_weights(conj, fft_lengths[-1], 1.0 / size))
        return [fft_p.bind(halved, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)]
    if fft_type is FftType.IRFFT:
        spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        weighted = ew.binary_prims["mul"].bind(
            spectrum, _hermitian_weights(spectrum, fft_lengths[-1], 1.0 / size))
        # conjugated: JAX's convention for complex gradients (jax issue 6223)
        return [cr.conj_p.bind(weighted)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


jvp_rules[fft_p] = jvp_linear(fft_p)
transpose_rules[fft_p] = _t_fft
batch_rules[fft_p] = batch_at_front(fft_p)
