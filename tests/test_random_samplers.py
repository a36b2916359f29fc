"""The samplers beyond uniform/normal (gamma and its family, the counting samplers,
the transforms of uniform and normal draws) against jax.random. The loops (gamma,
loggamma, poisson, binomial) run on every device; what is built from them or from
uniform/normal with elementwise ops runs on cpu (those ops are tested per device
elsewhere), keeping the suite's time bounded.

Bit for bit where only exact arithmetic stands between the key and the sample
(poisson, binomial, multinomial, geometric, triangular); elsewhere within a few
float32 ulps (rtol 2e-6): a sample is JAX's when its accept/reject decisions are
JAX's, and then only the last roundings of log, pow, erf_inv and sqrt (XLA's
polynomials against ours) can differ.
"""
from __future__ import annotations

import jax
import jax.random as jr
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax, random

@pytest.fixture
def cpu():
    with jaxlab.default_device("cpu"):
        yield "cpu"


ALPHA = np.array([0.05, 0.3, 1.0, 2.5, 7.0, 100.0], np.float32)
ULPS = dict(rtol=2e-6, atol=1e-30)


def assert_matches(actual, expected, exact=False):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    if exact:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, **ULPS)


# every draw below is of 6 gamma variates: the compiled draw (one per size, dtype and
# device) is shared by the whole family
GAMMA_FAMILY = {
    "gamma": lambda r, k: r.gamma(k, ALPHA),
    "gamma_shape": lambda r, k: r.gamma(k, ALPHA[2:5], (2, 3)),
    "loggamma": lambda r, k: r.loggamma(k, ALPHA),
    "beta": lambda r, k: r.beta(k, ALPHA, 2.0),
    "dirichlet": lambda r, k: r.dirichlet(k, ALPHA[1:4], (2,)),
    "t": lambda r, k: r.t(k, ALPHA),
    "chisquare": lambda r, k: r.chisquare(k, ALPHA),
    "f": lambda r, k: r.f(k, ALPHA, 3.0),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, (6,)),
    "ball": lambda r, k: r.ball(k, 3, 2, (2,)),
}


# loggamma's error is absolute (a sum of logs near 0); beta and dirichlet exponentiate
# log-space draws, turning an ulp of log x (|log x| up to 40 here) into 4e-6 of x
LOG_SPACE = {"loggamma": dict(rtol=0, atol=1e-6), "beta": dict(rtol=1e-5),
             "dirichlet": dict(rtol=1e-5)}


def test_gamma_under_jit_and_vmap(cpu):
    a = ALPHA[1:4]
    expected = jax.vmap(lambda k: jr.gamma(k, a))(jr.split(jr.PRNGKey(1), 2))
    batched = jaxlab.vmap(lambda k: random.gamma(k, a))
    assert_matches(jaxlab.jit(batched)(random.split(random.PRNGKey(1), 2)), expected)
    typed = jaxlab.jit(lambda k: random.gamma(k, a, (2, 3)))(random.key(1))
    assert_matches(typed, jr.gamma(jr.key(1), a, (2, 3)))


def test_gamma_implicit_gradients_match_jax(cpu):
    for name in ("gamma", "loggamma"):
        ours = jaxlab.grad(lambda al: getattr(random, name)(random.PRNGKey(2), al).sum())(ALPHA)
        theirs = jax.grad(lambda al: getattr(jr, name)(jr.PRNGKey(2), al).sum())(ALPHA)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5)
    b = np.float32(2.0)
    ours = jaxlab.jit(jaxlab.grad(lambda a: random.beta(random.PRNGKey(4), a, b).sum()))(ALPHA)
    theirs = jax.grad(lambda a: jr.beta(jr.PRNGKey(4), a, b).sum())(ALPHA)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5)


def test_random_gamma_grad_matches_lax(cpu):
    a = np.array([0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 0.3, 3.0, 100.0, 1.0, 2.0, -1.0], np.float32)
    x = np.array([0.01, 0.3, 2.0, 1.5, 9.0, 28.0, 1e-6, 0.2, 110.0, 0.0, -1.0, 1.0], np.float32)
    ours = np.asarray(lax.random_gamma_grad(a, x))
    theirs = np.asarray(jax.lax.random_gamma_grad(a, x))
    np.testing.assert_allclose(ours, theirs, rtol=3e-6, equal_nan=True)


LAM = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 1000.0], np.float32)
COUNTS = {
    "poisson": lambda r, k: r.poisson(k, LAM),
    "poisson_shape": lambda r, k: r.poisson(k, 4.0, (3, 4)),
    "binomial": lambda r, k: r.binomial(k, np.float32([5, 20, 100, 1000, -1, np.inf]),
                                        np.float32([0.3, 0.7, 0.5, 0.02, 0.5, 0.5])),
    "binomial_edges": lambda r, k: r.binomial(k, 10.0, np.float32([np.nan, -0.1, 1.0, 0.0])),
    "multinomial": lambda r, k: r.multinomial(k, 20.0, np.float32([0.2, 0.3, 0.5])),
    "geometric": lambda r, k: r.geometric(k, np.float32([0.2, 0.9]), (3, 2)),
    "triangular": lambda r, k: r.triangular(k, -1.0, np.float32([0.0, 3.0]), 4.0, (3, 2)),
}


# every sampler: how it is drawn, the key's seed, and its tolerance (None: bit for bit)
SAMPLERS = {**{name: (draw, 3, LOG_SPACE.get(name, ULPS)) for name, draw in GAMMA_FAMILY.items()},
            **{name: (draw, 2, None) for name, draw in COUNTS.items()}}
# the samplers with loops of their own run on every device; the rest transform their draws
OWN_LOOPS = ["gamma", "loggamma", "poisson", "binomial"]


@pytest.mark.parametrize("name", OWN_LOOPS)
def test_sampler_loops_match_jax_on_every_device(backend, name):
    _check_sampler(name)


@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_match_jax(cpu, name):
    _check_sampler(name)


def _check_sampler(name):
    draw, seed, tolerance = SAMPLERS[name]
    actual, expected = draw(random, random.PRNGKey(seed)), draw(jr, jr.PRNGKey(seed))
    if tolerance is None:
        assert_matches(actual, expected, exact=True)
    else:
        actual, expected = np.asarray(actual), np.asarray(expected)
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, **tolerance)


def test_poisson_under_jit_and_vmap(cpu):
    draw = lambda r: lambda k: r.poisson(k, LAM[1:6])
    expected = jax.vmap(draw(jr))(jr.split(jr.PRNGKey(5), 2))
    assert_matches(jaxlab.jit(jaxlab.vmap(draw(random)))(random.split(random.PRNGKey(5), 2)),
                   expected, exact=True)


B = np.array([0.5, 1.0, 3.0], np.float32)
TRANSFORMS = {
    "lognormal": lambda r, k: r.lognormal(k, B, (2, 3)),
    "pareto": lambda r, k: r.pareto(k, B, (2, 3)),
    "maxwell": lambda r, k: r.maxwell(k, (4,)),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, B, 2.0, (2,)),
    "weibull_min": lambda r, k: r.weibull_min(k, 2.0, 1.5, (5,)),
    "rayleigh": lambda r, k: r.rayleigh(k, B, (2, 3)),
    "wald": lambda r, k: r.wald(k, B, (2, 3)),
    "orthogonal": lambda r, k: r.orthogonal(k, 3, (2,)),
    "orthogonal_wide": lambda r, k: r.orthogonal(k, 2, (), m=4),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_jax(cpu, name):
    draw = TRANSFORMS[name]
    # orthogonal goes through a QR whose rounding is not LAPACK's
    tol = dict(rtol=1e-5, atol=2e-6) if name.startswith("orthogonal") else ULPS
    actual, expected = np.asarray(draw(random, random.PRNGKey(1))), draw(jr, jr.PRNGKey(1))
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, np.asarray(expected), **tol)


def test_gamma_moments(cpu):
    """A complement to the comparisons: mean a and variance a over 3000 draws each
    (a fixed key; the bounds are about three standard errors of each estimate)."""
    a = np.repeat(np.float32([0.4, 3.0]), 3000)
    x = np.asarray(random.gamma(random.PRNGKey(9), a)).reshape(2, -1)
    np.testing.assert_allclose(x.mean(axis=1), [0.4, 3.0], rtol=0.1)
    np.testing.assert_allclose(x.var(axis=1), [0.4, 3.0], rtol=0.3)
    assert (x > 0).all()


@pytest.mark.parametrize("call,error,match", [
    (lambda r, k: r.gamma(k, 1.0, dtype=np.int32), ValueError, "float dtype"),
    (lambda r, k: r.gamma(k, np.ones(3, np.float32), (2,)), ValueError, None),
    (lambda r, k: r.poisson(k, 2.0, dtype=np.float32), ValueError, None),
    (lambda r, k: r.dirichlet(k, 1.0), ValueError, "alpha.ndim"),
    (lambda r, k: r.geometric(k, 0.5, dtype=np.float32), ValueError, "int dtype"),
    (lambda r, k: r.uniform(k, (2,), np.int32), ValueError, "float dtype"),
])
def test_errors_as_jax(call, error, match):
    with pytest.raises(error):
        call(jr, jr.PRNGKey(0))
    with pytest.raises(error, match=match):
        call(random, random.PRNGKey(0))


def test_key_impl_and_key_dtype():
    assert str(random.key_impl(random.key(0))) == str(jr.key_impl(jr.key(0)))
    assert str(random.key_dtype()) == str(jr.key_dtype())
    assert random.key(0).dtype == random.key_dtype()


def test_custom_jvp_with_a_loop_under_jit(cpu):
    """A custom_jvp function whose body loops is staged (not run on phantom values)
    under jit, and its rule still gives the derivative through jit."""
    @jaxlab.custom_jvp
    def halve_until_small(x):
        return lax.while_loop(lambda v: jnp.max(v) > 1.0, lambda v: v / 2, x)
    halve_until_small.defjvps(lambda t, out, x: t * 7.0)
    x = np.float32([3.0, 5.0])
    np.testing.assert_allclose(np.asarray(jaxlab.jit(halve_until_small)(x)), x / 8)
    grad = jaxlab.grad(jaxlab.jit(lambda v: halve_until_small(v).sum()))(x)
    np.testing.assert_allclose(np.asarray(grad), [7.0, 7.0])
