"""Polynomials as 1-D coefficient arrays, highest power first (NumPy's poly1d order):
poly, polyadd, polysub, polymul, polydiv, polyder, polyint, polyval, polyfit, roots,
vander."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlab.array import Array
from jaxlab.core.trace import Tracer
from jaxlab.ir.dtypes import DType, to_inexact
from jaxlab.numpy import reductions, ufuncs
from jaxlab.numpy._util import arraylike_, asarray_, astype_, promote_dtypes
from jaxlab.numpy.convolution import convolve
from jaxlab.numpy.creation import arange, eye, ones, zeros
from jaxlab.numpy.linalg import inv
from jaxlab.numpy.linalg_decompositions import eigvals, lstsq
from jaxlab.numpy.products import outer
from jaxlab.numpy.shape_ops import concatenate, flip, pad, reshape, stack

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyval", "polyfit", "roots", "vander"]


def _coefficients(name: str, p: Any, position: int = 0) -> Array:
    c = arraylike_(name, p, position)
    if c.ndim != 1:
        raise ValueError(f"{name}: expected a rank-1 array of coefficients, got shape "
                         f"{c.shape}")
    return c


def _inexact(x: Array) -> Array:
    return astype_(x, to_inexact(x.jdtype))


def _leading_zeros(name: str, c: Array) -> int:
    """How many leading coefficients are zero (needs concrete values: it sets a shape)."""
    if isinstance(c, Tracer):
        raise TypeError(f"{name}: stripping zero coefficients needs concrete values, not a "
                        f"traced array (its result's shape depends on them).{c.provenance()}")
    nonzero = np.flatnonzero(np.asarray(c))
    return int(nonzero[0]) if nonzero.size else c.shape[0]


def _strip(name: str, c: Array) -> Array:
    return c[_leading_zeros(name, c):]


def poly(seq_of_zeros: Any) -> Array:
    """The monic polynomial whose roots are seq_of_zeros (or a square matrix's
    eigenvalues)."""
    z = arraylike_("poly", seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        z = eigvals(z)
    elif z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    z = _inexact(z)
    out = ones(1, z.jdtype)
    for k in range(z.shape[0]):   # multiply in (x - z_k)
        out = convolve(out, stack([ones((), z.jdtype), -z[k]]))
    return out


def _aligned(name: str, a1: Any, a2: Any) -> tuple[Array, Array]:
    """The two coefficient arrays at one length (the shorter padded in front)."""
    a, b = _coefficients(name, a1), _coefficients(name, a2, 1)
    a, b = (astype_(v, promote_dtypes(a, b)) for v in (a, b))
    n = max(a.shape[0], b.shape[0])
    return pad(a, (n - a.shape[0], 0)), pad(b, (n - b.shape[0], 0))


def polyadd(a1: Any, a2: Any) -> Array:
    """The sum of two polynomials."""
    a, b = _aligned("polyadd", a1, a2)
    return a + b


def polysub(a1: Any, a2: Any) -> Array:
    """The difference of two polynomials."""
    a, b = _aligned("polysub", a1, a2)
    return a - b


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Array:
    """The product of two polynomials (a convolution of their coefficients)."""
    a, b = _coefficients("polymul", a1), _coefficients("polymul", a2, 1)
    dt = to_inexact(promote_dtypes(a, b))
    a, b = astype_(a, dt), astype_(b, dt)
    if trim_leading_zeros:
        a, b = _strip("polymul", a), _strip("polymul", b)
    return convolve(a, b)


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """(quotient, remainder) of polynomial long division; the remainder keeps u's length
    unless trim_leading_zeros."""
    num, den = _coefficients("polydiv", u), _coefficients("polydiv", v, 1)
    dt = to_inexact(promote_dtypes(num, den))
    num, den = astype_(num, dt), astype_(den, dt)
    n, m = num.shape[0], den.shape[0]
    quotient = []
    for i in range(max(n - m + 1, 0)):
        factor = num[i] / den[0]
        quotient.append(factor)
        num = num - factor * pad(den, (i, n - m - i))
    q = stack(quotient) if quotient else zeros(1, dt)
    return q, (_strip("polydiv", num) if trim_leading_zeros else num)


def polyder(p: Any, m: int = 1) -> Array:
    """The m-th derivative of polynomial p."""
    c = _inexact(_coefficients("polyder", p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in range(m):
        n = c.shape[0]
        c = c[:-1] * arange(n - 1, 0, -1, dtype=c.jdtype) if n > 1 else zeros(0, c.jdtype)
    return c


def polyint(p: Any, m: int = 1, k: Any = None) -> Array:
    """The m-th antiderivative of p; k[i] is the constant added by the i-th integration
    (k: a scalar for all of them, or m values; zero by default)."""
    c = _inexact(_coefficients("polyint", p))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    constants = zeros(m, c.jdtype) if k is None else astype_(asarray_(k), c.jdtype)
    if constants.ndim == 0 or constants.shape == (1,):
        constants = reshape(constants, (1,)) * ones(m, c.jdtype)
    if constants.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in range(m):
        n = c.shape[0]
        c = concatenate([c / arange(n, 0, -1, dtype=c.jdtype), constants[i:i + 1]])
    return c


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Array:
    """p evaluated at x by Horner's rule (`unroll` has nothing to unroll here)."""
    c = _coefficients("polyval", p)
    at = arraylike_("polyval", x, 1)
    dt = promote_dtypes(c, at)
    c, at = astype_(c, dt), astype_(at, dt)
    out = ufuncs.multiply(at, 0)
    for i in range(c.shape[0]):
        out = out * at + c[i]
    return out


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Array:
    """The Vandermonde matrix of x: columns x**(N-1), ..., x**0 (reversed if
    increasing)."""
    v = arraylike_("vander", x)
    if v.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = v.shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    dt = v.jdtype if not v.jdtype.is_bool else DType.int32
    columns = [ones(v.shape, dt)] + [astype_(v, dt)] * max(n - 1, 0)
    powers = reductions.cumprod(stack(columns[:n], axis=1), axis=1) if n else \
        zeros((v.shape[0], 0), dt)
    return powers if increasing else flip(powers, 1)


def _fit_inputs(x: Any, y: Any, deg: int, w: Any) -> tuple[Array, Array, Array | None]:
    if deg < 0:
        raise ValueError("expected deg >= 0")
    xs, ys = arraylike_("polyfit", x), arraylike_("polyfit", y, 1)
    if xs.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xs.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ys.ndim < 1 or ys.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xs.shape[0] != ys.shape[0]:
        raise TypeError("expected x and y to have same length")
    weights = None
    if w is not None:
        weights = arraylike_("polyfit", w, 5)
        if weights.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if weights.shape[0] != ys.shape[0]:
            raise TypeError("expected w and y to have the same length")
    dt = to_inexact(promote_dtypes(xs, ys))
    return astype_(xs, dt), astype_(ys, dt), None if weights is None else astype_(weights, dt)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: bool = False) -> Array | tuple[Array, ...]:
    """Least-squares polynomial of degree deg through (x, y) (y's columns fitted
    separately when 2-D); full=True adds (residuals, rank, singular values, rcond),
    cov=True the coefficients' covariance."""
    xs, ys, weights = _fit_inputs(x, y, deg, w)
    order = deg + 1
    rcond = xs.shape[0] * float(np.finfo(xs.dtype).eps) if rcond is None else rcond
    lhs, rhs = vander(xs, order), ys
    if weights is not None:
        lhs = lhs * weights[:, None]
        rhs = rhs * (weights if ys.ndim == 1 else weights[:, None])
    scale = ufuncs.sqrt(reductions.sum(lhs * lhs, axis=0))   # columns of one size
    lhs = lhs / scale
    solution, residuals, rank, singular = lstsq(lhs, rhs, rcond)
    coefficients = (solution.T / scale).T
    if full:
        return coefficients, residuals, rank, singular, asarray_(rcond)
    if not cov:
        return coefficients
    base = inv(lhs.T @ lhs) / outer(scale, scale)
    factor = residuals / (xs.shape[0] - order) if cov != "unscaled" else 1.0
    if ys.ndim == 1:
        return coefficients, base * factor
    return coefficients, base[:, :, None] * factor


def roots(p: Any, *, strip_zeros: bool = True) -> Array:
    """The roots of p (complex): the eigenvalues of its companion matrix. Leading zeros
    are dropped, trailing ones give zero roots (strip_zeros=False keeps them in, for
    traced p: then a zero leading coefficient gives NaN roots)."""
    c = arraylike_("roots", p)
    if c.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    c = _inexact(c)
    zero_roots = 0
    if strip_zeros:
        c = _strip("roots", c)
        zero_roots = _leading_zeros("roots", flip(c, 0))
        c = c[:c.shape[0] - zero_roots]
    n = c.shape[0] - 1
    complex_dt = DType.complex128 if c.jdtype is DType.float64 else DType.complex64
    if n < 1:
        return zeros(zero_roots, complex_dt)
    first_row = reshape(-c[1:] / c[0], (1, n))
    companion = concatenate([first_row, eye(n - 1, n, dtype=c.jdtype)], axis=0)
    found = astype_(eigvals(companion), complex_dt)
    return concatenate([found, zeros(zero_roots, complex_dt)]) if zero_roots else found
