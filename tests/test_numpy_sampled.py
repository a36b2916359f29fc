"""jaxlab.numpy's statistics (average, ptp, cov, corrcoef), calculus on samples (gradient,
trapezoid, ediff1d, unwrap, interp), logspace/geomspace and windows, against JAX."""
from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

A = (np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 2)
B = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
XP, FP = np.array([0.0, 1, 2], np.float32), np.array([1.0, 3, 2], np.float32)
AT = np.array([-1, 0.5, 1.5, 2, 5], np.float32)

# (name, arguments, keyword arguments)
CASES = [
    ("average", (A[:, :3],), {"axis": 1, "weights": np.array([1.0, 2, 3]), "returned": True}),
    ("average", (np.arange(6),), {"returned": True}),
    ("ptp", (A,), {"axis": 1}),
    ("ptp", (np.array([3, 1, 7], np.int8),), {}),
    ("cov", (B,), {"fweights": np.array([1, 2, 1, 3, 1]),
                   "aweights": np.array([0.5, 1, 2, 1, 1.0])}),
    ("cov", (B[0], B[1]), {"rowvar": False, "bias": True}),
    ("cov", (np.arange(6).reshape(2, 3),), {"ddof": 0}),
    ("corrcoef", (B,), {}),
    ("corrcoef", (B,), {"rowvar": False}),
    ("gradient", (A, 2.0), {}),
    ("gradient", (np.array([1.0, 2, 4, 7]), np.array([0.0, 1, 3, 4])), {}),
    ("gradient", (np.arange(6).reshape(2, 3),), {"axis": 1}),
    ("trapezoid", (A,), {"x": np.array([0.0, 1, 3, 4])}),
    ("trapezoid", (np.arange(3),), {"dx": 2}),
    ("ediff1d", (np.arange(6).reshape(2, 3) ** 2,), {"to_begin": np.array([9]), "to_end": -1}),
    ("unwrap", (np.array([0.0, 3, 6.5, 1, 7, 0.5]),), {}),
    ("unwrap", (A,), {"discont": 4.0, "axis": 0, "period": 5.0}),
    ("interp", (AT, XP, FP), {}),
    ("interp", (AT, XP, FP), {"left": -9, "right": "extrapolate"}),
    ("interp", (AT, XP, FP), {"period": 2}),
    ("logspace", (0, 3, 4), {}),
    ("logspace", (np.array([0.0, 1]), 3, 3), {"base": 2.0, "axis": 1}),
    ("geomspace", (-2, -50, 5), {}),
    ("bartlett", (5,), {}), ("blackman", (6,), {}), ("hamming", (1,), {}),
    ("hanning", (4,), {}), ("kaiser", (6, 2.5), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(backend, name, args, kwargs):
    expected = getattr(jnp_ref, name)(*args, **kwargs)
    actual = getattr(jnp, name)(*args, **kwargs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    actual = list(actual) if isinstance(actual, (tuple, list)) else [actual]
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        assert_close(a, e, rtol=2e-6, atol=2e-6)


def test_transformations(backend):
    assert_close(jaxlab.grad(lambda y: jnp.trapezoid(y * y) + jnp.average(y, weights=y))(A[0]),
                 jax.grad(lambda y: jnp_ref.trapezoid(y * y)
                          + jnp_ref.average(y, weights=y))(A[0]), rtol=1e-5)
    assert_close(jaxlab.jit(jnp.interp)(AT, XP, FP), jnp_ref.interp(AT, XP, FP))
    assert_close(jaxlab.vmap(jnp.corrcoef)(np.stack([B, B[::-1]])),
                 jax.vmap(jnp_ref.corrcoef)(np.stack([B, B[::-1]])), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,error", [
    (lambda: jnp.average(np.ones((2, 3)), weights=np.ones(3)), ValueError),
    (lambda: jnp.average(np.ones((2, 3)), axis=1, weights=np.ones(2)), ValueError),
    (lambda: jnp.cov(np.ones((2, 2, 2))), ValueError),
    (lambda: jnp.gradient(np.ones(1)), ValueError),
    (lambda: jnp.gradient(np.ones(3), edge_order=2), NotImplementedError),
    (lambda: jnp.gradient(np.ones((2, 3)), 1.0, 2.0, 3.0), TypeError),
    (lambda: jnp.interp(AT, XP, FP[:2]), ValueError),
    (lambda: jnp.ptp([1, 2]), TypeError),
    (lambda: jaxlab.jit(jnp.hamming)(3), TypeError),
], ids=["average-axis", "average-shape", "cov-rank", "gradient-short", "edge-order",
        "spacings", "interp-shapes", "list", "traced-M"])
def test_errors(call, error):
    with pytest.raises(error):
        call()
