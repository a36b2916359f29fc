"""The Array API standard's names, keywords and protocols, against jax.numpy."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 4)).astype(np.float32)
U, V = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal((4, 3)).astype(np.float32)
SQUARE = RNG.standard_normal((3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
INTS = np.array([[3, 1, 2, 1], [0, 3, 3, 7]], np.int32)

# name -> a function of the numpy-like module (every result compared with jax.numpy's)
SAME_AS_JAX = {
    "acos": lambda m: m.acos(np.float32([0.1, -0.5])),
    "atan2": lambda m: m.atan2(U[0], V[0]),
    "pow": lambda m: m.pow(np.abs(U), V),
    "bitwise_left_shift": lambda m: m.bitwise_left_shift(INTS, 2),
    "bitwise_invert": lambda m: m.bitwise_invert(INTS),
    "concat": lambda m: m.concat([U, V], axis=1),
    "permute_dims": lambda m: m.permute_dims(A, (2, 0, 1)),
    "matrix_transpose": lambda m: m.matrix_transpose(A),
    "cumulative_sum": lambda m: m.cumulative_sum(INTS, axis=1, include_initial=True),
    "cumulative_prod": lambda m: m.cumulative_prod(U[0]),
    "unstack": lambda m: m.stack(m.unstack(A, axis=1)),
    "vecdot": lambda m: m.vecdot(U, V),
    "count_nonzero": lambda m: m.count_nonzero(INTS - 3, axis=1),
    "diff": lambda m: m.diff(INTS, n=2, prepend=0),
    "meshgrid": lambda m: m.stack(m.meshgrid(U[0], V[:2, 0], U[1])),
    "nextafter": lambda m: m.nextafter(np.float32([0.0, 1.0, -1.0, 2.0]),
                                        np.float32([1.0, 2.0, 0.0, 2.0])),
    "real_imag_conj": lambda m: m.stack([m.real(U), m.imag(U), m.conj(U)]),
    "searchsorted": lambda m: m.searchsorted(np.float32([1, 2, 2, 3]),
                                             np.float32([[0, 2], [2.5, 9]]), side="right"),
    "isin": lambda m: m.isin(INTS, np.int32([1, 3]), invert=True),
    "var_correction": lambda m: m.var(A, axis=1, correction=1),
    "std_correction": lambda m: m.std(A, correction=0.5),
    "sort_descending": lambda m: m.sort(INTS, axis=1, descending=True),
    "argsort_descending": lambda m: m.argsort(INTS, axis=1, descending=True, stable=True),
    "diagonal": lambda m: m.diagonal(A, 1, 2, 0),
    "trace": lambda m: m.trace(A, -1),
    "cross": lambda m: m.cross(U, V),
    "linalg.cross": lambda m: m.linalg.cross(U, V),
    "linalg.outer": lambda m: m.linalg.outer(U[0], V[0]),
    "linalg.trace": lambda m: m.linalg.trace(A, offset=1),
    "linalg.diagonal": lambda m: m.linalg.diagonal(A, offset=-1),
    "linalg.matrix_power": lambda m: m.linalg.matrix_power(SQUARE, -2),
    "linalg.matrix_power3": lambda m: m.linalg.matrix_power(SQUARE, 3),
    "linalg.multi_dot": lambda m: m.linalg.multi_dot([U[0], SQUARE, SQUARE, V[0]]),
    "linalg.tensordot": lambda m: m.linalg.tensordot(A, A, axes=([1, 2], [1, 2])),
    "linalg.vecdot": lambda m: m.linalg.vecdot(U, V, axis=0),
    "linalg.matrix_norm": lambda m: m.linalg.matrix_norm(A, ord=1, keepdims=True),
    "linalg.vector_norm": lambda m: m.linalg.vector_norm(A, axis=(0, 2), ord=np.inf),
    "linalg.matrix_transpose": lambda m: m.linalg.matrix_transpose(A),
}


@pytest.mark.parametrize("name", SAME_AS_JAX)
def test_same_as_jax(backend, name):
    ours, theirs = SAME_AS_JAX[name](jnp), SAME_AS_JAX[name](jjnp)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert_close(ours, theirs, rtol=2e-5, atol=2e-5)


def test_linalg_gradients(backend):
    loss = lambda m: lambda a: (m.linalg.matrix_power(a, 2) * m.trace(a)).sum() + \
        m.linalg.vector_norm(m.cross(a, a[::-1]))
    assert_close(jaxlab.grad(loss(jnp))(SQUARE), jax.grad(loss(jjnp))(SQUARE), rtol=1e-4)


def test_set_functions_and_nonzero_outside_jit(backend):
    for ours, theirs in ((jnp.unique_all(INTS), jjnp.unique_all(INTS)),
                         (jnp.unique_counts(INTS), jjnp.unique_counts(INTS)),
                         (jnp.unique_inverse(INTS), jjnp.unique_inverse(INTS)),
                         (jnp.nonzero(INTS), jjnp.nonzero(INTS))):
        for mine, jax_part in zip(ours, theirs):
            assert_close(mine, jax_part)
    assert_close(jnp.unique_values(INTS), jjnp.unique_values(INTS))
    with pytest.raises(jaxlab.errors.ConcretizationTypeError):
        jaxlab.jit(jnp.unique_values)(INTS)


@pytest.mark.parametrize("kwargs", [dict(size=3), dict(size=9, fill_value=-1),
                                    dict(size=9, fill_value=(7, 9)), dict(size=0)])
def test_nonzero_with_size_under_jit(backend, kwargs):
    f = lambda m: lambda x: m.nonzero(x, **kwargs) + (m.flatnonzero(x, size=4),)
    for mine, theirs in zip(jaxlab.jit(f(jnp))(INTS - 3), jax.jit(f(jjnp))(INTS - 3)):
        assert_close(mine, theirs)
        assert mine.dtype == theirs.dtype


def test_traceable_search_under_jit(backend):
    search = lambda m: lambda v: (m.searchsorted(m.arange(5.0), v), m.isin(v, m.arange(3.0)))
    for ours, theirs in zip(jaxlab.jit(search(jnp))(np.float32([2.5, 1.0])),
                            jax.jit(search(jjnp))(np.float32([2.5, 1.0]))):
        assert_close(ours, theirs)


def test_namespace_and_info(backend):
    x = jnp.ones(3)
    assert x.__array_namespace__() is jnp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == jnp.float32
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "uint8", "uint16", "uint32"}
    assert info.default_device().platform == backend
    assert backend in {d.platform for d in info.devices()}


def test_dlpack_both_ways_and_device_keywords(backend):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jnp.from_dlpack(host)
    assert x.device.platform == backend
    np.testing.assert_array_equal(np.from_dlpack(x), host)
    cpu = jaxlab.devices("cpu")[0]
    assert x.to_device(cpu).device is cpu and x.to_device("cpu").device is cpu
    assert jnp.zeros(3, device=cpu).device is cpu
    assert jnp.asarray(x, device=cpu).device is cpu
    assert jnp.asarray(x) is x and jnp.asarray(x, copy=True) is not x
    assert_close(jnp.arange(4, device="cpu"), np.arange(4, dtype=np.int32))
