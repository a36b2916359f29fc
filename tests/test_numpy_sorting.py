"""sort and argsort against NumPy's stable sort."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close


def _data(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-4, 5, shape).astype(dtype)   # few values: many ties


CASES = [   # (shape, axis)
    ((7,), -1), ((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 3, 4), -1),
    ((2, 3, 4), None), ((1,), 0), ((0,), -1), ((3, 0), 0), ((3, 0), 1), ((32,), -1),
]
DTYPES = [np.float32, np.int32, np.uint32, np.bool_]


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort(backend, rng, shape, axis, dtype):
    x = _data(rng, shape, dtype)
    out = jnp.sort(jnp.asarray(x), axis=axis)
    assert out.dtype == x.dtype
    assert_close(out, np.sort(x, axis=axis))


@pytest.mark.parametrize("shape,axis", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_argsort_is_stable(backend, rng, shape, axis, dtype):
    x = _data(rng, shape, dtype)
    out = jnp.argsort(jnp.asarray(x), axis=axis)
    assert out.dtype == np.int32
    assert_close(out, np.argsort(x, axis=axis, kind="stable").astype(np.int32))


SPECIAL = np.array([3.0, np.nan, -np.inf, 0.0, -0.0, np.inf, np.nan, -1.5, 0.0], np.float32)


def test_nans_sort_last(backend):
    out = np.asarray(jnp.sort(jnp.asarray(SPECIAL)))
    np.testing.assert_array_equal(out, np.sort(SPECIAL))
    assert np.isnan(out[-2:]).all() and not np.isnan(out[:-2]).any()
    assert_close(jnp.argsort(jnp.asarray(SPECIAL)),
                 np.argsort(SPECIAL, kind="stable").astype(np.int32))


def test_nans_sort_last_along_axis_0(backend):
    x = np.array([[np.nan, 1.0], [2.0, np.nan], [0.0, -1.0]], np.float32)
    assert_close(jnp.sort(jnp.asarray(x), axis=0), np.sort(x, axis=0))
    assert_close(jnp.argsort(jnp.asarray(x), axis=0),
                 np.argsort(x, axis=0, kind="stable").astype(np.int32))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_transposed_input(backend, rng, axis):
    x = _data(rng, (5, 4), np.float32)
    assert_close(jnp.sort(jnp.asarray(x).T, axis=axis), np.sort(x.T, axis=axis))
    assert_close(jnp.argsort(jnp.asarray(x).T, axis=axis),
                 np.argsort(x.T, axis=axis, kind="stable").astype(np.int32))


def test_sort_of_lazy_expression_and_lists(backend, rng):
    x = _data(rng, (4, 6), np.float32)
    assert_close(jnp.sort(jnp.asarray(x) * -2 + 1, axis=0), np.sort(x * -2 + 1, axis=0),
                 rtol=1e-6)
    with pytest.raises(TypeError, match="sort requires ndarray or scalar arguments"):
        jnp.sort([3, 1, 2])   # as JAX: a list is no array


def test_methods(backend, rng):
    x = _data(rng, (3, 5), np.float32)
    assert_close(jnp.asarray(x).sort(axis=0), np.sort(x, axis=0))
    assert_close(jnp.asarray(x).argsort(), np.argsort(x, kind="stable").astype(np.int32))


@pytest.mark.parametrize("call,error", [
    (lambda x: jnp.sort(x, axis=2), ValueError),
    (lambda x: jnp.argsort(x, axis=-3), ValueError),
    (lambda x: jnp.sort(jnp.asarray(1.0)), ValueError),
    (lambda x: jnp.sort(x, axis=1.5), TypeError),
])
def test_bad_axis_then_engine_keeps_working(backend, rng, call, error):
    x = _data(rng, (3, 4), np.float32)
    with pytest.raises(error):
        call(jnp.asarray(x))
    assert_close(jnp.sort(jnp.asarray(x)), np.sort(x))


def test_sort_gradient_follows_the_permutation(backend, rng):
    x, w = _data(rng, (3, 6), np.float32), _data(rng, (3, 6), np.float32)
    grad = jaxlab.grad(lambda v: (jnp.sort(v, axis=1) * w).sum())(jnp.asarray(x))
    expected = np.zeros_like(x)
    np.put_along_axis(expected, np.argsort(x, axis=1, kind="stable"), w, axis=1)
    assert_close(grad, expected)


def _radix_rows(rng, n):
    """Rows that exercise a radix sort's edges: one value throughout (every pass
    skipped), multiples of 4096 (the low digits skipped), few values (ties: stability)
    with zeros of both signs, NaNs and infinities."""
    same = np.full(n, 2.5, np.float32)
    coarse = (rng.integers(-50, 50, n) * 4096).astype(np.float32)
    special = rng.choice(np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], np.float32), n)
    return np.stack([same, coarse, special])


@pytest.mark.parametrize("n", [40, 1 << 16])   # 8- and 11-bit digits on the wasm device
def test_radix_edge_rows(backend, rng, n):
    x = _radix_rows(rng, n)
    assert_close(jnp.sort(jnp.asarray(x)), np.sort(x))
    assert_close(jnp.argsort(jnp.asarray(x)), np.argsort(x, kind="stable").astype(np.int32))
    ints = x[1].astype(np.int32) * 7 - 3
    assert_close(jnp.argsort(jnp.asarray(ints)), np.argsort(ints, kind="stable").astype(np.int32))
