"""webgpu shader modules without wgpu's loop counters (backends/webgpu/shader_modules.py):
what each executable records, JAXLAB_WEBGPU_LOOP_BOUNDING=1, and the fallback to
wgpu-py's own module where the trusted entry makes none; results are the same."""
import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu import shader_modules
from jaxlab.backends.webgpu.runtime import WebGpuBackend
from jaxlab.backends.webgpu.shader_modules import RuntimeChecks
from jaxlab.engine.devices import Device


def _run_and_record(backend: WebGpuBackend) -> set:
    """Runs a reduction with a loop and a sort on `backend`; the checks they recorded."""
    x = np.random.default_rng(0).standard_normal((3, 700)).astype(np.float32)
    with jaxlab.default_device(Device("webgpu", backend)), jaxlab.capture() as log:
        total = np.asarray(jnp.sum(jnp.asarray(x) * 2.0, axis=1))
        ordered = np.asarray(jnp.sort(jnp.asarray(x)))
    np.testing.assert_allclose(total, (x * 2.0).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(ordered, np.sort(x))
    assert backend.info()["runtime_checks"] == backend.runtime_checks.value
    return {e.tuning.value("runtime_checks") for e in log if e.tuning is not None}


def test_shaders_have_bounds_checks_only_by_default(monkeypatch):
    monkeypatch.delenv(shader_modules.LOOP_BOUNDING_ENV, raising=False)
    assert _run_and_record(WebGpuBackend()) == {RuntimeChecks.BOUNDS.value}


def test_loop_counters_kept_when_asked(monkeypatch):
    monkeypatch.setenv(shader_modules.LOOP_BOUNDING_ENV, "1")
    assert _run_and_record(WebGpuBackend()) == {RuntimeChecks.BOUNDS_AND_LOOPS.value}


def test_wgpu_pys_module_where_the_trusted_entry_makes_none(monkeypatch):
    monkeypatch.delenv(shader_modules.LOOP_BOUNDING_ENV, raising=False)
    monkeypatch.setattr(shader_modules, "_trusted", lambda *args: None)
    backend = WebGpuBackend()
    assert _run_and_record(backend) == {RuntimeChecks.BOUNDS_AND_LOOPS.value}
    assert backend.runtime_checks is RuntimeChecks.BOUNDS_AND_LOOPS
