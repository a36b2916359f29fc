"""jax.scipy.linalg's structured matrices and jax.scipy.integrate.trapezoid against JAX,
on every device."""
from __future__ import annotations

import jax
import jax.scipy as jsp
import numpy as np
import pytest

import jaxlab
from jaxlab import scipy as lsp
from tests.conftest import assert_close

F = np.float32
C, R = F([1.0, 2.0, -3.0]), F([9.0, 5.0, 0.5, 4.0])

CASES = [
    ("toeplitz", (C,)), ("toeplitz", (C, R)), ("toeplitz", (F([[1, 2], [3, 4]]),)),
    ("hankel", (C,)), ("hankel", (np.int32([1, 2, 3]), np.int32([7, 8]))),
    ("circulant", (C,)), ("block_diag", (np.int32([[1, 2]]), F([[3], [4]]), F(5))),
    ("companion", (F([2.0, 3.0, 4.0, -1.0]),)), ("companion", (F([[1, 2, 3], [2, 0, 1]]),)), ("leslie", (F([1, 2, 3]), F([0.5, 0.6]))),
    ("pascal", (4,)), ("pascal", (4, "lower")), ("pascal", (4, "upper")), ("hilbert", (4,)),
    ("invhilbert", (4,)), ("hadamard", (4,)), ("helmert", (4,)), ("helmert", (4, True)),
]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}{i}" for i, (n, _) in enumerate(CASES)])
def test_special_matrices(backend, name, args):
    assert_close(getattr(lsp.linalg, name)(*args), getattr(jsp.linalg, name)(*args),
                 rtol=2e-5, atol=1e-6)


def test_dft_matrix():
    for scale in (None, "sqrtn", "n"):
        mine, theirs = lsp.linalg.dft(4, scale), jsp.linalg.dft(4, scale)
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(mine), theirs, rtol=1e-6, atol=1e-6)


def test_toeplitz_under_jit_and_grad(backend):
    assert_close(jaxlab.jit(lsp.linalg.toeplitz)(C, R), jsp.linalg.toeplitz(C, R))
    loss = lambda m: lambda c: (m.linalg.toeplitz(c, R) ** 2).sum()
    assert_close(jaxlab.grad(loss(lsp))(C), jax.grad(loss(jsp))(C))


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.companion(F([1.0])),
    lambda m: m.linalg.hadamard(6), lambda m: m.linalg.leslie(F([1, 2]), F([1, 2])),
    lambda m: m.linalg.dft(3, "bad"), lambda m: m.linalg.pascal(3, "bad"),
])
def test_special_matrix_errors(call):
    for module in (lsp, jsp):
        with pytest.raises(ValueError):
            call(module)


@pytest.mark.parametrize("kwargs", [{}, {"dx": 0.5}, {"x": F([0.0, 1.0, 3.0])}, {"axis": 0}])
def test_trapezoid(backend, kwargs):
    y = F([[1.0, 2.0, 4.0], [3.0, 4.0, 5.0], [0.0, 1.0, -1.0]])
    assert_close(lsp.integrate.trapezoid(y, **kwargs), jsp.integrate.trapezoid(y, **kwargs),
                 rtol=1e-6)
    loss = lambda m: lambda v: m.integrate.trapezoid(v, **kwargs).sum()
    assert_close(jaxlab.grad(loss(lsp))(y), jax.grad(loss(jsp))(y))
