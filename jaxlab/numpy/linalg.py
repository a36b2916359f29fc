"""jax.numpy.linalg: solves, inverses and determinants through one LU
factorization (the lu routine) and triangular solves; norms as reductions."""
from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.core.elementwise import pow_p
from jaxlab.ir.dtypes import to_inexact
from jaxlab.lax import linalg as lax_linalg
from jaxlab.lax.linalg import _check_square, _swap_last
from jaxlab.numpy._util import asarray_, astype_, broadcast_shapes, broadcast_to_, \
    canonical_axes, promote_args, promote_dtypes
from jaxlab.numpy.complex_functions import conj, real
from jaxlab.numpy.creation import arange, eye, zeros_like
from jaxlab.numpy.products import einsum, matmul
from jaxlab.numpy.reductions import max as amax, min as amin, prod, sum as asum
from jaxlab.numpy.shape_ops import expand_dims, squeeze
from jaxlab.numpy.ufuncs import abs as absolute, equal, log, multiply, not_equal, sign, \
    sqrt, subtract, where

__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "norm", "SlogdetResult"]


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


def _inexact(*args: Any) -> list[Array]:
    """JAX's promote_dtypes_inexact: one common dtype, integers become floats."""
    dt = promote_dtypes(*args)
    return [asarray_(a, to_inexact(dt)) for a in args]


def _square_inexact(a: Any, name: str) -> Array:
    (x,) = _inexact(a)
    _check_square(name, x)
    return x


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    (x,) = _inexact(a)
    lower = lax_linalg.cholesky(x, symmetrize_input=symmetrize_input)
    return conj(_swap_last(lower)) if upper else lower   # U = L^H


def _permute_rows(perm: Array, b: Array) -> Array:
    """b[perm] as P @ b with P[i, j] = (perm[i] == j): the one-hot rows are
    computed inside the matmul kernel, so the gather costs no kernel of its own."""
    one_hot = equal(expand_dims(perm, -1), arange(perm.shape[-1]))
    return matmul(astype_(one_hot, b.jdtype), b)


def _lu_solve(lu: Array, perm: Array, b: Array) -> Array:
    """A x = b with P A = L U: forward substitution with L, then back with U.
    lu and perm may cover fewer batch axes than b: they broadcast (views)."""
    batch = b.shape[:-2]
    lu = broadcast_to_(lu, batch + lu.shape[-2:])
    pb = _permute_rows(broadcast_to_(perm, batch + perm.shape[-1:]), b)
    y = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def _factor(a: Array) -> tuple[Array, Array]:
    lu, _, perm = lax_linalg.lu(a)
    return lu, perm


# The lu primitive has no derivative, so solve, det and slogdet carry their own
# rules, each reusing one factorization: d(A^-1 B) = A^-1 (dB - dA X) here.

@custom_jvp
def _solve(a: Array, b: Array) -> Array:
    return _lu_solve(*_factor(a), b)


@_solve.defjvp
def _solve_jvp(primals: tuple, tangents: tuple) -> tuple[Array, Array]:
    (a, b), (da, db) = primals, tangents
    lu, perm = _factor(a)
    x = _lu_solve(lu, perm, b)
    return x, _lu_solve(lu, perm, subtract(db, matmul(da, x)))


def solve(a: Any, b: Any) -> Array:
    """x with a @ x = b; b is (n,) or (..., n, k), batch axes broadcast."""
    x, y = _inexact(a, b)
    _check_square("solve", x)
    vector = y.ndim == 1
    rhs = expand_dims(y, -1) if vector else y
    if rhs.ndim < 2 or rhs.shape[-2] != x.shape[-1]:
        raise ValueError(f"solve: a of shape {x.shape} and b of shape {y.shape} do not match "
                         f"(b must be (n,) or (..., n, k) with n = {x.shape[-1]})")
    batch = broadcast_shapes(x.shape[:-2], rhs.shape[:-2])
    out = _solve(x, broadcast_to_(rhs, batch + rhs.shape[-2:]))   # a is factored unbroadcast
    return squeeze(out, -1) if vector else out


def inv(a: Any) -> Array:
    x = _square_inexact(a, "inv")
    return solve(x, broadcast_to_(eye(x.shape[-1], dtype=x.jdtype), x.shape))


def _det_factors(lu: Array, pivots: Array) -> tuple[Array, Array]:
    """U's diagonal and, beside it, -1 where LU swapped rows (else 1): det is the
    product of both, so the permutation's sign costs no pass of its own."""
    swapped = not_equal(pivots, arange(pivots.shape[-1]))
    return einsum("...ii->...i", lu), astype_(where(swapped, -1.0, 1.0), lu.jdtype)


def _det_of(lu: Array, pivots: Array) -> Array:
    diag, signs = _det_factors(lu, pivots)
    return prod(multiply(diag, signs), axis=-1)


def _slogdet_of(lu: Array, pivots: Array) -> tuple[Array, Array]:
    diag, signs = _det_factors(lu, pivots)
    return prod(multiply(sign(diag), signs), axis=-1), asum(log(absolute(diag)), axis=-1)


def _from_lu(name: str, of: Callable, tangent: Callable) -> custom_jvp:
    """a -> of(lu(a)), differentiated with d log|det A| = tr(A^-1 dA) from the same LU:
    tangent(out, that trace) gives the output's tangent."""
    def fn(a: Array) -> Any:
        lu, pivots, _ = lax_linalg.lu(a)
        return of(lu, pivots)
    fn.__name__ = fn.__qualname__ = name   # as jaxprs show it
    fn = custom_jvp(fn)

    @fn.defjvp
    def fn_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (a,), (da,) = primals, tangents
        lu, pivots, perm = lax_linalg.lu(a)
        out = of(lu, pivots)
        return out, tangent(out, einsum("...ii->...", _lu_solve(lu, perm, da)))
    return fn


_det = _from_lu("det", _det_of, multiply)
def _slogdet_tangent(out: tuple[Array, Array], trace: Array) -> tuple[Array, Array]:
    """d log|det| = re tr(A^-1 dA); a complex sign turns by i im tr(A^-1 dA) (as JAX)."""
    sign_, _ = out
    if not trace.jdtype.is_complex:
        return zeros_like(sign_), trace
    turn = subtract(trace, astype_(real(trace), trace.jdtype))
    return multiply(turn, sign_), real(trace)


_slogdet = _from_lu("slogdet", _slogdet_of, _slogdet_tangent)


def det(a: Any) -> Array:
    return _det(_square_inexact(a, "det"))


def slogdet(a: Any) -> SlogdetResult:
    return SlogdetResult(*_slogdet(_square_inexact(a, "slogdet")))


# --- norms -------------------------------------------------------------------
Reduce = Callable[..., Array]
Norm = Callable[[Array, tuple[int, ...]], Array]   # keepdims=True over the axes


def _sum_squares(x: Array, axes: tuple[int, ...]) -> Array:
    if x.jdtype.is_complex:   # |z|^2
        x = absolute(x)
    return sqrt(asum(multiply(x, x), axis=axes, keepdims=True))


def _fold_abs(fold: Reduce) -> Norm:
    return lambda x, axes: fold(absolute(x), axis=axes, keepdims=True)


def _count_nonzero(x: Array, axes: tuple[int, ...]) -> Array:
    return asum(astype_(not_equal(x, 0), x.jdtype), axis=axes, keepdims=True)


def _p_norm(p: float) -> Norm:
    def power(x: Array, q: float) -> Array:
        return pow_p.bind(*promote_args(x, q))
    return lambda x, axes: power(asum(power(absolute(x), p), axis=axes, keepdims=True), 1 / p)


_VECTOR_NORMS = {None: _sum_squares, 2: _sum_squares, 1: _fold_abs(asum),
                 math.inf: _fold_abs(amax), -math.inf: _fold_abs(amin), 0: _count_nonzero}


def _induced(fold: Reduce, summed: int) -> Norm:
    """Max/min over one axis of the absolute sums over the other (ord 1: over
    rows, so per column; ord inf: over columns, per row)."""
    def norm_(x: Array, axes: tuple[int, ...]) -> Array:
        sums = asum(absolute(x), axis=axes[summed], keepdims=True)
        return fold(sums, axis=axes[1 - summed], keepdims=True)
    return norm_


_MATRIX_NORMS = {None: _sum_squares, "fro": _sum_squares, "f": _sum_squares,
                 1: _induced(amax, 0), -1: _induced(amin, 0),
                 math.inf: _induced(amax, 1), -math.inf: _induced(amin, 1)}


def _vector_norm(ord: Any) -> Norm:
    if ord in _VECTOR_NORMS:
        return _VECTOR_NORMS[ord]
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid order {ord!r} for a vector norm")
    return _p_norm(float(ord))


def _singular(fold: Reduce) -> Norm:
    """2 (largest), -2 (smallest) and 'nuc' (sum): folds of the singular values."""
    def norm_(x: Array, axes: tuple[int, ...]) -> Array:
        from jaxlab.numpy.linalg_decompositions import svdvals
        from jaxlab.numpy.shape_ops import moveaxis
        s = svdvals(moveaxis(x, axes, (-2, -1)))
        return expand_dims(fold(s, axis=-1), axes)
    return norm_


_MATRIX_NORMS.update({2: _singular(amax), -2: _singular(amin), "nuc": _singular(asum)})


def _matrix_norm(ord: Any) -> Norm:
    if ord not in _MATRIX_NORMS:
        raise ValueError(f"norm: invalid order {ord!r} for a matrix norm")
    return _MATRIX_NORMS[ord]


_BY_AXES = {1: _vector_norm, 2: _matrix_norm}


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Array:
    """Vector norms over one axis, matrix norms over two; with axis and ord None,
    the 2-norm of the flattened array."""
    (v,) = _inexact(x)
    axes = canonical_axes(axis, v.ndim)
    if axis is None and ord is None:
        fn = _sum_squares
    elif len(axes) in _BY_AXES:
        fn = _BY_AXES[len(axes)](ord)
    else:
        raise ValueError(f"norm: needs one axis (vector norm) or two (matrix norm), got "
                         f"axis={axis} for shape {v.shape}")
    out = fn(v, axes)
    return out if keepdims else squeeze(out, axes)


# the Array API's linalg names (products, gathers and norms; see linalg_products)
from jaxlab.numpy.linalg_products import (linalg_cross as cross,  # noqa: E402,F401
                                          linalg_diagonal as diagonal, linalg_trace as trace,
                                          matrix_norm, matrix_power,
                                          matrix_transpose, multi_dot, outer, tensordot,
                                          vecdot, vector_norm)

from jaxlab.numpy.linalg_decompositions import (EigResult, EighResult, QRResult,  # noqa: E402,F401
                                                SVDResult, eig, eigh, eigvals, eigvalsh,
                                                lstsq, matrix_rank, pinv, qr, svd, svdvals)
from jaxlab.numpy import linalg_decompositions as _decompositions  # noqa: E402

__all__ += _decompositions.__all__
__all__ += ["cross", "diagonal", "trace", "matmul", "matrix_norm", "matrix_power",
            "matrix_transpose", "multi_dot", "outer", "tensordot", "vecdot", "vector_norm"]
