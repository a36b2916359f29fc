"""The 64-bit types (x64 on) on every device that computes them: casts between every
pair of dtypes as JAX's, float64 math within two ulp of NumPy's, reductions,
contractions, gathers and scatters, sorts and decompositions at float64 precision."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxlab
import jaxlab.numpy as jnp
import jaxlab.scipy.linalg as jsl
from tests.conftest import computes

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64"]
# values that truncate, saturate, wrap and round in every target, and the specials
# (no subnormals: XLA on CPU flushes them to zero, NumPy and jaxlab keep them)
SPECIALS = np.array([0.0, -0.0, 1.5, -2.5, 255.9, -129.5, 65535.5, 3e9, -3e9, 1e19, 2.0 ** 63,
                     -2.0 ** 63, 2.0 ** 64, 1e300, -1e300, np.inf, -np.inf, np.nan, 0.1,
                     1.0000000596046448, 65520.0, 2.0 ** 53 + 1])


def _refused(backend: str, name: str) -> bool:
    """True (having checked its TypeError) where the device does not compute `name`."""
    if computes(backend, name):
        return False
    parts = np.dtype(name).type(0).real.dtype.name   # a complex array's parts may be named
    with pytest.raises(TypeError, match=f"({name}|{parts}) is not supported on the {backend}"):
        np.asarray(jnp.ones(3, name) + 1)
    return True


def _as_f64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def _same(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(_as_f64(got), _as_f64(want))


@functools.lru_cache(maxsize=None)
def _jax_cast(src: str, dst: str) -> np.ndarray:
    """JAX's cast of SPECIALS (as src) to dst, computed once for every device."""
    return np.asarray(jax.lax.convert_element_type(jjnp.asarray(SPECIALS).astype(src), dst))


def _xla_rule(x: np.ndarray, dst: str) -> np.ndarray:
    """NumPy's astype with XLA's float -> int rule: truncate, saturate, NaN -> 0."""
    target = np.dtype(getattr(jjnp, dst))
    with np.errstate(invalid="ignore", over="ignore"):
        if x.dtype.kind not in "iub" and target.kind in "iu":
            info = np.iinfo(target)
            t = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
            out = np.clip(t, info.min, info.max).astype(target)
            return np.where(t >= float(info.max), np.array(info.max, target), out)
        return x.astype(target)


def test_casts_between_every_pair_match_jax(backend, x64):
    names = [n for n in NAMES if computes(backend, n)]
    for src in names:
        source = _jax_cast("float64", src)
        mine = jnp.asarray(source)
        for dst in names:
            if np.dtype(getattr(jjnp, src)).itemsize < 8 > np.dtype(getattr(jjnp, dst)).itemsize:
                continue   # the pairs of narrower types: test_storage_dtypes
            # JAX itself for float64's casts (its float -> int rule), NumPy with that rule
            # for the rest (JAX compiles each cast: 169 would take seconds)
            _same(mine.astype(dst), _jax_cast(src, dst) if src == "float64" else
                  _xla_rule(source, dst))


def _normal_in_float16(v: float) -> float:
    """0 for what is subnormal in a float16 (XLA on CPU flushes subnormals to zero)."""
    return 0.0 if abs(v) < 2.0 ** -14 else v


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.floats().map(_normal_in_float16), min_size=8, max_size=8),
       st.sampled_from(["int64", "uint64", "int32", "uint32", "int8", "float32", "float16"]))
def test_float64_casts_match_jax(backend, x64, values, target):
    if _refused(backend, "float64"):
        return
    data = np.array(values, np.float64)
    _same(jnp.asarray(data).astype(target), jjnp.asarray(data).astype(target))


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        return np.where(same, 0.0, np.abs(got - want) / np.spacing(np.abs(want)))


_R = np.random.default_rng(5)
MATH = {   # name: arguments (wide ranges, the reductions' edges, the specials)
    "exp": np.r_[_R.uniform(-745, 709, 400), _R.uniform(-1, 1, 200), 0.0, np.inf, -np.inf, np.nan],
    "log": np.r_[np.exp(_R.uniform(-740, 709, 400)), _R.uniform(0.5, 2, 200), 5e-324, 0.0, -0.0,
                 -1.0, np.inf, np.nan],
    "tanh": np.r_[_R.uniform(-20, 20, 300), _R.uniform(-0.6, 0.6, 300), 0.55, -0.0, np.inf],
    "arctan": np.r_[_R.uniform(-3, 3, 300), np.exp(_R.uniform(-30, 30, 300)), -np.inf, -0.0],
    "arcsin": np.r_[_R.uniform(-1, 1, 300), 1 - np.exp(_R.uniform(-40, -1, 300)), 1.0, -1.0, 1.5],
    "sin": np.r_[_R.uniform(-10, 10, 300), _R.uniform(-1e5, 1e5, 200),
                 np.exp(_R.uniform(13, 700, 200)), -0.0, 2.0 ** 19, 1e22, np.inf],
    "cos": np.r_[_R.uniform(-10, 10, 300), np.exp(_R.uniform(13, 700, 200)), 1e22, np.nan],
}


@pytest.mark.parametrize("name", MATH)
def test_float64_math_within_two_ulp_of_numpy(backend, x64, name):
    if _refused(backend, "float64"):
        return
    x = MATH[name]
    got = np.asarray(getattr(jnp, name)(jnp.asarray(x)))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    worst = _ulps(got, want).max()
    assert worst <= 2, f"{name}: {worst} ulp"


def _scatter_add(m, x):
    return x.at[m.asarray([1, 1, 6])].add(x[:3])


def _numpy_scatter(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, [1, 1, 6], x[:3])
    return out


BIG = np.array([2 ** 40 + 3, -(2 ** 50), 7, 2 ** 33, -5, 0, 2 ** 62 - 1, 12], np.int64)


@pytest.mark.parametrize("name", ["int64", "uint64", "float64"])
def test_64_bit_reductions_contractions_and_indexing(backend, x64, name):
    if _refused(backend, name):
        return
    data = BIG.astype(name) if name != "float64" else np.linspace(-3, 5, 8) * 1e10 + 0.1
    for f in (lambda m, x: m.sum(x), lambda m, x: m.max(x), lambda m, x: m.min(x),
              lambda m, x: m.argmax(x), lambda m, x: m.argmin(x), lambda m, x: m.cumsum(x),
              lambda m, x: m.prod(x[2:5]), lambda m, x: x[m.asarray([3, 0, 7, 3])],
              _scatter_add,
              lambda m, x: m.where(x > x[3], x, x[::-1]), lambda m, x: x // x[2] + x % 5,
              lambda m, x: (x >> 3) if m.issubdtype(x.dtype, m.integer) else x * 0.5):
        want = _numpy_scatter(data) if f is _scatter_add else f(np, data)
        got = f(jnp, jnp.asarray(data))
        if name == "float64":
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
        else:
            np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


def test_float64_matmul_at_double_precision(backend, x64):
    if _refused(backend, "float64"):
        return
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((17, 33)), rng.standard_normal((33, 9))
    got = np.asarray(jnp.asarray(a) @ jnp.asarray(b))
    np.testing.assert_allclose(got, a @ b, rtol=1e-13, atol=1e-13)
    ints = (rng.integers(-2 ** 20, 2 ** 20, (5, 6)), rng.integers(-2 ** 20, 2 ** 20, (6, 4)))
    _same(jnp.asarray(ints[0]) @ jnp.asarray(ints[1]), jjnp.asarray(ints[0]) @ jjnp.asarray(ints[1]))


def test_64_bit_sorts_are_stable_with_nan_last(backend, x64):
    rng = np.random.default_rng(3)
    f = rng.standard_normal((2, 40))
    f[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
    f[1, ::4] = 1.5
    ints = np.array([[5, -2 ** 62, 7, 2 ** 40, 5, -1, 2 ** 63 - 1, -2 ** 63]], np.int64)
    for data in (f, ints, ints.astype(np.uint64)):
        if _refused(backend, data.dtype.name):
            continue
        with jaxlab.capture() as log:
            got_sorted = np.asarray(jnp.sort(jnp.asarray(data)))
            got_order = np.asarray(jnp.argsort(jnp.asarray(data)))
        np.testing.assert_array_equal(got_sorted, np.sort(data, axis=-1))
        np.testing.assert_array_equal(got_order, np.argsort(data, axis=-1, kind="stable"))
        if backend == "wasm":   # generated radix sorts, not NumPy on views
            assert {e.source_language for e in log if e.kind == "routine"} == {"wat"}


def test_float64_decompositions(backend, x64):
    if _refused(backend, "float64"):
        return
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 6, 6))
    spd = a @ a.transpose(0, 2, 1) + 6 * np.eye(6)
    b = rng.standard_normal((2, 6, 2))
    tol = dict(rtol=1e-12, atol=1e-12)
    chol = jnp.linalg.cholesky(jnp.asarray(spd))
    np.testing.assert_allclose(np.asarray(chol), np.linalg.cholesky(spd), **tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b))),
                               np.linalg.solve(a, b), **tol)
    np.testing.assert_allclose(np.asarray(jsl.solve_triangular(chol, jnp.asarray(b), lower=True)),
                               np.linalg.solve(np.linalg.cholesky(spd), b), **tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.eigvalsh(jnp.asarray(spd))),
                               np.linalg.eigvalsh(spd), **tol)
    np.testing.assert_allclose(np.asarray(jnp.linalg.svd(jnp.asarray(a), compute_uv=False)),
                               np.linalg.svd(a, compute_uv=False), **tol)
    q, r = jnp.linalg.qr(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(q @ r), a, **tol)
    assert np.asarray(q).dtype == np.float64


def test_complex128_arithmetic_and_fft(backend, x64):
    if _refused(backend, "complex128"):
        return
    rng = np.random.default_rng(6)
    z = rng.standard_normal((3, 16)) + 1j * rng.standard_normal((3, 16))
    w = rng.standard_normal((16, 2)) + 1j * rng.standard_normal((16, 2))
    x = rng.standard_normal((2, 12))
    zj = jnp.asarray(z)
    assert zj.dtype == np.complex128 and (jnp.asarray(x) + 1j).dtype == np.complex128
    assert (jnp.ones(2, jnp.complex64) + jnp.ones(2, jnp.float64)).dtype == np.complex128
    tol = dict(rtol=1e-13, atol=1e-13)
    for got, want in ((zj * zj / (zj + 1), z * z / (z + 1)), (zj @ jnp.asarray(w), z @ w),
                      (jnp.exp(zj), np.exp(z)), (jnp.abs(zj), np.abs(z)),
                      (jnp.sum(zj, axis=0), z.sum(axis=0))):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, **tol)
    with jaxlab.capture() as log:
        spectra = [(jnp.fft.fft(zj), np.fft.fft(z)), (jnp.fft.ifft(zj), np.fft.ifft(z)),
                   (jnp.fft.fft(jnp.asarray(z[:, :12])), np.fft.fft(z[:, :12])),   # Bluestein
                   (jnp.fft.rfft(jnp.asarray(x)), np.fft.rfft(x)),
                   (jnp.fft.irfft(jnp.asarray(z[:, :9])), np.fft.irfft(z[:, :9])),
                   (jnp.fft.fft2(zj), np.fft.fft2(z))]
        spectra = [(np.asarray(got), want) for got, want in spectra]
    for got, want in spectra:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, **tol)
    if backend == "wasm":   # f64x2 butterflies, not pocketfft on views
        assert {e.source_language for e in log if e.kind == "routine"} == {"wat"}
