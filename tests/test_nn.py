"""jaxlab.nn against jax.nn: values (large magnitudes included) and gradients."""
from __future__ import annotations

import jax
import jax.nn as jnn
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import nn
from tests.conftest import assert_close

ELEMENTWISE = ["relu", "gelu", "silu", "swish", "sigmoid", "softplus", "log_sigmoid"]
ALONG_AXIS = ["softmax", "log_softmax", "standardize"]


def _inputs(rng, shape=(3, 8), extremes=True):
    x = rng.normal(size=shape).astype(np.float32) * 3
    if extremes:   # overflow territory for exp, and the kinks at 0
        x.flat[:6] = [0.0, 100.0, -100.0, 30.0, -30.0, 1e-4]
    return x


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise(backend, rng, name):
    x = _inputs(rng)
    actual = getattr(nn, name)(x)
    assert np.isfinite(np.asarray(actual)).all()
    assert_close(actual, getattr(jnn, name)(x), rtol=2e-6, atol=1e-6)


def test_gelu_exact(backend, rng):
    x = _inputs(rng)
    assert_close(nn.gelu(x, approximate=False), jnn.gelu(x, approximate=False), atol=1e-6)


def test_stable_at_extremes(backend):
    assert_close(nn.softplus(np.float32(100.0)), np.float32(100.0))
    assert_close(nn.log_sigmoid(np.float32(-100.0)), np.float32(-100.0))
    assert_close(nn.sigmoid(np.array([-100.0, 100.0], np.float32)), jnn.sigmoid(
        np.array([-100.0, 100.0], np.float32)))


@pytest.mark.parametrize("name", ALONG_AXIS)
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_along_axis(backend, rng, name, axis):
    x = _inputs(rng, extremes=name != "standardize")
    assert_close(getattr(nn, name)(x, axis=axis), getattr(jnn, name)(x, axis=axis),
                 rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (0, True), ((0, 2), False)])
def test_logsumexp(backend, rng, axis, keepdims):
    x = rng.normal(size=(2, 3, 4)).astype(np.float32) * 50
    assert_close(nn.logsumexp(x, axis, keepdims), jnn.logsumexp(x, axis, keepdims=keepdims),
                 rtol=1e-6)


def test_logsumexp_infinite_rows(backend):
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf]], np.float32)
    assert_close(nn.logsumexp(x, axis=1), jnn.logsumexp(x, axis=1))


def test_standardize_given_moments(backend, rng):
    x = rng.normal(size=(4, 6)).astype(np.float32)
    mean, var = x.mean(0, keepdims=True), x.var(0, keepdims=True) + 1.0
    assert_close(nn.standardize(x, 0, mean, var, epsilon=1e-3),
                 jnn.standardize(x, 0, mean, var, epsilon=1e-3))


@pytest.mark.parametrize("x,num_classes,axis", [
    ([0, 2, 5, -1], 4, -1), ([[0, 2], [1, 1]], 3, 0), ([[0, 2], [1, 1]], 3, 1), (2, 3, -1)])
def test_one_hot(backend, x, num_classes, axis):
    x = np.asarray(x, np.int32)
    assert_close(nn.one_hot(x, num_classes, axis=axis), jnn.one_hot(x, num_classes, axis=axis))
    assert_close(nn.one_hot(x, num_classes, dtype=jnp.int32),
                 jnn.one_hot(x, num_classes, dtype=np.int32))


# --- gradients, jit and vmap ------------------------------------------------------------

GRAD_CASES = {
    "relu": lambda m, x: m.relu(x),
    "gelu": lambda m, x: m.gelu(x),
    "gelu_exact": lambda m, x: m.gelu(x, approximate=False),
    "silu": lambda m, x: m.silu(x),
    "softplus": lambda m, x: m.softplus(x),
    "log_sigmoid": lambda m, x: m.log_sigmoid(x),
    "softmax": lambda m, x: m.softmax(x),
    "softmax_axis0": lambda m, x: m.softmax(x, axis=0),
    "log_softmax": lambda m, x: m.log_softmax(x),
    "logsumexp": lambda m, x: m.logsumexp(x, axis=1),
    "standardize": lambda m, x: m.standardize(x),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_grad(backend, rng, name):
    fn = GRAD_CASES[name]
    x = _inputs(rng, extremes=name != "standardize")
    weights = rng.normal(size=fn(jnn, x).shape).astype(np.float32)

    def loss(module, np_):
        return lambda v: np_.sum(fn(module, v) * weights)
    actual = jaxlab.grad(loss(nn, jnp))(x)
    expected = jax.grad(loss(jnn, jax.numpy))(x)
    assert np.isfinite(np.asarray(actual)).all()
    assert_close(actual, expected, rtol=1e-4, atol=1e-5)


def test_relu_derivative_at_zero_is_zero(backend):
    assert_close(jaxlab.vmap(jaxlab.grad(nn.relu))(np.array([-1.0, 0.0, 2.0], np.float32)),
                 np.array([0.0, 0.0, 1.0], np.float32))


def test_jit_and_vmap(backend, rng):
    x = _inputs(rng)

    def f(v):
        return nn.log_softmax(nn.gelu(v)) + nn.softplus(v)
    expected = jax.vmap(lambda v: jnn.log_softmax(jnn.gelu(v)) + jnn.softplus(v))(x)
    assert_close(jaxlab.jit(f)(x), expected, atol=1e-5)
    assert_close(jaxlab.vmap(f)(x), expected, atol=1e-5)
    assert_close(jaxlab.jit(jaxlab.vmap(jaxlab.grad(lambda v: nn.logsumexp(nn.silu(v)))))(x),
                 jax.vmap(jax.grad(lambda v: jnn.logsumexp(jnn.silu(v))))(x), atol=1e-5)


def test_softmax_kernel_count():
    """max, sum of exp, then the normalising division: three kernels."""
    x = jnp.asarray(np.random.default_rng(0).normal(size=(4096, 1024)).astype(np.float32))
    f = jaxlab.jit(nn.softmax)
    f(x).block_until_ready()
    with jaxlab.capture() as log:
        f(x).block_until_ready()
    assert len(log.kernels()) <= 3, log.summary()


MORE_ELEMENTWISE = ["identity", "elu", "celu", "selu", "leaky_relu", "relu6", "hard_tanh",
                    "hard_sigmoid", "hard_silu", "hard_swish", "soft_sign", "sparse_plus",
                    "sparse_sigmoid", "squareplus", "mish"]
KINKS = np.array([-7.0, -3.0, -1.0, -0.3, 0.0, 0.4, 1.0, 3.0, 6.0, 8.5], np.float32)


@pytest.mark.parametrize("name", MORE_ELEMENTWISE)
def test_more_activations_and_their_gradients(backend, name):
    ours, theirs = getattr(nn, name), getattr(jnn, name)
    assert_close(ours(KINKS), theirs(KINKS), rtol=1e-5, atol=2e-6)
    assert_close(jaxlab.vmap(jaxlab.grad(ours))(KINKS), jax.vmap(jax.grad(theirs))(KINKS),
                 rtol=1e-5, atol=4e-6)


@pytest.mark.parametrize("axis", [-1, 0])
def test_glu(backend, rng, axis):
    x = rng.normal(size=(4, 6)).astype(np.float32)
    assert_close(nn.glu(x, axis), jnn.glu(x, axis), rtol=1e-6)
    with pytest.raises(ValueError, match="even"):
        nn.glu(np.ones((3, 3), np.float32))
