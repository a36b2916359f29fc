"""jax.numpy's set operations, orderings and index helpers, against JAX on every device."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.errors import ConcretizationTypeError

X = np.array([3, 1, 3, 2, 1, 0], np.float32)
NANS = np.array([np.nan, 1, np.nan, 1], np.float32)
ROWS = np.array([[3, 1], [3, 1], [0, 2], [0, 1]], np.int32)
CPLX = np.array([1 + 1j, 1 - 1j, 1 + 1j, 0], np.complex64)
A = np.array([1, 2, 3, 2, 9], np.int32)
B = np.array([2, 3, 7, 3], np.int32)
IDX = np.array([5, 7, -1, 100, 0], np.int32)

# name -> a function of the numpy-like module, compared with NumPy's result (JAX's
# agrees for these inputs; NumPy's costs no compilation)
SAME_AS_NUMPY = {
    "unique_all_returns": lambda m: m.unique(X, True, True, True),
    "unique_axis0": lambda m: m.unique(ROWS, True, True, True, axis=0),
    "unique_2d_inverse": lambda m: m.unique(ROWS, return_inverse=True),
    "unique_nans": lambda m: m.unique(NANS, return_counts=True),
    "unique_distinct_nans": lambda m: m.unique(NANS, equal_nan=False),
    "unique_complex": lambda m: m.unique(CPLX, True, True, True),
    "unique_bool": lambda m: m.unique(X > 1),
    "unique_all": lambda m: m.unique_all(ROWS),
    "unique_counts": lambda m: m.unique_counts(NANS),
    "unique_values": lambda m: m.unique_values(NANS),
    "union1d": lambda m: m.union1d(A, B.astype(np.float32)),
    "intersect1d": lambda m: m.intersect1d(A, B, return_indices=True),
    "setdiff1d": lambda m: m.setdiff1d(A, B),
    "setxor1d": lambda m: m.setxor1d(A, B),
    "lexsort": lambda m: m.lexsort([A, np.array([1, 0, 0, 1, 0], np.int32)]),
    "lexsort_2d": lambda m: m.lexsort(ROWS, axis=0),
    "sort_complex": lambda m: m.sort_complex(CPLX),
    "sort_complex_real": lambda m: m.sort_complex(A),
    "mgrid": lambda m: m.mgrid[0:3, 0:2],
    "mgrid_complex_step": lambda m: m.mgrid[0:1:3j, 1:4],
    "ogrid": lambda m: m.ogrid[0:3, 0:2.0],
    "r_": lambda m: m.r_[1:3, [5, 6], np.float32([7])],
    "r_directive": lambda m: m.r_["0,2,0", [1, 2], [3, 4]],
    "c_": lambda m: m.c_[np.ones(3, np.float32), np.zeros((3, 2), np.float32)],
    "ix_": lambda m: m.ix_(A[:2], B),
    "indices": lambda m: m.indices((2, 3)),
    "indices_sparse": lambda m: m.indices((2, 3), dtype=m.float32, sparse=True),
    "ravel_multi_index_clip": lambda m: m.ravel_multi_index((A[:2], B[2:]), (2, 3), mode="clip"),
    "ravel_multi_index_wrap_f": lambda m: m.ravel_multi_index((A[:2], B[2:]), (2, 3),
                                                              mode="wrap", order="F"),
    "ravel_multi_index": lambda m: m.ravel_multi_index((A[:2] - 1, B[:2] - 1), (2, 3)),
    "diag_indices": lambda m: m.diag_indices(3, 3),
    "diag_indices_from": lambda m: m.diag_indices_from(np.ones((2, 2))),
    "tril_indices": lambda m: m.tril_indices(3, 1, 4),
    "triu_indices": lambda m: m.triu_indices(3, -1),
    "tril_indices_from": lambda m: m.tril_indices_from(np.ones((2, 3)), -1),
    "triu_indices_from": lambda m: m.triu_indices_from(np.ones((3, 2))),
    "mask_indices": lambda m: m.mask_indices(3, m.triu, 1),
}

# JAX's own results where NumPy has none (size, fill_value) or differs
SAME_AS_JAX = {
    "unique_sized": lambda m: m.unique(X, True, True, True, size=6),
    "unique_fill": lambda m: m.unique(X, return_counts=True, size=2, fill_value=7),
    "unique_axis1_sized": lambda m: m.unique(ROWS.T, return_inverse=True, axis=1, size=4),
    "unique_inverse": lambda m: m.unique_inverse(ROWS, size=6, fill_value=-1),
    "union1d_sized": lambda m: m.union1d(A, B, size=7),
    "intersect1d_sized": lambda m: m.intersect1d(A, B, return_indices=True, size=4),
    "setdiff1d_sized": lambda m: m.setdiff1d(A, B.astype(np.float32), size=4),
    "setxor1d_sized": lambda m: m.setxor1d(A, B, size=5, fill_value=-2),
    "unravel_index": lambda m: m.unravel_index(IDX, (2, 3)),
    "r_row": lambda m: m.r_["r", [1, 2]],
}


def _parts(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_same(ours, reference):
    """Values, shapes and dtypes (a NumPy result's as JAX makes them: int64 -> int32)."""
    assert len(_parts(ours)) == len(_parts(reference))
    for mine, theirs in zip(_parts(ours), _parts(reference)):
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        assert mine.dtype == jax.dtypes.canonicalize_dtype(theirs.dtype)
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", SAME_AS_NUMPY)
def test_same_as_numpy(backend, name):
    assert_same(SAME_AS_NUMPY[name](jnp), SAME_AS_NUMPY[name](np))


@functools.cache
def jax_result(name: str):
    """JAX's result, computed once for every device, jitted (one XLA compilation instead
    of one per operation)."""
    return jax.jit(lambda: SAME_AS_JAX[name](jjnp))()


@pytest.mark.parametrize("name", SAME_AS_JAX)
def test_same_as_jax(backend, name):
    assert_same(SAME_AS_JAX[name](jnp), jax_result(name))


def test_index_expressions():
    assert jnp.s_[1:2, ::2] == jjnp.s_[1:2, ::2] and jnp.s_[3] == 3
    assert jnp.index_exp[1:2] == jjnp.index_exp[1:2] == (slice(1, 2),)


# under jit a static size makes the shapes known
JITTED = {
    "unique": lambda m: lambda x: m.unique(x, return_index=True, return_counts=True, size=4),
    "setxor1d": lambda m: lambda x: m.setxor1d(x, x[:2] + 1, size=5),
    "intersect1d": lambda m: lambda x: m.intersect1d(x, x[::2], size=3),
    "unravel_index": lambda m: lambda x: m.unravel_index(x.astype(m.int32), (2, 3)),
    "lexsort": lambda m: lambda x: m.lexsort([x, -x]),
}


@pytest.mark.parametrize("name", JITTED)
def test_under_jit(backend, name):
    assert_same(jaxlab.jit(JITTED[name](jnp))(X), jax.jit(JITTED[name](jjnp))(X))


def test_gradient_through_sized_unique(backend):
    loss = lambda m: lambda x: (m.unique(x, size=4) * m.arange(4.0)).sum() + \
        m.union1d(x, x * 2, size=3).sum()
    assert_same(jaxlab.grad(loss(jnp))(X), jax.jit(jax.grad(loss(jjnp)))(X))


def test_partition_places_the_kth_value(backend):
    x = np.array([[5, 1, 4, 2, 3], [0, 9, 8, 7, 1]], np.float32)
    for kth in (0, 2, -1):
        out = np.asarray(jnp.partition(x, kth))
        idx = np.asarray(jnp.argpartition(x, kth))
        k = kth % 5
        assert (out[:, k] == np.sort(x)[:, k]).all()
        assert (out[:, :k].max(1, initial=-np.inf) <= out[:, k]).all()
        assert (out[:, k + 1:].min(1, initial=np.inf) >= out[:, k]).all()
        np.testing.assert_array_equal(np.take_along_axis(x, idx, 1), out)


ERRORS = [
    (lambda m: m.unique(X, axis=3), ValueError),
    (lambda m: m.lexsort([]), TypeError),
    (lambda m: m.lexsort([A, B]), ValueError),
    (lambda m: m.ravel_multi_index((A[:2], B[:2]), (2, 3)), ValueError),
    (lambda m: m.diag_indices_from(np.ones((2, 3))), ValueError),
    (lambda m: m.tril_indices_from(np.ones(3)), ValueError),
    (lambda m: m.ix_(np.ones((2, 2))), ValueError),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_jax(case):
    make, error = ERRORS[case]
    with pytest.raises(error):
        make(jjnp)
    with pytest.raises(error):
        make(jnp)


def test_multi_index_of_the_wrong_length():   # JAX: an AssertionError
    with pytest.raises(ValueError, match="length 2"):
        jnp.ravel_multi_index((A[:2],), (2, 3), mode="clip")


@pytest.mark.parametrize("name", ["unique", "union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_sizes_needed_under_jit(name):
    fn = (lambda x: jnp.unique(x)) if name == "unique" else \
        (lambda x: getattr(jnp, name)(x, x[:2]))
    with pytest.raises(ConcretizationTypeError, match="size"):
        jaxlab.jit(fn)(X)
