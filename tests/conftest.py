"""Every differential test runs on every device that starts here."""
from __future__ import annotations

import os

import numpy as np
import pytest

# JAX is the reference: on a machine with a GPU it would run there, where its float32
# matmuls default to TF32/bf16 passes (1e-3 off); the CPU gives float32 references
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jaxlab  # noqa: E402

_WANTED = os.environ.get("JAXLAB_TEST_BACKENDS")
BACKENDS = [d.platform for d in jaxlab.devices()
            if _WANTED is None or d.platform in _WANTED.split(",")]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The notebook tests first, in their order: they share the Binder replay's
    environment, built once by the first to need it (tests/test_notebooks.py), so they go
    to one xdist worker in its first batch while the other worker starts on the rest,
    and no worker waits for the build later."""
    items.sort(key=lambda item: "binder_env" not in getattr(item, "fixturenames", ()))


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The device name; the test body runs with it as the default device."""
    with jaxlab.default_device(request.param):
        yield request.param


def computes(platform: str, dtype) -> bool:
    """Whether the device `platform` computes `dtype` (others refuse it with a TypeError)."""
    from jaxlab.ir.dtypes import uncanonical
    device = next(d for d in jaxlab.devices() if d.platform == platform)
    return uncanonical(dtype) in device.backend.dtypes


def may_flush_subnormals(platform: str) -> bool:
    """Whether the device `platform` may give a subnormal float result as a zero of its
    sign (WGSL allows it; NVIDIA's Vulkan driver does it)."""
    return next(d for d in jaxlab.devices() if d.platform == platform).backend \
        .may_flush_subnormals


def holds_rows(platform: str, row_length: int) -> bool:
    """Whether the device `platform` folds a reduction over rows of `row_length` values,
    broadcast back over them, in the kernel that uses it (engine/deferred.py); a GPU
    leaves rows shorter than a subgroup to separate kernels."""
    backend = next(d for d in jaxlab.devices() if d.platform == platform).backend
    return backend.min_row_length <= row_length <= backend.max_row_length


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    """Compare a jaxlab result with NumPy's: values, shape and dtype."""
    actual_np = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual_np.shape == expected.shape, f"shape {actual_np.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(actual_np, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual_np, expected)


def sample_data(shape, dtype, seed=0) -> np.ndarray:
    """Normal floats, or integers in [-50, 50), from a fixed seed."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


@pytest.fixture
def x64():
    """jax_enable_x64 on, for jaxlab and for JAX, for one test."""
    import jax
    jaxlab.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jaxlab.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)
