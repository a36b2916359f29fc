"""Contractions on every device against JAX, shaped to reach the wasm backend's
register-tiled paths: convolutions as batched implicit GEMMs (a batch of images, the
output channels as rows, the pixels as columns), batched matmuls, and row counts
that leave a partial register tile."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax
from tests.conftest import assert_close

jax = pytest.importorskip("jax")

RNG = np.random.default_rng(14)


def _data(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


CONVS = [
    # (x shape, w shape, strides, padding, lhs dilation, rhs dilation, groups)
    ((3, 5, 9, 8), (13, 5, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1),   # rows of 8 (+2 pad)
    ((2, 3, 7, 7), (14, 3, 3, 2), (1, 1), "VALID", (1, 1), (1, 1), 1),  # odd pixel count
    ((2, 4, 11, 9), (12, 4, 3, 3), (2, 1), [(1, 2), (0, 1)], (1, 1), (1, 1), 1),
    ((2, 3, 8, 12), (16, 3, 2, 3), (1, 1), "SAME", (1, 1), (2, 2), 1),  # dilated kernel
    ((2, 2, 5, 6), (12, 2, 3, 3), (1, 1), [(2, 2), (2, 2)], (2, 1), (1, 1), 1),
    ((2, 6, 6, 8), (12, 3, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 2),   # groups
    ((1, 4, 6, 8), (20, 4, 1, 1), (1, 1), "VALID", (1, 1), (1, 1), 1),  # one image
]


@pytest.mark.parametrize("xs,ws,strides,padding,lhs_dil,rhs_dil,groups", CONVS)
def test_conv_matches_jax(backend, xs, ws, strides, padding, lhs_dil, rhs_dil, groups):
    x, w = _data(*xs), _data(*ws)

    def conv(l):
        return lambda x, w: l.conv_general_dilated(
            x, w, strides, padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
            feature_group_count=groups)
    ours = jaxlab.jit(conv(lax))(jnp.asarray(x), jnp.asarray(w))
    assert_close(ours, conv(jax.lax)(x, w), rtol=1e-4, atol=1e-4)


def test_conv_gradients_match_jax(backend):
    x, w = _data(2, 3, 6, 8), _data(12, 3, 3, 3)

    def loss(l, m):
        return lambda x, w: m.sum(l.conv_general_dilated(x, w, (1, 1), "SAME") ** 2)
    ours = jaxlab.jit(jaxlab.grad(loss(lax, jnp), argnums=(0, 1)))(jnp.asarray(x),
                                                                   jnp.asarray(w))
    theirs = jax.grad(loss(jax.lax, jax.numpy), argnums=(0, 1))(x, w)
    for a, b in zip(ours, theirs):
        assert_close(a, b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("b,m,k,n", [(3, 13, 7, 9), (2, 16, 20, 12), (4, 12, 5, 4)])
def test_batched_matmul_matches_jax(backend, b, m, k, n):
    a, c = _data(b, m, k), _data(b, k, n)
    ours = jaxlab.jit(lambda a, c: a @ c)(jnp.asarray(a), jnp.asarray(c))
    assert_close(ours, jax.numpy.matmul(a, c), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m", [13, 16, 17, 40])
def test_matmul_with_a_partial_row_tile(backend, m):
    a, c = _data(m, 24), _data(24, 12)
    assert_close(jnp.asarray(a) @ jnp.asarray(c), a @ c, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m", [6, 13, 16, 29])
def test_matmul_of_transposed_operands(backend, m):
    """A transposed row-side operand is read down its columns (four rows at a time)."""
    a, c, d = _data(20, m), _data(20, 12), _data(12, 20)
    ta, tc = jnp.asarray(a), jnp.asarray(c)
    assert_close(jaxlab.jit(lambda a, c: a.T @ c)(ta, tc), a.T @ c, rtol=1e-4, atol=1e-4)
    assert_close(jaxlab.jit(lambda a, d: a.T @ d.T)(ta, jnp.asarray(d)), a.T @ d.T,
                 rtol=1e-4, atol=1e-4)


def test_wasm_conv_is_a_batch_of_packed_contractions():
    x, w = _data(3, 5, 9, 8), _data(13, 5, 3, 3)
    dev = jaxlab.engine.devices.get_device("wasm")
    with jaxlab.default_device(dev), jaxlab.capture() as log:
        jaxlab.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"))(
            jnp.asarray(x), jnp.asarray(w)).block_until_ready()
    conv = next(e for e in log if e.tuning is not None and e.tuning.value("pack"))
    assert conv.tuning.value("split") == "3x13x72"
    assert "batches, each a contraction of its own" in conv.source
    # the padded image's rows of 8 pixels are packed as vectors, not gathered lane by lane
    packing = conv.source.split("pack this strip")[1].split("rows ")[0]
    assert "v128.load" in packing and "f32.load" not in packing
