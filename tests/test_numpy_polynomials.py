"""jaxlab.numpy's polynomial functions, vectorize/matvec/vecmat and apply_along_axis/
apply_over_axes, against JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

X = np.arange(6.0, dtype=np.float32)
Y = X ** 2 - 3 * X + 1
P3 = np.array([1.0, 2, 3, 4], np.float32)

CASES = [
    ("poly", (np.array([1.0, 2, 3]),), {}),
    ("polyadd", (np.array([1, 2]), np.array([1.0, 2, 3])), {}),
    ("polysub", (np.array([1, 2]), np.array([1, 2, 3])), {}),
    ("polyder", (P3, 2), {}),
    ("polyint", (np.array([3.0, 2, 1]),), {"m": 2, "k": np.array([1.0, 2])}),
    ("polyint", (np.array([3, 2, 1]),), {"k": 3.0}),
    ("polymul", (np.array([0.0, 1, 2]), np.array([1.0, 3])), {"trim_leading_zeros": True}),
    ("polydiv", (np.array([1.0, 3, 5, 2]), np.array([2.0, 1])), {}),
    ("polyval", (np.array([1, 2, 3]), np.array([0, 1, 2])), {}),
    ("polyval", (P3, np.float32(1.5)), {}),
    ("vander", (np.array([1, 2, 3]),), {}),
    ("vander", (np.array([1.0, 2, 3]), 2), {"increasing": True}),
    ("polyfit", (X, Y, 2), {}),
    ("polyfit", (X, Y, 1), {"full": True}),
    ("polyfit", (X, Y, 1), {"w": X + 1, "cov": True}),
    ("polyfit", (X, np.stack([Y, 2 * Y], 1), 1), {}),
    ("matvec", (np.ones((5, 2, 3), np.float32), X[:3]), {}),
    ("vecmat", (np.array([1j, 2], np.complex64), np.ones((2, 3), np.float32)), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(backend, name, args, kwargs):
    expected = getattr(jnp_ref, name)(*args, **kwargs)
    actual = getattr(jnp, name)(*args, **kwargs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        assert_close(a, e, rtol=3e-5, atol=3e-5)


def test_roots(backend):
    """The companion matrix's eigenvalues: on the cpu device, as JAX's eigvals is there
    only (NotImplementedError elsewhere, as JAX on GPU)."""
    p = np.array([0.0, 1, -3, 2, 0], np.float32)
    if backend != "cpu":
        with pytest.raises(NotImplementedError):
            jnp.roots(p)
        return
    found = jnp.roots(p)
    assert found.dtype == jnp_ref.roots(p).dtype
    assert_close(np.sort_complex(np.asarray(found)), np.sort_complex(jnp_ref.roots(p)),
                 atol=1e-5)


def test_vectorize_and_apply(backend):
    cube = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    dot = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
    assert_close(dot(cube, X[:4]), np.sum(cube * X[:4], -1))
    pair = jnp.vectorize(lambda x, y: (x + y, x * y))(X[:3], 2.0)
    assert_close(pair[1], X[:3] * 2)
    assert_close(jnp.apply_along_axis(lambda v: jnp.outer(v, v), 1, cube),
                 jnp_ref.apply_along_axis(lambda v: jnp_ref.outer(v, v), 1, cube))
    assert_close(jnp.apply_over_axes(jnp.sum, cube, [0, 2]),
                 jnp_ref.apply_over_axes(jnp_ref.sum, cube, [0, 2]))
    assert_close(jaxlab.grad(lambda p: jnp.sum(jnp.polyval(p, X)))(P3),
                 jax.grad(lambda p: jnp_ref.sum(jnp_ref.polyval(p, X)))(P3))
    assert_close(jaxlab.jit(jnp.polymul)(P3, P3), jnp_ref.polymul(P3, P3))


_DOT = jnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")


@pytest.mark.parametrize("call,error", [
    (lambda: jnp.polyder(P3, -1), ValueError),
    (lambda: jnp.polyint(P3, m=2, k=np.ones(3)), ValueError),
    (lambda: jnp.polyfit(X, Y, -1), ValueError),
    (lambda: jnp.polyfit(X, Y[:4], 1), TypeError),
    (lambda: jnp.poly(np.ones((2, 3))), ValueError),
    (lambda: jnp.polyval([1, 2], 2), TypeError),
    (lambda: jnp.vander(np.ones((2, 2))), ValueError),
    (lambda: jnp.roots(np.ones((2, 2))), ValueError),
    (lambda: _DOT(np.ones((3, 4)), np.ones(5)), ValueError),
    (lambda: _DOT(np.ones(()), np.ones(4)), ValueError),
    (lambda: jnp.vectorize(lambda a: a, signature="bad")(1.0), ValueError),
    (lambda: jnp.vectorize(lambda a: a, signature="(n)->()")(np.ones(3)), ValueError),
    (lambda: jnp.matvec(np.ones(3), np.ones(3)), ValueError),
], ids=["polyder-m", "polyint-k", "deg", "lengths", "poly-shape", "list", "vander-rank",
        "roots-rank", "core-size", "core-rank", "signature", "output-core", "matvec"])
def test_errors(call, error):
    with pytest.raises(error):
        call()
