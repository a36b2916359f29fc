"""Where complex math and float division break on a GPU that flushes subnormals and
divides as a * rcp(b) (NVIDIA's Vulkan driver; lavapipe computes them right).

`python3 -m benchmarks.gpu_complex_probe` evaluates each step of core/complex_math.py's
formulas (|parts|, max/ratio, hypot, log|z|, atan2, sqrt's t and u, ...) and the
functions built from them on the webgpu device and on cpu, at the inputs of
tests/test_complex_functions.py and tests/test_float_division.py, and prints every
element where the two differ by more than the tests' tolerance: the first step listed
for an input is where it breaks.
"""
from __future__ import annotations

import argparse
from typing import Callable

import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.array import wrap
from jaxlab.core import complex_math as cm

RTOL, ATOL = 2e-6, 1e-7


def _inputs() -> np.ndarray:
    """The complex test points with parts near 1e38 / 3e38 / 1e-30 (as the test's)."""
    rng = np.random.default_rng(7)
    rng.standard_normal(12), rng.standard_normal(12)   # the test's normal points come first
    scales = np.array([1e-30, 1e-4, 1e4, 1e20, 1e38, 3e38])
    angles = np.exp(1j * rng.uniform(-np.pi, np.pi, scales.size))
    huge = np.array([3e38 + 3e38j, -3e38 + 1e30j, 1e20 - 1e20j])
    quotients = np.array([1e38 + 3e38j, 3e38 + 1e38j, -2e38 + 3e38j, 1e30 + 3e38j,
                          3e38 - 1.5e38j, 1e38 + 8.5e37j])
    return np.concatenate([scales * angles, huge, quotients]).astype(np.complex64)


def _real_steps() -> dict[str, Callable]:
    """Each step as a function of the parts (a, b) -> Real."""
    def big(a, b): return cm.Magnitude(a, b).big                      # noqa: E704
    def ratio(a, b): return cm.Magnitude(a, b).ratio                  # noqa: E704
    def one_plus_r2(a, b): r = cm.Magnitude(a, b).ratio; return 1.0 + r * r   # noqa: E702,E704
    def sqrt_1r2(a, b): r = cm.Magnitude(a, b).ratio; return cm.sqrt(1.0 + r * r)  # noqa
    def log_big(a, b): return cm.log(cm.Magnitude(a, b).big)          # noqa: E704
    def log1p_r2(a, b): r = cm.Magnitude(a, b).ratio; return cm.log1p(r * r)  # noqa
    def a_over_big(a, b): return cm.Magnitude(a, b).divide(a)         # noqa: E704
    def plain_a_over_big(a, b): return a / cm.Magnitude(a, b).big     # noqa: E704
    def sqrt_t(a, b):                                                 # noqa: E301
        s = 0.25
        return cm.sqrt(0.5 * (cm.fabs(a * s) + cm.hypot(a * s, b * s)))
    def sqrt_u(a, b): return (b * 0.25) / (2.0 * sqrt_t(a, b))       # noqa: E301,E704
    def signbit_a(a, b): return cm.where(cm.signbit(a), 1.0, 0.0, like=a)  # noqa: E704
    return {"|a|": lambda a, b: cm.fabs(a), "big": big, "ratio": ratio,
            "1+r^2": one_plus_r2, "sqrt(1+r^2)": sqrt_1r2, "hypot": cm.hypot,
            "log(big)": log_big, "log1p(r^2)": log1p_r2, "log_hypot": cm.log_hypot,
            "atan2(b,a)": lambda a, b: cm.atan2(b, a), "a/big scaled": a_over_big,
            "a/big guarded": plain_a_over_big, "sqrt t (scaled)": sqrt_t,
            "sqrt u (scaled)": sqrt_u, "signbit(a)": signbit_a}


def _complex_steps() -> dict[str, Callable]:
    def div_by_conj(a, b): return cm.c_div(a, b, b, a)               # noqa: E704
    return {"c_sqrt": cm.c_sqrt, "c_log": cm.c_log, "c_log1p": cm.c_log1p,
            "c_sign": cm.c_sign, "c_acosh": cm.c_acosh, "c_acos": cm.c_acos,
            "c_asinh": cm.c_asinh, "z / (b + ia)": div_by_conj}


def _on(device: str, fn: Callable, z: np.ndarray) -> np.ndarray:
    with jaxlab.default_device(device):
        re = cm.Real(jnp.asarray(z.real)._lazy)
        im = cm.Real(jnp.asarray(z.imag)._lazy)
        out = fn(re, im)
        if isinstance(out, tuple):
            return np.asarray(wrap(out[0].lazy)) + 1j * np.asarray(wrap(out[1].lazy))
        return np.asarray(wrap(out.lazy))


def _report(label: str, z: np.ndarray, gpu: np.ndarray, ref: np.ndarray) -> int:
    with np.errstate(all="ignore"):
        bad = ~(np.isclose(gpu, ref, rtol=RTOL, atol=ATOL) |
                (np.isnan(gpu) & np.isnan(ref)) | (gpu == ref))
    for i in np.flatnonzero(bad):
        print(f"  {label:18s} z={z[i]!r:40s} webgpu={gpu[i]!r:36s} cpu={ref[i]!r}")
    return int(bad.sum())


def _division_probe() -> None:
    n = np.array([1e38, 3e38, -2e38, 1e30, 3e38, 7.0, 1e38, -3e38, 1.0, -3e38], np.float32)
    d = np.array([3e38, 1e38, 3e38, 3e38, -1.5e38, 2.0, 8.5e37, np.inf, 3e38, np.inf],
                 np.float32)
    ops = {"divide": jnp.divide, "floor_divide": jnp.floor_divide, "remainder": jnp.remainder,
           "fmod": jnp.fmod, "arctan2": jnp.arctan2,
           "reciprocal(d)": lambda a, b: jnp.reciprocal(b)}
    for name, op in ops.items():
        outs = {}
        for device in ("webgpu", "cpu"):
            with jaxlab.default_device(device):
                outs[device] = np.asarray(op(jnp.asarray(n), jnp.asarray(d)))
        print(f"{name}: webgpu {outs['webgpu']}\n{' ' * len(name)}  cpu    {outs['cpu']}")


def _device_facts() -> None:
    """Single ops at the edges, as the device gives them (NumPy's beside)."""
    x = np.array([np.inf, 3.4e38, 1.2e-38, 1e-39, 0.0, -0.0], np.float32)
    ops = {"sqrt": jnp.sqrt, "log": jnp.log, "x * 0.5": lambda v: v * 0.5,
           "1 / x": lambda v: 1.0 / v, "x / inf": lambda v: v / np.float32(np.inf)}
    for name, op in ops.items():
        with jaxlab.default_device("webgpu"):
            gpu = np.asarray(op(jnp.asarray(x)))
        with np.errstate(all="ignore"):
            want = np.asarray(op(x)).astype(np.float32)
        print(f"{name:8s} of {x}: webgpu {gpu}  numpy {want}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    print(jaxlab.devices("webgpu")[0])
    z = _inputs()
    print("real steps (cpu is the reference; a step is exact enough there):")
    for label, fn in _real_steps().items():
        _report(label, z, _on("webgpu", fn, z), _on("cpu", fn, z))
    print("complex functions:")
    for label, fn in _complex_steps().items():
        _report(label, z, _on("webgpu", fn, z), _on("cpu", fn, z))
    print("public functions against NumPy complex128:")
    for name in ("sqrt", "log", "log1p", "log10", "sign", "arccos", "arccosh"):
        with jaxlab.default_device("webgpu"):
            gpu = np.asarray(getattr(jnp, name)(jnp.asarray(z)))
        with np.errstate(all="ignore"):
            want = getattr(np, name)(z.astype(np.complex128)).astype(np.complex64)
        _report(name, z, gpu, want)
    print("float division by huge divisors:")
    _division_probe()
    print("single ops at the edges:")
    _device_facts()


if __name__ == "__main__":
    main()
