"""Transformations against JAX (the oracle) and against each other."""
import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is the test oracle for transformations")
import jax.numpy as jjnp  # noqa: E402

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402
from jaxlab import lax  # noqa: E402
from tests.conftest import assert_close  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal((4, 5)).astype(np.float32)


def _both(name):
    """The same function written once, run with either library's namespace."""
    return lambda np_mod, lax_mod: FUNCTIONS[name](np_mod, lax_mod)


# scalar-valued functions of one (3, 4) array, written against a numpy-like module
FUNCTIONS = {
    "sin_sum": lambda m, l: lambda x: m.sum(m.sin(x) * x),
    "tanh_matmul": lambda m, l: lambda x: m.sum(m.tanh(x @ m.asarray(W))),
    "softmax_ce": lambda m, l: lambda x: -m.sum(x - m.log(m.sum(m.exp(x), axis=1,
                                                                  keepdims=True))),
    "max_min": lambda m, l: lambda x: m.sum(m.max(x, axis=0) * m.min(x, axis=1).sum()),
    "where_abs": lambda m, l: lambda x: m.sum(m.where(x > 0, x * x, m.abs(x) * 3.0)),
    "transpose_reshape": lambda m, l: lambda x: m.sum(m.reshape(x.T, (6, 2))[::2] ** 2),
    "pad_concat": lambda m, l: lambda x: m.sum(m.concatenate([x, x * 2], axis=1) ** 3),
    "cumsum_prod": lambda m, l: lambda x: m.sum(m.cumsum(x, axis=1) * m.prod(x, axis=0)),
    "div_sqrt": lambda m, l: lambda x: m.sum(m.sqrt(x * x + 1.0) / (x * x + 2.0)),
    "exp_log1p": lambda m, l: lambda x: m.sum(m.log1p(m.exp(x))),
    "broadcast": lambda m, l: lambda x: m.sum((x[:, None, :] * x[None, :, :]) ** 2),
    "erf_pow": lambda m, l: lambda x: m.sum(l.erf(x) * x ** 3),
}
NAMES = sorted(FUNCTIONS)


def _pair(name):
    return FUNCTIONS[name](jnp, lax), FUNCTIONS[name](jjnp, jax.lax)


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jax(backend, name):
    ours, theirs = _pair(name)
    assert_close(jaxlab.grad(ours)(jnp.asarray(X)), jax.grad(theirs)(X), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", NAMES)
def test_jit_of_grad_equals_grad(name):
    ours, _ = _pair(name)
    x = jnp.asarray(X)
    assert_close(jaxlab.jit(jaxlab.grad(ours))(x), jaxlab.grad(ours)(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["sin_sum", "tanh_matmul", "where_abs", "div_sqrt"])
def test_vmap_of_grad_equals_loop(name):
    ours, _ = _pair(name)
    xs = jnp.asarray(RNG.standard_normal((3, 3, 4)).astype(np.float32))
    batched = jaxlab.vmap(jaxlab.grad(ours))(xs)
    looped = np.stack([np.asarray(jaxlab.grad(ours)(xs[i])) for i in range(3)])
    assert_close(batched, looped, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_jvp_matches_finite_differences(name):
    ours, _ = _pair(name)
    direction = RNG.standard_normal(X.shape).astype(np.float32)
    _, tangent = jaxlab.jvp(ours, (jnp.asarray(X),), (jnp.asarray(direction),))
    x64 = X.astype(np.float64)
    f64 = FUNCTIONS[name](np, _NumpyLax)
    eps = 1e-4
    fd = (f64(x64 + eps * direction) - f64(x64 - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(float(tangent), fd, rtol=2e-3, atol=2e-3)


class _NumpyLax:
    """Just enough of lax in float64 NumPy for finite differences."""
    @staticmethod
    def erf(x):
        from jaxlab.ir.evaluate import _erf64
        return _erf64(np.asarray(x, np.float64))


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_jacobians_match_jax(transform):
    f_ours = lambda x: jnp.tanh(x @ jnp.asarray(W))  # noqa: E731
    f_jax = lambda x: jjnp.tanh(x @ W)  # noqa: E731
    assert_close(getattr(jaxlab, transform)(f_ours)(jnp.asarray(X)),
                 getattr(jax, transform)(f_jax)(X), rtol=1e-4, atol=1e-5)


def test_hessian_matches_jax():
    v = RNG.standard_normal(4).astype(np.float32)
    f_ours = lambda x: jnp.sum(jnp.sin(x) * x ** 2)  # noqa: E731
    f_jax = lambda x: jjnp.sum(jjnp.sin(x) * x ** 2)  # noqa: E731
    assert_close(jaxlab.hessian(f_ours)(jnp.asarray(v)), jax.hessian(f_jax)(v),
                 rtol=1e-4, atol=1e-5)


def test_vmap_in_out_axes_and_nesting():
    a = RNG.standard_normal((4, 5, 2)).astype(np.float32)
    f = lambda x, y: x @ y  # noqa: E731
    out = jaxlab.vmap(jaxlab.vmap(f, in_axes=(0, None)), in_axes=(None, 2), out_axes=1)(
        jnp.asarray(X), jnp.asarray(a))
    ref = jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(None, 2), out_axes=1)(X, a)
    assert_close(out, ref, rtol=1e-5, atol=1e-5)


def test_scan_and_its_gradient_match_jax():
    xs = RNG.standard_normal((5, 3)).astype(np.float32)

    def make(m, l):
        def f(h0):
            def step(h, x):
                h = m.tanh(h * 0.9 + x)
                return h, h.sum()
            h, ys = l.scan(step, h0, m.asarray(xs))
            return h.sum() + ys.sum()
        return f
    h0 = np.ones(3, np.float32)
    assert_close(make(jnp, lax)(jnp.asarray(h0)), make(jjnp, jax.lax)(h0), rtol=1e-5)
    assert_close(jaxlab.grad(make(jnp, lax))(jnp.asarray(h0)),
                 jax.grad(make(jjnp, jax.lax))(h0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("strides,padding,groups", [((1, 1), "SAME", 1), ((2, 2), "VALID", 1),
                                                    ((1, 2), [(1, 0), (2, 1)], 2)])
def test_conv_and_its_gradients_match_jax(strides, padding, groups):
    x = RNG.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = RNG.standard_normal((6, 4 // groups, 3, 2)).astype(np.float32)

    def loss(l, m):
        return lambda x, w: m.sum(l.conv_general_dilated(
            x, w, strides, padding, feature_group_count=groups) ** 2)
    ours = jaxlab.grad(loss(lax, jnp), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(w))
    theirs = jax.grad(loss(jax.lax, jjnp), argnums=(0, 1))(x, w)
    for a, b in zip(ours, theirs):
        assert_close(a, b, rtol=1e-3, atol=1e-3)


def test_max_pool_gradient_matches_jax():
    x = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    ours = jaxlab.grad(lambda v: jnp.sum(lax.reduce_window(
        v, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")))(jnp.asarray(x))
    theirs = jax.grad(lambda v: jjnp.sum(jax.lax.reduce_window(
        v, -np.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")))(x)
    assert_close(ours, theirs)


def test_make_jaxpr_text_format():
    text = str(jaxlab.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(jnp.ones((7, 13))))
    assert text.startswith("{ lambda ; a:f32[7,13]. let")
    assert "b:f32[7,13] = sin a" in text
    assert text.rstrip().endswith("in (c,) }") or text.rstrip().endswith("in (d,) }")


def test_jit_retraces_only_when_avals_or_statics_change():
    traces = []

    def f(x, n):
        traces.append(1)
        return x * n
    g = jaxlab.jit(f, static_argnums=1)
    g(jnp.ones(3), 2)
    g(jnp.ones(3) * 5, 2)
    assert len(traces) == 1
    g(jnp.ones(4), 2)
    g(jnp.ones(3), 3)
    g(jnp.ones(3, dtype=jnp.int32), 3)
    assert len(traces) == 4
    assert_close(g(jnp.arange(3.0), 3), np.arange(3.0) * 3)


def test_jit_static_argnames_and_pytrees():
    @jaxlab.jit
    def f(params, x):
        return {"y": params["w"] @ x + params["b"], "n": x.sum()}
    params = {"w": jnp.asarray(W.T), "b": jnp.ones(5)}
    out = f(params, jnp.asarray(X[0]))
    assert_close(out["y"], W.T @ X[0] + 1, rtol=1e-5)
    g = jaxlab.jit(lambda x, mode: x * 2 if mode == "double" else x,
                   static_argnames="mode")
    assert_close(g(jnp.ones(2), mode="double"), np.full(2, 2.0))


def test_jit_program_replays_without_tracing():
    g = jaxlab.jit(lambda x: jnp.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1))
    x = jnp.asarray(X)
    g(x)
    program = g.lower(x)
    text = program.text()
    assert "jit output" in text and "run r_" in text
    with jaxlab.capture() as log:
        g(x).block_until_ready()
    assert all(e.cache_hit for e in log) and len(log) == len(program.steps)
    assert any(e.equations for e in log)


def test_tracer_misuse_names_the_line():
    def f(x):
        if x > 0:   # a Python branch on a traced value
            return x
        return -x
    with pytest.raises(jaxlab.core.trace.ConcretizationTypeError,
                       match="test_transformations.py") as err:
        jaxlab.jit(f)(jnp.ones(()))
    assert "bool()" in str(err.value)
    with pytest.raises(TypeError, match="float"):
        jaxlab.grad(lambda x: float(x))(jnp.ones(()))
    assert float(jaxlab.jit(lambda x: x + 1)(jnp.ones(()))) == 2.0   # still works


def test_grad_errors_are_clear():
    with pytest.raises(TypeError, match="scalar"):
        jaxlab.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="argnums"):
        jaxlab.grad(lambda x: x.sum(), argnums=3)(jnp.ones(3))


def test_value_and_grad_has_aux_and_argnums():
    def f(x, y):
        return jnp.sum(x * y), {"norm": jnp.sum(x * x)}
    (val, aux), (gx, gy) = jaxlab.value_and_grad(f, argnums=(0, 1), has_aux=True)(
        jnp.asarray(X), jnp.asarray(X * 2))
    assert_close(val, np.sum(X * X * 2), rtol=1e-5)
    assert_close(aux["norm"], np.sum(X * X), rtol=1e-5)
    assert_close(gx, X * 2) and assert_close(gy, X)


def test_stop_gradient_and_custom_rules():
    assert_close(jaxlab.grad(lambda x: jnp.sum(x * lax.stop_gradient(x)))(jnp.ones(3)),
                 np.ones(3))

    @jaxlab.custom_jvp
    def clipped(x):
        return jnp.sin(x)

    @clipped.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return clipped(x), t * 7.0
    assert_close(jaxlab.grad(lambda x: clipped(x).sum())(jnp.ones(2)), np.full(2, 7.0))
    assert_close(jaxlab.jit(jaxlab.grad(lambda x: clipped(x).sum()))(jnp.ones(2)),
                 np.full(2, 7.0))

    @jaxlab.custom_vjp
    def scaled(x):
        return x * 1.0

    scaled.defvjp(lambda x: (x, None), lambda res, ct: (ct * 3.0,))
    assert_close(jaxlab.grad(lambda x: scaled(x).sum())(jnp.ones(2)), np.full(2, 3.0))


def test_control_flow():
    assert_close(lax.cond(jnp.asarray(True), lambda x: x + 1, lambda x: x - 1, jnp.ones(2)),
                 np.full(2, 2.0))
    f = jaxlab.jit(lambda p, x: lax.cond(p, lambda v: v * 2, lambda v: v * 3, x))
    assert_close(f(jnp.asarray(False), jnp.ones(2)), np.full(2, 3.0))
    g = jaxlab.vmap(lambda i, x: lax.switch(i, [lambda v: v, lambda v: v * 10], x))
    assert_close(g(jnp.asarray([0, 1]), jnp.ones(2)), np.array([1.0, 10.0]))
    assert_close(lax.fori_loop(0, 5, lambda i, v: v + i, jnp.zeros(())), 10.0)
    assert_close(lax.while_loop(lambda v: v < 10, lambda v: v * 2, jnp.ones(())), 16.0)
    d = jaxlab.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, x))(jnp.asarray(2.0))
    assert_close(d, 4 * 2.0 ** 3)


def test_tree_util_roundtrip_and_custom_nodes():
    from collections import namedtuple
    from jaxlab import tree_util
    Point = namedtuple("Point", "x y")
    tree = {"a": [1, (2, None)], "b": Point(3, 4)}
    leaves, treedef = tree_util.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert tree_util.tree_unflatten(treedef, leaves) == tree
    assert tree_util.tree_map(lambda v: v * 10, tree)["b"] == Point(30, 40)

    class Box:
        def __init__(self, v):
            self.v = v
    tree_util.register_pytree_node(Box, lambda b: ([b.v], None), lambda _, c: Box(c[0]))
    g = jaxlab.grad(lambda b: jnp.sum(b.v ** 2))(Box(jnp.ones(2)))
    assert isinstance(g, Box)
    assert_close(g.v, np.full(2, 2.0))


def test_every_primitive_has_its_rules():
    from jaxlab.core.primitives import (PRIMITIVES, batch_rules, jvp_rules, lowerings,
                                        transpose_rules)
    linear = {"add", "sub", "neg", "mul", "div", "convert_element_type", "select_n",
              "reshape", "transpose", "broadcast_in_dim", "pad", "slice", "rev",
              "concatenate", "reduce_sum", "cumsum", "dot_general", "gather", "scatter",
              "triangular_solve", "windows", "custom_lin"}
    missing = []
    for name, p in PRIMITIVES.items():
        for table, what in ((lowerings, "lowering"), (jvp_rules, "jvp"),
                            (batch_rules, "batching")):
            if p not in table and name != "custom_lin":
                missing.append(f"{name}: {what}")
        if name in linear and p not in transpose_rules:
            missing.append(f"{name}: transpose")
    assert not missing, missing
    assert len(PRIMITIVES) >= 50


def test_linalg_routine_gradients_match_jax():
    a = RNG.standard_normal((4, 4)).astype(np.float32)
    spd = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    assert_close(jaxlab.grad(lambda m: jnp.linalg.cholesky(m).sum())(jnp.asarray(spd)),
                 jax.grad(lambda m: jjnp.linalg.cholesky(m).sum())(spd), rtol=1e-4, atol=1e-5)
    low = np.tril(spd)
    for argnum in (0, 1):
        ours = jaxlab.grad(lambda l, r: jnp.sum(lax.linalg.triangular_solve(
            l, r, left_side=True, lower=True) ** 2), argnums=argnum)(jnp.asarray(low),
                                                                    jnp.asarray(b))
        theirs = jax.grad(lambda l, r: jjnp.sum(jax.lax.linalg.triangular_solve(
            l, r, left_side=True, lower=True) ** 2), argnums=argnum)(low, b)
        assert_close(jnp.tril(ours) if argnum == 0 else ours,
                     np.tril(theirs) if argnum == 0 else theirs, rtol=1e-4, atol=1e-5)


def test_lower_compile_and_jits_hints_as_jax():
    import jax
    f = jaxlab.jit(lambda a, n: {"y": a * n, "s": a.sum()}, static_argnums=1, donate_argnums=0,
                   keep_unused=True, inline=True)
    jf = jax.jit(lambda a, n: {"y": a * n, "s": a.sum()}, static_argnums=1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    lowered = f.lower(jnp.asarray(x), 3)
    compiled = lowered.compile()
    theirs = jf.lower(x, 3).compile()(x)
    for k in ("y", "s"):
        assert_close(compiled(jnp.asarray(x))[k], theirs[k])
    assert "jit output" in lowered.as_text() and lowered.steps
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(jnp.ones(3))
    with pytest.raises(NotImplementedError, match="one device"):
        jaxlab.jit(lambda a: a, in_shardings=object())
