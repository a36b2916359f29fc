"""Array's Python protocols and methods as jax.Array's: copy, deepcopy, pickle, `in`,
round(), itemsize/nbytes, the methods forwarding to jnp, and jnp.array of a traced value."""
from __future__ import annotations

import copy
import pickle

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

M = np.array([[1.5, -2.5], [3.25, 4.0]], np.float32)


def test_copies_and_pickles_keep_values_dtype_and_weak_type(backend):
    x = jnp.asarray(M)
    params = {"w": x, "b": [jnp.arange(3)]}
    for clone in (copy.copy(x), copy.deepcopy(params)["w"],
                  pickle.loads(pickle.dumps(params))["w"]):
        assert isinstance(clone, jaxlab.Array) and clone.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(clone), M)
    back = pickle.loads(pickle.dumps(jnp.array(3.0)))
    assert back.weak_type == jjnp.array(3.0).weak_type and float(back) == 3.0
    assert {d.platform for d in back.devices()} == {backend}   # loaded on the default device


def test_contains_round_and_sizes_match_jax(backend):
    v, jv = jnp.asarray(M[0]), jjnp.asarray(M[0])
    assert (-2.5 in v) == (-2.5 in jv) and (7 in v) == (7 in jv)
    with pytest.raises(ValueError, match="one-dimensional"):
        1.5 in jnp.asarray(M)
    for args in [(), (1,)]:
        ours, theirs = round(jnp.asarray(M), *args), round(jjnp.asarray(M), *args)
        assert ours.dtype == theirs.dtype
        assert_close(ours, theirs)
    assert jnp.asarray(M).itemsize == 4 and jnp.asarray(M).nbytes == 16
    assert jnp.arange(3, dtype=jnp.int8).nbytes == jjnp.arange(3, dtype=jjnp.int8).nbytes


def test_forwarding_methods_match_jax(backend):
    x, jx = jnp.asarray(M), jjnp.asarray(M)
    assert_close(x.diagonal(), jx.diagonal())
    assert_close(x.trace(), jx.trace())
    assert_close(x.copy(), jx.copy())
    assert_close(jnp.asarray([1, 3, 5]).searchsorted(3), jjnp.asarray([1, 3, 5]).searchsorted(3))
    assert_close(jnp.asarray([0, 2, 0, 4]).nonzero()[0], jjnp.asarray([0, 2, 0, 4]).nonzero()[0])


def test_array_and_copy_of_a_traced_value(backend):
    def f(m):
        return lambda a: (m.array(a) * a.copy() + m.array(a, copy=True)).sum()
    assert_close(jaxlab.jit(f(jnp))(M), jax.jit(f(jjnp))(M))
    assert_close(jaxlab.grad(f(jnp))(M), jax.grad(f(jjnp))(M))
    assert_close(jaxlab.vmap(f(jnp))(M), jax.vmap(f(jjnp))(M))
