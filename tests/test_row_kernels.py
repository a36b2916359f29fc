"""Row kernels (engine/deferred.py): a reduction broadcast back over the rows it folded
(softmax, layer norm, logsumexp) is folded in the kernel that uses it where the device
holds whole rows; elsewhere it is stored first. Every device computes the same values."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu.runtime import WebGpuBackend
from jaxlab.engine.devices import Device
from tests.conftest import assert_close, holds_rows


def softmax(x, axis=-1):
    e = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return e / jnp.sum(e, axis=axis, keepdims=True)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _kernels(log) -> list:
    return [e for e in log if e.kind == "kernel"]


@pytest.mark.parametrize("n", [1, 7, 300, 4096, "longest", "past"])
def test_softmax_one_kernel_while_a_row_fits(backend, rng, n):
    longest = jaxlab.devices(backend)[0].backend.max_row_length or 4096
    n = {"longest": longest, "past": longest + 1}.get(n, n)
    x = rng.standard_normal((2, n)).astype(np.float32) * 4
    with jaxlab.capture() as log:
        got = np.asarray(jaxlab.jit(softmax)(jnp.asarray(x)))
    assert_close(got, np_softmax(x), rtol=1e-4, atol=1e-7)   # (long sums round)
    if jaxlab.devices(backend)[0].backend.max_row_length and n > 1:   # (one value: no fold)
        fits = holds_rows(backend, n)
        kernels = _kernels(log)
        assert (len(kernels) == 1) == fits
        if fits:
            assert kernels[0].tuning.value("strategy") == "rows"
            assert "read" in kernels[0].tuning.reason("strategy")


def test_nan_and_inf_rows(backend):
    x = np.array([[1.0, np.nan, 2.0, 0.5], [np.inf, 1.0, 2.0, 3.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf], [0.0, 1.0, -1.0, 2.0]], np.float32)
    with np.errstate(invalid="ignore"):
        want = np_softmax(x)
    got = np.asarray(jaxlab.jit(softmax)(jnp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=2e-6, equal_nan=True)


def test_layer_norm_and_logsumexp(backend, rng):
    x = rng.standard_normal((5, 96)).astype(np.float32) * 3 + 1

    def layer_norm(v):
        mean = jnp.mean(v, axis=-1, keepdims=True)
        return (v - mean) / jnp.sqrt(jnp.var(v, axis=-1, keepdims=True) + 1e-5)
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    lse = np.log(np.exp(x.astype(np.float64)).sum(-1)).astype(np.float32)
    with jaxlab.capture() as log:
        assert_close(jaxlab.jit(layer_norm)(jnp.asarray(x)), want, rtol=1e-4, atol=1e-5)
        assert_close(jaxlab.jit(lambda v: jaxlab.nn.logsumexp(v, axis=-1))(jnp.asarray(x)),
                     lse, rtol=1e-5)
    if holds_rows(backend, x.shape[-1]):   # one kernel each; var's mean is one fold
        norm, logsumexp = _kernels(log)
        assert norm.ir.count(" over ridx") == 2 and logsumexp.ir.count(" over ridx") == 2


def test_non_contiguous_rows_and_other_axes(backend, rng):
    x = rng.standard_normal((6, 10)).astype(np.float32)
    assert_close(jaxlab.jit(softmax)(jnp.asarray(x).T), np_softmax(x.T), rtol=2e-5)
    assert_close(jaxlab.jit(softmax)(jnp.asarray(x)[:, ::3]), np_softmax(x[:, ::3]), rtol=2e-5)
    assert_close(jaxlab.jit(lambda v: softmax(v, 0))(jnp.asarray(x)), np_softmax(x, 0),
                 rtol=2e-5)
    assert_close(softmax(jnp.asarray(x).reshape(3, 2, 10)), np_softmax(x.reshape(3, 2, 10)),
                 rtol=2e-5)
    # a row's fold broadcast across rows: stored first, then read
    moved = jaxlab.jit(lambda v: v + jnp.max(v, axis=1, keepdims=True).T[:, :1])
    assert_close(moved(jnp.asarray(x[:, :6])), x[:, :6] + x[:, :6].max(1, keepdims=True).T[:, :1])


def test_integer_rows_and_the_gradient(backend, rng):
    ints = rng.integers(-50, 50, (3, 9)).astype(np.int32)
    assert_close(jaxlab.jit(lambda v: v - jnp.min(v, axis=1, keepdims=True))(jnp.asarray(ints)),
                 ints - ints.min(1, keepdims=True))
    x = rng.standard_normal((4, 12)).astype(np.float32)
    w = rng.standard_normal((4, 12)).astype(np.float32)
    grad = jaxlab.jit(jaxlab.grad(lambda v: jnp.sum(jaxlab.nn.softmax(v) * w)))(jnp.asarray(x))
    s = np_softmax(x)
    assert_close(grad, s * (w - (s * w).sum(-1, keepdims=True)), rtol=1e-4, atol=1e-6)


@settings(max_examples=4, deadline=None)
@given(rows=st.integers(1, 3), n=st.integers(1, 200), scale=st.sampled_from([0.1, 10.0]))
def test_softmax_matches_numpy(rows, n, scale):
    x = (np.random.default_rng(rows * 1000 + n).standard_normal((rows, n)) * scale
         ).astype(np.float32)
    for device in jaxlab.devices():
        with jaxlab.default_device(device):
            assert_close(jaxlab.jit(softmax)(jnp.asarray(x)), np_softmax(x), rtol=3e-5,
                         atol=1e-7)


def test_row_folds_without_subgroups(rng):
    if "webgpu" not in {d.platform for d in jaxlab.devices()}:
        pytest.skip("no webgpu adapter")
    dev = Device("webgpu", WebGpuBackend(subgroups=False))
    x = rng.standard_normal((3, 70)).astype(np.float32)
    x[1, 5] = np.nan
    with jaxlab.default_device(dev), jaxlab.capture() as log:
        got = np.asarray(jaxlab.jit(softmax)(jnp.asarray(x)))
    np.testing.assert_allclose(got, np_softmax(x), rtol=2e-5, equal_nan=True)
    (event,) = _kernels(log)
    assert "partial_f32[lid]" in event.source and "subgroup" not in event.source


def test_a_shared_contraction_keeps_its_own_kernel(backend, rng):
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 12)).astype(np.float32)

    def f(p, q):
        h = p @ q   # used by three equations: computed once, never refolded per row
        return jnp.maximum(h, 0) + h * 2, h.sum(axis=1)

    def g(p, q):   # a row's fold added to a matmul's outputs: the matmul stays a matmul
        return p @ q + jnp.max(p - jnp.max(p, axis=1, keepdims=True), axis=1, keepdims=True)
    with jaxlab.capture() as log:
        got, sums = jaxlab.jit(f)(jnp.asarray(a), jnp.asarray(b))
        added = jaxlab.jit(g)(jnp.asarray(a), jnp.asarray(b))
    h = a @ b
    assert_close(got, np.maximum(h, 0) + 2 * h, rtol=1e-5, atol=1e-5)
    assert_close(sums, h.sum(1), rtol=1e-5, atol=1e-5)
    assert_close(added, h + (a - a.max(1, keepdims=True)).max(1, keepdims=True), rtol=1e-5,
                 atol=1e-5)
    matmuls = [e for e in _kernels(log) if e.name == "r_16_12_8"]
    assert len(matmuls) == 2 and not any(e.tuning.choices[0].value == "rows" for e in matmuls)
