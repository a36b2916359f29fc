"""jaxlab.random against jax.random: bit for bit (normal: within 1e-6), also under
jit and vmap. The JAX comparisons run on the default device; the backend tests
check that every device computes the same bits."""
from __future__ import annotations

import jax
import jax.random as jr
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import random
from tests.conftest import computes

SHAPES = [(), (1,), (7,), (3, 5), (2, 3, 4)]


def assert_same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_array_equal(actual, expected)


@pytest.fixture
def keys():
    """(jaxlab key, jax key) for the same seed."""
    return random.PRNGKey(1234), jr.PRNGKey(1234)


@pytest.mark.parametrize("seed", [0, 42, 2 ** 40 + 5, -1, 2 ** 32 + 7])
def test_prng_key(seed):
    assert_same(random.PRNGKey(seed), jr.PRNGKey(seed))


def test_prng_key_traced_seed():
    assert_same(jaxlab.jit(random.PRNGKey)(np.int32(-5)), jr.PRNGKey(-5))


@pytest.mark.parametrize("num", [2, 3, 5, (2, 3)])
def test_split(keys, num):
    assert_same(random.split(keys[0], num), jr.split(keys[1], num))


@pytest.mark.parametrize("data", [0, 7, 2 ** 31 - 1])
def test_fold_in(keys, data):
    assert_same(random.fold_in(keys[0], data), jr.fold_in(keys[1], data))


def test_split_of_split_and_fold_in(keys):
    k, jk = keys
    assert_same(random.split(random.fold_in(random.split(k)[1], 3), 4),
                jr.split(jr.fold_in(jr.split(jk)[1], 3), 4))


@pytest.mark.parametrize("shape", SHAPES)
def test_bits(keys, shape):
    assert_same(random.bits(keys[0], shape), jr.bits(keys[1], shape))


@pytest.mark.parametrize("shape", SHAPES)
def test_uniform(keys, shape):
    assert_same(random.uniform(keys[0], shape), jr.uniform(keys[1], shape))


# JAX's scaling rounds once (XLA fuses the multiply-add): these ranges catch a
# second rounding in roughly half of the samples
@pytest.mark.parametrize("minval,maxval", [(-3.0, 2.5), (10.0, 1e6), (-1e-3, 0.0),
                                           (-27.3, 7.5e35)])
def test_uniform_range(keys, minval, maxval):
    assert_same(random.uniform(keys[0], (1000,), minval=minval, maxval=maxval),
                jr.uniform(keys[1], (1000,), minval=minval, maxval=maxval))


def test_uniform_traced_bounds(keys):
    f = jaxlab.jit(lambda k, lo, hi: random.uniform(k, (100,), minval=lo, maxval=hi))
    assert_same(f(keys[0], np.float32(-3.0), np.float32(2.5)),
                jr.uniform(keys[1], (100,), minval=-3.0, maxval=2.5))


def test_uniform_array_bounds(keys):
    lo = np.array([[-1.0], [0.0], [5.0]], np.float32)
    hi = np.array([1.0, 2.0, 3.0, 40.0, 50.0], np.float32)
    assert_same(random.uniform(keys[0], (3, 5), minval=lo, maxval=hi),
                jr.uniform(keys[1], (3, 5), minval=lo, maxval=hi))


@pytest.mark.parametrize("shape", SHAPES + [(20000,)])
def test_normal(keys, shape):
    actual, expected = np.asarray(random.normal(keys[0], shape)), jr.normal(keys[1], shape)
    assert actual.shape == expected.shape and actual.dtype == np.float32
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("minval,maxval", [(0, 10), (-5, 5), (-100, 3), (0, 1), (3, 3),
                                           (9, 2), (7, 1000003), (-2 ** 31, 2 ** 31 - 1)])
def test_randint(keys, minval, maxval):
    assert_same(random.randint(keys[0], (4, 5), minval, maxval),
                jr.randint(keys[1], (4, 5), minval, maxval))


def test_randint_uint32_and_array_bounds(keys):
    assert_same(random.randint(keys[0], (6,), 0, 10, dtype=jnp.uint32),
                jr.randint(keys[1], (6,), 0, 10, dtype=np.uint32))
    lo, hi = np.array([-3, 0, 100], np.int32), np.array([[5], [2 ** 20]], np.int32)
    assert_same(random.randint(keys[0], (2, 3), lo, hi), jr.randint(keys[1], (2, 3), lo, hi))


@pytest.mark.parametrize("n", [1, 10, 1000, 2000])   # 2000 takes two sorting rounds
def test_permutation_of_range(keys, n):
    assert_same(random.permutation(keys[0], n), jr.permutation(keys[1], n))


@pytest.mark.parametrize("axis,independent", [(0, False), (1, False), (0, True), (1, True)])
def test_permutation_of_array(keys, axis, independent):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    assert_same(random.permutation(keys[0], x, axis, independent),
                jr.permutation(keys[1], x, axis, independent))


def test_bernoulli(keys):
    assert_same(random.bernoulli(keys[0], 0.3, (50,)), jr.bernoulli(keys[1], 0.3, (50,)))
    p = np.linspace(0.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    assert_same(random.bernoulli(keys[0], p), jr.bernoulli(keys[1], p))
    assert_same(random.bernoulli(keys[0], p, (2, 3, 4)), jr.bernoulli(keys[1], p, (2, 3, 4)))


def test_gumbel(keys):
    np.testing.assert_allclose(random.gumbel(keys[0], (100,)), jr.gumbel(keys[1], (100,)),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("axis,shape", [(-1, None), (0, None), (1, None), (-1, (3, 5)),
                                        (0, (2, 4))])
def test_categorical(keys, axis, shape):
    logits = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    assert_same(random.categorical(keys[0], logits, axis, shape),
                jr.categorical(keys[1], logits, axis, shape))


# --- under jit and vmap ---------------------------------------------------------------

SAMPLERS = {
    "split": lambda r, k: r.split(k, 3),
    "fold_in": lambda r, k: r.fold_in(k, 11),
    "bits": lambda r, k: r.bits(k, (3, 2)),
    "uniform": lambda r, k: r.uniform(k, (5,), minval=-2.0, maxval=3.0),
    "randint": lambda r, k: r.randint(k, (5,), -7, 20),
    "permutation": lambda r, k: r.permutation(k, 10),
    "permutation_2d": lambda r, k: r.permutation(k, np.arange(12.0, dtype=np.float32)
                                                 .reshape(4, 3)),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.4, (6,)),
    "categorical": lambda r, k: r.categorical(k, np.linspace(-1, 1, 12, dtype=np.float32)
                                              .reshape(3, 4)),
}


@pytest.mark.parametrize("name", SAMPLERS)
def test_under_jit(keys, name):
    sample = SAMPLERS[name]
    assert_same(jaxlab.jit(lambda k: sample(random, k))(keys[0]), sample(jr, keys[1]))


@pytest.mark.parametrize("name", SAMPLERS)
def test_under_vmap_over_split_keys(keys, name):
    sample = SAMPLERS[name]
    expected = jax.vmap(lambda k: sample(jr, k))(jr.split(keys[1], 4))
    batched = jaxlab.vmap(lambda k: sample(random, k))
    assert_same(batched(random.split(keys[0], 4)), expected)
    assert_same(jaxlab.jit(batched)(random.split(keys[0], 4)), expected)


def test_normal_under_jit_and_vmap(keys):
    expected = jax.vmap(lambda k: jr.normal(k, (5,)))(jr.split(keys[1], 3))
    actual = jaxlab.jit(jaxlab.vmap(lambda k: random.normal(k, (5,))))(random.split(keys[0], 3))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6)


def test_vmap_fold_in_over_data(keys):
    data = np.arange(4, dtype=np.int32)
    assert_same(jaxlab.vmap(random.fold_in, in_axes=(None, 0))(keys[0], data),
                jax.vmap(jr.fold_in, in_axes=(None, 0))(keys[1], data))


# --- every device, and errors -----------------------------------------------------------

def test_bits_on_every_device(backend):
    assert_same(random.bits(random.PRNGKey(7), (3, 5)), jr.bits(jr.PRNGKey(7), (3, 5)))


def test_uniform_statistics(backend):
    u = np.asarray(random.uniform(random.PRNGKey(0), (4000,), minval=2.0, maxval=4.0))
    assert u.min() >= 2.0 and u.max() < 4.0
    assert abs(u.mean() - 3.0) < 0.05


@pytest.mark.parametrize("call,error", [
    (lambda: random.split(np.zeros(3, np.uint32)), TypeError),
    (lambda: random.bits(np.zeros(2, np.int32), (2,)), TypeError),
    (lambda: random.uniform(random.PRNGKey(0), (2, 3), minval=np.zeros(4)), ValueError),
    (lambda: random.randint(random.PRNGKey(0), (3,), 0, 5, dtype=jnp.float32), TypeError),
    (lambda: random.fold_in(random.PRNGKey(0), np.arange(2)), TypeError),
    (lambda: random.permutation(random.PRNGKey(0), jnp.float32(3.0)), TypeError),
    (lambda: random.PRNGKey(1.5), TypeError),
])
def test_errors(call, error):
    with pytest.raises(error):
        call()


# --- typed keys (random.key) ------------------------------------------------------------

def test_typed_key_matches_jax(backend):
    k, jk = random.key(42), jr.key(42)
    assert k.shape == () and str(k.dtype) == str(jk.dtype) == "key<fry>"
    assert_same(random.key_data(k), jr.key_data(jk))
    ks, jks = random.split(k, 3), jr.split(jk, 3)
    assert ks.shape == (3,)
    assert_same(random.key_data(ks), jr.key_data(jks))
    assert_same(random.key_data(random.fold_in(k, 9)), jr.key_data(jr.fold_in(jk, 9)))
    first, second = random.split(k)
    assert_same(random.uniform(second, (4,)), jr.uniform(jr.split(jk)[1], (4,)))
    assert_same(random.key_data(ks[1:]), jr.key_data(jks[1:]))


def test_wrap_key_data_round_trip(backend):
    data = random.key_data(random.split(random.key(3), 4))
    wrapped = random.wrap_key_data(data)
    assert_same(random.bits(wrapped[2], (5,)), jr.bits(jr.wrap_key_data(np.asarray(data))[2], (5,)))
    with pytest.raises(TypeError, match="uint32"):
        random.wrap_key_data(np.zeros((2,), np.float32))


def test_typed_keys_under_jit_and_vmap(backend):
    ks, jks = random.split(random.key(0), 5), jr.split(jr.key(0), 5)
    draw = lambda rnd: lambda key: rnd.normal(key, (3,))
    np.testing.assert_allclose(np.asarray(jaxlab.vmap(draw(random))(ks)),
                               np.asarray(jax.vmap(draw(jr))(jks)), rtol=1e-6, atol=1e-6)
    step = jaxlab.jit(lambda key: random.split(key))
    assert_same(random.key_data(step(ks[0])), jr.key_data(jr.split(jks[0])))


def test_a_key_array_where_one_key_is_needed_is_refused():
    with pytest.raises(TypeError, match="single key"):
        random.normal(random.split(random.key(0)), (2,))


# --- samplers built on uniform and normal ----------------------------------------------------

@pytest.mark.parametrize("name,rtol", [("exponential", 2e-6), ("laplace", 2e-6),
                                       ("logistic", 2e-6), ("cauchy", 1e-4)])
def test_transformed_uniform_samplers(backend, name, rtol):
    # the uniform draws are JAX's bit for bit; log/tan may differ from XLA's in the last ulp
    actual = getattr(random, name)(random.key(5), (64,))
    expected = getattr(jr, name)(jr.key(5), (64,))
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=1e-6)


def test_rademacher_is_bit_identical(backend):
    assert_same(random.rademacher(random.key(1), (32,)), jr.rademacher(jr.key(1), (32,)))


@pytest.mark.parametrize("lower,upper", [(-1.0, 2.0), (0.5, 0.75),
                                         (np.array([-3.0, 0.0], np.float32), 1.0)])
def test_truncated_normal(backend, lower, upper):
    actual = random.truncated_normal(random.key(2), lower, upper, (16, 2))
    expected = jr.truncated_normal(jr.key(2), lower, upper, (16, 2))
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=2e-6, atol=1e-6)
    assert (np.asarray(actual) > lower).all() and (np.asarray(actual) < upper).all()


def test_multivariate_normal(backend):
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]], np.float32)
    mean = np.array([1.0, -1.0, 0.0], np.float32)
    actual = random.multivariate_normal(random.key(4), mean, cov, (8,))
    expected = jr.multivariate_normal(jr.key(4), mean, cov, (8,))
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=1e-5, atol=2e-6)
    with pytest.raises(ValueError, match="cov.shape"):
        random.multivariate_normal(random.key(4), mean, cov[:2, :2])
    with pytest.raises(ValueError, match="method"):
        random.multivariate_normal(random.key(4), mean, cov, method="qr")


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_multivariate_normal_factor_methods(backend, method):
    """Eigenvectors' signs are free, so samples match JAX's in distribution, not value:
    the sample mean and covariance of 4000 draws, within about three standard errors."""
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.7]], np.float32)
    mean = np.array([1.0, -1.0, 0.0], np.float32)
    x = np.asarray(random.multivariate_normal(random.key(5), mean, cov, (4000,), method=method))
    np.testing.assert_allclose(x.mean(axis=0), mean, atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.15)


@pytest.mark.parametrize("kwargs", [
    {"a": 10, "shape": (5,)}, {"a": 10, "shape": (2, 3), "replace": False},
    {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "shape": (2,), "axis": 1},
    {"a": np.arange(12, dtype=np.float32).reshape(3, 4), "shape": (2,), "replace": False},
    {"a": 4, "shape": (6,), "p": np.float32([0.1, 0.2, 0.3, 0.4])},
    {"a": 4, "shape": (3,), "p": np.float32([0.1, 0.2, 0.3, 0.4]), "replace": False}])
def test_choice(backend, kwargs):
    assert_same(random.choice(random.key(3), **kwargs), jr.choice(jr.key(3), **kwargs))


def test_choice_refuses_oversampling_without_replacement():
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(random.key(0), 3, (4,), replace=False)


NARROW_DRAWS = {
    "bits_uint8": lambda r, m, k: r.bits(k, (5,), m.uint8),
    "bits_uint16": lambda r, m, k: r.bits(k, (5,), m.uint16),
    "uniform_float16": lambda r, m, k: r.uniform(k, (6,), m.float16),
    "uniform_bfloat16": lambda r, m, k: r.uniform(k, (6,), m.bfloat16, -2, 2),
    "normal_float16": lambda r, m, k: r.normal(k, (6,), m.float16),
    "normal_bfloat16": lambda r, m, k: r.normal(k, (6,), m.bfloat16),
    "randint_int8": lambda r, m, k: r.randint(k, (8,), -100, 100, m.int8),
    "randint_uint8": lambda r, m, k: r.randint(k, (8,), 0, 300, m.uint8),
    "randint_int16": lambda r, m, k: r.randint(k, (8,), -1000, 30000, m.int16),
}


@pytest.mark.parametrize("name", NARROW_DRAWS)
def test_narrow_dtypes_are_bit_identical(backend, name):
    draw = NARROW_DRAWS[name]
    assert_same(draw(random, jnp, random.PRNGKey(3)), draw(jr, jax.numpy, jr.PRNGKey(3)))


WIDE_DRAWS = {
    "uniform_float64": lambda r, m, k: r.uniform(k, (5,)),
    "bits_uint64": lambda r, m, k: r.bits(k, (3,), m.uint64),
    "randint_int64": lambda r, m, k: r.randint(k, (5,), -10 ** 12, 10 ** 12, m.int64),
    "exponential_float64": lambda r, m, k: r.exponential(k, (4,)),
}


@pytest.mark.parametrize("name", WIDE_DRAWS)
def test_64_bit_draws_with_x64_are_bit_identical(backend, x64, name):
    draw = WIDE_DRAWS[name]
    want = draw(jr, jax.numpy, jr.PRNGKey(3))
    if not computes(backend, want.dtype):
        with pytest.raises(TypeError, match=f"not supported on the {backend}"):
            np.asarray(draw(random, jnp, random.PRNGKey(3)))
        return
    assert_same(draw(random, jnp, random.PRNGKey(3)), want)
