"""float32 exp, tanh, sin and cos on every device, in ulps of NumPy's float32 answer:
a dense sweep where the range reduction is exact, the edges (zeros, subnormals, inf,
NaN, clamp and reduction boundaries), and the reduction's accuracy beyond."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp

F32 = np.float32
SWEEP = 100_001

# name -> (function, dense sweep range, max ulps); sin and cos reduce |x| <= 8 exactly
CASES = {
    "exp": (jnp.exp, np.exp, (-104.0, 89.0), 3),
    "exp(-x*x)": (lambda x: jnp.exp(-x * x), lambda x: np.exp(-x * x), (-11.0, 11.0), 3),
    "exp(x*x)": (lambda x: jnp.exp(x * x), lambda x: np.exp(x * x), (-9.5, 9.5), 3),
    "tanh": (jnp.tanh, np.tanh, (-10.0, 10.0), 2),
    "sin": (jnp.sin, np.sin, (-8.0, 8.0), 2),
    "cos": (jnp.cos, np.cos, (-8.0, 8.0), 2),
}


def _around(values) -> np.ndarray:
    """Each value and its float32 neighbours."""
    v = np.asarray(values, F32)
    return np.concatenate([v, np.nextafter(v, F32(np.inf)), np.nextafter(v, F32(-np.inf))])


EDGES = np.concatenate([
    np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], F32),
    _around([1e-45, -1e-45, 1e-40, -3e-39, 1.17549435e-38]),      # subnormals, smallest normal
    _around([0.625, -0.625, 9.01, 10.0, -10.0]),                   # tanh's branch and clamp
    _around([88.72283, 88.8, -87.33655, -103.27893, -103.98, -104.0]),  # exp's overflow,
    _around(np.arange(-5, 6) * np.pi / 2),                         # subnormals, clamps
    _around([8192.0, -8192.0, 1e4, 3e38, -3e38]),                  # Payne-Hanek from 8192
])


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Integer ulps between float32 arrays (0 where both are NaN; -0 and +0 differ)."""
    def ordered(a):
        bits = a.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, np.abs(ordered(got) - ordered(want)))


def _flushed(a: np.ndarray) -> np.ndarray:
    """a with its subnormals as zeros of their sign."""
    tiny = np.abs(a) < np.finfo(F32).tiny
    return np.where(tiny, np.copysign(F32(0), a), a).astype(F32)


def _run(fn, x: np.ndarray) -> np.ndarray:
    return np.asarray(jaxlab.jit(fn)(jnp.asarray(x)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_dense_sweep_and_edges_within_their_ulps(backend, name):
    fn, ref, (lo, hi), budget = CASES[name]
    x = np.concatenate([np.linspace(lo, hi, SWEEP, dtype=F32), EDGES])
    if name.startswith(("sin", "cos")):
        x = x[(np.abs(x) <= 8) | ~np.isfinite(x) | (x == 0) | (np.abs(x) < 1e-30)]
    got = _run(fn, x)
    with np.errstate(all="ignore"):
        want = ref(x)
        # WGSL lets a device flush subnormals to zero (NVIDIA's Vulkan driver does):
        # there a flushed answer to the flushed input counts too
        flushed_want = _flushed(ref(_flushed(x)))
    err = np.minimum(_ulps(got, want), _ulps(_flushed(got), flushed_want))
    worst = int(np.argmax(err))
    assert err[worst] <= budget, (name, x[worst], got[worst], want[worst], err[worst])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_large_arguments_to_the_reduction_accuracy(backend, name):
    # past |x| = 8: within 2e-7 of the value (Cody-Waite to 8192, Payne-Hanek beyond);
    # ulps near a multiple of pi there measure the reduction, not the polynomial
    fn, ref = CASES[name][:2]
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-8192, 8192, 4001), rng.uniform(8192, 1e6, 1001),
                        [8191.999, 8192.0, 1e30, -3e38]]).astype(F32)
    got = _run(fn, x)
    np.testing.assert_allclose(got, ref(x), rtol=0, atol=2e-7)
