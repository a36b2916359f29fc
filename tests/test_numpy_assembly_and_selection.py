"""jax.numpy's array assembly, rearranging, selection and host helpers on every device:
against NumPy where JAX's results are NumPy's (dtypes as JAX makes them of NumPy's), and
against JAX where JAX's differ (sizes, fills, immutable updates)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.errors import ConcretizationTypeError

M = np.arange(6, dtype=np.float32).reshape(2, 3)
I = np.array([3, 0, 1, 1, 4], np.int32)
T = np.arange(24, dtype=np.int32).reshape(2, 3, 4)

# name -> a function of the numpy-like module, compared with NumPy's result
SAME_AS_NUMPY = {
    "diag": lambda m: m.diag(M, 1),
    "diag_1d": lambda m: m.diag(I, -1),
    "diagflat": lambda m: m.diagflat(M, 1),
    "rollaxis": lambda m: m.rollaxis(T, 2),
    "rollaxis_start": lambda m: m.rollaxis(T, 0, 3),
    "rot90": lambda m: m.rot90(M),
    "rot90_k": lambda m: m.rot90(T, -1, (1, 2)),
    "rot90_2": lambda m: m.rot90(M, 2),
    "fliplr": lambda m: m.fliplr(M),
    "flipud": lambda m: m.flipud(I),
    "kron": lambda m: m.kron(M, np.float32([[1, -1]])),
    "kron_ranks": lambda m: m.kron(I[:2], M),
    "append": lambda m: m.append(M, I),
    "append_axis": lambda m: m.append(M, M[:1], axis=0),
    "insert": lambda m: m.insert(M, 1, 9),
    "insert_row": lambda m: m.insert(M, 1, np.float32([7, 8, 9]), axis=0),
    "insert_many": lambda m: m.insert(I, np.array([1, 1, 5]), np.int32([7, 8, 9])),
    "insert_slice": lambda m: m.insert(I, slice(0, 2), 9),
    "delete": lambda m: m.delete(M, 1),
    "delete_axis": lambda m: m.delete(M, np.array([0, 2]), axis=1),
    "delete_mask": lambda m: m.delete(I, I > 2),
    "delete_slice": lambda m: m.delete(T, slice(0, 3, 2), axis=2),
    "block": lambda m: m.block([[M, M[:, :1]], [np.ones((1, 4), np.float32)]]),
    "block_1d": lambda m: m.block([1, 2, I]),
    "column_stack": lambda m: m.column_stack([I[:2], M]),
    "hsplit": lambda m: m.hsplit(M, 3),
    "vsplit": lambda m: m.vsplit(T, [1]),
    "dsplit": lambda m: m.dsplit(T, 2),
    "resize": lambda m: m.resize(I, (2, 4)),
    "resize_empty": lambda m: m.resize(I, 0),
    "trim_zeros": lambda m: m.trim_zeros(np.int32([0, 0, 1, 0, 2, 0])),
    "trim_zeros_b": lambda m: m.trim_zeros(np.int32([0, 0, 1, 0, 2, 0]), "b"),
    "select": lambda m: m.select([M > 3, M < 1], [M, -M], 9),
    "piecewise": lambda m: m.piecewise(M, [M < 2, M > 4], [lambda v: v * 10, 7, 3.0]),
    "choose": lambda m: m.choose(np.int32([0, 2, 1]), [I[:3], I[:3] * 10, I[:3] * 100]),
    "choose_clip": lambda m: m.choose(np.int32([0, 5, -1]), [I[:3], I[1:4]], mode="clip"),
    "choose_wrap": lambda m: m.choose(np.int32([0, 5, -1]), [I[:3], I[1:4]], mode="wrap"),
    "compress": lambda m: m.compress(np.array([True, False, True]), M, axis=1),
    "compress_flat": lambda m: m.compress(np.int32([0, 1]), M),
    "extract": lambda m: m.extract(M > 2, M),
    "argwhere": lambda m: m.argwhere(T % 5 == 0),
    "argwhere_0d": lambda m: m.argwhere(np.float32(3)),
    "bincount": lambda m: m.bincount(I),
    "bincount_weights": lambda m: m.bincount(I, weights=np.float32([1, 2, 3, 4, 5]),
                                             minlength=7),
    "digitize": lambda m: m.digitize(np.float32([0.5, 1, 2.5, 9]), np.float32([0, 1, 2, 3])),
    "digitize_right_falling": lambda m: m.digitize(np.float32([0.5, 1, 2.5]),
                                                   np.float32([3, 2, 1, 0]), right=True),
    "copy": lambda m: m.copy(M),
    "fromfunction": lambda m: m.fromfunction(lambda i, j: i * 3 + j, (2, 3), dtype=m.int32),
    "frombuffer": lambda m: m.frombuffer(I.tobytes(), dtype=m.int32),
    "fromstring": lambda m: m.fromstring("1 2 3", dtype=m.float32, sep=" "),
}

# JAX's own results where NumPy has none (sizes, immutable updates) or differs
SAME_AS_JAX = {
    "fill_diagonal": lambda m: m.fill_diagonal(np.zeros((3, 4), np.float32),
                                               np.float32([1, 2]), inplace=False),
    "fill_diagonal_3d": lambda m: m.fill_diagonal(np.zeros((2, 2, 2), np.int32), 5,
                                                  inplace=False),
    "place": lambda m: m.place(M, M > 2, np.float32([10, 20]), inplace=False),
    "put": lambda m: m.put(M, np.int32([0, 7]), np.float32([5, 6]), inplace=False),
    "put_wrap": lambda m: m.put(M, np.int32([0, 7, -1]), 4.0, mode="wrap", inplace=False),
    "put_along_axis": lambda m: m.put_along_axis(M, np.int32([[0], [2]]), 9.0, axis=1,
                                                 inplace=False),
    "compress_sized": lambda m: m.compress(np.array([True, False, True]), M, axis=1, size=3,
                                           fill_value=-1),
    "extract_sized": lambda m: m.extract(M > 2, M, size=5, fill_value=-1),
    "argwhere_sized": lambda m: m.argwhere(M > 1, size=5, fill_value=-1),
    "bincount_length": lambda m: m.bincount(I, length=3),
    "vsplit_1d": lambda m: m.vsplit(I[:4], 2),
}


def _parts(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_same(ours, reference):
    assert len(_parts(ours)) == len(_parts(reference))
    for mine, theirs in zip(_parts(ours), _parts(reference)):
        mine, theirs = np.asarray(mine), np.asarray(theirs)
        assert mine.dtype == jax.dtypes.canonicalize_dtype(theirs.dtype)
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


@pytest.mark.parametrize("name", SAME_AS_NUMPY)
def test_same_as_numpy(backend, name):
    assert_same(SAME_AS_NUMPY[name](jnp), SAME_AS_NUMPY[name](np))


@functools.cache
def jax_result(name: str):
    return jax.jit(lambda: SAME_AS_JAX[name](jjnp))()


@pytest.mark.parametrize("name", SAME_AS_JAX)
def test_same_as_jax(backend, name):
    assert_same(SAME_AS_JAX[name](jnp), jax_result(name))


def test_under_jit_and_grad(backend):
    def f(m):
        def loss(x):
            picked = m.compress(x[0] > 0.5, x, axis=1, size=2) * m.kron(x[:, :1], x[:1])[:, :2]
            placed = m.put_along_axis(x, m.argsort(x, axis=1)[:, :1], 0.0, 1, inplace=False)
            return (picked.sum() + m.select([x > 2], [x * x], 1.0).sum() + m.diag(x[:, :2]).sum()
                    + m.insert(x, 1, x[:, 0] * 3, axis=1).sum() + placed.sum()
                    + m.rot90(m.block([[x, x]])).sum() + m.delete(x, 0, axis=1).sum())
        return loss
    ours = jaxlab.jit(jaxlab.value_and_grad(f(jnp)))(M)
    theirs = jax.jit(jax.value_and_grad(f(jjnp)))(M)
    for mine, jax_part in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(jax_part), rtol=1e-5)
    counted = jaxlab.jit(lambda x: jnp.bincount(x, length=5) + jnp.digitize(x, x[1:3]))(I)
    np.testing.assert_array_equal(counted, jax.jit(
        lambda x: jjnp.bincount(x, length=5) + jjnp.digitize(x, x[1:3]))(I))


def test_introspection_as_jax():
    for value in (M, 3.0, [[1, 2]], jnp.ones((2, 3))):
        assert jnp.ndim(value) == jjnp.ndim(np.asarray(value))
        assert jnp.shape(value) == jjnp.shape(np.asarray(value))
        assert jnp.size(value) == jjnp.size(np.asarray(value))
    assert jnp.size(T, 1) == 3 and jnp.size(T, (0, 2)) == 8
    for value in (jnp.array(3), 3, np.float32(1), [1], "a", jnp.ones(2)):
        assert jnp.isscalar(value) == jjnp.isscalar(jjnp.asarray(value) if isinstance(
            value, jaxlab.Array) else value)
    assert jnp.iterable(jnp.ones(2)) and not jnp.iterable(3)
    assert jnp.array_str(jnp.asarray(M)) == np.array_str(M)
    assert jnp.array_repr(jnp.asarray(M)).startswith("Array([[0., 1., 2.],")
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2


ERRORS = [
    (lambda m: m.diag(T), ValueError),
    (lambda m: m.rot90(M, 1, (0, 0)), ValueError),
    (lambda m: m.fliplr(I), ValueError),
    (lambda m: m.append(M, I, axis=0), TypeError),
    (lambda m: m.insert(I, [1], 5), TypeError),
    (lambda m: m.block([[1], [2, 3]]), TypeError),
    (lambda m: m.select([M > 3], [M, M]), ValueError),
    (lambda m: m.choose(np.int32([0, 5]), [I[:2], I[:2]]), ValueError),
    (lambda m: m.bincount(M), TypeError),
    (lambda m: m.fill_diagonal(np.zeros((2, 2)), 1.0), NotImplementedError),
    (lambda m: m.fill_diagonal(np.zeros((2, 3, 3)), 1.0, inplace=False), ValueError),
    (lambda m: m.put_along_axis(M, np.int32([[0]]), 1.0, axis=1), ValueError),
    (lambda m: m.fromiter(range(3), dtype=float), NotImplementedError),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_jax(case):
    make, error = ERRORS[case]
    with pytest.raises(error):
        make(jjnp)
    with pytest.raises(error):
        make(jnp)


@pytest.mark.parametrize("name", ["bincount", "compress", "argwhere"])
def test_sizes_needed_under_jit(name):
    call = {"bincount": lambda x: jnp.bincount(x), "compress": lambda x: jnp.compress(x > 1, x),
            "argwhere": lambda x: jnp.argwhere(x)}[name]
    with pytest.raises(ConcretizationTypeError):
        jaxlab.jit(call)(I)
