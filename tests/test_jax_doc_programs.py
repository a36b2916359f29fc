"""Programs in the style of JAX's own documentation (quickstart, key concepts, random
numbers, the autodiff cookbook, custom derivatives, jax.nn, the MLP tutorial,
gotchas), each written once against a `jax`-like module pair and run with JAX and with
jaxlab: the same values, or the same exception type."""
from __future__ import annotations

import types
import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp


def quickstart(jax, jnp):
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))
    key = jax.random.key(1701)
    x = jax.random.normal(key, (10,))
    x_small = jnp.arange(3.0)
    mat = jax.random.normal(key, (15, 10))
    batched_x = jax.random.normal(key, (4, 10))
    return {"selu": jax.jit(selu)(x), "grad": jax.grad(sum_logistic)(x_small),
            "hessian": jax.jacfwd(jax.jacrev(sum_logistic))(x_small),
            "vmap": jax.vmap(lambda v: jnp.dot(mat, v))(batched_x)}


def key_concepts(jax, jnp):
    params = [1, 2, (jnp.arange(3), jnp.ones(2))]
    doubled = jax.tree.map(lambda p: p * 2, params)
    key = jax.random.key(42)
    key, subkey = jax.random.split(key)
    return {"tree": jax.tree.leaves(doubled), "n_leaves": len(jax.tree.leaves(params)),
            "sample": jax.random.uniform(subkey, (3,)),
            "key_data": jax.random.key_data(key)}


def random_numbers(jax, jnp):
    key = jax.random.key(0)
    keys = jax.random.split(key, 3)
    draws = [jax.random.normal(k, (2,)) for k in keys]
    folded = jax.random.fold_in(key, 7)
    return {"draws": draws, "ints": jax.random.randint(folded, (4,), 0, 10),
            "perm": jax.random.permutation(keys[0], 5),
            "choice_like": jax.random.categorical(keys[1], jnp.log(jnp.array([0.2, 0.5, 0.3])),
                                                  shape=(6,)),
            "bern": jax.random.bernoulli(keys[2], 0.3, (5,)),
            "legacy": jax.random.normal(jax.random.PRNGKey(0), (2,))}


def logistic_regression(jax, jnp):
    """The autodiff cookbook's model, trained a few steps with grad over a dict."""
    key = jax.random.key(0)
    inputs = jnp.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15],
                        [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
    targets = jnp.array([True, True, False, True])

    def predict(params, x):
        return jax.nn.sigmoid(jnp.dot(x, params["W"]) + params["b"])

    def loss(params):
        preds = predict(params, inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))
    k1, k2 = jax.random.split(key)
    params = {"W": jax.random.normal(k1, (3,)), "b": jax.random.normal(k2, ())}
    for _ in range(3):
        grads = jax.grad(loss)(params)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return {"params": params, "jac": jax.jacrev(loss)(params), "loss": loss(params),
            "hess_W": jax.hessian(lambda w: loss({"W": w, "b": params["b"]}))(params["W"])}


def custom_derivatives(jax, jnp):
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))
    log1pexp.defjvps(lambda t, ans, x: (1 - 1 / (1 + jnp.exp(x))) * t)

    @jax.custom_vjp
    def clip_gradient(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (jnp.clip(g, -0.5, 0.5),)
    clip_gradient.defvjp(fwd, bwd)
    return {"stable_grad": jax.grad(log1pexp)(100.0),
            "vmapped": jax.vmap(jax.grad(log1pexp))(jnp.arange(3.0)),
            "clipped": jax.grad(lambda x: 3.0 * clip_gradient(x))(1.0)}


def control_flow(jax, jnp):
    def f(x):
        if x < 3:        # Python control flow on a concrete value: fine under grad
            return 3.0 * x ** 2
        return -4 * x
    from functools import partial

    @partial(jax.jit, static_argnames=["n"])
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    return {"grad_lo": jax.grad(f)(2.0), "grad_hi": jax.grad(f)(4.0), "static": g(10.0, 20),
            "fori": jax.lax.fori_loop(0, 5, lambda i, acc: acc + i, 0)}


def mlp_training(jax, jnp):
    """The MLP tutorial's shape: init with split keys, relu layers, log-softmax
    cross-entropy, jitted SGD steps, accuracy."""
    sizes = [4, 8, 3]
    keys = jax.random.split(jax.random.key(0), len(sizes))
    params = [(0.1 * jax.random.normal(k, (n, m)), jnp.zeros(n))
              for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
    x = jax.random.normal(keys[-1], (16, 4))
    labels = jax.nn.one_hot(jnp.arange(16) % 3, 3)

    def predict(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w.T + b)
        w, b = params[-1]
        logits = x @ w.T + b
        return logits - jax.scipy.special.logsumexp(logits, axis=1, keepdims=True)

    def loss(params):
        return -jnp.mean(jnp.sum(predict(params, x) * labels, axis=1))

    @jax.jit
    def update(params):
        grads = jax.grad(loss)(params)
        return [(w - 0.5 * dw, b - 0.5 * db) for (w, b), (dw, db) in zip(params, grads)]
    for _ in range(3):
        params = update(params)
    accuracy = jnp.mean(jnp.argmax(predict(params, x), axis=1) == jnp.arange(16) % 3)
    return {"loss": loss(params), "accuracy": accuracy}


def nn_and_scipy(jax, jnp):
    x = jnp.linspace(-3.0, 3.0, 7)
    return {name: getattr(jax.nn, name)(x) for name in
            ("relu", "elu", "leaky_relu", "relu6", "hard_tanh", "selu", "gelu", "softplus",
             "silu", "sigmoid", "log_sigmoid", "soft_sign", "celu")} | {
        "softmax": jax.nn.softmax(x), "erf": jax.scipy.special.erf(x),
        "gammaln": jax.scipy.special.gammaln(x + 4.0),
        "norm_logpdf": jax.scipy.stats.norm.logpdf(x, 1.0, 2.0),
        "allclose": jnp.allclose(x, x + 1e-7), "convolve": jnp.convolve(x, jnp.ones(3) / 3)}


def dtypes(jax, jnp):
    x = jnp.arange(5)
    return {"int_is_int32": x.dtype == jnp.int32, "as_float": x.astype(jnp.float32),
            "promoted": (x * 1.5).dtype == jnp.float32, "eps": jnp.finfo(jnp.float32).eps,
            "max": jnp.iinfo(jnp.int32).max, "float32_call": jnp.float32(3),
            "result_type": str(jnp.result_type(jnp.int32, jnp.float16)),
            "issubdtype": jnp.issubdtype(x.dtype, jnp.integer)}


PROGRAMS = [quickstart, key_concepts, random_numbers, logistic_regression,
            custom_derivatives, control_flow, mlp_training, nn_and_scipy, dtypes]


def _jaxlab_as_jax():
    """jaxlab under JAX's module names (what a user's `import jax` swap gives)."""
    return types.SimpleNamespace(**{n: getattr(jaxlab, n) for n in dir(jaxlab)
                                    if not n.startswith("__")}), jnp


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_runs_unchanged(program):
    expected = program(jax, jjnp)
    actual = program(*_jaxlab_as_jax())
    ours, our_tree = jaxlab.tree_util.tree_flatten(actual)
    theirs = jax.tree.leaves(expected)
    assert len(ours) == len(theirs), (our_tree, jax.tree.structure(expected))
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
        else:
            np.testing.assert_array_equal(a, b)


GOTCHAS = {
    "sum_of_list": lambda jax, jnp: jnp.sum([1, 2, 3]),
    "lax_mixed_dtypes": lambda jax, jnp: jax.lax.add(1, 1.5),
    "float_under_grad": lambda jax, jnp: jax.grad(lambda x: float(x) * x)(1.0),
    "branch_under_jit": lambda jax, jnp: jax.jit(lambda x: x if x > 0 else -x)(1.0),
}


@pytest.mark.parametrize("name", GOTCHAS)
def test_gotchas_fail_as_in_jax(name):
    with pytest.raises(Exception) as theirs:
        GOTCHAS[name](jax, jjnp)
    with pytest.raises(Exception) as ours:
        GOTCHAS[name](*_jaxlab_as_jax())
    assert isinstance(ours.value, TypeError) == isinstance(theirs.value, TypeError)


def test_64_bit_request_warns_as_in_jax():
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        jjnp.ones(2, dtype=jjnp.float64)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        jnp.ones(2, dtype=jnp.float64)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
