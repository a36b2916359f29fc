"""Complex functions, atan2, complex and float division under the model of a GPU that
flushes subnormals, divides as a * (1 / b) and compiles a select by a comparison of its
operands as a NaN-dropping max (tests/ftz_model.py; NVIDIA's Vulkan driver does all three,
WGSL allows them, lavapipe does none). The complex functions must not even rely on the
renderer's guard of huge divisors: they divide only by scaled, bounded values."""
import jax
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.ftz_model import flush, flushing_cpu
from tests.test_complex_functions import FUNCTIONS, SPECIAL, Z, _numpy


@pytest.fixture
def flushing(monkeypatch):
    def use(guard):
        flushing_cpu(monkeypatch, guard)
        return jaxlab.default_device("cpu")
    return use


@pytest.mark.parametrize("name", FUNCTIONS)
def test_complex_functions_need_no_division_guard(flushing, name):
    with jaxlab.default_device("cpu"):   # IEEE arithmetic: the NaNs' places
        ieee = np.asarray(getattr(jnp, name)(jnp.asarray(SPECIAL)))
    with flushing(guard=False):
        ours = np.asarray(getattr(jnp, name)(jnp.asarray(Z)))
        special = np.asarray(getattr(jnp, name)(jnp.asarray(SPECIAL)))
    want = _numpy(name, Z)
    finite = np.isfinite(want)
    np.testing.assert_allclose(ours[finite], want[finite], rtol=2e-6, atol=1e-7)
    assert np.all(~np.isfinite(ours[~finite]))
    for part in ("real", "imag"):   # a NaN part is not dropped by a compiled max
        np.testing.assert_array_equal(np.isnan(getattr(special, part)),
                                      np.isnan(getattr(ieee, part)))


def test_divisions_by_huge_values(flushing):
    a = np.array([1e38, 3e38, -2e38, 1e30, 3e38, 7.0, 1e38, 1.0, -3e38], np.float32)
    b = np.array([3e38, 1e38, 3e38, 3e38, -1.5e38, 2.0, 8.5e37, 3e38, np.inf], np.float32)
    z = (a[:7] + 1j * b[:7]).astype(np.complex64)
    w = (b[:7] - 1j * a[:7]).astype(np.complex64)
    with flushing(guard=True):
        quotient = np.asarray(jnp.asarray(a) / jnp.asarray(b))
        angle = np.asarray(jnp.arctan2(jnp.asarray(a), jnp.asarray(b)))
        floor = np.asarray(jnp.floor_divide(jnp.asarray(a), jnp.asarray(b)))
        complex_quotient = np.asarray(jnp.asarray(z) / jnp.asarray(w))
    np.testing.assert_allclose(quotient, flush(a / b), rtol=1e-6)
    np.testing.assert_allclose(angle, flush(np.arctan2(a, b)), rtol=1e-6)
    np.testing.assert_array_equal(floor, np.asarray(jax.numpy.floor_divide(a, b)))
    want = (z.astype(np.complex128) / w.astype(np.complex128)).astype(np.complex64)
    np.testing.assert_allclose(complex_quotient, want, rtol=1e-6)
