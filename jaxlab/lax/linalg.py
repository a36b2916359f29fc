"""jax.lax.linalg: factorizations and triangular solves on (batched) matrices."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core.linalg import cholesky_p, eig_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p
from jaxlab.lax import linalg_complex
from jaxlab.numpy.complex_functions import conj
from jaxlab.numpy._util import asarray_
from jaxlab.numpy.shape_ops import transpose
from jaxlab.numpy.ufuncs import add, multiply

__all__ = ["cholesky", "eig", "eigh", "lu", "qr", "svd", "triangular_solve"]


def _check_square(name: str, x: Array) -> None:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} needs square matrices in the last two axes, got shape "
                         f"{x.shape}")


def _swap_last(x: Array) -> Array:
    """x with its last two axes swapped (a view)."""
    return transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Array:
    """Lower L with L L^T = x; NaNs where x is not positive definite. Symmetrizing
    uses both triangles, (x + x^T) / 2, as JAX does; for real x the routine does it as
    it reads its input (a parameter: no kernel of its own before it)."""
    x = asarray_(x)
    if symmetrize_input and (x.jdtype.is_complex or not _is_square(x)):
        x = _symmetrized(x)   # first, as JAX: a non-square x fails in the add (TypeError)
    _check_square("cholesky", x)
    if x.jdtype.is_complex:
        return linalg_complex.cholesky(x)
    return cholesky_p.bind(x, symmetrize_input=symmetrize_input)


def _is_square(x: Array) -> bool:
    return x.ndim >= 2 and x.shape[-1] == x.shape[-2]


def lu(x: Any) -> tuple[Array, Array, Array]:
    """LU with partial pivoting: (lu, pivots, permutation) with x[perm] = L U,
    L unit lower (below lu's diagonal) and U upper (on and above it)."""
    x = asarray_(x)
    return linalg_complex.lu(x) if x.jdtype.is_complex else lu_p.bind(x)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """Solve op(a) x = b (left_side) or x op(a) = b with a triangular; op
    transposes when transpose_a and conjugates when conjugate_a (nothing for real dtypes)."""
    a, b = asarray_(a), asarray_(b)
    if a.jdtype.is_complex or b.jdtype.is_complex:
        return linalg_complex.triangular_solve(
            a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                   transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def _symmetrized(x: Array) -> Array:
    """(x + x^H) / 2: Hermitian (symmetric for real x)."""
    return multiply(add(x, conj(_swap_last(x))), 0.5)


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: Any = None) -> tuple[Array, Array]:
    """(v, w): eigenvectors as columns, eigenvalues ascending. Symmetrizing uses both
    triangles, (x + x^T) / 2, as JAX does; else only the `lower` (or upper) one is read."""
    x = asarray_(x)
    _check_square("eigh", x)
    if symmetrize_input:
        x = _symmetrized(x)
    v, w = (linalg_complex.eigh(x, lower) if x.jdtype.is_complex
            else eigh_p.bind(x, lower=lower))
    if subset_by_index is None:
        return v, w
    lo, hi = _subset(subset_by_index, x.shape[-1])
    return v[..., :, lo:hi], w[..., lo:hi]


def _subset(subset_by_index: Any, n: int) -> tuple[int, int]:
    """(lo, hi): the eigenvalues with indices lo <= i < hi (ascending order)."""
    try:
        lo, hi = (int(i) for i in subset_by_index)
    except (TypeError, ValueError):
        raise ValueError(f"subset_by_index must be a pair of integers, got "
                         f"{subset_by_index!r}") from None
    if not 0 <= lo < hi <= n:
        raise ValueError(f"subset_by_index {(lo, hi)} must satisfy 0 <= lo < hi <= {n}")
    return lo, hi


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: Any = None, algorithm: Any = None) -> Any:
    """(u, s, vh) with x = u @ diag(s) @ vh, s descending; s alone without compute_uv."""
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported")
    x = asarray_(x)
    if x.ndim < 2:
        raise ValueError(f"svd needs at least 2 axes, got shape {x.shape}")
    factor = linalg_complex.svd if x.jdtype.is_complex else (
        lambda a, full_matrices, compute_uv: svd_p.bind(
            a, full_matrices=full_matrices, compute_uv=compute_uv))
    if not compute_uv:
        (s,) = factor(x, full_matrices=full_matrices, compute_uv=False)
        return s
    s, u, vh = factor(x, full_matrices=full_matrices, compute_uv=True)
    return u, s, vh


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: Any = None) -> tuple[Array, Array]:
    """Householder QR: (q, r) with x = q @ r, r upper triangular."""
    if pivoting:
        raise NotImplementedError("qr: pivoting is not supported")
    x = asarray_(x)
    if x.ndim < 2:
        raise ValueError(f"qr needs at least 2 axes, got shape {x.shape}")
    if x.jdtype.is_complex:
        return linalg_complex.qr(x, full_matrices)
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    return q, r


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: Any = None) -> list[Array]:
    """[w, vl, vr] (those asked for) of general square matrices, complex: vl^H x = w vl^H,
    x vr = vr w, columns of norm 1. On the cpu device only, as JAX; only the eigenvalues
    have a derivative (enable_eigvec_derivs is not supported)."""
    if enable_eigvec_derivs:
        raise NotImplementedError("eig: enable_eigvec_derivs is not supported")
    x = asarray_(x)
    _check_square("eig", x)
    return list(eig_p.bind(x, compute_left_eigenvectors=compute_left_eigenvectors,
                           compute_right_eigenvectors=compute_right_eigenvectors))
