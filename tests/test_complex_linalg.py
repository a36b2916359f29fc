"""Complex matrices in jnp.linalg / jax.lax.linalg on every device, against NumPy and
JAX: values to complex64 tolerance, reconstructions, gradients against JAX's."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp

TOL = dict(rtol=2e-4, atol=2e-4)


def _complex(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _hermitian_pd(rng, shape):
    a = _complex(rng, shape)
    return (a @ _mH(a) + shape[-1] * np.eye(shape[-1])).astype(np.complex64)


def close(actual, expected, **tol):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected) and actual.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(actual, expected, **(tol or TOL))


def test_cholesky(backend, rng):
    h = _hermitian_pd(rng, (2, 3, 3))
    low = jnp.linalg.cholesky(jnp.asarray(h))
    close(low, np.linalg.cholesky(h))
    close(jnp.linalg.cholesky(jnp.asarray(h), upper=True), _mH(np.linalg.cholesky(h)))
    # only the lower triangle is read without symmetrizing (an upper garbage triangle)
    skewed = np.tril(h) + np.triu(_complex(rng, (3, 3)), 1)
    close(jaxlab.lax.linalg.cholesky(jnp.asarray(skewed), symmetrize_input=False),
          np.linalg.cholesky(h))
    # not positive definite: NaN in the lower triangle, as JAX
    bad = np.asarray(jnp.linalg.cholesky(jnp.asarray(-h[0])))
    assert np.isnan(bad[np.tril_indices(3)]).all()


def test_solve_inv_det_slogdet(backend, rng):
    a, b = _complex(rng, (2, 3, 3)), _complex(rng, (2, 3, 2))
    x = jnp.asarray(a)
    close(jnp.linalg.solve(x, jnp.asarray(b)), np.linalg.solve(a, b))
    close(jnp.linalg.inv(x), np.linalg.inv(a))
    close(jnp.linalg.det(x), np.linalg.det(a))
    sign, logabsdet = jnp.linalg.slogdet(x)
    expected = np.linalg.slogdet(a)
    close(sign, expected.sign)
    close(logabsdet, expected.logabsdet)


def test_lu_as_jax(backend, rng):
    a = _complex(rng, (2, 4, 3))
    a[0, 2] *= 10   # a pivot that moves
    lu, pivots, perm = jaxlab.lax.linalg.lu(jnp.asarray(a))
    lu_j, pivots_j, perm_j = jax.lax.linalg.lu(a)
    close(lu, np.asarray(lu_j))
    np.testing.assert_array_equal(np.asarray(pivots), pivots_j)
    np.testing.assert_array_equal(np.asarray(perm), perm_j)


@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a", [
    (True, False, True, True), (False, True, False, True)])
def test_triangular_solve_as_jax(backend, rng, left_side, lower, transpose_a, conjugate_a):
    a = _complex(rng, (2, 3, 3)) + 3 * np.eye(3, dtype=np.complex64)
    b = _complex(rng, (2, 3, 2) if left_side else (2, 2, 3))
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              conjugate_a=conjugate_a)
    close(jaxlab.lax.linalg.triangular_solve(jnp.asarray(a), jnp.asarray(b), **kw),
          np.asarray(jax.lax.linalg.triangular_solve(a, b, **kw)))


_GRADIENTS = {
    "det_slogdet": lambda np_: lambda x: (np_.abs(np_.linalg.det(x))
                                          + np_.imag(np_.linalg.slogdet(x)[0])
                                          + np_.linalg.slogdet(x)[1]),
    "solve": lambda np_: lambda x: np_.real(np_.linalg.solve(x, np_.ones((3, 1)))).sum(),
    "cholesky": lambda np_: lambda x: (np_.real(np_.linalg.cholesky(x @ np_.conj(x.T)
                                                                    + 3 * np_.eye(3))).sum()
                                       + np_.imag(np_.linalg.cholesky(x @ np_.conj(x.T))).sum()),
}


@pytest.mark.parametrize("name", sorted(_GRADIENTS))
def test_gradients_as_jax(backend, rng, name):
    a = _complex(rng, (3, 3)) + 2 * np.eye(3, dtype=np.complex64)
    got = jaxlab.grad(_GRADIENTS[name](jnp))(jnp.asarray(a))
    close(got, np.asarray(jax.grad(_GRADIENTS[name](jjnp))(a)), rtol=2e-3, atol=2e-3)


def test_jit_and_vmap(backend, rng):
    a, b = _complex(rng, (2, 3, 3)), _complex(rng, (2, 3))
    solve = jaxlab.jit(jaxlab.vmap(jnp.linalg.solve))
    close(solve(jnp.asarray(a), jnp.asarray(b)), np.linalg.solve(a, b[..., None])[..., 0])
    close(jaxlab.jit(jnp.linalg.det)(jnp.asarray(a)), np.linalg.det(a))


def test_scipy_solves(backend, rng):
    import jax.scipy.linalg as jsl

    import jaxlab.scipy.linalg as sl
    h, b = _hermitian_pd(rng, (3, 3)), _complex(rng, (3, 2))
    c = sl.cho_factor(jnp.asarray(h))
    close(sl.cho_solve(c, jnp.asarray(b)), np.linalg.solve(h, b))
    close(sl.solve_triangular(jnp.asarray(h), jnp.asarray(b), trans="C"),
          np.asarray(jsl.solve_triangular(h, b, trans="C")))
    a = _complex(rng, (3, 3))
    close(sl.lu_solve(sl.lu_factor(jnp.asarray(a)), jnp.asarray(b), trans=2),
          np.linalg.solve(_mH(a), b))


def test_qr_as_numpy(backend, rng):
    tall, wide = _complex(rng, (2, 4, 3)), _complex(rng, (3, 5))
    for a, mode in ((tall, "reduced"), (wide, "complete")):
        q, r = jnp.linalg.qr(jnp.asarray(a), mode=mode)
        q_np, r_np = np.linalg.qr(a, mode=mode)   # LAPACK's signs: r's diagonal real
        close(q, q_np)
        close(r, r_np)
    close(jnp.linalg.qr(jnp.asarray(tall), mode="r"), np.linalg.qr(tall, mode="r"))


def _assert_unitary_columns(u):
    k = u.shape[-1]
    np.testing.assert_allclose(_mH(u) @ u, np.broadcast_to(np.eye(k), u.shape[:-2] + (k, k)),
                               atol=5e-5)


def test_eigh_hermitian(backend, rng):
    a = _complex(rng, (2, 4, 4))
    h = (a + _mH(a)).astype(np.complex64)
    w, v = jnp.linalg.eigh(jnp.asarray(h))
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    close(w, np.linalg.eigvalsh(h).astype(np.float32))
    _assert_unitary_columns(v)
    np.testing.assert_allclose((v * w[..., None, :]) @ _mH(v), h, atol=1e-4 * 10)
    # without symmetrizing only one triangle is read
    one_triangle = h[0] + 5 * np.tril(h[0], -1)
    close(jnp.linalg.eigh(jnp.asarray(one_triangle), UPLO="U", symmetrize_input=False)[0],
          np.linalg.eigvalsh(one_triangle, UPLO="U").astype(np.float32))


def test_eigh_repeated_eigenvalues_give_independent_vectors(backend, rng):
    # a unitary rotation of diag(1, 1, 2, 2): each doubled eigenvalue needs two
    # independent complex vectors (a real embedding alone would not pair them)
    u = np.linalg.qr(_complex(rng, (4, 4)))[0]
    h = ((u * np.array([1.0, 1.0, 2.0, 2.0])) @ _mH(u)).astype(np.complex64)
    for matrix in (h, np.eye(3, dtype=np.complex64)):
        w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(matrix)))
        _assert_unitary_columns(v)
        np.testing.assert_allclose((v * w[None, :]) @ _mH(v), matrix, atol=2e-5)


def test_svd_complex(backend, rng):
    a = _complex(rng, (2, 4, 3))
    u, s, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(a), full_matrices=False))
    assert s.dtype == np.float32 and u.dtype == vh.dtype == np.complex64
    close(s, np.linalg.svd(a, compute_uv=False))
    _assert_unitary_columns(u)
    _assert_unitary_columns(_mH(vh))
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=2e-5)
    wide = _complex(rng, (3, 5))   # factored as its conjugate transpose; full u and vh
    u, s, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(wide)))
    assert u.shape == (3, 3) and vh.shape == (5, 5)
    _assert_unitary_columns(u)
    _assert_unitary_columns(vh)
    np.testing.assert_allclose((u * s) @ vh[:3], wide, atol=2e-5)


# functions of the decompositions that do not depend on the vectors' phases
_DECOMPOSITION_GRADIENTS = {
    "eigh": lambda np_: lambda x: ((np_.linalg.eigvalsh(x + np_.conj(x.T)) ** 2).sum()
                                   + (np_.abs(np_.linalg.eigh(x + np_.conj(x.T))[1]) ** 2
                                      * np_.arange(3.0)).sum()),
    "svd": lambda np_: lambda x: (np_.linalg.svd(x, compute_uv=False).sum()
                                  + (np_.abs(np_.linalg.svd(x, full_matrices=False)[0]) ** 2
                                     * np_.arange(3.0)).sum()),
    "qr": lambda np_: lambda x: (np_.real(np_.linalg.qr(x)[0]).sum()
                                 + np_.imag(np_.linalg.qr(x)[1]).sum()),
}


@pytest.mark.parametrize("name", sorted(_DECOMPOSITION_GRADIENTS))
def test_decomposition_gradients_as_jax(backend, rng, name):
    a = _complex(rng, (4, 3) if name != "eigh" else (3, 3))
    f = _DECOMPOSITION_GRADIENTS[name]
    got = jaxlab.grad(f(jnp))(jnp.asarray(a))
    close(got, np.asarray(jax.grad(f(jjnp))(a)), rtol=2e-3, atol=2e-3)


def test_decompositions_jit_and_vmap(backend, rng):
    a = _complex(rng, (2, 3, 3))
    h = (a + _mH(a)).astype(np.complex64)
    eigvalsh = jaxlab.jit(jaxlab.vmap(jnp.linalg.eigvalsh))
    close(eigvalsh(jnp.asarray(h)), np.linalg.eigvalsh(h).astype(np.float32))
    svdvals = jaxlab.jit(jaxlab.vmap(jnp.linalg.svdvals))
    close(svdvals(jnp.asarray(a)), np.linalg.svd(a, compute_uv=False))


def test_pinv_lstsq_complex(backend, rng):
    a, b = _complex(rng, (4, 3)), _complex(rng, (4, 2))
    close(jnp.linalg.pinv(jnp.asarray(a)), np.linalg.pinv(a), atol=1e-4, rtol=1e-4)
    close(jnp.linalg.pinv(jnp.zeros((1, 1), jnp.complex64)), np.zeros((1, 1), np.complex64))
    x, resid, rank, s = jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(b))
    x_np, resid_np, rank_np, s_np = np.linalg.lstsq(a, b)
    close(x, x_np, atol=1e-4, rtol=1e-4)
    close(resid, resid_np, atol=1e-3, rtol=1e-3)
    assert int(rank) == rank_np

    def f(np_):
        return lambda x: np_.real(np_.linalg.pinv(x)).sum() + np_.imag(np_.linalg.pinv(x)).sum()
    close(jaxlab.grad(f(jnp))(jnp.asarray(a)), np.asarray(jax.grad(f(jjnp))(a)),
          rtol=2e-3, atol=2e-3)
