"""eigh, svd, qr and what is built on them, on every device, against NumPy and JAX:
invariants (reconstruction, orthogonality, ordering), never the signs of vectors."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.test_util import check_grads
from tests.conftest import assert_close

TOL = dict(rtol=2e-4, atol=2e-4)


def _general(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _symmetric(rng, shape):
    a = _general(rng, shape)
    return (a + np.swapaxes(a, -1, -2)).astype(np.float32)


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _assert_orthonormal_columns(q):
    k = q.shape[-1]
    np.testing.assert_allclose(_mT(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)),
                               atol=5e-5)


@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 6, 6), (2, 1, 3, 3)])
def test_eigh_invariants(backend, rng, shape):
    a = _symmetric(rng, shape)
    w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
    assert_close(w, np.linalg.eigvalsh(a).astype(np.float32), **TOL)
    assert (np.diff(w, axis=-1) >= 0).all()
    _assert_orthonormal_columns(v)
    np.testing.assert_allclose((v * w[..., None, :]) @ _mT(v), a, atol=1e-4 * np.abs(a).max() * 10)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_without_symmetrizing(backend, rng, uplo):
    a = _general(rng, (4, 4))
    w = jnp.linalg.eigh(jnp.asarray(a), UPLO=uplo, symmetrize_input=False).eigenvalues
    assert_close(w, np.linalg.eigvalsh(a, UPLO=uplo).astype(np.float32), **TOL)
    assert_close(jnp.linalg.eigvalsh(jnp.asarray(a + a.T)),
                 np.linalg.eigvalsh(a + a.T).astype(np.float32), **TOL)


def test_eigh_repeated_and_zero_eigenvalues(backend):
    a = np.diag([2.0, 2.0, 0.0, -1.0]).astype(np.float32)
    w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
    assert_close(w, np.array([-1.0, 0.0, 2.0, 2.0], np.float32), **TOL)
    _assert_orthonormal_columns(v)
    w0 = np.asarray(jnp.linalg.eigvalsh(jnp.zeros((3, 3))))
    assert_close(w0, np.zeros(3, np.float32))


def test_eigh_of_split_and_tridiagonal_matrices(backend, rng):
    """Matrices whose reduction or iteration splits: already tridiagonal (every reflector
    the identity), and two decoupled blocks with a zero row between them."""
    t = np.diag(np.arange(9.0)) + np.diag(np.full(8, 0.5), 1) + np.diag(np.full(8, 0.5), -1)
    blocks = np.zeros((9, 9))
    blocks[:4, :4], blocks[5:, 5:] = _symmetric(rng, (4, 4)), _symmetric(rng, (4, 4))
    for a in (t.astype(np.float32), blocks.astype(np.float32)):
        w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
        assert_close(w, np.linalg.eigvalsh(a).astype(np.float32), **TOL)
        _assert_orthonormal_columns(v)
        np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-4 * np.abs(a).max() * 10)


def test_eigh_of_a_nan_entry_is_nan_not_an_answer(backend):
    a = np.eye(5, dtype=np.float32)
    a[1, 3] = a[3, 1] = np.nan
    w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
    assert np.isnan(w).any() and np.isnan(v).any()   # which ones: as the algorithm mixes


def test_eigh_svd_past_one_block(backend, rng):
    """Sizes whose Jacobi rows make several blocks (of 16 on webgpu: rounds of blocks in
    parallel workgroups, a virtual block to make the count even)."""
    a = _symmetric(rng, (2, 40, 40))
    w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
    assert_close(w, np.linalg.eigvalsh(a).astype(np.float32), rtol=1e-4, atol=1e-4)
    _assert_orthonormal_columns(v)
    g = _general(rng, (45, 34))
    for full in (False, True):
        u, s, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(g), full_matrices=full))
        assert_close(s, np.linalg.svd(g, compute_uv=False).astype(np.float32), **TOL)
        _assert_orthonormal_columns(u)
        _assert_orthonormal_columns(_mT(vh))
        np.testing.assert_allclose((u[:, :34] * s) @ vh, g, atol=2e-4)


def test_eigh_vectors_to_lapack_accuracy(backend, rng):
    """Eigenvectors to eps |A| / gap, as LAPACK's: at n = 64 with eigenvalues 1 apart,
    against NumPy's after aligning signs (a few 1e-6; one-sided Jacobi on A + 2|A|_F I
    alone, whose shift compresses the gaps: 5e-5), residual and orthogonality ~1e-6."""
    n = 64
    q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    a = ((q * (np.arange(n) - n / 2)) @ q.T).astype(np.float32)
    w, v = map(np.asarray, jnp.linalg.eigh(jnp.asarray(a)))
    nw, nv = np.linalg.eigh(a.astype(np.float64))
    aligned = v * np.sign(np.sum(v * nv, axis=0))
    assert np.abs(aligned - nv).max() < 1e-5
    assert np.abs(w - nw).max() < 2e-6 * np.abs(nw).max()
    assert np.linalg.norm(a @ v - v * w) < 3e-6 * np.linalg.norm(a)
    assert np.abs(v.T @ v - np.eye(n)).max() < 5e-6


def test_svd_values_and_factors_to_float32_accuracy(backend, rng):
    """At n = 64: values to a few ulps of the largest (a few 1e-7; Jacobi rotations
    whose cosine rounds to 1 lengthen rows: 4e-6), u and v orthonormal to ~1e-6."""
    a = _general(rng, (64, 64))
    u, s, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(a)))
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.abs(s - want).max() < 1e-6 * want[0]
    assert np.abs(u.T @ u - np.eye(64)).max() < 5e-6
    assert np.abs(vh @ vh.T - np.eye(64)).max() < 5e-6
    assert np.linalg.norm((u * s) @ vh - a) < 3e-6 * np.linalg.norm(a)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (3, 1, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_invariants(backend, rng, shape, full):
    a = _general(rng, shape)
    u, s, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(a), full_matrices=full))
    nu, _, nvh = np.linalg.svd(a, full_matrices=full)
    assert u.shape == nu.shape and vh.shape == nvh.shape
    assert_close(s, np.linalg.svd(a, compute_uv=False).astype(np.float32), **TOL)
    assert (np.diff(s, axis=-1) <= 0).all()
    _assert_orthonormal_columns(u)
    _assert_orthonormal_columns(_mT(vh))
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-4)


def test_svd_values_only_and_rank_deficient(backend, rng):
    a = _general(rng, (6, 2)) @ _general(rng, (2, 4))          # rank 2
    s = np.asarray(jnp.linalg.svd(jnp.asarray(a), compute_uv=False))
    assert_close(s, np.linalg.svd(a, compute_uv=False).astype(np.float32), rtol=1e-4, atol=1e-4)
    assert_close(jnp.linalg.svdvals(jnp.asarray(a)), s)
    u, s2, vh = map(np.asarray, jnp.linalg.svd(jnp.asarray(a)))
    _assert_orthonormal_columns(u)                            # completed where s is 0
    _assert_orthonormal_columns(_mT(vh))
    assert int(jnp.linalg.matrix_rank(jnp.asarray(a))) == 2


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_numpy(backend, rng, shape, mode):
    """Householder reflections as LAPACK's: NumPy's q and r themselves, signs included."""
    a = _general(rng, shape)
    out = jnp.linalg.qr(jnp.asarray(a), mode=mode)
    expected = np.linalg.qr(a, mode=mode)
    if mode == "r":
        assert_close(out, expected.astype(np.float32), **TOL)
        return
    q, r = map(np.asarray, out)
    assert_close(q, expected[0].astype(np.float32), **TOL)
    assert_close(r, expected[1].astype(np.float32), **TOL)
    _assert_orthonormal_columns(q)
    assert np.allclose(r, np.triu(r))


def test_lstsq_pinv_norms_against_jax(backend, rng):
    a, b = _general(rng, (6, 3)), _general(rng, (6, 2))
    for got, want in zip(jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(b)), jjnp.linalg.lstsq(a, b)):
        assert_close(got, np.asarray(want), **TOL)
    x = jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(b[:, 0]))[0]
    assert_close(x, np.linalg.lstsq(a, b[:, 0], rcond=None)[0].astype(np.float32), **TOL)
    assert_close(jnp.linalg.pinv(jnp.asarray(a)), np.linalg.pinv(a).astype(np.float32), **TOL)
    assert_close(jnp.linalg.pinv(jnp.asarray(a.T)), np.linalg.pinv(a.T).astype(np.float32), **TOL)
    for ord_ in (2, -2, "nuc"):
        assert_close(jnp.linalg.norm(jnp.asarray(a), ord_), np.float32(np.linalg.norm(a, ord_)),
                     **TOL)
    assert_close(jnp.linalg.matrix_rank(jnp.asarray(a)), np.int32(3))
    stack = _general(rng, (2, 3, 4))
    for ord_ in (2, "nuc"):   # over axes (0, 2): the singular values of each (2, 4) plane
        assert_close(jnp.linalg.norm(jnp.asarray(stack), ord_, axis=(0, 2)),
                     np.linalg.norm(stack, ord_, axis=(0, 2)).astype(np.float32), **TOL)


# --- derivatives: reverse mode against JAX, forward mode against finite differences ------

def _eigh_loss(lib, weights):
    """Eigenvalues and spectral projectors: both independent of the vectors' signs."""
    def f(x):
        w, v = lib.linalg.eigh(x)
        return (w * weights[0]).sum() + (((v * weights[1]) @ v.T) ** 2).sum()
    return f


def _svd_loss(lib, weights, full):
    def f(x):
        u, s, vh = lib.linalg.svd(x, full_matrices=full)
        k = s.shape[0]
        return (s * weights[0]).sum() + ((u[:, :k] * weights[1]) @ vh[:k] * x).sum()
    return f


def _qr_loss(lib):
    def f(x):
        q, r = lib.linalg.qr(x)
        return (q ** 3).sum() + (r * r * r).sum()
    return f


def _spread_symmetric(rng, n):
    """A symmetric matrix with well separated eigenvalues (degenerate ones have none)."""
    q, _ = np.linalg.qr(_general(rng, (n, n)))
    return ((q * np.arange(1.0, n + 1)) @ q.T).astype(np.float32)


def test_eigh_gradient(backend, rng):
    a = _spread_symmetric(rng, 4)
    weights = [rng.standard_normal(4).astype(np.float32) for _ in range(2)]
    got = jaxlab.grad(_eigh_loss(jnp, weights))(jnp.asarray(a))
    assert_close(got, np.asarray(jax.grad(_eigh_loss(jjnp, weights))(a)), rtol=1e-3, atol=1e-3)
    check_grads(_eigh_loss(jnp, weights), (jnp.asarray(a),), order=1, modes=("fwd",), atol=5e-2,
                rtol=5e-2, eps=1e-2)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_svd_gradient(backend, rng, shape):
    a = _general(rng, shape)
    weights = [rng.standard_normal(min(shape)).astype(np.float32) for _ in range(2)]
    loss = _svd_loss(jnp, weights, full=False)
    got = jaxlab.grad(loss)(jnp.asarray(a))
    want = jax.grad(_svd_loss(jjnp, weights, full=False))(a)
    assert_close(got, np.asarray(want), rtol=1e-3, atol=1e-3)
    check_grads(loss, (jnp.asarray(a),), order=1, modes=("fwd",), atol=5e-2, rtol=5e-2,
                eps=1e-2)


def test_svd_full_matrices_jvp_refused_as_jax(backend, rng):
    a = jnp.asarray(_general(rng, (4, 3)))
    with pytest.raises(NotImplementedError):
        jaxlab.jvp(lambda x: jnp.linalg.svd(x)[0], (a,), (a,))


def test_qr_gradient(backend, rng):
    a = _general(rng, (4, 3))
    got = jaxlab.grad(_qr_loss(jnp))(jnp.asarray(a))
    assert_close(got, np.asarray(jax.grad(_qr_loss(jjnp))(a)), rtol=1e-3, atol=1e-3)
    check_grads(_qr_loss(jnp), (jnp.asarray(a),), order=1, modes=("fwd",), atol=5e-2,
                rtol=5e-2, eps=1e-2)


def test_pinv_gradient(backend, rng):
    a = _general(rng, (4, 3))
    loss = lambda lib: lambda x: (lib.linalg.pinv(x) ** 2).sum()  # noqa: E731
    assert_close(jaxlab.grad(loss(jnp))(jnp.asarray(a)), np.asarray(jax.grad(loss(jjnp))(a)),
                 rtol=1e-3, atol=1e-3)


# --- transformations, generated code, bad input --------------------------------------------

def test_jit_and_vmap(backend, rng):
    a = _symmetric(rng, (3, 4, 4))
    w_jit = jaxlab.jit(lambda x: jnp.linalg.eigh(x)[0])(jnp.asarray(a))
    w_vmap = jaxlab.vmap(jnp.linalg.eigvalsh)(jnp.asarray(a))
    assert_close(w_jit, np.linalg.eigvalsh(a).astype(np.float32), **TOL)
    assert_close(w_vmap, np.linalg.eigvalsh(a).astype(np.float32), **TOL)
    s = jaxlab.vmap(jnp.linalg.svdvals)(jnp.asarray(a))
    assert_close(s, np.linalg.svd(a, compute_uv=False).astype(np.float32), **TOL)


SOURCE_MARKS = {"wasm": ("wat", "v128.load"), "webgpu": ("wgsl", "@compute"),
                "cpu": ("text", "")}


@pytest.mark.parametrize("fn", [jnp.linalg.eigh, jnp.linalg.svd, jnp.linalg.qr])
def test_routines_are_generated_code(backend, rng, fn):
    a = jnp.asarray(_symmetric(rng, (3, 3)))
    with jaxlab.capture() as log:
        np.asarray(fn(a)[0])
    routines = [e for e in log if e.kind == "routine"]
    assert routines, "the decomposition ran as a routine"
    language, mark = SOURCE_MARKS.get(backend, ("", ""))
    if backend in SOURCE_MARKS and backend != "cpu":
        assert routines[0].source_language == language and mark in routines[0].source
        assert routines[0].tuning.value("algorithm")


def test_bad_input(backend):
    with pytest.raises(ValueError):
        jnp.linalg.eigh(jnp.ones((2, 3)))
    with pytest.raises(ValueError):
        jnp.linalg.svd(jnp.ones(3))
    with pytest.raises(ValueError):
        jnp.linalg.qr(jnp.ones((2, 2)), mode="economic")
    with pytest.raises(ValueError):
        jnp.linalg.eigh(jnp.eye(2), UPLO="X")
    w = jnp.linalg.eigvalsh(jnp.asarray([[2, 1], [1, 2]]))   # integers promote to float32
    assert w.dtype == np.float32
    assert_close(w, np.array([1.0, 3.0], np.float32), **TOL)


# --- jax.scipy.linalg -------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [0.1, 1.0, 6.0])
def test_expm_against_scipy(backend, rng, scale):
    import scipy.linalg
    a = _general(rng, (2, 4, 4)) * np.float32(scale)
    want = np.stack([scipy.linalg.expm(m.astype(np.float64)) for m in a])
    got = np.asarray(jaxlab.scipy.linalg.expm(jnp.asarray(a)))
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_expm_gradient_against_jax(backend, rng):
    a = _general(rng, (3, 3))
    loss = lambda sp: lambda x: (sp.linalg.expm(x) ** 2).sum()  # noqa: E731
    assert_close(jaxlab.grad(loss(jaxlab.scipy))(jnp.asarray(a)),
                 np.asarray(jax.grad(loss(jax.scipy))(a)), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_batched_and_jitted(backend, rng, trans):
    import scipy.linalg
    a, b = _general(rng, (2, 4, 4)), _general(rng, (2, 4, 3))
    lu, piv = jaxlab.scipy.linalg.lu_factor(jnp.asarray(a))
    solve = jaxlab.jit(lambda lu, piv, b: jaxlab.scipy.linalg.lu_solve((lu, piv), b, trans=trans))
    want = np.stack([scipy.linalg.lu_solve(scipy.linalg.lu_factor(a[i]), b[i], trans=trans)
                     for i in range(2)])
    assert_close(solve(lu, piv, jnp.asarray(b)), want.astype(np.float32), rtol=1e-4, atol=1e-4)
    vector = jaxlab.scipy.linalg.lu_solve((lu[0], piv[0]), jnp.asarray(b[0, :, 0]), trans=trans)
    assert_close(vector, want[0, :, 0].astype(np.float32), rtol=1e-4, atol=1e-4)


def test_scipy_eigh_svd_qr(backend, rng):
    import scipy.linalg
    a = _general(rng, (4, 3))
    s = _symmetric(rng, (4, 4))
    assert_close(jaxlab.scipy.linalg.eigh(jnp.asarray(s), eigvals_only=True),
                 scipy.linalg.eigh(s, eigvals_only=True).astype(np.float32), **TOL)
    assert_close(jaxlab.scipy.linalg.svd(jnp.asarray(a), compute_uv=False),
                 scipy.linalg.svd(a, compute_uv=False).astype(np.float32), **TOL)
    for mode in ("full", "economic", "r"):
        got, want = jaxlab.scipy.linalg.qr(jnp.asarray(a), mode=mode), scipy.linalg.qr(a, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w.astype(np.float32), **TOL)
