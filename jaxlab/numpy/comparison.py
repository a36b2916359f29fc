"""Whole-array comparisons: isclose, allclose, array_equal, array_equiv (JAX's rules:
infinities are close only to themselves, NaN only under equal_nan)."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.numpy import ufuncs as uf
from jaxlab.numpy._util import asarray_, broadcast_shapes, promote_args
from jaxlab.numpy.reductions import all as all_


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Array:
    """|a - b| <= atol + rtol * |b| elementwise, in the promoted dtype; exact
    equality for integers and booleans."""
    a, b = promote_args(a, b)
    if not a.jdtype.is_float:
        return uf.equal(a, b)
    close = uf.less_equal(uf.abs(a - b), atol + rtol * uf.abs(b))
    a_inf, b_inf = uf.isinf(a), uf.isinf(b)
    out = uf.where(a_inf | b_inf, a_inf & b_inf & uf.equal(a, b), close)
    if equal_nan:
        out = out | (uf.isnan(a) & uf.isnan(b))
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> Array:
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Array:
    """Same shape and equal elements (a 0-d bool array, as in JAX)."""
    a1, a2 = asarray_(a1), asarray_(a2)
    if a1.shape != a2.shape:
        return asarray_(False)
    return _all_equal(a1, a2, equal_nan)


def array_equiv(a1: Any, a2: Any) -> Array:
    """Equal after broadcasting to one shape (TypeError when they do not, as JAX)."""
    a1, a2 = asarray_(a1), asarray_(a2)
    try:
        broadcast_shapes(a1.shape, a2.shape)
    except ValueError as exc:
        raise TypeError(f"array_equiv got incompatible shapes for broadcasting: "
                        f"{a1.shape}, {a2.shape}") from exc
    return _all_equal(a1, a2, False)


def _all_equal(a1: Array, a2: Array, equal_nan: bool) -> Array:
    a1, a2 = promote_args(a1, a2)
    eq = uf.equal(a1, a2)
    if equal_nan and a1.jdtype.is_float:
        eq = eq | (uf.isnan(a1) & uf.isnan(a2))
    return all_(eq)


__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]
