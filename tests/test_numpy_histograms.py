"""jaxlab.numpy's histograms and packbits/unpackbits, against JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

A = np.array([0.0, 1, 1, 2, 3, 3, 3, 5], np.float32)
PAIRS = np.stack([A, A[::-1]], 1)

CASES = [
    ("histogram", (A, 4), {}),
    ("histogram", (np.arange(5),), {"bins": 2}),
    ("histogram", (A, np.array([0, 2, 4])), {"weights": A, "density": True}),
    ("histogram", (A, 3), {"range": (1, 3)}),
    ("histogram", (np.ones(3, np.float32), 2), {}),
    ("histogram_bin_edges", (np.arange(5), 3), {}),
    ("histogram2d", (A, A[::-1], 2), {}),
    ("histogram2d", (A, A), {"bins": [2, np.array([0.0, 2, 6])], "density": True}),
    ("histogramdd", (PAIRS, (2, 3)), {"weights": A, "range": [(0, 4), None]}),
    ("packbits", (np.array([1, 0, 1, 1, 0, 0, 0, 0, 1], np.uint8),), {}),
    ("packbits", (np.arange(30).reshape(3, 10) % 3,), {"axis": 1, "bitorder": "little"}),
    ("unpackbits", (np.array([3, 255], np.uint8),), {"count": -2}),
    ("unpackbits", (np.array([[3, 4], [5, 6]], np.uint8),), {"axis": 0, "count": 20,
                                                              "bitorder": "little"}),
]


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(backend, name, args, kwargs):
    expected = _leaves(getattr(jnp_ref, name)(*args, **kwargs))
    actual = _leaves(getattr(jnp, name)(*args, **kwargs))
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        assert_close(a, e, rtol=2e-6, atol=1e-7)


def test_transformations(backend):
    assert_close(jaxlab.jit(lambda x: jnp.histogram(x, 4)[0])(A), jnp_ref.histogram(A, 4)[0])
    weights = np.linspace(0, 1, 8).astype(np.float32)
    assert_close(jaxlab.grad(lambda w: jnp.histogram(A, 3, weights=w)[0][1])(weights),
                 jax.grad(lambda w: jnp_ref.histogram(A, 3, weights=w)[0][1])(weights))


@pytest.mark.parametrize("call,error", [
    (lambda: jnp.histogram([1, 2]), TypeError),
    (lambda: jnp.histogram(A, 0), ValueError),
    (lambda: jnp.histogramdd(A, 2), ValueError),
    (lambda: jnp.packbits(np.array([1.5])), TypeError),
    (lambda: jnp.packbits(np.ones(3, np.int32), bitorder="middle"), ValueError),
    (lambda: jnp.unpackbits(np.array([1], np.int32)), TypeError),
], ids=["list", "no-bins", "sample-rank", "float-bits", "bitorder", "not-bytes"])
def test_errors(call, error):
    with pytest.raises(error):
        call()
