"""JAX's API where programs from JAX's docs meet it: Jacobians over pytrees,
static_argnames given positionally, defjvps, check_grads, JAXLAB_PLATFORMS."""
from __future__ import annotations

import functools
import os
import subprocess
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.test_util import check_grads
from tests.conftest import assert_close

PARAMS = {"w": (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 5,
          "b": np.array([0.5, -1.0], np.float32)}
X = np.array([0.3, -1.0, 2.0], np.float32)


def _model(m):
    return lambda p, x: {"y": m.tanh(p["w"] @ x + p["b"]), "l2": (p["w"] ** 2).sum()}


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "jacobian"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacobians_of_pytrees_match_jax(backend, transform, argnums):
    ours = getattr(jaxlab, transform)(_model(jnp), argnums)(PARAMS, X)
    theirs = getattr(jax, transform)(_model(jjnp), argnums)(PARAMS, X)
    our_leaves, our_tree = jaxlab.tree_util.tree_flatten(ours)
    their_leaves, their_tree = jax.tree.flatten(theirs)
    assert our_tree.num_leaves == their_tree.num_leaves
    for a, b in zip(our_leaves, their_leaves):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_jit_static_argnames_given_positionally(backend):
    calls = []

    @functools.partial(jaxlab.jit, static_argnames=["n"])
    def repeat_double(x, n):
        calls.append(n)
        for _ in range(n):   # a Python loop on n: n must be static
            x = x * 2
        return x
    assert_close(repeat_double(jnp.ones(2), 3), np.full(2, 8.0, np.float32))
    assert_close(repeat_double(jnp.ones(2), n=2), np.full(2, 4.0, np.float32))
    repeat_double(jnp.ones(2), 3)
    assert calls == [3, 2]

    @functools.partial(jaxlab.jit, static_argnums=1)
    def scale(x, k):
        return x * k if k > 1 else x
    assert_close(scale(jnp.ones(2), k=3), np.full(2, 3.0, np.float32))


def test_defjvps_matches_jax(backend):
    def build(api, m):
        @api.custom_jvp
        def f(x, y):
            return m.sin(x) * y
        f.defjvps(lambda t, ans, x, y: m.cos(x) * t * y,
                  lambda t, ans, x, y: m.sin(x) * t)
        return f
    ours, theirs = build(jaxlab, jnp), build(jax, jjnp)
    x, y = np.float32(0.7), np.float32(-2.0)
    assert_close(ours(x, y), theirs(x, y))
    for argnum in (0, 1):
        assert_close(jaxlab.grad(ours, argnum)(x, y), jax.grad(theirs, argnum)(x, y))
    only_x = jaxlab.custom_jvp(lambda x, y: x * y)
    only_x.defjvps(lambda t, ans, x, y: t * y, None)
    assert float(jaxlab.grad(only_x, 1)(x, y)) == 0.0


def test_check_grads_passes_and_catches_a_wrong_rule(backend):
    check_grads(lambda a, b: jnp.tanh(a) * b, (X, X[::-1].copy()), order=2)
    check_grads(lambda p: _model(jnp)(p, X), (PARAMS,), order=1, modes=["rev"])
    wrong = jaxlab.custom_jvp(jnp.sin)
    wrong.defjvps(lambda t, ans, x: 2 * t * jnp.cos(x))
    with pytest.raises(AssertionError):
        check_grads(wrong, (X,), order=1, modes=["fwd"])
    with pytest.raises(ValueError, match="modes"):
        check_grads(jnp.sin, (X,), order=1, modes=["sideways"])


@pytest.mark.parametrize("value,expected", [("cpu", "CpuDevice"), ("wasm,cpu", "WasmDevice"),
                                            ("nonsense", "ValueError")])
def test_platforms_environment_variable(value, expected):
    script = ("import jaxlab, jaxlab.numpy as jnp\n"
              "try:\n    print(repr((jnp.ones(2) + 1).device), len(jaxlab.devices()))\n"
              "except ValueError as e:\n    print('ValueError', e)\n")
    env = {**os.environ, "JAXLAB_PLATFORMS": value}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.startswith(expected), out.stdout + out.stderr
    if expected == "CpuDevice":
        assert out.stdout.split()[-1] == "1"    # the other devices were left out
