"""jaxlab's top level against JAX's: shapes, device queries, config contexts,
checkpoint, custom_gradient, linear_transpose, closure_convert, jaxlab.dtypes."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

X = np.array([0.5, -1.25, 2.0], np.float32)


def _shapes(tree):
    return jax.tree.map(lambda s: (s.shape, np.dtype(s.dtype).name, s.weak_type), tree)


@pytest.mark.parametrize("fun, args", [
    (lambda x, y: (x + y, x.sum()), ((2, 3), 1.0)),
    (lambda x: {"a": x.astype(int), "b": x[0] * 2.5}, ((3,),)),
    (lambda x: x, (1.0,)),
])
def test_eval_shape_matches_jax(fun, args):
    ours = jaxlab.eval_shape(fun, *(jaxlab.ShapeDtypeStruct(a, np.float32)
                                    if isinstance(a, tuple) else a for a in args))
    theirs = jax.eval_shape(fun, *(jax.ShapeDtypeStruct(a, np.float32)
                                   if isinstance(a, tuple) else a for a in args))
    assert _shapes(ours) == _shapes(theirs)
    assert repr(jax.tree.leaves(ours)[0]) == repr(jax.tree.leaves(theirs)[0])


def test_shape_dtype_struct_matches_jax():
    ours, theirs = jaxlab.ShapeDtypeStruct((2, 3), jnp.float32), \
        jax.ShapeDtypeStruct((2, 3), jjnp.float32)
    assert (ours.shape, ours.dtype, ours.ndim, ours.size, repr(ours)) == \
        (theirs.shape, theirs.dtype, theirs.ndim, theirs.size, repr(theirs))
    assert ours == jaxlab.ShapeDtypeStruct([2, 3], np.float32) and \
        hash(ours) == hash(jaxlab.ShapeDtypeStruct((2, 3), "float32"))
    # another library's abstract values are accepted too
    assert jaxlab.eval_shape(jnp.sin, theirs) == ours


def test_device_queries_and_device_get(backend):
    assert jaxlab.default_backend() == backend
    assert jaxlab.device_count() == jaxlab.local_device_count() == 1
    assert jaxlab.local_devices() == jaxlab.devices(backend)
    assert (jaxlab.process_count(), jaxlab.process_index()) == (1, 0)
    got = jaxlab.device_get({"a": jnp.asarray(X), "b": 3})
    assert type(got["a"]) is np.ndarray and got["b"] == 3
    np.testing.assert_array_equal(got["a"], X)
    with pytest.raises(ValueError, match="process_index"):
        jaxlab.local_devices(process_index=1)


def test_disable_jit_runs_op_by_op(backend):
    seen = []

    @jaxlab.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2
    f(jnp.asarray(X))
    with jaxlab.disable_jit():
        assert_close(f(jnp.asarray(X)), X * 2)
    jaxlab.config.update("jax_disable_jit", True)
    try:
        f(jnp.asarray(X))
    finally:
        jaxlab.config.update("jax_disable_jit", False)
    assert seen[0] != "Array" and seen[1:] == ["Array", "Array"]


def test_rank_and_dtype_promotion_modes_match_jax(backend):
    # a shape of its own per device: JAX warns once per shape pair
    a, b = np.ones((len(backend), 3), np.float32), np.ones(3, np.float32)
    for api, m in ((jaxlab, jnp), (jax, jjnp)):
        with api.numpy_rank_promotion("raise"):
            with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
                m.add(m.asarray(a), m.asarray(b))
            assert (m.asarray(a) + 1.0).shape == a.shape   # scalars always broadcast
        with api.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.multiply(m.asarray(a), m.asarray(b))
        assert "rank promotion for multiply" in str(w[0].message)
        with api.numpy_dtype_promotion("strict"):
            with pytest.raises(api.dtypes.TypePromotionError):
                m.asarray(b, np.int32) + m.asarray(b)
            with pytest.raises(api.dtypes.TypePromotionError):
                m.asarray(b, np.int32) + 1.5
            assert (m.asarray(b) + 1).dtype == np.float32
        with pytest.raises(ValueError, match="new enum value"):
            with api.numpy_rank_promotion("bad"):
                pass
    assert_close(jnp.asarray(a) + jnp.asarray(b), a + b)   # the mode ended with its block


def test_enable_x64_and_matmul_precision_contexts():
    with jaxlab.enable_x64():
        assert jaxlab.eval_shape(lambda: jnp.zeros(2, jnp.float64)).dtype == np.float64
    assert jaxlab.eval_shape(lambda: jnp.zeros(2, "float32")).dtype == np.float32
    with jaxlab.default_matmul_precision("highest"):
        assert jaxlab.config.jax_default_matmul_precision == "highest"
    with pytest.raises(ValueError):
        with jaxlab.default_matmul_precision("fast please"):
            pass


def test_checkpoint_gives_the_same_gradients(backend):
    def loss(w, x, n):
        for _ in range(n):
            x = m.tanh(w * x)
        return (x ** 2).sum()
    grads = []
    for api, m in ((jaxlab, jnp), (jax, jjnp)):
        f = api.checkpoint(loss, policy=api.checkpoint_policies.dots_saveable,
                           static_argnums=(2,))
        grads.append(api.jit(api.grad(f), static_argnums=2)(np.float32(0.7), X, 3))
        grads.append(api.grad(api.remat(lambda w, x: loss(w, x, 2)))(np.float32(0.7), X))
    assert_close(grads[0], grads[2])
    assert_close(grads[1], grads[3])


def test_custom_gradient_matches_jax(backend):
    def build(api, m):
        @api.custom_gradient
        def clip_grad(x, y):
            return m.sin(x) * y, lambda g: (m.clip(g * y, -0.1, 0.1), g * 10.0)
        return lambda x, y: clip_grad(x, y).sum()
    for argnums in (0, 1):
        ours = jaxlab.jit(jaxlab.grad(build(jaxlab, jnp), argnums))(X, X[::-1].copy())
        assert_close(ours, jax.grad(build(jax, jjnp), argnums)(X, X[::-1].copy()))

    @jaxlab.custom_gradient
    def one(x):   # a one-argument rule may return the cotangent alone
        return x ** 2, lambda g: g * 3 * x
    assert float(jaxlab.grad(one)(2.0)) == 6.0


def test_linear_transpose_and_closure_convert_match_jax(backend):
    def linear(m):
        return lambda x: (2 * x, x.sum(), m.flip(x))
    cts = (np.ones(3, np.float32), np.float32(2.0), X)
    ours = jaxlab.linear_transpose(linear(jnp), jaxlab.ShapeDtypeStruct((3,), np.float32))(cts)
    theirs = jax.linear_transpose(linear(jjnp), jax.ShapeDtypeStruct((3,), np.float32))(cts)
    assert_close(ours[0], theirs[0])

    def outer(api):
        def f(s):
            converted, consts = api.closure_convert(lambda y: y * s + 1, X)
            return converted(X, *consts).sum(), len(consts)
        return f
    for api in (jaxlab, jax):
        value, n_consts = outer(api)(np.float32(2.0))
        assert n_consts == 0 and float(value) == pytest.approx(float((X * 2 + 1).sum()))
    ours = jaxlab.grad(lambda s: outer(jaxlab)(s)[0])(np.float32(2.0))
    assert float(ours) == pytest.approx(float(jax.grad(lambda s: outer(jax)(s)[0])(2.0)))


def test_scopes_and_compile_time_eval(backend):
    @jaxlab.jit
    def f(x):
        with jaxlab.named_scope("layer"), jaxlab.ensure_compile_time_eval():
            table = jnp.arange(3.0) * 2
            kinds.append(type(table).__name__)
        return jaxlab.named_call(jnp.sin, name="s")(x) + table
    kinds: list = []
    assert_close(f(jnp.asarray(X)), np.sin(X) + np.arange(3) * 2, rtol=1e-6)
    assert kinds == ["Array"]
    with pytest.raises(TypeError, match="must be a string"):
        with jaxlab.named_scope(3):
            pass


def test_clear_caches_recompiles(backend):
    traces = []

    @jaxlab.jit
    def f(x):
        traces.append(1)
        return x + 1
    f(jnp.asarray(X))
    f(jnp.asarray(X))
    jaxlab.clear_caches()
    assert_close(f(jnp.asarray(X)), X + 1)
    assert len(traces) == 2


def test_dtypes_module_matches_jax():
    for args in [(1, 2.0), (np.int8, 2.0), (np.float16, np.float32), (True, 1), (np.int32, 1)]:
        assert jaxlab.dtypes.result_type(*args, return_weak_type_flag=True) == \
            jax.dtypes.result_type(*args, return_weak_type_flag=True)
    for d in (np.float64, np.int64, "bfloat16"):
        assert jaxlab.dtypes.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d)
    assert jaxlab.dtypes.float0 == jax.dtypes.float0 == jaxlab.float0
    assert jaxlab.dtypes.issubdtype(jaxlab.dtypes.bfloat16, jnp.floating)
    assert jaxlab.dtypes.scalar_type_of(np.float32(1)) is jax.dtypes.scalar_type_of(
        np.float32(1))
    assert jaxlab.dtypes.itemsize_bits(jnp.bfloat16) == jax.dtypes.itemsize_bits(jjnp.bfloat16)
