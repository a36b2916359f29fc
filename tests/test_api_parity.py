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


# --- special values, as JAX computes them on every device --------------------------------

_BASES = np.array([1.0, -1.0, -0.0, 0.0, -2.0, 2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, -8.0],
                  np.float32)
_EXPONENTS = np.array([np.inf, -np.inf, 3.0, -3.0, 0.5, 2.0, 0.0, np.nan, -0.0, 1 / 3, 1e10,
                       -1.0], np.float32)


def _same_special_values(actual, expected, rtol=0.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype
    both_nan = np.isnan(actual) & np.isnan(expected)
    np.testing.assert_allclose(actual[~both_nan], expected[~both_nan], rtol=rtol)
    assert (np.signbit(actual) == np.signbit(expected))[~both_nan].all()   # -0.0 vs 0.0
    assert (np.isnan(actual) == np.isnan(expected)).all()


def test_power_special_values(backend):
    x, y = np.meshgrid(_BASES, _EXPONENTS)
    _same_special_values(jnp.power(x, y), jjnp.power(x, y), rtol=1e-6)


@pytest.mark.parametrize("name", ["abs", "sign"])
def test_abs_and_sign_of_zeros_and_nan(backend, name):
    _same_special_values(getattr(jnp, name)(_BASES), getattr(jjnp, name)(_BASES))
    _same_special_values(getattr(jnp, name)(np.float32(np.nan)),
                         getattr(jjnp, name)(np.float32(np.nan)))


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_of_a_lone_nan(backend, name):
    for data in (np.float32([np.nan]), np.float32([[1.0, np.nan], [2.0, 4.0]]).T[:1]):
        _same_special_values(getattr(jnp, name)(data), getattr(jjnp, name)(data))


# --- tracing, as JAX traces --------------------------------------------------------------

def test_array_of_traced_values(backend):
    pair = lambda m: lambda a, b: m.array([a, 2 * b, 1.5])
    a, b = np.float32(1.0), np.int32(3)
    assert_close(jaxlab.jit(pair(jnp))(a, b), pair(jjnp)(a, b))
    rows = np.arange(3, dtype=np.int32)
    assert_close(jaxlab.vmap(lambda r: jnp.array([r, r * r]))(rows),
                 jax.vmap(lambda r: jjnp.array([r, r * r]))(rows))
    assert_close(jaxlab.grad(lambda x: jnp.array([[x, x * x], [1.0, x]]).sum())(2.0),
                 jax.grad(lambda x: jjnp.array([[x, x * x], [1.0, x]]).sum())(2.0))


def test_grad_through_python_control_flow_on_concrete_values(backend):
    def branchy(x):
        if x > 0:                 # bool() of a concrete value under grad: allowed
            return x * x * int(x)
        return -x
    for x in (3.0, -2.0):
        assert_close(jaxlab.grad(branchy)(x), jax.grad(branchy)(x))
    with pytest.raises(TypeError):      # float() is refused under grad, as in JAX
        jaxlab.grad(lambda x: float(x) * x)(2.0)
    with pytest.raises(TypeError):      # under jit nothing is concrete
        jaxlab.jit(jaxlab.grad(branchy))(3.0)


def test_gather_with_fill_mode(backend):
    x = np.arange(5, dtype=np.float32)
    idx = np.array([0, 7, -9, 4])
    assert_close(jnp.asarray(x).at[idx].get(mode="fill", fill_value=-1.0),
                 jjnp.asarray(x).at[idx].get(mode="fill", fill_value=-1.0))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "argmax", "cumsum", "any", "var"])
def test_reductions_refuse_lists_as_jax(name):
    with pytest.raises(TypeError) as theirs:
        getattr(jjnp, name)([1, 2, 3])
    with pytest.raises(TypeError) as ours:
        getattr(jnp, name)([1, 2, 3])
    assert str(ours.value) == str(theirs.value)
    assert_close(getattr(jnp, name)(jnp.asarray([1, 2, 3])),
                 getattr(jjnp, name)(jjnp.asarray([1, 2, 3])))


@pytest.mark.parametrize("call", [
    lambda m: m.sin([1.0, 2.0]), lambda m: m.add(1.0, [1.0, 2.0]), lambda m: m.sort([3, 1]),
    lambda m: m.where([True, False], 1, 2), lambda m: m.ravel([1, 2]),
    lambda m: m.transpose([[1, 2]]), lambda m: m.zeros_like([1, 2]),
    lambda m: m.broadcast_arrays([1], [2])])
def test_elementwise_and_shape_functions_refuse_lists_as_jax(call):
    with pytest.raises(TypeError) as theirs:
        call(jjnp)
    with pytest.raises(TypeError) as ours:
        call(jnp)
    assert str(ours.value) == str(theirs.value)


def test_jit_closing_over_a_lazy_array_leaves_it_usable(backend):
    # compiling realizes the closed-over constant before recording kernels, so the
    # user's array keeps a real buffer (not one of the program's placeholders)
    data = jnp.arange(6.0) * 2.0           # lazy: not computed yet
    step = jaxlab.jit(lambda w: jaxlab.grad(lambda v: (v * data).sum())(w))
    assert_close(step(jnp.ones(6)), np.arange(6, dtype=np.float32) * 2)
    assert_close(data + 1, np.arange(6, dtype=np.float32) * 2 + 1)


def test_constant_nans_keep_their_sign(backend):
    nan = float("nan")
    for value in (nan, -nan):
        for made in (jnp.full((3,), value), jnp.ones(3) * value):
            np.testing.assert_array_equal(np.signbit(np.asarray(made)), np.signbit(value))
            np.testing.assert_array_equal(np.asarray(jnp.signbit(made)), np.signbit(value))
