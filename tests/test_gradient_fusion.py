"""What a jitted gradient stores: the zeros its rules make stay literals, a value two
matmuls read (a relu's gradient in a training step) is stored once, in its own layout,
and a matmul whose result only feeds elementwise work that rejoins keeps that work as
its epilogue (engine choices in core/sharing.py)."""
import jax
import jax.numpy as jnp_ref
import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close


def _run(fn, *args):
    """fn's result and its kernel events on a warm call."""
    fn(*args)
    with jaxlab.capture() as log:
        out = fn(*args)
        jaxlab.tree_util.tree_map(lambda v: v.block_until_ready(), out)
    return out, log.kernels()


def test_relu_gradient_reads_no_buffer_of_zeros(backend, rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[0, :3] = 0.0   # ties: JAX's max rule gives half the cotangent there

    def relu_sum(v, lib):
        return lib.maximum(v, 0.0).sum()
    grad = jaxlab.jit(jaxlab.grad(lambda v: relu_sum(v, jnp)))
    out, kernels = _run(grad, jnp.asarray(x))
    assert_close(out, jax.grad(lambda v: relu_sum(v, jnp_ref))(x))
    # one kernel reading x alone: the select's zero branches are constants in it
    assert [k.input_shapes for k in kernels] == [[(32,)]]


def _mlp_loss(params, x, lib):
    (w1, b1), (w2, b2) = params
    h = lib.maximum(x @ w1 + b1, 0.0)
    return ((h @ w2 + b2) ** 2).mean()


def test_relu_gradient_is_stored_once_for_both_matmuls(backend, rng):
    """dW1 = x^T dz and dx = dz W1^T both read dz = relu'(z) * dh: it is computed once, in
    the layout it has, not once per matmul (one copy transposed for the weight's)."""
    def init(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    params = [(init(6, 16), init(16)), (init(16, 3), init(3))]
    x = init(5, 6)
    grad = jaxlab.jit(jaxlab.grad(lambda p, v: _mlp_loss(p, v, jnp), argnums=(0, 1)))
    (gp, gx), kernels = _run(grad, jaxlab.tree_util.tree_map(jnp.asarray, params),
                             jnp.asarray(x))
    (want_p, want_x) = jax.grad(lambda p, v: _mlp_loss(p, v, jnp_ref), argnums=(0, 1))(
        params, x)
    for got, want in zip(jaxlab.tree_util.tree_leaves(gp), jax.tree_util.tree_leaves(want_p)):
        assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert_close(gx, want_x, rtol=1e-4, atol=1e-5)
    layouts = [k.output_shapes[0] for k in kernels]
    assert (16, 5) not in layouts   # no transposed copy of dz for dW1's matmul
    # z = x W1 + b1, and dz = relu'(z) * (dy W2^T) in the matmul's epilogue: the two
    # selects of the relu's gradient rejoin in one add, so dy W2^T is not stored alone
    assert layouts.count((5, 16)) == 2, [(k.name, k.output_shapes) for k in kernels]


def _matmuls(kernels, k_size):
    """Kernels that read an operand of k_size elements (the matmul's weight)."""
    return [k for k in kernels if (k_size,) in k.input_shapes]


def test_matmul_result_used_apart_is_computed_once(backend, rng):
    x, w = rng.standard_normal((4, 6), np.float32), rng.standard_normal((6, 5), np.float32)
    s = rng.standard_normal((4, 5, 3), np.float32)

    def apart(x, w, s, lib):   # two uses that never meet again
        y = x @ w
        return lib.sin(y), lib.cos(y) * 2

    def meeting_a_sum(x, w, s, lib):   # uses that meet, with a reduction made before
        t = s.sum(axis=2)              # (two reductions in one epilogue: one is stored)
        y = x @ w
        return (t * y) + y
    for fn in (apart, meeting_a_sum):
        f = jaxlab.jit(lambda x, w, s: fn(x, w, s, jnp))
        outs, kernels = _run(f, jnp.asarray(x), jnp.asarray(w), jnp.asarray(s))
        want = fn(x, w, s, np)
        for got, ref in zip(jaxlab.tree_util.tree_leaves(outs), jax.tree_util.tree_leaves(want)):
            assert_close(got, ref, rtol=1e-5, atol=1e-5)
        assert len(_matmuls(kernels, 30)) == 1, [(k.name, k.input_shapes) for k in kernels]
