"""Kernel counts of the fusion examples the engine promises."""
import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close


def _count(fn):
    with jaxlab.capture() as log:
        out = fn()
        out.block_until_ready()
    return out, len(log.kernels())


def test_matmul_is_one_kernel(backend, rng):
    a, b = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    out, n = _count(lambda: jnp.asarray(a) @ jnp.asarray(b))
    assert n == 1
    assert_close(out, a @ b, rtol=1e-4, atol=1e-5)


def test_matmul_plus_bias_is_one_kernel(backend, rng):
    a, b = rng.standard_normal((8, 16), np.float32), rng.standard_normal((16, 4), np.float32)
    c = rng.standard_normal(4).astype(np.float32)
    ja, jb, jc = map(jnp.asarray, (a, b, c))
    out, n = _count(lambda: ja @ jb + jc)
    assert n == 1
    assert_close(out, a @ b + c, rtol=1e-4, atol=1e-5)


def test_reduction_with_prologue_and_epilogue_is_one_kernel(backend, rng):
    x = rng.standard_normal((6, 10), np.float32)
    jx = jnp.asarray(x)
    out, n = _count(lambda: jnp.tanh(jx * 2 + 1).sum(axis=1) * 3)
    assert n == 1
    assert_close(out, np.tanh(x * 2 + 1).sum(axis=1) * 3, rtol=1e-5)


def test_elementwise_chain_is_one_kernel(backend, rng):
    x = rng.standard_normal((1000,), np.float32)
    jx = jnp.asarray(x)
    out, n = _count(lambda: jnp.tanh(jx * 1.5 + 0.3) * jnp.exp(-jx * jx) + jnp.sin(jx))
    assert n == 1
    assert_close(out, np.tanh(x * 1.5 + 0.3) * np.exp(-x * x) + np.sin(x), rtol=1e-5)


def test_movement_ops_make_no_kernels(backend, rng):
    jx = jnp.asarray(rng.standard_normal((4, 6), np.float32))
    jx.block_until_ready()
    with jaxlab.capture() as log:
        y = jx.T.reshape(3, 8)[::2]
    assert len(log) == 0 and y.shape == (2, 8)
