"""Routines written with NumPy over whole (batched) arrays.

The cpu backend runs these directly; the wasm backend runs them on zero-copy
views of its memory only for what it does not generate (sorts of 64-bit values). Semantics follow jax.lax.linalg (and
the webgpu routines agree): a failed Cholesky gives NaNs, a singular triangular
solve inf/NaN, instead of raising.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from jaxlab.ir.kernel import Routine


def _sort(x: np.ndarray, **_) -> list[np.ndarray]:
    # stable, as JAX's: the order of -0.0 and 0.0 is seen in their signs
    return [np.sort(x, axis=-1, kind="stable")]


def _argsort(x: np.ndarray, **_) -> list[np.ndarray]:
    return [np.argsort(x, axis=-1, kind="stable").astype(np.int32)]


def _batched(a: np.ndarray) -> np.ndarray:
    """(..., m, n) as (batch, m, n) in float64; not reshape(-1): a 0x0 matrix has size 0."""
    return a.astype(np.float64).reshape(math.prod(a.shape[:-2]), *a.shape[-2:])


def _cholesky(a: np.ndarray, *, symmetrize: bool = False) -> list[np.ndarray]:
    """Cholesky-Crout over the lower triangle, as LAPACK's potrf does it: a pivot
    <= 0 fails its matrix, whose lower triangle becomes NaN (as jax.lax.linalg); a
    NaN pivot is no failure, it just propagates. symmetrize: of (a + a^T) / 2, in a's
    dtype as JAX's elementwise symmetrize."""
    if symmetrize:
        a = (a + np.swapaxes(a, -1, -2)) * a.dtype.type(0.5)
    low = np.tril(_batched(a))
    n = a.shape[-1]
    failed = np.zeros(low.shape[0], bool)
    for j in range(n):   # one column at a time, vectorised over the batch and the rows
        low[:, j:, j] -= np.einsum("bik,bk->bi", low[:, j:, :j], low[:, j, :j])
        pivot = low[:, j, j].copy()
        failed |= pivot <= 0
        low[:, j, j] = np.sqrt(pivot)
        low[:, j + 1:, j] /= low[:, j, j:j + 1]
    low[failed] = np.where(np.tri(n, dtype=bool), np.nan, 0.0)
    return [low.reshape(a.shape).astype(a.dtype)]


def _triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                      transpose_a: bool, unit_diagonal: bool) -> list[np.ndarray]:
    """Solve op(a) x = b (left_side) or x op(a) = b, with a triangular, by substitution
    as jax.lax.linalg does: a zero on the diagonal gives inf/NaN, never an error."""
    t = np.tril(_batched(a)) if lower else np.triu(_batched(a))
    n = a.shape[-1]
    if unit_diagonal:
        t[:, np.arange(n), np.arange(n)] = 1.0
    # x op(a) = b is op(a)^T x^T = b^T: one left-side solve with t^T
    if transpose_a == left_side:
        t = np.swapaxes(t, -1, -2)
    rhs = _batched(b) if left_side else np.swapaxes(_batched(b), -1, -2)
    x = np.zeros_like(rhs)
    forward = lower != (transpose_a == left_side)   # t is lower triangular
    for i in (range(n) if forward else reversed(range(n))):
        known = slice(0, i) if forward else slice(i + 1, n)
        # an elementwise product, not BLAS: 0 * inf must give NaN as on the other devices
        total = rhs[:, i, :] - (t[:, i, known, None] * x[:, known, :]).sum(axis=1)
        x[:, i, :] = total / t[:, i, i, None]
    x = x if left_side else np.swapaxes(x, -1, -2)
    return [x.reshape(b.shape).astype(b.dtype)]


def _lu(a: np.ndarray, **_) -> list[np.ndarray]:
    """LU with partial pivoting: (lu, pivots, permutation) as jax.lax.linalg.lu."""
    m, n = a.shape[-2:]
    lu = _batched(a)
    batch = lu.shape[0]
    k = min(m, n)
    pivots = np.zeros((batch, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (batch, 1))
    rows = np.arange(batch)
    for j in range(k):   # a loop over columns, vectorised over the batch and the rows
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p
        lu[rows, j], lu[rows, p] = lu[rows, p].copy(), lu[rows, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
        pivot = lu[:, j, j:j + 1]
        usable = (pivot != 0) & ~np.isnan(pivot)   # else the multipliers stay (as JAX)
        with np.errstate(all="ignore"):
            lu[:, j + 1:, j] = np.where(usable, lu[:, j + 1:, j] / pivot, lu[:, j + 1:, j])
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    shape = a.shape[:-2]
    return [lu.reshape(a.shape).astype(a.dtype), pivots.reshape(*shape, k),
            perm.reshape(*shape, m)]


def _eigh(a: np.ndarray, *, lower: bool) -> list[np.ndarray]:
    """(vectors, values ascending) of the symmetric matrix one triangle spells."""
    matrices, bad = _finite_only((np.tril if lower else np.triu)(_batched(a)))
    w, v = (_spoil(x, bad) for x in np.linalg.eigh(matrices, UPLO="L" if lower else "U"))
    n = a.shape[-1]
    return [v.reshape(a.shape).astype(a.dtype), w.reshape(*a.shape[:-2], n).astype(a.dtype)]


def _finite_only(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(matrices with the non-finite ones zeroed, which those were): LAPACK's svd and geev
    raise on NaN or inf, where JAX's results are NaN (`_spoil` writes them)."""
    bad = ~np.isfinite(matrices).all(axis=(-2, -1))
    return np.where(bad[:, None, None], 0, matrices), bad


def _spoil(out: np.ndarray, bad: np.ndarray) -> np.ndarray:
    out[bad] = np.nan
    return out


def _svd(a: np.ndarray, *, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    """[s] or [s, u, vt] of a tall matrix (m >= n), s descending."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    matrices, bad = _finite_only(_batched(a))
    if not compute_uv:
        s = _spoil(np.linalg.svd(matrices, compute_uv=False), bad)
        return [s.reshape(*batch, n).astype(a.dtype)]
    u, s, vt = (_spoil(x, bad) for x in np.linalg.svd(matrices, full_matrices=full_matrices))
    return [s.reshape(*batch, n).astype(a.dtype), u.reshape(*batch, *u.shape[-2:]).astype(a.dtype),
            vt.reshape(*batch, n, n).astype(a.dtype)]


def _qr(a: np.ndarray, *, full_matrices: bool) -> list[np.ndarray]:
    q, r = np.linalg.qr(_batched(a), mode="complete" if full_matrices else "reduced")
    batch = a.shape[:-2]
    return [q.reshape(*batch, *q.shape[-2:]).astype(a.dtype),
            r.reshape(*batch, *r.shape[-2:]).astype(a.dtype)]


def _unit_columns(v: np.ndarray) -> np.ndarray:
    """Columns scaled to norm 1 with their largest component real (LAPACK geev's)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    top = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * np.conj(top / np.abs(top))


def _eig(a: np.ndarray, *, left: bool, right: bool, complex_input: bool) -> list[np.ndarray]:
    """[w] + [vl] + [vr] (as asked) as jax.lax.linalg.eig, complex values stored as (re, im)
    pairs: NumPy's geev; the left vectors are the rows of vr^-1, conjugated, normalised."""
    real = a.dtype
    if complex_input:   # (..., n, n, 2) pairs
        shape = a.shape[:-1]
        matrices = (a[..., 0].astype(np.float64) + 1j * a[..., 1]).reshape(
            math.prod(shape[:-2]), *shape[-2:])
    else:
        shape, matrices = a.shape, _batched(a)
    matrices, bad = _finite_only(matrices)
    w, vr = (_spoil(x, bad) for x in np.linalg.eig(matrices))
    found = [w.reshape(*shape[:-1])]
    if left:
        found.append(_unit_columns(np.conj(np.swapaxes(np.linalg.inv(vr), -1, -2))).reshape(shape))
    if right:
        found.append(vr.reshape(shape))
    return [np.stack([z.real, z.imag], axis=-1).astype(real) for z in found]


def _fft(x: np.ndarray, twiddles: np.ndarray, *, inverse: bool) -> list[np.ndarray]:
    """Unscaled DFTs of the rows of x, complex values stored as (re, im) pairs: NumPy's
    pocketfft (the twiddle table is for generated code)."""
    complex_type = np.result_type(x.dtype, np.complex64)   # complex64, or complex128 (x64)
    rows = np.ascontiguousarray(x).view(complex_type)[..., 0]
    out = np.fft.ifft(rows, axis=-1, norm="forward") if inverse else np.fft.fft(rows, axis=-1)
    return [out.astype(complex_type)[..., None].view(x.dtype)]


ROUTINE_IMPLS: dict[str, Callable[..., list[np.ndarray]]] = {
    "sort": _sort, "argsort": _argsort, "cholesky": _cholesky,
    "triangular_solve": _triangular_solve, "lu": _lu, "eigh": _eigh, "svd": _svd, "qr": _qr,
    "eig": _eig,
    "fft": _fft,
}


def run_routine(routine: Routine, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return ROUTINE_IMPLS[routine.name](*inputs, **routine.param)
