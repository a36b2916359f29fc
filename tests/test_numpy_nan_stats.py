"""NaN-ignoring reductions and quantiles of jaxlab.numpy, differential against JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close


def _data() -> np.ndarray:
    x = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32)
    x[0, 1, 2] = np.nan
    x[2, :, 3] = np.nan   # a slice of NaNs only
    return x


X = _data()
Q = np.array([0.0, 0.3, 1.0], np.float32)
I = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)

# (function name, positional arguments after the array, keyword arguments)
CASES = [
    ("nansum", X, (), {"axis": 1}),
    ("nanprod", X, (), {"axis": (0, 2), "keepdims": True}),
    ("nanmax", X, (), {"axis": 1}),
    ("nanmin", X, (), {}),
    ("nanmean", X, (), {"axis": 0}),
    ("nanmean", I, (), {"axis": 1}),
    ("nanvar", X, (), {"axis": 1, "ddof": 1}),
    ("nanstd", X, (), {"axis": -1}),
    ("nanargmax", X, (), {"axis": 1}),
    ("nanargmin", X, (), {}),
    ("nancumsum", X[0], (), {"axis": 1}),
    ("nancumprod", X[0], (), {}),
    ("median", X, (), {"axis": 2, "keepdims": True}),
    ("nanmedian", X, (), {"axis": 1}),
    ("quantile", X, (Q,), {"axis": (0, 2)}),
    ("nanquantile", X, (Q,), {"axis": 1, "method": "nearest"}),
    ("nanquantile", X, (np.float32(0.4),), {"axis": 2, "method": "midpoint"}),
    ("quantile", I, (Q,), {"axis": 1, "method": "lower"}),
    ("quantile", I, (Q,), {"axis": 0, "method": "higher", "keepdims": True}),
    ("nanquantile", X, (Q,), {"axis": 2, "method": "inverted_cdf"}),
    ("percentile", X[1], (np.float32(30),), {"axis": None}),
    ("nanpercentile", X, (np.array([10, 90], np.float32),), {"axis": 1}),
]


@pytest.mark.parametrize("name,a,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(backend, name, a, args, kwargs):
    expected = getattr(jnp_ref, name)(a, *args, **kwargs)
    actual = getattr(jnp, name)(a, *args, **kwargs)
    assert actual.dtype == expected.dtype
    assert_close(actual, expected)


def test_weighted_quantile(backend):
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0], np.float32)
    expected = jnp_ref.quantile(X[1], Q, axis=1, method="inverted_cdf", weights=w)
    assert_close(jnp.quantile(X[1], Q, axis=1, method="inverted_cdf", weights=w), expected)


def test_transformations(backend):
    x = X[1]
    assert_close(jaxlab.jit(lambda v: jnp.nanmedian(v, axis=0))(x),
                 jnp_ref.nanmedian(x, axis=0))
    assert_close(jaxlab.grad(lambda v: jnp.nanmean(v) + jnp.median(v[0]))(x),
                 jax.grad(lambda v: jnp_ref.nanmean(v) + jnp_ref.median(v[0]))(x))
    assert_close(jaxlab.vmap(lambda v: jnp.nanmax(v))(x), jax.vmap(jnp_ref.nanmax)(x))


@pytest.mark.parametrize("call,error", [
    (lambda: jnp.quantile(X, 0.5, method="weibull"), ValueError),
    (lambda: jnp.quantile(X, np.ones((2, 2), np.float32)), ValueError),
    (lambda: jnp.quantile(X, [0.5]), TypeError),
    (lambda: jnp.quantile(X, 0.5, weights=X), NotImplementedError),
    (lambda: jnp.quantile(X[0], 0.5, axis=0, method="inverted_cdf",
                          weights=np.ones(3, np.float32)), ValueError),
    (lambda: jnp.median(np.ones(3, np.complex64)), ValueError),
    (lambda: jnp.nansum([1.0, 2.0]), TypeError),
    (lambda: jnp.nanmax(X, axis=3), np.exceptions.AxisError),
], ids=["method", "q-rank", "list", "weights-method", "weights-shape", "complex", "list-sum",
        "axis"])
def test_errors(call, error):
    with pytest.raises(error):
        call()
