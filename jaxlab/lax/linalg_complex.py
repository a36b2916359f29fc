"""Complex matrices for jax.lax.linalg, computed with the real routines.

The real embedding E maps a complex entry z to the 2x2 block [[re z, -im z],
[im z, re z]], rows and columns interleaved, so an n x n complex matrix becomes a
2n x 2n real one. E is an algebra map (E(XY) = E(X)E(Y), E(X^H) = E(X)^T), so a
factorization whose factor keeps its shape under E is exactly the real routine's:
- Cholesky: L has a real positive diagonal, so E(L) is lower triangular with a
  positive diagonal and E(L)E(L)^T = E(A); the real Cholesky of E(A) is unique,
  hence it IS E(L), and L is read from the blocks' first columns.
- triangular solve: scaled to a unit diagonal, E(T) is unit triangular, so one
  real substitution solves it (the right-hand sides embedded as (re, im) rows).
LU's pivoting does not survive E (its U has complex diagonal blocks), so LU is a
loop over the columns here (`lu`), with LAPACK's pivot choice.

Nor do eigenvectors and singular vectors: E doubles every eigenvalue, and a real
eigensolver may return any basis of each doubled space, which need not pair into
independent complex vectors when eigenvalues repeat. So eigh and svd first reduce
the matrix with complex Householder reflections whose results are real (LAPACK's
zlarfg: H^H x = beta e_1 with beta real): a Hermitian matrix to a real symmetric
tridiagonal T = Q^H A Q (zhetrd), any matrix to a real bidiagonal B = Q^H A P (zgebrd).
The real routines then factor T or B, whose vectors are real orthonormal even for
repeated values, and Q (and P) carry them back. QR is the same reflections (geqrf),
whose packed form is also `qr(mode="raw")`'s, for real matrices too. Each reduction is
a fori_loop over the columns on masks: one compiled body serves every step.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from jaxlab.array import Array
from jaxlab.core import complex_rules as cr
from jaxlab.core import linalg as core_linalg
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.core.linalg import cholesky_p, eigh_p, svd_p, triangular_solve_p
from jaxlab.ir.dtypes import DType
from jaxlab.lax.control_flow import fori_loop
from jaxlab.numpy import complex_functions as cf
from jaxlab.numpy._util import asarray_, astype_
from jaxlab.numpy.creation import arange, eye, zeros
from jaxlab.numpy.reductions import argmax, max as amax, sum as asum
from jaxlab.numpy.products import matmul
from jaxlab.numpy.shape_ops import broadcast_to, concatenate, expand_dims, reshape, stack, \
    swapaxes
from jaxlab.numpy.ufuncs import abs as absolute, copysign, exp2, floor, isfinite, log2, \
    logical_and, sqrt, where


@functools.lru_cache(maxsize=None)
def _compiled(algorithm: Callable, static_argnums: tuple[int, ...] = ()) -> Callable:
    """The loop `algorithm` through jaxlab.jit: traced and compiled once per shape, then
    replayed as a program (an eager loop would evaluate its body op by op every step);
    under another transformation jit inlines it."""
    from jaxlab.api import jit
    return jit(algorithm, static_argnums=static_argnums)


def _mT(x: Array) -> Array:
    return swapaxes(x, -1, -2)


def _mH(x: Array) -> Array:
    return cf.conj(_mT(x))


def _complex(re: Array, im: Array) -> Array:
    return cr.complex_p.bind(re, im)


def embed(a: Array) -> Array:
    """(..., n, k) complex -> (..., 2n, 2k) real: each entry as [[re, -im], [im, re]]."""
    re, im = cf.real(a), cf.imag(a)
    blocks = stack([stack([re, -im], axis=-1), stack([im, re], axis=-1)], axis=-3)
    n, k = a.shape[-2:]
    return reshape(blocks, a.shape[:-2] + (2 * n, 2 * k))


def _embed_columns(b: Array) -> Array:
    """(..., n, k) complex -> (..., 2n, k) real: row i as the rows (re b_i, im b_i),
    so that E(T) @ _embed_columns(x) == _embed_columns(T @ x)."""
    n, k = b.shape[-2:]
    return reshape(stack([cf.real(b), cf.imag(b)], axis=-2), b.shape[:-2] + (2 * n, k))


def _unembed_columns(x: Array) -> Array:
    n2, k = x.shape[-2:]
    pairs = reshape(x, x.shape[:-2] + (n2 // 2, 2, k))
    return _complex(pairs[..., 0, :], pairs[..., 1, :])


def _triangle(x: Array, lower: bool, strict: bool = False) -> Array:
    n, m = x.shape[-2:]
    rows, cols = expand_dims(arange(n), -1), arange(m)
    offset = 1 if strict else 0
    keep = rows >= cols + offset if lower else rows + offset <= cols
    return where(keep, x, 0)


def cholesky(x: Array) -> Array:
    """L with L L^H = x, reading x's lower triangle (its diagonal's real part, as potrf);
    NaN where x is not positive definite, as the real routine."""
    n = x.shape[-1]
    low = _triangle(x, lower=True, strict=True)
    hermitian = where(eye(n, dtype=bool), astype_(cf.real(x), x.jdtype), low + _mH(low))
    factor = cholesky_p.bind(embed(hermitian))
    blocks = reshape(factor, x.shape[:-2] + (n, 2, n, 2))
    return _complex(blocks[..., :, 0, :, 0], blocks[..., :, 1, :, 0])


def triangular_solve(a: Array, b: Array, *, left_side: bool, lower: bool, transpose_a: bool,
                     conjugate_a: bool, unit_diagonal: bool) -> Array:
    """op(a) x = b (left_side) or x op(a) = b, a triangular: op(a) is formed, the
    right-side problem transposed to a left-side one, rows scaled to a unit diagonal,
    then one real substitution on the embedding."""
    dtype = a.jdtype if a.jdtype.is_complex else b.jdtype
    t, b = asarray_(a, dtype), asarray_(b, dtype)
    t = _triangle(t, lower)
    if unit_diagonal:
        t = where(eye(t.shape[-1], dtype=bool), 1, t)
    if transpose_a:
        t, lower = _mT(t), not lower
    if conjugate_a:
        t = cf.conj(t)
    if not left_side:   # x t = b is t^T x^T = b^T
        t, lower, b = _mT(t), not lower, _mT(b)
    diagonal = expand_dims(_diagonal(t), -1)
    x = triangular_solve_p.bind(embed(t / diagonal), _embed_columns(b / diagonal),
                                left_side=True, lower=lower, transpose_a=False,
                                unit_diagonal=True)
    x = _unembed_columns(x)
    return x if left_side else _mT(x)


def _diagonal(x: Array) -> Array:
    n = x.shape[-1]
    return asum(where(eye(n, dtype=bool), x, 0), axis=-1)


def _row(x: Array, mask: Array) -> Array:
    """The row of x (..., m, n) where mask (..., m, 1) is true, as (..., 1, n)."""
    return asum(where(mask, x, 0), axis=-2, keepdims=True)


def _swap(x: Array, here: Array, there: Array) -> Array:
    """x with the rows (axis -2) `here` and `there` (masks) exchanged."""
    row_here, row_there = _row(x, here), _row(x, there)
    return where(here, row_there, where(there, row_here, x))


def lu(a: Array) -> tuple[Array, Array, Array]:
    return _compiled(_lu)(a)


def _lu(a: Array) -> tuple[Array, Array, Array]:
    """LU with partial pivoting as jax.lax.linalg.lu (LAPACK's getrf): the pivot is the
    first largest |re| + |im| in its column (izamax's measure); a zero or NaN pivot
    leaves its multipliers as they are. One column per loop step, over masks."""
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    rows, cols = expand_dims(arange(m), -1), arange(n)

    def step(j: Array, carry: tuple) -> tuple:
        lu_, pivots, perm = carry
        column = asum(where(cols == j, lu_, 0), axis=-1)              # (..., m)
        size = absolute(cf.real(column)) + absolute(cf.imag(column))
        p = argmax(where(arange(m) >= j, size, -1.0), axis=-1)        # (...,)
        here, there = rows == j, rows == expand_dims(expand_dims(p, -1), -1)
        lu_ = _swap(lu_, here, there)
        perm = _swap(expand_dims(perm, -1), here, there)[..., 0]
        pivots = where(arange(k) == j, expand_dims(p, -1), pivots)
        pivot_row = _row(lu_, here)                                   # (..., 1, n)
        pivot = asum(where(cols == j, pivot_row, 0), axis=-1, keepdims=True)
        usable = logical_and(pivot != 0, pivot == pivot)
        below = rows > j
        column = asum(where(cols == j, lu_, 0), axis=-1, keepdims=True)
        multipliers = where(logical_and(below, usable), column / pivot, column)
        lu_ = where(cols == j, multipliers, lu_)
        trailing = logical_and(below, cols > j)
        return where(trailing, lu_ - multipliers * pivot_row, lu_), pivots, perm

    init = (a, zeros(batch + (k,), DType.int32),
            broadcast_to(arange(m, dtype=DType.int32), batch + (m,)))
    lu_, pivots, perm = fori_loop(0, k, step, init)
    return lu_, astype_(pivots, DType.int32), astype_(perm, DType.int32)




# --- Householder reflections (LAPACK's conventions) ------------------------------------

def _reflector(x: Array, first: Any) -> tuple[Array, Array, Array]:
    """zlarfg on x (..., m) from entry `first` (entries before it are ignored): (v, tau,
    beta) with v[first] = 1, v zero before it, H = I - tau v v^H and H^H x = beta e_first,
    beta real (-sign(re x_first) |x|). H = I (tau 0) where x is already real there and
    zero below. tau and beta are (..., 1)."""
    index = arange(x.shape[-1])
    at, below = index == first, index > first
    alpha = asum(where(at, x, 0), axis=-1, keepdims=True)
    tail = where(below, x, 0)
    tail_norm2 = asum(cf.real(tail * cf.conj(tail)), axis=-1, keepdims=True)
    re, im = cf.real(alpha), cf.imag(alpha)
    beta = -copysign(sqrt(re * re + im * im + tail_norm2), re)
    trivial = logical_and(tail_norm2 == 0, im == 0)
    tau = where(trivial, 0, (beta - alpha) / where(trivial, 1, beta))
    v = where(at, 1, tail * (1 / where(trivial, 1, alpha - beta)))
    return v, tau, where(trivial, re, beta)


def _reflect_left(a: Array, v: Array, tau: Array) -> Array:
    """H^H a = a - conj(tau) v (v^H a), for a (..., m, n) and v (..., m)."""
    w = matmul(expand_dims(cf.conj(v), -2), a)                     # (..., 1, n)
    return a - expand_dims(cf.conj(tau) * v, -1) * w


def _reflect_right(a: Array, v: Array, tau: Array) -> Array:
    """a H = a - (a v) tau v^H, for a (..., m, n) and v (..., n)."""
    w = matmul(a, expand_dims(v, -1))                               # (..., m, 1)
    return a - w * expand_dims(tau * cf.conj(v), -2)


def _column(a: Array, j: Any) -> Array:
    return asum(where(arange(a.shape[-1]) == j, a, 0), axis=-1)


def _scaled(a: Array) -> tuple[Array, Array]:
    """(a / c, c) with c (..., 1, 1) the power of two at or below each matrix's largest
    |re| + |im|: the reductions' squared norms can then neither overflow nor underflow,
    and dividing by a power of two is exact (LAPACK's norms scale the same way)."""
    size = amax(absolute(cf.real(a)) + absolute(cf.imag(a)), axis=(-2, -1), keepdims=True)
    usable = logical_and(isfinite(size), size > 0)
    scale = where(usable, exp2(floor(log2(where(usable, size, 1)))), 1)
    return a * (1 / scale), scale


def _identity(n: int, like: Array) -> Array:
    return broadcast_to(eye(n, dtype=like.jdtype), like.shape[:-2] + (n, n))


def _put(values: Array, j: Any, x: Array) -> Array:
    """values (..., k) with entry j replaced by x (..., 1)."""
    return where(arange(values.shape[-1]) == j, x, values)


def _band(x: Array, below: int, above: int) -> Array:
    """x's real part on the diagonals -below..above, zero elsewhere: what a reduction
    leaves there is rounding (each step's reflector zeroes its column or row to working
    precision; LAPACK stores exact zeros and a real beta, the same to that precision)."""
    n = x.shape[-1]
    offset = arange(n) - expand_dims(arange(x.shape[-2]), -1)
    return where(logical_and(offset >= -below, offset <= above), cf.real(x), 0)


def householder_qr(a: Array) -> tuple[Array, Array, Array]:
    return _compiled(_householder_qr)(a)


def _householder_qr(a: Array) -> tuple[Array, Array, Array]:
    """geqrf and orgqr: (packed, taus, q) with r on and above packed's diagonal (its
    diagonal real), the reflectors' tails below it, taus (..., k) their scales and
    q = H_0 ... H_k-1 (m x m)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    a, scale = _scaled(a)

    def step(j: Array, carry: tuple) -> tuple:
        r, tails, taus, betas, q = carry
        v, tau, beta = _reflector(_column(r, j), j)
        tails = where(arange(n) == j, expand_dims(v, -1), tails)
        return (_reflect_left(r, v, tau), tails, _put(taus, j, tau), _put(betas, j, beta),
                _reflect_right(q, v, tau))

    scales = zeros(a.shape[:-2] + (k,), a.jdtype)
    r, tails, taus, betas, q = fori_loop(0, k, step, (a, zeros(a.shape, a.jdtype), scales,
                                                      scales, _identity(m, a)))
    rows, cols = expand_dims(arange(m), -1), arange(n)
    diagonal = where(rows == cols, expand_dims(concatenate(
        [betas, zeros(a.shape[:-2] + (n - k,), a.jdtype)], axis=-1), -2), r)
    return where(rows > cols, tails, diagonal * scale), taus, q


def _qr(a: Array, full_matrices: bool) -> tuple[Array, Array]:
    """Householder QR with LAPACK's signs (r's diagonal real): q (m x m or m x k), r."""
    m, n = a.shape[-2:]
    k = min(m, n)
    packed, _, q = _householder_qr(a)
    r = _triangle(packed, lower=False)
    return (q, r) if full_matrices else (q[..., :, :k], r[..., :k, :])


def _hermitian(a: Array, lower: bool) -> Array:
    """The Hermitian matrix one triangle of a spells (the diagonal's real part)."""
    part = _triangle(a, lower, strict=True)
    real_diagonal = astype_(cf.real(a), a.jdtype)
    return where(eye(a.shape[-1], dtype=bool), real_diagonal, part + _mH(part))


def _eigh(a: Array, lower: bool) -> tuple[Array, Array]:
    """(v, w) of the Hermitian matrix a's `lower` (else upper) triangle spells: A = Q T Q^H
    with T real tridiagonal (n - 1 reflections from both sides), T = V_T W V_T^T by the
    real routine, v = Q V_T."""
    h, scale = _scaled(_hermitian(a, lower))
    n = h.shape[-1]

    def step(j: Array, carry: tuple) -> tuple:
        t, q = carry
        v, tau, _ = _reflector(_column(t, j), j + 1)
        return _reflect_right(_reflect_left(t, v, tau), v, tau), _reflect_right(q, v, tau)

    t, q = fori_loop(0, max(n - 1, 0), step, (h, _identity(n, h)))
    vectors, w = eigh_p.bind(_band(t, 1, 1), lower=True)
    return matmul(q, astype_(vectors, a.jdtype)), w * cf.real(scale[..., 0])


def _bidiagonal(a: Array) -> tuple[Array, Array, Array]:
    """zgebrd for m >= n: (b, q, p) with a = q b p^H, b real upper bidiagonal (n x n),
    q (m x m) and p (n x n) unitary."""
    m, n = a.shape[-2:]

    def step(j: Array, carry: tuple) -> tuple:
        b, q, p = carry
        v, tau, _ = _reflector(_column(b, j), j)
        b, q = _reflect_left(b, v, tau), _reflect_right(q, v, tau)
        # the row's reflector: b H = (beta, 0, ...) from column j + 1 (a no-op past the last)
        row = cf.conj(asum(where(expand_dims(arange(m), -1) == j, b, 0), axis=-2))
        v, tau, _ = _reflector(row, j + 1)
        return _reflect_right(b, v, tau), q, _reflect_right(p, v, tau)

    b, q, p = fori_loop(0, n, step, (a, _identity(m, a), _identity(n, a)))
    return _band(b[..., :n, :], 0, 1), q, p


def _svd(a: Array, full_matrices: bool, compute_uv: bool) -> list[Array]:
    """[s] or [s, u, vh] as svd_p's: a = q b p^H with b real bidiagonal, b = U_B S V_B^T by
    the real routine, u = q U_B, vh = V_B^T p^H. A wide matrix is factored as a^H."""
    m, n = a.shape[-2:]
    wide = m < n
    tall, scale = _scaled(_mH(a) if wide else a)
    b, q, p = _bidiagonal(tall)
    scale = cf.real(scale[..., 0])
    if not compute_uv:
        return [svd_p.bind(b, full_matrices=False, compute_uv=False)[0] * scale]
    s, ub, vbt = svd_p.bind(b, full_matrices=False, compute_uv=True)
    s = s * scale
    rows, cols = tall.shape[-2:]
    u = matmul(q[..., :, :cols], astype_(ub, a.jdtype))
    if full_matrices and rows > cols:
        u = concatenate([u, q[..., :, cols:]], axis=-1)
    vh = matmul(astype_(vbt, a.jdtype), _mH(p))
    return [s, _mH(vh), _mH(u)] if wide else [s, u, vh]


# --- derivatives: JAX's rules (core/linalg.py's, complex-aware) around the loops ---------

@functools.lru_cache(maxsize=None)
def _eigh_rule(lower: bool) -> custom_jvp:
    fn = custom_jvp(lambda a: _compiled(_eigh, (1,))(a, lower))

    @fn.defjvp
    def jvp(primals: tuple, tangents: tuple) -> tuple:
        v, w = fn(*primals)
        return (v, w), core_linalg.eigh_tangents(v, w, tangents[0])
    return fn


@functools.lru_cache(maxsize=None)
def _svd_rule(full_matrices: bool, compute_uv: bool) -> custom_jvp:
    fn = custom_jvp(lambda a: _compiled(_svd, (1, 2))(a, full_matrices, compute_uv))

    @fn.defjvp
    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (a,), (ta,) = primals, tangents
        m, n = a.shape[-2:]
        if compute_uv and full_matrices and m != n:
            raise NotImplementedError("Singular value decomposition JVP not implemented for "
                                      "full matrices")
        s, u, vh = _compiled(_svd, (1, 2))(a, False, True)
        out = [s, u, vh] if compute_uv else [s]
        return out, core_linalg.svd_tangents(s, u, vh, ta, compute_uv)
    return fn


@functools.lru_cache(maxsize=None)
def _qr_rule(full_matrices: bool) -> custom_jvp:
    fn = custom_jvp(lambda a: _compiled(_qr, (1,))(a, full_matrices))

    @fn.defjvp
    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (a,), (ta,) = primals, tangents
        core_linalg.check_qr_jvp(a.shape, full_matrices)
        q, r = fn(a)
        da_rinv = triangular_solve(r, ta, left_side=False, lower=False, transpose_a=False,
                                   conjugate_a=False, unit_diagonal=False)
        return (q, r), core_linalg.qr_tangents(q, r, da_rinv)
    return fn


def eigh(a: Array, lower: bool) -> tuple[Array, Array]:
    return _eigh_rule(bool(lower))(a)


def svd(a: Array, full_matrices: bool, compute_uv: bool) -> list[Array]:
    return list(_svd_rule(bool(full_matrices), bool(compute_uv))(a))


def qr(a: Array, full_matrices: bool) -> tuple[Array, Array]:
    return _qr_rule(bool(full_matrices))(a)
