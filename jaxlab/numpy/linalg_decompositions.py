"""jnp.linalg's eigen, singular value and QR decompositions, and what JAX builds on
them: least squares, the pseudo-inverse, the rank."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.ir.dtypes import DType, to_inexact
from jaxlab.lax import linalg as lax_linalg
from jaxlab.numpy._util import asarray_, astype_, promote_dtypes
from jaxlab.numpy.complex_functions import conj, real
from jaxlab.numpy.creation import zeros
from jaxlab.numpy.dtype_functions import finfo
from jaxlab.numpy.products import matmul
from jaxlab.numpy.reductions import any as any_, max as amax, sum as asum
from jaxlab.numpy.shape_ops import expand_dims, swapaxes
from jaxlab.numpy.ufuncs import greater, greater_equal, logical_and, not_equal, where

__all__ = ["eig", "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "qr", "lstsq", "pinv",
           "matrix_rank", "EigResult", "EighResult", "SVDResult", "QRResult"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


def _inexact(a: Any) -> Array:
    return asarray_(a, to_inexact(promote_dtypes(a)))


def _mT(x: Array) -> Array:
    return swapaxes(x, -1, -2)


def _mH(x: Array) -> Array:
    return conj(swapaxes(x, -1, -2))


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (unit columns) of general square matrices, both
    complex; on the cpu device only, as JAX computes them on the CPU only."""
    w, v = lax_linalg.eig(_inexact(a), compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Array:
    return lax_linalg.eig(_inexact(a), compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


_UPLO = {None: True, "L": True, "U": False}


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    if UPLO not in _UPLO:
        raise ValueError(f"UPLO must be one of None, 'L', 'U', got {UPLO!r}")
    v, w = lax_linalg.eigh(_inexact(a), lower=_UPLO[UPLO], symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Array:
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: Any = None) -> Any:
    """SVDResult(U, S, Vh) with a = U @ diag(S) @ Vh and S descending; S alone without
    compute_uv. `hermitian` changes nothing here: the same factorization runs."""
    x = _inexact(a)
    return (SVDResult(*lax_linalg.svd(x, full_matrices=full_matrices,
                                      subset_by_index=subset_by_index))
            if compute_uv else
            lax_linalg.svd(x, compute_uv=False, subset_by_index=subset_by_index))


def svdvals(x: Any, /) -> Array:
    return svd(x, compute_uv=False)


_QR_MODES = {"reduced": False, "complete": True, "r": False}


def qr(a: Any, mode: str = "reduced") -> Any:
    """QRResult(Q, R) (mode 'reduced' or 'complete'), R alone (mode 'r'), or LAPACK's
    geqrf output as NumPy gives it (mode 'raw': (h, tau), h transposed)."""
    if mode == "raw":
        from jaxlab.lax.linalg_complex import householder_qr
        packed, taus, _ = householder_qr(_inexact(a))
        return QRResult(_mT(packed), taus)
    if mode not in _QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(_inexact(a), full_matrices=_QR_MODES[mode])
    return r if mode == "r" else QRResult(q, r)


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Array, Array, Array, Array]:
    """(x, resid, rank, s): x minimises |a x - b| through the SVD, singular values
    below rcond * the largest treated as zero (as JAX: 2-D a only)."""
    dt = to_inexact(promote_dtypes(a, b))
    a, b = asarray_(a, dt), asarray_(b, dt)
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim not in (1, 2):
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or "
                        "two-dimensional")
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    vector = b.ndim == 1
    rhs = expand_dims(b, -1) if vector else b
    m, n = a.shape
    eps = float(finfo(a.jdtype).eps)
    cut = eps * max(m, n) if rcond is None else (eps if rcond < 0 else rcond)
    u, s, vt = lax_linalg.svd(a, full_matrices=False)
    kept = logical_and(greater(s, 0), greater_equal(s, cut * s[0]))
    rank = asum(astype_(kept, DType.int32))
    s_inv = where(kept, 1 / where(kept, s, 1), 0)
    x = matmul(_mH(vt), expand_dims(s_inv, -1) * matmul(_mH(u), rhs))
    residual = rhs - matmul(a, x)
    resid = asum(real(residual * conj(residual)), axis=0)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = zeros((0,), a.jdtype)
    return (x[:, 0] if vector else x), resid, rank, s


@custom_jvp
def _pinv(a: Array, rtol: Array) -> Array:
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    cutoff = expand_dims(rtol, -1) * amax(s, axis=-1, keepdims=True)
    kept = where(greater(s, cutoff), s, np.inf)
    return matmul(_mH(vh), _mH(u) / expand_dims(kept, -1))


@_pinv.defjvp
def _pinv_jvp(primals: tuple, tangents: tuple) -> tuple[Array, Array]:
    """The pseudo-inverse's derivative (Golub and Pereyra), as JAX differentiates it."""
    (a, rtol), (da, _) = primals, tangents
    p = _pinv(a, rtol)
    s = matmul(matmul(p, _mH(p)), _mH(da))
    t = matmul(matmul(_mH(da), _mH(p)), p)
    dp = -matmul(matmul(p, da), p) + s - matmul(matmul(s, a), p) + t - matmul(matmul(p, a), t)
    return p, dp


def pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Array:
    """The Moore-Penrose pseudo-inverse; singular values at or below rtol * the largest
    count as zero (default 10 * max(m, n) * eps, as JAX)."""
    x = _inexact(a)
    if x.ndim < 2:
        raise ValueError(f"pinv needs at least 2 axes, got shape {x.shape}")
    m, n = x.shape[-2:]
    if m == 0 or n == 0:
        return zeros(x.shape[:-2] + (n, m), x.jdtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(finfo(x.jdtype).eps)
    return _pinv(x, asarray_(rtol, x.jdtype.real_dtype))


def matrix_rank(M: Any, rtol: Any = None, *, tol: Any = None,
                hermitian: bool = False) -> Array:
    """How many singular values exceed rtol (default: the largest * max(m, n) * eps)."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    x = _inexact(M)
    if x.ndim < 2:
        return astype_(any_(not_equal(x, 0)), DType.int32)
    s = svd(x, compute_uv=False)
    if rtol is None:
        rtol = amax(s, axis=-1) * (max(x.shape[-2:]) * float(finfo(s.jdtype).eps))
    rtol = asarray_(rtol, s.jdtype)
    return asum(astype_(greater(s, expand_dims(rtol, -1)), DType.int32), axis=-1)
