"""jax.scipy.linalg basics over the factorizations jaxlab has: triangular solves,
Cholesky (upper by default, as SciPy), LU with its permutation matrix."""
from __future__ import annotations

from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax import linalg as lax_linalg
from jaxlab.numpy.linalg import det, inv, solve  # noqa: F401
from jaxlab.scipy.special import float_args

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor",
           "lu_solve", "solve", "inv", "det"]

_TRANSPOSED = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Array:
    """x with op(a) x = b, a triangular; b is (n,) or (n, k)."""
    a, b = _same_float(a, b)
    if trans not in _TRANSPOSED:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    vector = b.ndim == a.ndim - 1
    rhs = jnp.expand_dims(b, -1) if vector else b
    out = lax_linalg.triangular_solve(a, rhs, left_side=True, lower=lower,
                                      transpose_a=_TRANSPOSED[trans],
                                      unit_diagonal=unit_diagonal)
    return jnp.squeeze(out, -1) if vector else out


def _same_float(a: Any, b: Any) -> tuple[Array, Array]:
    """a and b in their promoted float dtype, each keeping its own shape."""
    dtype = jnp.result_type(a, b)
    if not jnp.issubdtype(dtype, jnp.floating):
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
    """x with a x = b from cho_factor(a): two triangular solves."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, y, trans=1 if lower else 0, lower=lower)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple:
    """(lu, piv): L (unit, below the diagonal) and U packed, and LAPACK's row swaps."""
    (a,) = float_args(a)
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def lu_solve(lu_and_piv: tuple, b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Array:
    """x with a x = b from lu_factor(a) (trans=0 only)."""
    if trans != 0:
        raise NotImplementedError("lu_solve: only trans=0 is supported")
    packed, pivots = lu_and_piv
    n = packed.shape[-1]
    perm = list(range(n))
    for i, p in enumerate(jnp.asarray(pivots).tolist()):   # swaps -> a permutation
        perm[i], perm[p] = perm[p], perm[i]
    _, b = _same_float(packed, b)
    y = solve_triangular(packed, b[jnp.asarray(perm)], lower=True, unit_diagonal=True)
    return solve_triangular(packed, y, lower=False)


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> tuple:
    """(p, l, u) with a = p @ l @ u; with permute_l, (p @ l, u)."""
    (a,) = float_args(a)
    packed, _, perm = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l_part = jnp.tril(packed[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
    u_part = jnp.triu(packed[..., :k, :])
    p = jnp.swapaxes(jnp.eye(m, dtype=a.dtype)[perm], -1, -2)
    return (p @ l_part, u_part) if permute_l else (p, l_part, u_part)
