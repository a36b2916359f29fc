"""isclose/allclose/array_equal/array_equiv and 1-D convolve/correlate against JAX."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

INF, NAN = np.inf, np.nan
A = np.array([1.0, INF, -INF, NAN, 0.0, 1e-9, 100.0], np.float32)
B = np.array([1.0 + 1e-6, INF, INF, NAN, 1e-8, 0.0, 100.001], np.float32)


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-7},
                                    {"rtol": 1e-3}])
def test_isclose_and_allclose(backend, kwargs):
    assert_close(jnp.isclose(A, B, **kwargs), jjnp.isclose(A, B, **kwargs))
    assert bool(jnp.allclose(A, B, **kwargs)) == bool(jjnp.allclose(A, B, **kwargs))
    assert bool(jnp.allclose(A[:1], B[:1], **kwargs)) == bool(jjnp.allclose(A[:1], B[:1], **kwargs))


def test_isclose_on_integers_is_equality(backend):
    x, y = np.array([1, 2, 3], np.int32), np.array([1, 3, 3], np.int32)
    assert_close(jnp.isclose(x, y), jjnp.isclose(x, y))


@pytest.mark.parametrize("a,b", [(A, A), (A[:3], A[:3].copy()), (A, B), (A[:2], A[:3]),
                                 (np.ones((2, 3)), np.ones(3))])
def test_array_equal_and_equiv(backend, a, b):
    for kwargs in ({}, {"equal_nan": True}):
        assert bool(jnp.array_equal(a, b, **kwargs)) == bool(jjnp.array_equal(a, b, **kwargs))
    if a.shape[-1] == b.shape[-1]:
        assert bool(jnp.array_equiv(a, b)) == bool(jjnp.array_equiv(a, b))
    else:
        with pytest.raises(TypeError, match="broadcasting"):
            jjnp.array_equiv(a, b)
        with pytest.raises(TypeError, match="broadcasting"):
            jnp.array_equiv(a, b)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(6, 3), (3, 6), (4, 4), (5, 1)])
def test_convolve_and_correlate(backend, name, mode, n, m):
    a = np.linspace(-1, 2, n).astype(np.float32)
    v = np.array([1.0, -2.0, 0.5, 3.0, 7.0, -1.5][:m], np.float32)
    assert_close(getattr(jnp, name)(a, v, mode), getattr(jjnp, name)(a, v, mode), rtol=1e-5)


def test_convolve_gradient_and_jit(backend):
    a, v = np.float32([1.0, 2.0, -1.0, 0.5]), np.float32([0.5, 1.0, -2.0])
    loss = lambda m: lambda x, k: (m.convolve(x, k, "same") ** 2).sum()
    for argnum in (0, 1):
        assert_close(jaxlab.jit(jaxlab.grad(loss(jnp), argnum))(a, v),
                     jax.grad(loss(jjnp), argnum)(a, v), rtol=1e-5)


def test_convolve_rejects_what_jax_rejects():
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode"):
        jnp.convolve(np.ones(3), np.ones(2), mode="wrap")
