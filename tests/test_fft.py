"""jnp.fft on every device: values against NumPy, grads against JAX, the routine in the lab."""
import math

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is the oracle for grads and errors")
import jax.numpy as jjnp  # noqa: E402

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(7)
LENGTHS = [1, 2, 3, 5, 8, 12, 17, 64, 100]


def _c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close_spectrum(actual, expected, n):
    """float32 accuracy of an n-point transform: error relative to the largest value,
    growing like log2 n (Bluestein's three transforms of ~4n points included)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    want = np.complex64 if np.iscomplexobj(expected) else np.float32
    assert actual.dtype == want, actual.dtype
    scale = max(np.abs(expected).max(), 1e-30)
    bound = 4e-7 * (2 + math.log2(max(n, 2))) * (4 if n & (n - 1) else 1)
    assert np.abs(actual - expected).max() / scale < bound


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(backend, n):
    x = _c(2, n)
    close_spectrum(jnp.fft.fft(jnp.asarray(x)), np.fft.fft(x).astype(np.complex64), n)
    close_spectrum(jnp.fft.ifft(jnp.asarray(x)), np.fft.ifft(x).astype(np.complex64), n)


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norm_modes_and_real_transforms(backend, norm):
    x, z = _r(3, 10), _c(3, 6)
    for name, arg, n in (("fft", x, 10), ("ifft", z, 6), ("rfft", x, 10), ("irfft", z, 10),
                         ("hfft", z, 10), ("ihfft", x, 10)):
        ours = getattr(jnp.fft, name)(jnp.asarray(arg), norm=norm)
        theirs = getattr(np.fft, name)(arg, norm=norm)
        close_spectrum(ours, theirs.astype(ours.dtype), n)


def test_n_and_axis(backend):
    x = _c(6, 4)
    close_spectrum(jnp.fft.fft(jnp.asarray(x), n=8, axis=0), np.fft.fft(x, n=8, axis=0), 8)
    close_spectrum(jnp.fft.ifft(jnp.asarray(x), n=3), np.fft.ifft(x, n=3), 3)
    r = _r(4, 7)
    close_spectrum(jnp.fft.rfft(jnp.asarray(r), n=5, axis=0), np.fft.rfft(r, n=5, axis=0), 5)
    close_spectrum(jnp.fft.irfft(jnp.asarray(x), n=7, axis=0), np.fft.irfft(x, n=7, axis=0), 7)
    square = _c(16, 16)   # as many rows as points: the twiddle table is still one table
    close_spectrum(jnp.fft.fft(jnp.asarray(square)), np.fft.fft(square), 16)
    ints = np.arange(8)   # integers are transformed as float32 / complex64
    close_spectrum(jnp.fft.fft(jnp.asarray(ints)), np.fft.fft(ints).astype(np.complex64), 8)


def test_multidimensional(backend):
    x, r = _c(3, 4, 5), _r(3, 4, 6)
    close_spectrum(jnp.fft.fft2(jnp.asarray(x)), np.fft.fft2(x), 20)
    close_spectrum(jnp.fft.ifft2(jnp.asarray(x), axes=(0, 2)), np.fft.ifft2(x, axes=(0, 2)), 15)
    close_spectrum(jnp.fft.fftn(jnp.asarray(x)), np.fft.fftn(x), 60)
    close_spectrum(jnp.fft.ifftn(jnp.asarray(x), s=(2, 8), axes=(1, 0)),
                   np.fft.ifftn(x, s=(2, 8), axes=(1, 0)), 16)
    close_spectrum(jnp.fft.rfftn(jnp.asarray(r)), np.fft.rfftn(r), 72)
    close_spectrum(jnp.fft.rfft2(jnp.asarray(r), norm="ortho"), np.fft.rfft2(r, norm="ortho"), 24)
    spec = np.fft.rfftn(r)
    close_spectrum(jnp.fft.irfftn(jnp.asarray(spec.astype(np.complex64)), s=r.shape),
                   np.fft.irfftn(spec, s=r.shape, axes=(0, 1, 2)), 72)
    close_spectrum(jnp.fft.irfft2(jnp.asarray(spec.astype(np.complex64))),
                   np.fft.irfft2(spec), 40)


def test_frequencies_and_shifts(backend):
    for n in (1, 6, 7):
        np.testing.assert_allclose(jnp.fft.fftfreq(n, d=0.5), np.fft.fftfreq(n, d=0.5),
                                   rtol=1e-6)
        np.testing.assert_allclose(jnp.fft.rfftfreq(n), np.fft.rfftfreq(n), rtol=1e-6)
    assert jnp.fft.fftfreq(4).dtype == np.float32
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(jnp.fft.fftshift(jnp.asarray(x), axes),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(jnp.asarray(x), axes),
                                      np.fft.ifftshift(x, axes))


def test_jit_vmap_lax(backend):
    x = _c(4, 16)
    f = jaxlab.jit(lambda v: jnp.fft.ifft(jnp.fft.fft(v) * 2.0))
    close_spectrum(f(jnp.asarray(x)), 2 * x, 16)
    g = jaxlab.vmap(lambda v: jnp.fft.rfft(v, n=12), in_axes=1, out_axes=1)
    r = _r(12, 3)
    close_spectrum(g(jnp.asarray(r)), np.fft.rfft(r, axis=0), 12)
    close_spectrum(jaxlab.lax.fft(jnp.asarray(x), "fft", (16,)), np.fft.fft(x), 16)


# grads against jax.grad (JAX's transpose rules: FFT is its own transpose, RFFT/IRFFT's masks)
GRADS = {
    "fft_power": (lambda m, x: m.sum(m.abs(m.fft.fft(x)) ** 2), "real"),
    "rfft_weighted": (lambda m, x: m.sum(m.real(m.fft.rfft(x) * m.arange(5.0))), "real"),
    "irfft": (lambda m, z: m.sum(m.fft.irfft(z, n=8) * m.arange(8.0)), "complex"),
    "irfft_odd": (lambda m, z: m.sum(m.fft.irfft(z, n=7) ** 2), "complex"),
    "fft2_complex": (lambda m, z: m.sum(m.imag(m.fft.fft2(z)) * m.real(z)), "complex"),
    "ifft_bluestein": (lambda m, z: m.sum(m.real(m.fft.ifft(z, norm="ortho")) ** 3), "complex"),
    "rfftn": (lambda m, x: m.sum(m.abs(m.fft.rfftn(x)) ** 2), "real"),
    "hfft": (lambda m, z: m.sum(m.fft.hfft(z) ** 2), "complex"),
}


@pytest.mark.parametrize("name", GRADS)
def test_grads_as_jax(backend, name):
    f, kind = GRADS[name]
    x = _r(2, 8) if kind == "real" else _c(2, 5)
    ours = jaxlab.grad(lambda v: f(jnp, v))(jnp.asarray(x))
    theirs = np.asarray(jax.grad(lambda v: f(jjnp, v))(x))
    np.testing.assert_allclose(np.asarray(ours), theirs, rtol=2e-4,
                               atol=2e-4 * np.abs(theirs).max())


def test_jvp_as_jax(backend):
    z, t = _c(6), _c(6)
    _, ours = jaxlab.jvp(lambda v: jnp.fft.fft(v), (jnp.asarray(z),), (jnp.asarray(t),))
    _, theirs = jax.jvp(lambda v: jjnp.fft.fft(v), (z,), (t,))
    close_spectrum(ours, np.asarray(theirs), 6)


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.fft.fftn(m.ones((2, 2)), axes=(0, 0)), ValueError, "repeated axes"),
    (lambda m: m.fft.fft(m.ones(4), norm="nope"), ValueError, "Invalid norm value"),
    (lambda m: m.fft.rfft(m.ones(4) * 1j), ValueError, "only real valued inputs"),
    (lambda m: m.fft.fft(m.ones(4), axis=(0,)), ValueError, "does not support multiple axes"),
    (lambda m: m.fft.fft(m.ones(4), n=0), ValueError, "Shape should be positive"),
    (lambda m: m.fft.fft2(m.ones((2, 2)), axes=(0,)), ValueError, "only supports 2 axes"),
    (lambda m: m.fft.fftfreq([4]), ValueError, "only takes an int"),
])
def test_errors_as_jax(call, error, match):
    with pytest.raises(error, match=match):
        call(jjnp)
    with pytest.raises(error, match=match):
        call(jnp)


def test_routine_in_the_lab(backend):
    """The transform runs as a routine whose generated source and FLOPs the events carry."""
    x = jnp.asarray(_c(3, 16))
    with jaxlab.capture() as log:
        jnp.fft.fft(x).block_until_ready()
    (event,) = [e for e in log if e.kind == "routine"]
    assert event.name.startswith("fft")
    assert event.flops == 5 * 16 * 4 * 3
    language = {"wasm": "wat", "webgpu": "wgsl", "cpu": "text"}[backend]
    assert event.source_language == language
    if backend != "cpu":   # generated code: the butterflies are in the text
        assert any(f"radix{sep}{r}" in event.source for sep in "- " for r in (4, 8, 16))


@pytest.mark.parametrize("rows, n", [(3, 1024), (2, 8192), (1, 32768)])
def test_long_rows(backend, rows, n):
    """Rows that fill workgroup memory, and longer ones that take two and three passes
    over global memory on a 32 KiB device (lavapipe): forward, inverse, real."""
    x, r = _c(rows, n), _r(rows, n)
    close_spectrum(jnp.fft.fft(jnp.asarray(x)), np.fft.fft(x), n)
    close_spectrum(jnp.fft.ifft(jnp.asarray(x)), np.fft.ifft(x), n)
    close_spectrum(jnp.fft.rfft(jnp.asarray(r)), np.fft.rfft(r), n)

