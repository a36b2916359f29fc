"""jaxlab.nn's initializers, dot_product_attention, log1mexp, logmeanexp and tanh
against jax.nn on every device."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

RNG = np.random.default_rng(3)
Q = RNG.standard_normal((2, 3, 4, 2)).astype(np.float32)   # B T N H
K = RNG.standard_normal((2, 5, 2, 2)).astype(np.float32)   # B S K H: 2 query heads per key head
V = RNG.standard_normal((2, 5, 2, 2)).astype(np.float32)

# one of each draw (truncated normal, uniform, normal), each fan rule, and the QR ones
INITIALIZERS = [("glorot_normal", (), (3, 4)), ("he_uniform", (), (2, 3, 4)),
                ("variance_scaling", (1.0, "fan_geo_avg", "normal", 0, 1, ()), (2, 3)),
                ("orthogonal", (), (3, 5)), ("orthogonal", (2.0, 0), (2, 3, 4)),
                ("delta_orthogonal", (), (3, 3, 2, 4)), ("constant", (2.5,), (2,))]


@pytest.mark.parametrize("name, args, shape", INITIALIZERS, ids=lambda v: str(v))
def test_initializers_match_jax(backend, name, args, shape):
    ours = getattr(jaxlab.nn.initializers, name)(*args)(jaxlab.random.PRNGKey(1), shape)
    theirs = getattr(jax.nn.initializers, name)(*args)(jax.random.PRNGKey(1), shape)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours.dtype == theirs.dtype


def test_constant_initializers_and_errors_match_jax(backend):
    key = jaxlab.random.PRNGKey(0)
    for name in ("zeros", "ones"):
        ours = getattr(jaxlab.nn.initializers, name)(key, (2, 3), jnp.float16)
        assert_close(ours, getattr(jax.nn.initializers, name)(jax.random.PRNGKey(0), (2, 3),
                                                              jjnp.float16))
    I = jaxlab.nn.initializers
    for make, shape in [(lambda m: m.glorot_normal(), (3,)),
                        (lambda m: m.variance_scaling(1.0, "bad", "normal"), (2, 2)),
                        (lambda m: m.variance_scaling(1.0, "fan_in", "bad"), (2, 2)),
                        (lambda m: m.orthogonal(), (3,)), (lambda m: m.delta_orthogonal(), (3, 3)),
                        (lambda m: m.delta_orthogonal(), (3, 4, 3))]:
        with pytest.raises(ValueError) as theirs:
            make(jax.nn.initializers)(jax.random.PRNGKey(0), shape)
        with pytest.raises(ValueError) as ours:
            make(I)(key, shape)
        assert str(ours.value) == str(theirs.value)


ATTENTION_CASES = [{},
                   {"mask": RNG.random((2, 1, 3, 5)) > 0.4,
                    "bias": RNG.standard_normal((1, 4, 3, 5)).astype(np.float32),
                    "is_causal": True},
                   {"local_window_size": (1, 0),
                    "query_seq_lengths": np.array([2, 3], np.int32),
                    "key_value_seq_lengths": np.array([1, 4], np.int32)},
                   {"scale": 0.3, "return_residual": True,   # a row with no key left
                    "mask": np.arange(5) < np.array([0, 2, 5])[:, None]}]


@pytest.mark.parametrize("kw", ATTENTION_CASES, ids=lambda kw: ",".join(kw) or "plain")
def test_dot_product_attention_matches_jax(backend, kw):
    ours = jaxlab.nn.dot_product_attention(Q, K, V, **kw)
    theirs = jax.nn.dot_product_attention(Q, K, V, **kw)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_dot_product_attention_jit_grad_unbatched_and_errors(backend):
    def loss(api):
        return lambda q, k: (api.nn.dot_product_attention(q, k, V[0], is_causal=True) ** 2).sum()
    ours = jaxlab.jit(jaxlab.grad(loss(jaxlab), (0, 1)))(Q[0], K[0])
    theirs = jax.grad(loss(jax), (0, 1))(Q[0], K[0])
    for a, b in zip(ours, theirs):
        assert_close(a, b, rtol=1e-4, atol=1e-5)
    for args, kw in [((Q, K, V[..., :1]), {}), ((Q[..., :3, :], K, V), {}),
                     ((Q, K, V), {"implementation": "foo"}),
                     ((Q, K, V), {"mask": np.ones((3, 5), np.float32)}),
                     ((Q.astype(np.int32), K, V), {})]:
        with pytest.raises(ValueError) as theirs_err:
            jax.nn.dot_product_attention(*args, **kw)
        with pytest.raises(ValueError) as ours_err:
            jaxlab.nn.dot_product_attention(*args, **kw)
        assert str(ours_err.value) == str(theirs_err.value)


X = np.array([1e-3, 0.3, 0.69, 0.7, 5.0, 40.0], np.float32)


@pytest.mark.parametrize("name, kw", [("log1mexp", {}), ("tanh", {}),
                                      ("logmeanexp", {}),
                                      ("logmeanexp", {"axis": 1, "keepdims": True,
                                                      "where": np.array([[1, 0, 1]], bool)})])
def test_log_functions_match_jax(backend, name, kw):
    x = X.reshape(2, 3) if name == "logmeanexp" else X
    ours, theirs = getattr(jaxlab.nn, name), getattr(jax.nn, name)
    assert_close(ours(x, **kw), theirs(x, **kw), rtol=2e-6, atol=1e-6)
    assert ours(x, **kw).dtype == theirs(x, **kw).dtype
    grad_ours = jaxlab.grad(lambda v: ours(v, **kw).sum())(x)
    assert_close(grad_ours, jax.grad(lambda v: theirs(v, **kw).sum())(x), rtol=1e-5, atol=1e-6)
    assert_close(jaxlab.vmap(lambda v: ours(v))(x.reshape(2, 3)),
                 jax.vmap(lambda v: theirs(v))(x.reshape(2, 3)), rtol=2e-6, atol=1e-6)
