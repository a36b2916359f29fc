"""jaxlab.ops (segment reductions), jaxlab.flatten_util.ravel_pytree and jaxlab.typing
against JAX's, on every device."""
from __future__ import annotations

import jax
import jax.flatten_util
import jax.numpy as jjnp
import jax.ops
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import flatten_util, ops
from jaxlab.errors import ConcretizationTypeError
from tests.conftest import assert_close

DATA = np.array([[1.0, -2.0], [3.0, 0.5], [3.0, 7.0], [-4.0, 2.0], [0.0, 1.0]], np.float32)
IDS = np.array([0, 2, 2, -1, 9], np.int32)     # a tie, an empty segment, two dropped rows
KINDS = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segment_reductions_match_jax(backend, kind, dtype):
    data = DATA.astype(dtype)
    ours = getattr(ops, kind)(jnp.asarray(data), jnp.asarray(IDS), 4)
    theirs = getattr(jax.ops, kind)(jjnp.asarray(data), jjnp.asarray(IDS), 4)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_segments_under_jit_vmap_and_grad(backend):
    ids = np.array([0, 0, 0, 1], np.int32)
    x = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
    for kind, transform in (("segment_max", jaxlab.jit), ("segment_min", lambda f: f)):
        def loss(m, f):
            return lambda d: (f(d, m.asarray(ids), 2) ** 2).sum()
        ours = transform(jaxlab.grad(loss(jnp, getattr(ops, kind))))(x)
        theirs = jax.grad(loss(jjnp, getattr(jax.ops, kind)))(x)
        assert_close(ours, theirs)       # ties share the gradient, as JAX's
    batched = jaxlab.vmap(lambda d: ops.segment_sum(d, jnp.asarray(ids), 2))(np.stack([x, -x]))
    assert_close(batched, jax.vmap(lambda d: jax.ops.segment_sum(d, ids, 2))(np.stack([x, -x])))


def test_segment_count_from_the_data_and_its_errors(backend):
    assert_close(ops.segment_sum(jnp.ones((3, 2)), jnp.array([0, 1, 1])), [[1, 1], [2, 2]])
    with pytest.raises(ConcretizationTypeError):
        jaxlab.jit(lambda d, s: ops.segment_sum(d, s))(jnp.ones(3), jnp.array([0, 1, 1]))
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        ops.segment_max(jnp.ones(3), jnp.ones(3), 2)
    with pytest.raises(ValueError, match="as long as data's first axis"):
        ops.segment_sum(jnp.ones(3), jnp.array([0, 1]), 2)


def test_ravel_pytree_round_trip_matches_jax(backend):
    tree = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (np.int32(4), [1.5]),
            "n": np.array([True, False])}
    flat, unravel = flatten_util.ravel_pytree(tree)
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    assert flat.dtype == jflat.dtype
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back = unravel(flat * 2)
    jback = junravel(jflat * 2)
    assert jaxlab.tree.structure(back) == jaxlab.tree.structure(tree)
    for a, b in zip(jaxlab.tree.leaves(back), jax.tree.leaves(jback)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    grad = jaxlab.grad(lambda v: (unravel(v)["w"] ** 2).sum())(flat)
    assert_close(grad, jax.grad(lambda v: (junravel(v)["w"] ** 2).sum())(jflat))
    with pytest.raises(ValueError, match=r"shape \(10,\)"):
        unravel(jnp.ones(3))
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.ones(10, jnp.int32))
    empty, unravel_empty = flatten_util.ravel_pytree([])
    assert empty.shape == (0,) and empty.dtype == np.float32 and unravel_empty(empty) == []


def test_typing_names_the_accepted_types():
    from jaxlab.typing import ArrayLike, DTypeLike

    def scale(x: ArrayLike, dtype: DTypeLike = "float32") -> jaxlab.Array:
        return jnp.asarray(x, dtype) * 2
    assert_close(scale([1, 2]), [2, 4])
    assert jaxlab.Array in ArrayLike.__args__ and np.ndarray in ArrayLike.__args__
