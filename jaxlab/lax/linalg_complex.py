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
"""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core import complex_rules as cr
from jaxlab.core.linalg import cholesky_p, triangular_solve_p
from jaxlab.ir.dtypes import DType
from jaxlab.lax.control_flow import fori_loop
from jaxlab.numpy import complex_functions as cf
from jaxlab.numpy._util import asarray_, astype_
from jaxlab.numpy.creation import arange, eye, zeros
from jaxlab.numpy.reductions import argmax, sum as asum
from jaxlab.numpy.shape_ops import broadcast_to, expand_dims, reshape, stack, swapaxes
from jaxlab.numpy.ufuncs import abs as absolute, logical_and, where


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


