"""Backend.knobs(kernel): every value a backend offers for a matmul, a reduction and
an elementwise kernel compiles, runs to NumPy's result and times; overrides outside
them are refused with the knob named; the current value is the tuner's own."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine.devices import get_device
from jaxlab.engine.lower import lower
from jaxlab.lab.widgets import time_executable

from .conftest import BACKENDS

KNOBBED = [b for b in ("wasm", "webgpu") if b in BACKENDS]
A = np.random.default_rng(1).standard_normal((36, 20)).astype(np.float32)
B = np.random.default_rng(2).standard_normal((20, 28)).astype(np.float32)
X, W = A.reshape(2, 2, 9, 20), B[:, :24].reshape(20, 2, 3, 4)   # images, filters
# name -> (the lazy computation, its NumPy result)
CASES = {
    "matmul": (lambda a, b: a @ b, A @ B),
    # a batch of images, each an implicit GEMM on wasm (out-channels x pixels)
    "conv": (lambda a, b: jaxlab.lax.conv_general_dilated(
        a.reshape(X.shape), b[:, :24].reshape(W.shape), (1, 1), "VALID"),
        np.einsum("ncxyij,ocij->noxy", np.lib.stride_tricks.sliding_window_view(
            X, W.shape[2:], axis=(2, 3)), W)),
    "reduction": (lambda a, b: a.sum(axis=1), A.sum(axis=1)),
    "elementwise": (lambda a, b: jnp.tanh(a) * 2 + 1, np.tanh(A) * 2 + 1),
}


def run(backend, kernel, inputs, overrides):
    exe = backend.prepare_kernel(kernel, overrides)
    out = backend.allocate(max(4, kernel.size * kernel.dtype.itemsize))
    try:
        backend.dispatch(exe, [b.handle for b in inputs], [out])
        return exe, backend.read(out, kernel.dtype, kernel.size)
    finally:
        backend.free(out)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("platform", KNOBBED)
def test_every_offered_value_compiles_runs_right_and_times(platform, case):
    build, expected = CASES[case]
    device = get_device(platform)
    with jaxlab.default_device(device):
        kernel, inputs = lower(build(jnp.asarray(A), jnp.asarray(B))._lazy)
    backend = device.backend
    knobs = backend.knobs(kernel)
    assert knobs, f"{platform} offers no knobs for the {case} kernel"
    tried = 0
    for knob in knobs:
        assert knob.doc and len(knob.values) > 1 and knob.current is not None, knob
        for value in knob.values:
            exe, got = run(backend, kernel, inputs, {knob.name: value})
            np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-4,
                                       atol=1e-4, err_msg=f"{knob.name}={value!r}")
            assert time_executable(device, kernel, exe, runs=1).host_ms > 0
            tried += 1
    assert tried >= 4


@pytest.mark.parametrize("platform", KNOBBED)
def test_the_current_value_is_the_tuners_and_bad_overrides_name_the_knob(platform):
    device = get_device(platform)
    with jaxlab.default_device(device):
        kernel, inputs = lower((jnp.asarray(A) @ jnp.asarray(B))._lazy)
    backend = device.backend
    plain = backend.prepare_kernel(kernel)
    for knob in backend.knobs(kernel):
        same = backend.prepare_kernel(kernel, {knob.name: knob.current})
        assert same.source == plain.source, knob.name
    with pytest.raises(ValueError, match="unknown setting 'bogus'"):
        backend.prepare_kernel(kernel, {"bogus": 1})
    with pytest.raises(ValueError, match="unroll"):
        backend.prepare_kernel(kernel, {"unroll": 3})


def test_wasm_autotune_times_every_candidate_and_remembers(monkeypatch, tmp_path):
    if "wasm" not in BACKENDS:
        pytest.skip("no wasm device here")
    from jaxlab.backends.wasm.runtime import WasmBackend
    from jaxlab.engine.devices import Device
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    backend = WasmBackend(threads=1)
    with jaxlab.default_device(Device("wasm", backend)), jaxlab.autotune(), \
            jaxlab.capture() as log:
        got = np.asarray(jnp.asarray(A) @ jnp.asarray(B))
    np.testing.assert_allclose(got, A @ B, rtol=1e-4, atol=1e-4)
    tuned = log.kernels()[0].tuning.autotuned
    assert not tuned.from_cache and len(tuned.candidates) >= 4 and tuned.tuning_ms > 0
    assert sum(c.winner for c in tuned.candidates) == 1
    assert all(c.compile_ms > 0 and c.run_ms > 0 for c in tuned.candidates)
    assert (tmp_path / "jaxlab" / "wasm-autotune.json").exists()
    monkeypatch.setattr(backend, "_best_ms", lambda *a: pytest.fail("timed again"))
    with jaxlab.default_device(Device("wasm", backend)), jaxlab.autotune(), \
            jaxlab.capture() as log:
        np.asarray(jnp.asarray(A) @ jnp.asarray(B))
    again = log.kernels()[0].tuning.autotuned
    assert again.from_cache and again.candidates == tuned.candidates
