"""The webgpu FFT's pass plans (pure: no device): every pass fits the workgroup memory,
the radices make up the length, and the long transforms take few passes; and the
tuning override on the device."""
import math

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu.fft_plan import FftTuning, bytes_moved, plan_passes, subradices
from jaxlab.backends.webgpu.tune import Limits

H200 = Limits(max_threads=1024, max_shared_bytes=49152)
LAVAPIPE = Limits(max_threads=1024, max_shared_bytes=32768)


@pytest.mark.parametrize("limits", [H200, LAVAPIPE, Limits()])
@pytest.mark.parametrize("n, rows", [(2, 1), (8, 3), (1024, 16384), (4096, 2), (1 << 15, 1),
                                     (1 << 20, 1), (1 << 24, 1)])
@pytest.mark.parametrize("tuning", [FftTuning(), FftTuning(radix=4),
                                    FftTuning(radix=16, threads=64, span=4)])
def test_plans_fit_and_compose(limits, n, rows, tuning):
    plan = plan_passes(n, rows, limits, tuning)
    assert math.prod(p.radix for p in plan) == n
    combined = 1
    for p in plan:
        assert p.combined == combined
        combined *= p.radix
        assert p.shared_values * 8 <= limits.max_shared_bytes
        assert math.prod(p.subradices) == p.radix
        assert max(p.subradices) <= max(tuning.largest_subradix(p.radix), 8)
        assert p.radix == 2 or 2 not in p.subradices
        assert p.threads <= min(tuning.threads, limits.max_threads)
        assert all(p.radix * p.span % (r * p.threads) == 0 for r in p.subradices)
        if p.strided_reads:   # columns side by side make contiguous runs
            assert p.span >= tuning.span
    assert bytes_moved(plan) == len(plan) * 2 * 8 * n * rows


def test_long_transforms_take_few_passes():
    plan = plan_passes(1 << 24, 1, H200, FftTuning())
    assert [(p.radix, p.span, p.subradices) for p in plan] == [(256, 16, (16, 16))] * 3
    (row,) = plan_passes(1024, 16384, H200, FftTuning())
    assert (row.radix, row.span, row.subradices) == (1024, 4, (8, 8, 4, 4))
    assert len(plan_passes(1 << 24, 1, LAVAPIPE, FftTuning())) == 4


def test_subradices():
    assert subradices(2, 4) == (2,)
    assert subradices(32, 4) == (8, 4)
    assert subradices(1024, 8) == (8, 8, 4, 4)
    assert subradices(1024, 16) == (16, 8, 8)


def test_webgpu_tuning_override(monkeypatch):
    """JAXLAB_WEBGPU_FFT changes the plan (and the lab says so); a bad value says what it
    expects."""
    if not jaxlab.devices("webgpu"):
        pytest.skip("no WebGPU adapter")
    parts = np.random.default_rng(3).standard_normal((2, 5, 2048))
    x = (parts[0] + 1j * parts[1]).astype(np.complex64)
    monkeypatch.setenv("JAXLAB_WEBGPU_FFT", "radix=16,threads=64")
    with jaxlab.default_device("webgpu"), jaxlab.capture() as log:
        got = np.asarray(jnp.fft.fft(jnp.asarray(x)))
    want = np.fft.fft(x)
    assert np.abs(got - want).max() < 1e-5 * np.abs(want).max()
    (event,) = [e for e in log if e.kind == "routine"]
    assert event.tuning.value("sub_stages") == "16x16x8"
    assert event.tuning.value("workgroup") == "64"
    assert "JAXLAB_WEBGPU_FFT set" in event.tuning.reason("sub_stages")
    monkeypatch.setenv("JAXLAB_WEBGPU_FFT", "radix=3")
    with jaxlab.default_device("webgpu"), pytest.raises(ValueError, match="JAXLAB_WEBGPU_FFT"):
        jnp.fft.fft(jnp.asarray(x[:, :64])).block_until_ready()
    monkeypatch.delenv("JAXLAB_WEBGPU_FFT")   # and the device works on
    with jaxlab.default_device("webgpu"):
        got = np.asarray(jnp.fft.fft(jnp.asarray(x[:, :64])))
    assert np.abs(got - np.fft.fft(x[:, :64])).max() < 1e-5 * np.abs(got).max()


def test_bad_override(monkeypatch):
    monkeypatch.setenv("JAXLAB_WEBGPU_FFT", "threads=96")
    with pytest.raises(ValueError, match="powers of two"):
        FftTuning.from_env()
    monkeypatch.setenv("JAXLAB_WEBGPU_FFT", "depth=2")
    with pytest.raises(ValueError, match="radix=, threads=, span="):
        FftTuning.from_env()
