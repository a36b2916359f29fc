"""Work whose threads would loop past a software adapter's loop limit: lavapipe ends
every loop of a shader invocation once they have run 65535 iterations in all
(jaxlab/backends/webgpu/loop_budget.py), so each of these was wrong there and right on
a GPU. Every device, against NumPy."""
import numpy as np

import jaxlab.numpy as jnp
from tests.conftest import assert_close


def _orthonormal_columns(q, atol):
    k = q.shape[-1]
    eye = np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k))
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=atol)


def test_qr_of_a_matrix_past_the_limit(backend, rng):
    """Made in one workgroup per matrix, a 128x128 QR looped ~80000 times in one thread
    (wrong from n = 120 on lavapipe); two of them, to cover the batch."""
    a = rng.standard_normal((2, 128, 128)).astype(np.float32)
    q, r = map(np.asarray, jnp.linalg.qr(jnp.asarray(a)))
    want_q, want_r = np.linalg.qr(a.astype(np.float64))
    assert_close(q, want_q.astype(np.float32), rtol=1e-3, atol=1e-3)
    assert_close(r, want_r.astype(np.float32), rtol=1e-3, atol=1e-3)
    _orthonormal_columns(q, 1e-4)


def test_svd_completing_u_past_the_limit(backend, rng):
    """u of a tall matrix, completed to 600 columns by QR (svd's rank-deficient path)."""
    a = rng.standard_normal((600, 6)).astype(np.float32)
    u, s, vt = map(np.asarray, jnp.linalg.svd(jnp.asarray(a), full_matrices=True))
    assert u.shape == (600, 600)
    assert_close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False).astype(np.float32),
                 rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((u[:, :6] * s) @ vt, a, atol=1e-4)
    _orthonormal_columns(u, 1e-4)


def test_long_reductions_with_few_outputs(backend, rng):
    """300000 steps for each of two outputs: one thread each looped past the limit."""
    x = rng.random((2, 300000)).astype(np.float32)
    assert_close(jnp.sum(jnp.asarray(x), axis=1), x.sum(1, dtype=np.float64).astype(np.float32),
                 rtol=1e-5)
    y = rng.random((300000, 2)).astype(np.float32)
    assert_close(jnp.asarray(x) @ jnp.asarray(y), (x.astype(np.float64) @ y).astype(np.float32),
                 rtol=1e-5)


def test_svd_and_lstsq_of_long_columns(backend, rng):
    """Columns too long for workgroup memory swept in one workgroup, a thread looping
    over whole columns; now QR first, then the SVD of R."""
    a = rng.standard_normal((3600, 3)).astype(np.float32)
    y = rng.standard_normal(3600).astype(np.float32)
    u, s, vt = map(np.asarray, jnp.linalg.svd(jnp.asarray(a), full_matrices=False))
    assert_close(s, np.linalg.svd(a.astype(np.float64), compute_uv=False).astype(np.float32),
                 rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((u * s) @ vt, a, atol=1e-4)
    _orthonormal_columns(u, 1e-4)
    x = jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(y))[0]
    want = np.linalg.lstsq(a.astype(np.float64), y, rcond=None)[0].astype(np.float32)
    assert_close(x, want, rtol=1e-3, atol=1e-4)
