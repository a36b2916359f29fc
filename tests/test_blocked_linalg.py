"""Cholesky, triangular solve and LU on shapes that cross blocks: webgpu works in
blocks of 32 rows (backends/webgpu/blocked.py, blocked_lu.py), so n = 80 is full blocks
and a partial one, and n = 136 adds a trailing update wider than one 64 x 64 tile.
Every device runs them against NumPy (float64) and JAX."""
import jax
import numpy as np
import pytest

import jaxlab.numpy as jnp
from jaxlab.lax import linalg as lax_linalg
from jaxlab.scipy import linalg as jsp_linalg
from tests.conftest import assert_close


def _spd(rng, shape):
    m = rng.standard_normal(shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) / n + np.eye(n)).astype(np.float32)


def test_cholesky_across_blocks_and_tiles(backend, rng):
    a = _spd(rng, (2, 136, 136))
    expected = np.linalg.cholesky(a.astype(np.float64))
    out = jnp.linalg.cholesky(jnp.asarray(a))
    assert_close(out, expected.astype(np.float32), rtol=1e-4, atol=2e-5)
    assert_close(out, jax.numpy.linalg.cholesky(a), rtol=1e-4, atol=2e-5)


def test_cholesky_failure_is_per_matrix_and_late_pivots_count(backend, rng):
    """Only the matrices that fail turn NaN (their lower triangle; zeros stay above);
    a pivot that fails in a later block fails the matrix as one in the first does."""
    good = _spd(rng, (80, 80))
    late = good.copy()
    late[75, 75] = -5.0                   # fails at column 75, in the last block
    early = good.copy()
    early[0, 0] = 0.0
    out = np.asarray(jnp.linalg.cholesky(jnp.asarray(np.stack([good, late, early]))))
    expected = np.asarray(jax.numpy.linalg.cholesky(np.stack([good, late, early])))
    assert_close(out[0], np.linalg.cholesky(good.astype(np.float64)).astype(np.float32),
                 rtol=1e-4, atol=2e-5)
    lower = np.tri(80, dtype=bool)
    for i in (1, 2):
        assert np.isnan(out[i][lower]).all() and np.isnan(expected[i][lower]).all()
        assert (out[i][~lower] == 0).all()


# (left_side, lower, transpose_a, unit_diagonal): forward and back substitution, with a
# read as it is and transposed, on both sides
SOLVES = [(True, True, False, False), (True, False, True, True), (True, False, False, True),
          (False, True, False, False), (False, False, True, False)]


@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal", SOLVES)
def test_triangular_solve_across_blocks(backend, rng, left_side, lower, transpose_a,
                                        unit_diagonal):
    n, k = 80, 3
    a = (rng.standard_normal((2, n, n)) * 0.2 + 4 * np.eye(n)).astype(np.float32)
    b = rng.standard_normal((2, n, k) if left_side else (2, k, n)).astype(np.float32)
    out = lax_linalg.triangular_solve(jnp.asarray(a), jnp.asarray(b), left_side=left_side,
                                      lower=lower, transpose_a=transpose_a,
                                      unit_diagonal=unit_diagonal)
    expected = jax.lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                               transpose_a=transpose_a,
                                               unit_diagonal=unit_diagonal)
    assert_close(out, np.asarray(expected), rtol=1e-4, atol=1e-5)


def test_solve_many_right_hand_sides_across_tiles(backend, rng):
    """More right-hand sides than one update tile holds, through cho_factor/cho_solve."""
    a = _spd(rng, (136, 136))
    b = rng.standard_normal((136, 70)).astype(np.float32)
    out = jsp_linalg.cho_solve(jsp_linalg.cho_factor(jnp.asarray(a)), jnp.asarray(b))
    assert_close(out, np.linalg.solve(a.astype(np.float64), b).astype(np.float32),
                 rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("shape", [(2, 80, 80), (70, 100), (100, 70)])
def test_lu_across_blocks(backend, rng, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    if shape[0] == 2:
        a[1, :, 70] = 0.0   # a zero pivot in a later block: its multipliers stay
    lu, pivots, perm = lax_linalg.lu(jnp.asarray(a))
    expected = jax.lax.linalg.lu(a)
    np.testing.assert_array_equal(np.asarray(pivots), np.asarray(expected[1]))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(expected[2]))
    assert_close(lu, np.asarray(expected[0]), rtol=1e-3, atol=1e-4)


def test_float64_factorizations_across_blocks_and_tiles(backend, rng, x64):
    """Blocks of 16 columns, register tiles and panels at float64 (two lanes a vector on
    wasm): Cholesky of a non-symmetric input, LU and a blocked triangular solve."""
    from tests.conftest import computes
    m, r = rng.standard_normal((37, 37)), rng.standard_normal((37, 37))
    a = m @ m.T / 37 + np.eye(37) + 0.3 * (r - r.T)   # its symmetric part is positive definite
    if not computes(backend, np.float64):
        with pytest.raises(TypeError):
            jnp.linalg.cholesky(jnp.asarray(a))
        return
    tol = dict(rtol=1e-11, atol=1e-12)
    low = jnp.linalg.cholesky(jnp.asarray(a))
    assert low.dtype == np.float64
    assert_close(low, np.linalg.cholesky((a + a.T) / 2), **tol)
    b = rng.standard_normal((37, 16))
    assert_close(lax_linalg.triangular_solve(low, jnp.asarray(b), left_side=True, lower=True),
                 np.linalg.solve(np.asarray(low), b), **tol)
    lu, pivots, perm = lax_linalg.lu(jnp.asarray(r))
    want = jax.lax.linalg.lu(r)
    np.testing.assert_array_equal(np.asarray(pivots), np.asarray(want[1]))
    assert_close(lu, np.asarray(want[0]), **tol)
