"""General eigendecompositions (jnp.linalg.eig/eigvals, lax.linalg.eig: cpu only, as
JAX), eigh's subset_by_index, qr(mode="raw") and scipy.linalg.eigh's generalized problem,
against NumPy, SciPy and JAX on every device."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import scipy.linalg

import jaxlab
import jaxlab.numpy as jnp
import jaxlab.scipy.linalg as jsl

TOL = dict(rtol=2e-4, atol=2e-4)


def _close(actual, expected, **tol):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected) and actual.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(actual, expected, **(tol or TOL))


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _matrices(rng):
    real = rng.standard_normal((2, 3, 3)).astype(np.float32)
    return real, (real + 1j * rng.standard_normal((2, 3, 3))).astype(np.complex64)


def test_eig_on_cpu_as_jax_elsewhere_refused(backend, rng):
    real, cplx = _matrices(rng)
    if backend != "cpu":   # JAX computes eig on the CPU only, and says so elsewhere
        with pytest.raises(NotImplementedError, match="only implemented on the CPU"):
            jnp.linalg.eigvals(jnp.asarray(real))
        with pytest.raises(NotImplementedError, match="only implemented on the CPU"):
            jaxlab.jit(jnp.linalg.eig)(jnp.asarray(cplx))
        return
    for a in (real, cplx):
        w, v = map(np.asarray, jnp.linalg.eig(jnp.asarray(a)))
        w_jax, v_jax = jjnp.linalg.eig(a)
        _close(w, np.asarray(w_jax))   # LAPACK's order and normalisation, as JAX
        _close(v, np.asarray(v_jax))
        np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=2e-5)
        _close(jnp.linalg.eigvals(jnp.asarray(a)), np.asarray(w_jax))
        w, vl, vr = map(np.asarray, jaxlab.lax.linalg.eig(jnp.asarray(a)))
        np.testing.assert_allclose(_mH(vl) @ a, w[..., :, None] * _mH(vl), atol=2e-5)
        np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1.0, atol=1e-5)
    _close(jaxlab.jit(jaxlab.vmap(jnp.linalg.eigvals))(jnp.asarray(real)),
           np.asarray(jjnp.linalg.eigvals(real)))


def test_eigvals_gradient_as_jax(backend, rng):
    real, cplx = _matrices(rng)

    def f(np_):
        return lambda x: (np_.real(np_.linalg.eigvals(x)) ** 2).sum() + np_.imag(
            np_.linalg.eigvals(x) ** 2).sum()
    if backend != "cpu":
        with pytest.raises(NotImplementedError, match="only implemented on the CPU"):
            jaxlab.grad(f(jnp))(jnp.asarray(real[0]))
        return
    for a in (real[0], cplx[0]):
        _close(jaxlab.grad(f(jnp))(jnp.asarray(a)), np.asarray(jax.grad(f(jjnp))(a)),
               rtol=2e-3, atol=2e-3)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        jaxlab.grad(lambda x: jnp.real(jnp.linalg.eig(x)[1]).sum())(jnp.asarray(real[0]))


def test_eigh_subset_by_index(backend, rng):
    a = rng.standard_normal((4, 4)).astype(np.float32)
    a = a + a.T
    v, w = jaxlab.lax.linalg.eigh(jnp.asarray(a), subset_by_index=(1, 3))
    w_np, v_np = np.linalg.eigh(a)
    _close(w, w_np[1:3].astype(np.float32))
    v = np.asarray(v)
    assert v.shape == (4, 2)
    np.testing.assert_allclose(np.abs(np.sum(v * v_np[:, 1:3], axis=0)), 1.0, atol=1e-4)
    for bad in ((2, 2), (0, 5), "ab"):
        with pytest.raises(ValueError, match="subset_by_index"):
            jaxlab.lax.linalg.eigh(jnp.asarray(a), subset_by_index=bad)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_qr_raw_as_numpy(backend, rng, dtype):
    a = rng.standard_normal((4, 3)) + (1j * rng.standard_normal((4, 3)) if dtype is
                                       np.complex64 else 0)
    for x in (a.astype(dtype), a.T.astype(dtype)):
        h, tau = jnp.linalg.qr(jnp.asarray(x), mode="raw")
        h_np, tau_np = np.linalg.qr(x, mode="raw")   # h transposed, as NumPy and JAX
        _close(h, h_np.astype(dtype))
        _close(tau, tau_np.astype(dtype))


@pytest.mark.parametrize("kind", [1, 2, 3])
def test_scipy_generalized_eigh_as_scipy(backend, rng, kind):
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    b = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a, b = (a + _mH(a)).astype(np.complex64), (b @ _mH(b) + 3 * np.eye(3)).astype(np.complex64)
    w, x = jsl.eigh(jnp.asarray(a), jnp.asarray(b), type=kind, lower=kind != 2)
    w_sp, x_sp = scipy.linalg.eigh(a, b, type=kind, lower=kind != 2)
    _close(w, w_sp.astype(np.float32))
    # vectors agree with SciPy's up to a phase per column
    phases = np.sum(np.conj(np.asarray(x)) * x_sp, axis=0)
    np.testing.assert_allclose(np.abs(phases), np.sum(np.abs(x_sp) ** 2, axis=0), rtol=1e-3)
    _close(jsl.eigh(jnp.asarray(a.real), jnp.asarray(b.real), eigvals_only=True),
           scipy.linalg.eigh(a.real, b.real, eigvals_only=True).astype(np.float32))
