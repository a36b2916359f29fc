"""Row functions (softmax, log_softmax, logsumexp, layer norm) on rows whose length leaves
every tail of a row kernel's sweeps (wasm: vectors of 16, of 4, then single values), with
NaN and infinite rows, against NumPy and JAX on every device."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close, holds_rows

ROW_FUNCTIONS = {
    "softmax": lambda m, nn, x: nn.softmax(x, axis=-1),
    "log_softmax": lambda m, nn, x: nn.log_softmax(x, axis=-1),
    "logsumexp": lambda m, nn, x: nn.logsumexp(x, axis=-1),
    "layer_norm": lambda m, nn, x: (x - m.mean(x, -1, keepdims=True))
    / m.sqrt(m.var(x, -1, keepdims=True) + 1e-5),
}


def _rows(n: int) -> np.ndarray:
    """Four rows: plain, one NaN, one +inf, all -inf (then finite rows to fill)."""
    x = np.random.default_rng(n).standard_normal((5, n)).astype(np.float32) * 3
    x[1, n // 2] = np.nan
    x[2, n - 1] = np.inf
    x[3] = -np.inf
    return x


@pytest.mark.parametrize("name", sorted(ROW_FUNCTIONS))
@pytest.mark.parametrize("n", [37])   # 32 in vectors of 16, 4 in one vector, 1 alone
def test_row_functions_match_jax_and_numpy(backend, name, n):
    x = _rows(n)
    fn = ROW_FUNCTIONS[name]
    with np.errstate(all="ignore"):
        want = np.asarray(fn(jjnp, jax.nn, jax.device_put(x)))
    got = np.asarray(jaxlab.jit(lambda v: fn(jnp, jaxlab.nn, v))(jnp.asarray(x)))
    assert_close(got, want, rtol=2e-5, atol=2e-6)
    finite = x[[0, 4]].astype(np.float64)   # NumPy in float64 on the finite rows
    reference = {"softmax": lambda v: np.exp(v - v.max(-1, keepdims=True))
                 / np.exp(v - v.max(-1, keepdims=True)).sum(-1, keepdims=True),
                 "log_softmax": lambda v: v - v.max(-1, keepdims=True) - np.log(
                     np.exp(v - v.max(-1, keepdims=True)).sum(-1, keepdims=True)),
                 "logsumexp": lambda v: np.log(np.exp(v).sum(-1)),
                 "layer_norm": lambda v: (v - v.mean(-1, keepdims=True))
                 / np.sqrt(v.var(-1, keepdims=True) + 1e-5)}[name]
    assert_close(got[[0, 4]], reference(finite), rtol=2e-5, atol=2e-6)


def test_softmax_is_one_row_kernel(backend):
    x = _rows(37)
    with jaxlab.capture() as log:
        jaxlab.jit(lambda v: jaxlab.nn.softmax(v, axis=-1))(jnp.asarray(x)).block_until_ready()
    kernels = [e for e in log if e.kind == "kernel"]
    if holds_rows(backend, x.shape[-1]):
        assert len(kernels) == 1 and kernels[0].tuning.value("strategy") == "rows"


def test_softmax_down_columns(backend):
    """Axis 0: right on every device; where row kernels read only rows that lie in a line
    (wasm), the reductions are stored first and the fusion story says why."""
    x = _rows(37)[[0, 4]].T.copy()
    with jaxlab.capture() as log:
        got = jaxlab.jit(lambda v: jaxlab.nn.softmax(v, axis=0))(jnp.asarray(x))
    assert_close(got, np.asarray(jax.nn.softmax(jax.device_put(x), axis=0)), rtol=2e-5, atol=2e-6)
    device = jaxlab.devices(backend)[0].backend
    if holds_rows(backend, x.shape[0]) and not device.strided_rows:
        kernels = [e for e in log if e.kind == "kernel"]
        assert not any(c.name == "strategy" for e in kernels if e.tuning for c in e.tuning.choices)
        assert any("read with a stride" in e.reason and e.unfused.consumer for e in kernels)


def _nan_rows(n: int) -> np.ndarray:
    """A NaN in each part of a fold's sweep (the first vector of a step, a later vector of
    one, the single vectors, the last values), one row each, then a row without."""
    x = np.random.default_rng(n).standard_normal((6, n)).astype(np.float32) * 3
    for row, col in enumerate([0, 7, 17, n - 5, n - 1]):
        x[row, col] = np.nan
    return x


@pytest.mark.parametrize("fold", ["max", "min"])
def test_max_and_min_folds_keep_nans(backend, fold):
    """wasm folds floats by pmax/pmin and notes NaNs apart: a NaN anywhere in a row
    still makes its max (min) NaN."""
    x = _nan_rows(45)   # 32 in vectors of 16, 12 in vectors of 4, 1 alone
    fn = lambda m, v: v - getattr(m, fold)(v, axis=-1, keepdims=True)   # noqa: E731
    got = np.asarray(jaxlab.jit(lambda v: fn(jnp, v))(jnp.asarray(x)))
    with np.errstate(invalid="ignore"):
        assert_close(got, fn(np, x), rtol=0, atol=0)


def test_softmax_far_below_the_max(backend):
    """exp(x - max) into the subnormals and under them (wasm: exp of an argument <= 0,
    one-sided), against NumPy in float64; WGSL may flush subnormals to zero."""
    below = np.array([0, -1e-3, -20, -80, -87.3, -88, -90, -95, -100, -103, -103.9, -104,
                      -110, -200, -np.inf, -3.4e38, -86, -101, -102.5], np.float32)
    x = np.stack([below, below + 50, below[::-1] - 7, np.roll(below, 5)])
    got = np.asarray(jaxlab.jit(lambda v: jaxlab.nn.softmax(v, axis=-1))(jnp.asarray(x)))
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(-1, keepdims=True))
    want = (e / e.sum(-1, keepdims=True)).astype(np.float32)
    tiny = np.finfo(np.float32).tiny if backend == "webgpu" else 3e-45
    assert_close(got, want, rtol=1e-6, atol=tiny)


def _one_sweep_rows(n: int) -> np.ndarray:
    """Rows for the one sweep of max and sum of exp (wasm: exp(b - r), r the row's first
    value) and for each way a row leaves it for two sweeps."""
    x = np.random.default_rng(n).standard_normal((12, n)).astype(np.float32) * 3
    x[1, 0] = -70                       # the max passes r by more than the slack
    x[2, 0] = -np.inf                   # r not finite
    x[3, [1, 9, n // 2, n - 1]] = -np.inf   # -inf values (e = 0), r finite
    x[4, n - 1] = np.nan                # a NaN among the last values, one at a time
    x[5, n // 2] = np.inf
    x[6] = -np.inf
    x[7, 0] = np.inf
    x[8, 0] = np.nan
    x[9] = np.clip(x[9], -5, 5)
    x[9, 0], x[9, n - 1] = -55, 8       # within the slack, the max alone at the end
    x[10] = 63.5
    x[10, 0] = 0                        # e^63.5 kept for every value but the first
    x[11] = np.where(np.arange(n) % 2, -0.0, 0.0)
    return x


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_one_sweep_max_and_sum_match_jax(backend, name):
    """softmax, log_softmax and logsumexp on rows that stay in the one sweep and rows
    that leave it (NaN, inf, all -inf, a first value not finite, a max far above it),
    on rows of 37 (steps of 16 values, then of 4, then one value alone), against JAX."""
    x = _one_sweep_rows(37)
    fn = ROW_FUNCTIONS[name]
    with np.errstate(all="ignore"):
        want = np.asarray(fn(jjnp, jax.nn, jax.device_put(x)))
    with jaxlab.capture() as log:
        got = np.asarray(jaxlab.jit(lambda v: fn(jnp, jaxlab.nn, v))(jnp.asarray(x)))
    assert_close(got, want, rtol=2e-5, atol=1e-6)
    if backend == "wasm":
        (kernel,) = [e for e in log if e.kind == "kernel"]
        assert kernel.tuning.value("online") is True and "one sweep" in kernel.tuning.reason("online")
        assert "in one sweep" in kernel.source


def test_softmax_rows_longer_than_a_row_kernel(backend):
    """Rows past the longest a row kernel takes go through separate kernels."""
    device = jaxlab.devices(backend)[0].backend
    n = device.max_row_length + 3 if device.max_row_length < 1 << 16 else 1 << 16
    x = np.random.default_rng(1).standard_normal((3, n)).astype(np.float32)
    x[1, n - 2] = np.nan
    x[2, 0] = -np.inf
    got = np.asarray(jaxlab.jit(lambda v: jaxlab.nn.softmax(v, axis=-1))(jnp.asarray(x)))
    assert_close(got, np.asarray(jax.nn.softmax(jax.device_put(x), axis=-1)), rtol=2e-5, atol=1e-7)
