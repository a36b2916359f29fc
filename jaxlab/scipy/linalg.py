"""jax.scipy.linalg over the factorizations jaxlab has: triangular solves,
Cholesky (upper by default, as SciPy), LU with its permutation matrix, eigh, svd,
qr (SciPy's mode names), and expm by scaling and squaring."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax import linalg as lax_linalg
from jaxlab.numpy.linalg import det, inv  # noqa: F401
from jaxlab.numpy.linalg import solve as _general_solve

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor",
           "lu_solve", "solve", "inv", "det", "eigh", "svd", "qr", "expm"]

# trans -> (transpose_a, conjugate_a)
_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Array:
    """x with op(a) x = b, a triangular; b is (n,) or (n, k)."""
    a, b = _same_float(a, b)
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    vector = b.ndim == a.ndim - 1
    rhs = jnp.expand_dims(b, -1) if vector else b
    transpose_a, conjugate_a = _TRANS[trans]
    out = lax_linalg.triangular_solve(a, rhs, left_side=True, lower=lower,
                                      transpose_a=transpose_a, conjugate_a=conjugate_a,
                                      unit_diagonal=unit_diagonal)
    return jnp.squeeze(out, -1) if vector else out


def _inexact_args(*xs: Any) -> list[Array]:
    """Each argument in its own inexact dtype (integers and bools as float32)."""
    arrays = [jnp.asarray(x) for x in xs]
    return [x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)
            for x in arrays]


def _same_float(a: Any, b: Any) -> tuple[Array, Array]:
    """a and b in their promoted inexact dtype, each keeping its own shape."""
    dtype = jnp.result_type(a, b)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.float32
    return jnp.asarray(a, dtype), jnp.asarray(b, dtype)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Array:
    return jnp.linalg.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Array, bool]:
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Array:
    """x with a x = b from cho_factor(a): two triangular solves (a = L L^H = U^H U)."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else "C", lower=lower)
    return solve_triangular(c, y, trans="C" if lower else 0, lower=lower)


_ASSUMED = ("gen", "sym", "her", "pos")


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Array:
    """x with a x = b: by Cholesky when a is assumed positive definite ('pos'), else
    by LU (as JAX, 'sym' and 'her' take the general path)."""
    if assume_a not in _ASSUMED:
        raise ValueError(f"Expected assume_a to be one of {_ASSUMED}; got {assume_a!r}")
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return _general_solve(a, b)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv): L (unit, below the diagonal) and U packed, and LAPACK's row swaps."""
    (a,) = _inexact_args(a)
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def _permutation(pivots: Array, m: int) -> Array:
    """LAPACK's row swaps (row i with row pivots[i], in order) as a permutation of m rows."""
    rows = jnp.arange(m)
    perm = jnp.broadcast_to(rows, pivots.shape[:-1] + (m,))
    for i in range(pivots.shape[-1]):
        p = pivots[..., i:i + 1]
        here, there = perm[..., i:i + 1], jnp.take_along_axis(perm, p, axis=-1)
        perm = jnp.where(rows == i, there, jnp.where(rows == p, here, perm))
    return perm


def lu_solve(lu_and_piv: tuple, b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """x with a x = b (trans 0), a^T x = b (trans 1) or a^H x = b (trans 2) from lu_factor(a): with
    P a = L U, two triangular solves and the permutation. b is (..., n) or (..., n, k)."""
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    packed, pivots = lu_and_piv
    packed, b = _same_float(packed, b)
    perm = _permutation(jnp.asarray(pivots), packed.shape[-1])
    vector = b.ndim == packed.ndim - 1
    rhs = jnp.expand_dims(b, -1) if vector else b
    rows = jnp.expand_dims(perm, -1)
    if trans == 0:
        y = lax_linalg.triangular_solve(packed, jnp.take_along_axis(rhs, rows, axis=-2),
                                        left_side=True, lower=True, unit_diagonal=True)
        x = lax_linalg.triangular_solve(packed, y, left_side=True, lower=False)
    else:   # a^T = U^T L^T P: solve with U^T, then L^T, then undo the permutation
        conjugate = trans == 2   # a^H: the same with conjugates
        y = lax_linalg.triangular_solve(packed, rhs, left_side=True, lower=False,
                                        transpose_a=True, conjugate_a=conjugate)
        z = lax_linalg.triangular_solve(packed, y, left_side=True, lower=True,
                                        transpose_a=True, conjugate_a=conjugate,
                                        unit_diagonal=True)
        x = jnp.take_along_axis(z, jnp.expand_dims(jnp.argsort(perm, axis=-1), -1), axis=-2)
    return jnp.squeeze(x, -1) if vector else x


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple:
    """(p, l, u) with a = p @ l @ u; with permute_l, (p @ l, u)."""
    (a,) = _inexact_args(a)
    packed, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l_part = jnp.tril(packed[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
    u_part = jnp.triu(packed[..., :k, :])
    p = jnp.swapaxes(jnp.eye(m, dtype=a.dtype)[perm], -1, -2)
    return (p @ l_part, u_part) if permute_l else (p, l_part, u_part)


# the generalized problem's type -> (C from A and B = L L^H, x from C's eigenvectors y):
# 1: a x = w b x, C = L^-1 A L^-H, x = L^-H y;  2: a b x = w x, C = L^H A L, x = L^-H y;
# 3: b a x = w x, C = L^H A L, x = L y  (x normalised as SciPy: x^H b x = I, for 3 x^H b^-1 x = I)
_GENERALIZED = {1: "inverse", 2: "product", 3: "product"}


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:
    """(w, v) of a Hermitian matrix, or of the generalized problem with b Hermitian positive
    definite (JAX refuses b; this follows SciPy), reduced to a standard one through b's
    Cholesky factor. Only the `lower` (else upper) triangles are read."""
    if eigvals is not None:
        raise NotImplementedError("eigh: eigvals (a subset) is not supported; "
                                  "see jax.lax.linalg.eigh's subset_by_index")
    if b is None:
        (a,) = _inexact_args(a)
        v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False)
        return w if eigvals_only else (w, v)
    if type not in _GENERALIZED:
        raise ValueError(f"eigh: type must be 1, 2 or 3, got {type!r}")
    a, b = _same_float(a, b)
    if b.shape != a.shape:
        raise ValueError(f"eigh: a {a.shape} and b {b.shape} must have the same shape")
    low = lax_linalg.cholesky(_from_triangle(b, lower), symmetrize_input=False)
    a = _from_triangle(a, lower)
    solve = lambda x, **kw: lax_linalg.triangular_solve(  # noqa: E731
        low, x, left_side=True, lower=True, **kw)
    if _GENERALIZED[type] == "inverse":   # L^-1 A L^-H = L^-1 (L^-1 A^H)^H
        c = solve(jnp.conj(jnp.swapaxes(solve(jnp.conj(jnp.swapaxes(a, -1, -2))), -1, -2)))
    else:
        c = jnp.conj(jnp.swapaxes(low, -1, -2)) @ a @ low
    y, w = lax_linalg.eigh(c)
    if eigvals_only:
        return w
    x = low @ y if type == 3 else solve(y, transpose_a=True, conjugate_a=True)
    return w, x


def _from_triangle(x: Array, lower: bool) -> Array:
    """The Hermitian matrix one triangle of x spells."""
    part = jnp.tril(x, -1) if lower else jnp.triu(x, 1)
    diagonal = jnp.real(jnp.diagonal(x, axis1=-2, axis2=-1)).astype(x.dtype)
    return part + jnp.conj(jnp.swapaxes(part, -1, -2)) + diagonal[..., None] * jnp.eye(
        x.shape[-1], dtype=x.dtype)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    return jnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


_SCIPY_QR_MODES = ("full", "economic", "r")


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """(q, r) in SciPy's modes: 'full' (q square), 'economic', or (r,) alone with 'r'."""
    if pivoting:
        raise NotImplementedError("qr: pivoting is not supported")
    if mode not in _SCIPY_QR_MODES:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact_args(a)
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


# Higham's Pade approximants of exp: (degree, theta, coefficients b_0..b_degree). theta is
# the largest 1-norm for which the degree meets the unit roundoff of the dtype.
_PADE = {4: (7, 3.925724783138660, (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0,
                                    1512.0, 56.0, 1.0)),
         8: (13, 5.371920351148152,
             (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
              1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
              33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0))}


def _pade(a: Array, degree: int, b: tuple) -> tuple[Array, Array]:
    """(U, V): the odd and even parts of the degree's Pade numerator at a."""
    eye = jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    powers = [eye, a2]
    while len(powers) < (4 if degree == 13 else degree // 2 + 1):
        powers.append(powers[-1] @ a2)
    if degree == 13:   # Higham's grouping: A^6 times a degree-6 part, plus the rest
        a4, a6 = powers[2], powers[3]
        u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
        return u, v
    u = a @ sum(b[2 * i + 1] * p for i, p in enumerate(powers))
    v = sum(b[2 * i] * p for i, p in enumerate(powers))
    return u, v


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """exp of square matrices: a Pade approximant (degree 7 in float32, 13 in float64)
    of A / 2^s, squared s times, s from A's 1-norm (at most max_squarings). The
    squarings past s are skipped with a select, so the program has no data-dependent
    shape and differentiates as written."""
    (a,) = _inexact_args(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expm needs square matrices in the last two axes, got shape {a.shape}")
    degree, theta, b = _PADE[8 if a.dtype.itemsize == 8 else 4]
    norm1 = jnp.max(jnp.sum(jnp.abs(a), axis=-2), axis=-1)
    steps = jnp.clip(jnp.ceil(jnp.log2(norm1 / theta)), 0, max_squarings)
    steps = jnp.where(jnp.isfinite(steps), steps, 0)
    scaled = a / jnp.expand_dims(2.0 ** steps, (-1, -2)).astype(a.dtype)
    u, v = _pade(scaled, degree, b)
    r = jnp.linalg.solve(v - u, v + u)
    for i in range(max_squarings):
        r = jnp.where(jnp.expand_dims(i < steps, (-1, -2)), r @ r, r)
    return r


# structured and special matrices (apiscipy)
from jaxlab.scipy.linalg_special_matrices import *  # noqa: E402,F401,F403
