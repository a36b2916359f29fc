"""jaxlab.test_util.check_grads: derivatives against central finite differences, as
jax.test_util has it (forward mode by jvp, reverse by vjp, up to any order)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from jaxlab.api import jvp, vjp
from jaxlab.tree_util import tree_flatten, tree_map

EPS = 1e-4
_DEFAULT_TOLERANCE = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2}


def _random_like(tree: Any, rng: np.random.Generator) -> Any:
    """Random normal directions with the shapes and dtypes of tree's leaves."""
    return tree_map(lambda x: rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype),
                    tree)


def _add(tree: Any, direction: Any, scale: float) -> Any:
    return tree_map(lambda x, d: np.asarray(x) + scale * d, tree, direction)


def _inner(a: Any, b: Any) -> float:
    leaves_a, leaves_b = tree_flatten(a)[0], tree_flatten(b)[0]
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(leaves_a, leaves_b)))


def _tolerance(tree: Any, given: float | None) -> float:
    if given is not None:
        return given
    dtypes = {np.asarray(x).dtype for x in tree_flatten(tree)[0]}
    return max(_DEFAULT_TOLERANCE.get(d, 1e-5) for d in dtypes) if dtypes else 1e-5


def _assert_close(name: str, actual: Any, expected: Any, atol: float, rtol: float) -> None:
    for a, e in zip(tree_flatten(actual)[0], tree_flatten(expected)[0]):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(e, np.float64),
                                   atol=atol, rtol=rtol, err_msg=f"{name} mismatch")


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float = EPS, seed: int = 0) -> None:
    """f_jvp(args, tangents)[1] against (f(x + eps v) - f(x - eps v)) / (2 eps)."""
    rng = np.random.default_rng(seed)
    tangent = _random_like(tuple(args), rng)
    _, out_tangent = f_jvp(tuple(args), tangent)
    above = f(*_add(tuple(args), tangent, eps))
    below = f(*_add(tuple(args), tangent, -eps))
    numeric = tree_map(lambda hi, lo: (np.asarray(hi, np.float64) - np.asarray(lo, np.float64))
                       / (2 * eps), above, below)
    tol = _tolerance(out_tangent, None)
    _assert_close("JVP", out_tangent, numeric, atol if atol is not None else tol,
                  rtol if rtol is not None else tol)


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float = EPS, seed: int = 0) -> None:
    """<u, J v> two ways: the vjp's J^T u against v, and u against numerical J v."""
    rng = np.random.default_rng(seed)
    out, pullback = f_vjp(*args)
    tangent = _random_like(tuple(args), rng)
    cotangent = _random_like(out, rng)
    above = f(*_add(tuple(args), tangent, eps))
    below = f(*_add(tuple(args), tangent, -eps))
    numeric = tree_map(lambda hi, lo: (np.asarray(hi, np.float64) - np.asarray(lo, np.float64))
                       / (2 * eps), above, below)
    ip_numeric = _inner(numeric, cotangent)
    ip_vjp = _inner(tuple(pullback(cotangent)), tangent)
    tol = _tolerance(out, None)
    _assert_close("VJP", ip_vjp, ip_numeric, atol if atol is not None else tol,
                  rtol if rtol is not None else tol)


def check_grads(f: Callable, args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Raise AssertionError unless f's derivatives up to `order` match finite
    differences in every mode ('fwd': jvp, 'rev': vjp)."""
    eps = EPS if eps is None else eps
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: unknown modes {sorted(unknown)}; use 'fwd' and 'rev'")
    args = tuple(args)

    def check(fun: Callable, level: int) -> None:
        if "fwd" in modes:
            check_jvp(fun, lambda p, t: jvp(fun, p, t), args, atol, rtol, eps)
            if level > 1:
                tangent = _random_like(args, np.random.default_rng(level))
                check(lambda *a: jvp(fun, a, tangent)[1], level - 1)
        if "rev" in modes:
            check_vjp(fun, lambda *a: vjp(fun, *a), args, atol, rtol, eps)
            if level > 1:
                out = fun(*args)
                cotangent = _random_like(out, np.random.default_rng(level))
                check(lambda *a: vjp(fun, *a)[1](cotangent), level - 1)
    check(f, order)


__all__ = ["check_grads", "check_jvp", "check_vjp"]
