"""jaxlab.scipy against jax.scipy: values and gradients, on every device."""
from __future__ import annotations

import jax
import jax.scipy as jsp
import numpy as np
import pytest

import jaxlab
from jaxlab import scipy as lsp
from tests.conftest import assert_close

PROBS = np.array([1e-3, 0.1, 0.3, 0.5, 0.75, 0.999], np.float32)
REALS = np.array([-4.5, -1.5, -0.2, 0.01, 0.5, 1.0, 2.0, 3.7, 9.0, 120.0], np.float32)
ON_PROBS = ["erf", "erfc", "erfinv", "expit", "logit", "ndtr", "ndtri", "log_ndtr", "entr"]
ON_REALS = ["gammaln", "digamma", "erf", "erfc", "expit", "ndtr"]


@pytest.mark.parametrize("name", ON_PROBS)
def test_special_on_probabilities(backend, name):
    assert_close(getattr(lsp.special, name)(PROBS), getattr(jsp.special, name)(PROBS),
                 rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("name", ON_REALS)
def test_special_on_reals_and_gradient(backend, name):
    ours, theirs = getattr(lsp.special, name), getattr(jsp.special, name)
    assert_close(ours(REALS), theirs(REALS), rtol=2e-5, atol=2e-6)
    if name != "digamma":   # polygamma (digamma's derivative) is not here
        assert_close(jaxlab.vmap(jaxlab.grad(ours))(REALS), jax.vmap(jax.grad(theirs))(REALS),
                     rtol=5e-5, atol=1e-5)


def test_digamma_poles_are_nan(backend):
    assert np.isnan(np.asarray(lsp.special.digamma(np.float32([0.0, -2.0])))).all()


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_family(backend, name):
    x = np.array([0.0, 0.0, 1.0, 2.5], np.float32)
    y = np.array([0.0, 3.0, 2.0, 0.5], np.float32)
    assert_close(getattr(lsp.special, name)(x, y), getattr(jsp.special, name)(x, y))


@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}, {"axis": 0, "keepdims": True},
                                    {"axis": 1, "b": np.float32([[1.0, 2.0, 0.5]])}])
def test_logsumexp(backend, kwargs):
    a = np.array([[0.5, -1.0, 3.0], [-np.inf, 2.0, 1.0]], np.float32)
    assert_close(lsp.special.logsumexp(a, **kwargs), jsp.special.logsumexp(a, **kwargs),
                 rtol=1e-6)
    grad = lambda m: lambda x: m.special.logsumexp(x, **kwargs).sum()
    assert_close(jaxlab.grad(grad(lsp))(a), jax.grad(grad(jsp))(a), rtol=1e-6)


def test_logsumexp_return_sign(backend):
    a, b = np.float32([1.0, 2.0]), np.float32([1.0, -3.0])
    for mine, theirs in zip(lsp.special.logsumexp(a, b=b, return_sign=True),
                            jsp.special.logsumexp(a, b=b, return_sign=True)):
        assert_close(mine, theirs, rtol=1e-6)


@pytest.mark.parametrize("name", ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"])
def test_norm(backend, name):
    assert_close(getattr(lsp.stats.norm, name)(REALS[:8], 0.5, 2.0),
                 getattr(jsp.stats.norm, name)(REALS[:8], 0.5, 2.0), rtol=2e-6, atol=1e-6)


def test_norm_ppf(backend):
    assert_close(lsp.stats.norm.ppf(PROBS, 1.0, 3.0), jsp.stats.norm.ppf(PROBS, 1.0, 3.0),
                 rtol=3e-6, atol=1e-6)


def _matrices():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    return a, (a @ a.T + 4 * np.eye(4)).astype(np.float32), \
        rng.standard_normal((4, 2)).astype(np.float32)


@pytest.mark.parametrize("trans", [0, "T"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("vector", [False, True])
def test_solve_triangular(backend, trans, lower, vector):
    a, _, b = _matrices()
    t = (np.tril(a) if lower else np.triu(a)) + 3 * np.eye(4, dtype=np.float32)
    rhs = b[:, 0] if vector else b
    assert_close(lsp.linalg.solve_triangular(t, rhs, trans=trans, lower=lower),
                 jsp.linalg.solve_triangular(t, rhs, trans=trans, lower=lower), rtol=1e-5)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_and_cho_solve(backend, lower):
    _, spd, b = _matrices()
    assert_close(lsp.linalg.cholesky(spd, lower=lower), jsp.linalg.cholesky(spd, lower=lower),
                 rtol=1e-5, atol=1e-6)
    assert_close(lsp.linalg.cho_solve(lsp.linalg.cho_factor(spd, lower=lower), b),
                 jsp.linalg.cho_solve(jsp.linalg.cho_factor(spd, lower=lower), b), rtol=1e-5)


def test_lu_family(backend):
    a, _, b = _matrices()
    for mine, theirs in zip(lsp.linalg.lu(a), jsp.linalg.lu(a)):
        assert_close(mine, theirs, rtol=1e-5, atol=1e-6)
    packed, pivots = lsp.linalg.lu_factor(a)
    assert_close(pivots, jsp.linalg.lu_factor(a)[1])
    assert_close(lsp.linalg.lu_solve((packed, pivots), b),
                 jsp.linalg.lu_solve(jsp.linalg.lu_factor(a), b), rtol=1e-5, atol=1e-6)
