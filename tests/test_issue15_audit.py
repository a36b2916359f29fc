"""Issue 15's list, item by item, run with JAX and with jaxlab on every device: each
program gives the same values and dtypes, or raises the same exception type.

The list ("The blockers ..." and "What to build"): random.key and typed keys, jax.tree,
jacobian, the jax.scipy subset, jnp.allclose/convolve, check_grads, defjvps, the nn
functions, dtypes, the tracing gaps, the special values, optim adamw and clipping by
global norm (JAX has no optimizers: checked against optax's documented update, in
NumPy), block_until_ready and JAXLAB_PLATFORMS (the environment variable is run in a
subprocess by tests/test_api_parity.py). Deeper tests of each live beside the feature;
this file is the checklist.
"""
from __future__ import annotations

import operator
import types

import jax
import jax.numpy as jjnp
import jax.test_util  # noqa: F401  (a submodule JAX does not import itself)
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import optim

X = np.array([-2.0, -0.5, 0.0, 0.75, 3.0], np.float32)
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
RHS = np.array([1.0, -2.0, 0.5], np.float32)


def _as_jax(lib):
    """The module pair a program sees: JAX's, or jaxlab's under JAX's names."""
    if lib == "jax":
        return jax, jjnp
    return types.SimpleNamespace(**{n: getattr(jaxlab, n) for n in dir(jaxlab)
                                    if not n.startswith("__")}), jnp


def _fori_over_iterator(jax, jnp):
    """The gotcha: the body is traced once, so next() runs once (JAX gives 0)."""
    it = iter(range(10))
    return jax.lax.fori_loop(0, 10, lambda i, acc: acc + next(it), 0)


def _check_grads(jax, jnp):
    jax.test_util.check_grads(lambda a: jnp.sin(a) * 2, (X,), order=1)
    wrong = jax.custom_jvp(jnp.sin)
    wrong.defjvps(lambda t, ans, x: 3 * t * jnp.cos(x))
    try:
        jax.test_util.check_grads(wrong, (X,), order=1, modes=["fwd"])
    except AssertionError:
        return "caught"
    return "missed"


def _defjvps(jax, jnp):
    f = jax.custom_jvp(lambda x, y: jnp.sin(x) * y)
    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
    return jax.grad(f, (0, 1))(0.7, -2.0)


def _static_positional(jax, jnp):
    from functools import partial

    @partial(jax.jit, static_argnames=["n"])
    def power(x, n):
        for _ in range(n):
            x = x * 2
        return x
    return power(jnp.ones(2), 3)


def _array_of_tracers(jax, jnp):
    return (jax.jit(lambda a, b: jnp.array([a, b * 2]))(1.0, 2.0),
            jax.vmap(lambda r: jnp.array([r, r * r]))(jnp.arange(3)))


def _block_until_ready(jax, jnp):
    tree = {"a": jnp.arange(3.0) * 2, "b": [jnp.ones(2)]}
    out = jax.block_until_ready(tree)
    return out["a"], out["b"][0], out["a"].block_until_ready()


ITEMS = {
    # random.key and typed keys
    "random.key": lambda jax, jnp: jax.random.key_data(jax.random.split(jax.random.key(7), 3)),
    "typed key draw": lambda jax, jnp: jax.random.normal(jax.random.fold_in(
        jax.random.key(7), 3), (4,)),
    "key_impl": lambda jax, jnp: str(jax.random.key_impl(jax.random.key(0))),
    # jax.tree
    "tree.map": lambda jax, jnp: jax.tree.map(operator.add, {"a": X, "b": (1.0, X)},
                                              {"a": X, "b": (2.0, X)}),
    "tree.reduce": lambda jax, jnp: jax.tree.reduce(operator.add, [1, (2, 3), {"x": 4}]),
    "tree.structure": lambda jax, jnp: jax.tree.structure([1, (2, None)]).num_leaves,
    "tree.transpose": lambda jax, jnp: jax.tree.transpose(
        jax.tree.structure([0, 0]), jax.tree.structure((0, 0, 0)),
        [(1, 2, 3), (4, 5, 6)]),
    # jacobian
    "jacobian": lambda jax, jnp: jax.jacobian(lambda v: jnp.sin(v) * v.sum())(X),
    "jacrev of a dict": lambda jax, jnp: jax.jacrev(
        lambda p: p["w"] * p["b"])({"w": X, "b": np.float32(2.0)}),
    # jax.scipy
    "logsumexp": lambda jax, jnp: jax.scipy.special.logsumexp(X, b=np.abs(X) + 1,
                                                              return_sign=True),
    "erf, gammaln": lambda jax, jnp: (jax.scipy.special.erf(X),
                                      jax.scipy.special.gammaln(np.abs(X) + 0.5)),
    "scipy.linalg.solve": lambda jax, jnp: jax.scipy.linalg.solve(SPD, RHS, assume_a="pos"),
    "cho_factor/cho_solve": lambda jax, jnp: jax.scipy.linalg.cho_solve(
        jax.scipy.linalg.cho_factor(SPD), RHS),
    "lu_factor/lu_solve": lambda jax, jnp: jax.scipy.linalg.lu_solve(
        jax.scipy.linalg.lu_factor(SPD), RHS),
    "solve_triangular": lambda jax, jnp: jax.scipy.linalg.solve_triangular(
        np.tril(SPD), RHS, lower=True),
    "det, inv": lambda jax, jnp: (jax.scipy.linalg.det(SPD), jax.scipy.linalg.inv(SPD)),
    # jnp.allclose, jnp.convolve
    "allclose": lambda jax, jnp: (jnp.allclose(X, X + 1e-6), jnp.allclose(X, X + 1)),
    "convolve": lambda jax, jnp: tuple(jnp.convolve(X, X[:3], mode=m)
                                       for m in ("full", "same", "valid")),
    # check_grads, defjvps
    "check_grads": _check_grads,
    "defjvps": _defjvps,
    # nn
    "nn functions": lambda jax, jnp: {n: getattr(jax.nn, n)(X) for n in (
        "identity", "elu", "leaky_relu", "relu6", "hard_tanh", "selu")},
    # dtypes
    "dtype == jnp.float32": lambda jax, jnp: (jnp.ones(2).dtype == jnp.float32,
                                              jnp.arange(2).dtype == jnp.int32),
    "astype": lambda jax, jnp: jnp.arange(3).astype(jnp.float16),
    "finfo, iinfo": lambda jax, jnp: (float(jnp.finfo(jnp.bfloat16).eps),
                                      int(jnp.iinfo(jnp.uint16).max)),
    "can_cast, isdtype": lambda jax, jnp: (jnp.can_cast(jnp.int8, jnp.float16),
                                           jnp.isdtype(jnp.float32, "real floating")),
    "result_type": lambda jax, jnp: str(jnp.result_type(jnp.int8, jnp.uint8, 2.0)),
    "lax.add(1, 1.5) raises": lambda jax, jnp: jax.lax.add(1, 1.5),
    # tracing gaps
    "array of tracers": _array_of_tracers,
    "grad through a Python if": lambda jax, jnp: jax.grad(
        lambda x: x * x if x > 0 else -x)(3.0),
    "static_argnames given positionally": _static_positional,
    "fori_loop over an iterator": _fori_over_iterator,
    "at[].get(mode='fill')": lambda jax, jnp: jnp.asarray(X).at[np.array([1, 9])].get(
        mode="fill", fill_value=-1.0),
    "sum of a list raises": lambda jax, jnp: jnp.sum([1, 2, 3]),
    # special values
    "power(1., inf), power(-0., 3.)": lambda jax, jnp: jnp.power(
        np.float32([1.0, -0.0]), np.float32([np.inf, 3.0])),
    "abs(-0.)": lambda jax, jnp: jnp.abs(np.float32(-0.0)),
    "sign of a NaN scalar": lambda jax, jnp: jnp.sign(np.float32(-np.nan)),
    "var/std of a lone NaN": lambda jax, jnp: (jnp.var(np.float32([np.nan])),
                                               jnp.std(np.float32([np.nan]))),
    # block_until_ready
    "block_until_ready": _block_until_ready,
}


def _leaves(tree):
    return jax.tree.leaves(tree, is_leaf=lambda x: x is None)


def _outcome(lib, item):
    try:
        return "ok", ITEMS[item](*_as_jax(lib))
    except Exception as e:   # the exception type is what is compared
        return "raised", type(e)


@pytest.mark.parametrize("item", ITEMS)
def test_item_as_in_jax(backend, item):
    (their_kind, theirs), (our_kind, ours) = _outcome("jax", item), _outcome("jaxlab", item)
    assert our_kind == their_kind, (ours, theirs)
    if their_kind == "raised":
        assert issubclass(ours, theirs) or issubclass(theirs, ours), (ours, theirs)
        return
    ours = jaxlab.tree_util.tree_leaves(ours)
    theirs = _leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, str):
            assert a == b
            continue
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
            assert (np.signbit(a) == np.signbit(b)).all(), (a, b)   # -0.0 and -NaN too
        else:
            np.testing.assert_array_equal(a, b)


# --- optim: optax's update rules (JAX itself has no optimizers) ----------------------------

def _adamw_reference(p, grads, lr, decay, b1=0.9, b2=0.999, eps=1e-8):
    m = v = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        step = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + decay * p
        p = p - lr * step
    return p


def test_adamw_after_clipping_by_global_norm(backend):
    rng = np.random.default_rng(0)
    p0 = rng.normal(size=(3, 2)).astype(np.float32)
    grads = [rng.normal(size=(3, 2)).astype(np.float32) * 4 for _ in range(3)]
    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adamw(0.05, weight_decay=0.1))
    params, state = {"w": jnp.asarray(p0)}, None
    state = opt.init(params)
    for g in grads:
        updates, state = opt.update({"w": jnp.asarray(g)}, state, params)
        params = optim.apply_updates(params, updates)
    clipped = [g / max(1.0, np.linalg.norm(g.astype(np.float64))) for g in grads]
    expected = _adamw_reference(p0.astype(np.float64), clipped, 0.05, 0.1)
    np.testing.assert_allclose(np.asarray(params["w"]), expected, rtol=2e-5, atol=2e-6)
