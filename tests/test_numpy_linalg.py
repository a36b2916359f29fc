"""jaxlab.numpy.linalg and jaxlab.lax.linalg against NumPy."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.lax import linalg as lax_linalg
from tests.conftest import assert_close

SOLVE_TOL = dict(rtol=1e-3, atol=1e-4)


def _general(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _spd(rng, shape):
    """M M^T + n I: symmetric positive definite and well conditioned."""
    m = _general(rng, shape)
    n = shape[-1]
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


SQUARE_SHAPES = [(1, 1), (4, 4), (3, 5, 5), (2, 3, 4, 4), (0, 3, 3)]


@pytest.mark.parametrize("shape", SQUARE_SHAPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(backend, rng, shape, upper):
    a = _spd(rng, shape)
    lower = np.linalg.cholesky(a)
    expected = np.swapaxes(lower, -1, -2) if upper else lower
    assert_close(jnp.linalg.cholesky(jnp.asarray(a), upper=upper), expected, **SOLVE_TOL)


def test_cholesky_not_positive_definite_gives_nans(backend):
    out = np.asarray(jnp.linalg.cholesky(jnp.asarray([[1.0, 2.0], [2.0, 1.0]])))
    assert np.isnan(out).any()


def test_cholesky_across_blocks(backend, rng):
    """Sizes that cross the wasm device's block (16 columns) and tile edges, batched, and a
    matrix that stops being positive definite only in a later block (NaN throughout the
    lower triangle, as JAX)."""
    a = _spd(rng, (2, 37, 37))
    assert_close(jnp.linalg.cholesky(jnp.asarray(a)), np.linalg.cholesky(a), **SOLVE_TOL)
    late = a[0].copy()
    late[30, 30] = -1.0
    out = np.asarray(jnp.linalg.cholesky(jnp.asarray(late)))
    assert np.isnan(out[np.tril_indices(37)]).all()


def test_cholesky_symmetrizes_input(backend, rng):
    a = _spd(rng, (4, 4))
    skewed = a + np.triu(np.ones((4, 4), np.float32), 1) - np.tril(np.ones((4, 4)), -1)
    out = lax_linalg.cholesky(jnp.asarray(skewed))
    assert_close(out, np.linalg.cholesky(a), **SOLVE_TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_of_a_non_symmetric_batch_matches_jax(backend, rng, dtype, x64):
    """JAX factors (a + a^T) / 2 by default (each device computes it as its routine reads
    a), else a's lower triangle alone: both, on a batch whose rows end off the vector
    lanes, against JAX."""
    import jax
    from tests.conftest import computes
    a = _spd(rng, (2, 9, 9)).astype(dtype)
    a += np.triu(_general(rng, (2, 9, 9)), 1)   # its upper triangle no longer mirrors the lower
    if not computes(backend, dtype):
        with pytest.raises(TypeError):
            jnp.linalg.cholesky(jnp.asarray(a))
        return
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    for symmetrize in (True, False):
        got = lax_linalg.cholesky(jnp.asarray(a), symmetrize_input=symmetrize)
        assert got.dtype == dtype
        assert_close(got, jax.lax.linalg.cholesky(a, symmetrize_input=symmetrize), **tol)
    assert_close(jnp.linalg.cholesky(jnp.asarray(a), upper=True),
                 jax.numpy.linalg.cholesky(a, upper=True), **tol)


SOLVE_CASES = [   # (shape of a, shape of b)
    ((1, 1), (1,)),
    ((4, 4), (4,)),
    ((4, 4), (4, 3)),
    ((3, 4, 4), (3, 4, 2)),
    ((3, 4, 4), (4,)),
    ((4, 4), (2, 4, 3)),
    ((2, 1, 4, 4), (3, 4, 1)),
    ((8, 8), (8, 8)),
    ((4, 4), (4, 0)),
]


@pytest.mark.parametrize("sa,sb", SOLVE_CASES)
def test_solve(backend, rng, sa, sb):
    a, b = _spd(rng, sa), _general(rng, sb)
    if len(sb) == 1:
        expected = np.linalg.solve(a, b[..., None])[..., 0]   # NumPy 2's rule, as JAX's
    else:
        expected = np.linalg.solve(a, b)
    assert_close(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b)), expected, **SOLVE_TOL)


def test_solve_general_matrix_needs_pivoting(backend):
    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]], np.float32)  # a[0,0] = 0
    b = np.array([1.0, 2.0, 3.0], np.float32)
    assert_close(jnp.linalg.solve(jnp.asarray(a), jnp.asarray(b)), np.linalg.solve(a, b),
                 **SOLVE_TOL)


def test_solve_transposed_and_int_inputs(backend, rng):
    a = _spd(rng, (5, 5)) + np.triu(np.ones((5, 5), np.float32))   # not symmetric
    b = rng.integers(-3, 4, (5, 2)).astype(np.int32)
    out = jnp.linalg.solve(jnp.asarray(a.T.copy()).T, jnp.asarray(b))
    assert out.dtype == np.float32
    assert_close(out, np.linalg.solve(a, b.astype(np.float32)), **SOLVE_TOL)
    ints = np.array([[2, 1], [1, 3]], np.int32)
    assert_close(jnp.linalg.solve(ints, [1, 2]), np.linalg.solve(ints, [1, 2]).astype(np.float32),
                 **SOLVE_TOL)


@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_inv(backend, rng, shape):
    a = _spd(rng, shape)
    assert_close(jnp.linalg.inv(jnp.asarray(a)), np.linalg.inv(a), **SOLVE_TOL)


def test_inv_of_general_matrix(backend, rng):
    a = _general(rng, (6, 6)) + 6 * np.eye(6, dtype=np.float32)
    assert_close(jnp.linalg.inv(jnp.asarray(a)), np.linalg.inv(a), **SOLVE_TOL)


DET_CASES = [   # matrices whose LU swaps rows an even and an odd number of times
    np.array([[0.0, 1.0], [1.0, 0.0]], np.float32),
    np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], np.float32),
    np.array([[1.0, 2.0], [2.0, 4.0]], np.float32),   # singular
    np.array([[2.0, 0.0], [0.0, -3.0]], np.float32),
]


@pytest.mark.parametrize("a", DET_CASES)
def test_det_of_special_matrices(backend, a):
    assert_close(jnp.linalg.det(jnp.asarray(a)), np.linalg.det(a), atol=1e-5)
    sign, logabs = jnp.linalg.slogdet(jnp.asarray(a))
    want_sign, want_log = np.linalg.slogdet(a)
    assert_close(sign, want_sign)
    assert_close(logabs, want_log, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (6, 6), (2, 3, 4, 4), (0, 2, 2), (0, 0)])
def test_det_and_slogdet(backend, rng, shape):
    a = _general(rng, shape)
    assert_close(jnp.linalg.det(jnp.asarray(a)), np.linalg.det(a), rtol=1e-3, atol=1e-4)
    result = jnp.linalg.slogdet(jnp.asarray(a))
    want = np.linalg.slogdet(a)
    assert_close(result.sign, want.sign)
    assert_close(result.logabsdet, want.logabsdet, rtol=1e-3, atol=1e-4)


def test_det_of_ints_and_transposed(backend, rng):
    ints = np.array([[3, 1, 2], [0, 4, 1], [2, 2, 5]], np.int32)
    assert_close(jnp.linalg.det(ints), np.float32(np.linalg.det(ints)), rtol=1e-4)
    a = _general(rng, (5, 5))
    assert_close(jnp.linalg.det(jnp.asarray(a).T), np.linalg.det(a.T), rtol=1e-3)


NORM_CASES = [   # (shape, ord, axis)
    ((5,), None, None), ((5,), 2, None), ((5,), 1, None), ((5,), np.inf, None),
    ((5,), -np.inf, None), ((5,), 0, None), ((5,), 3, None), ((5,), 0.5, None),
    ((3, 4), None, None), ((3, 4), "fro", None), ((3, 4), 1, None), ((3, 4), -1, None),
    ((3, 4), np.inf, None), ((3, 4), -np.inf, None),
    ((2, 3, 4), None, None), ((2, 3, 4), None, 1), ((2, 3, 4), 1, -1),
    ((2, 3, 4), np.inf, 0), ((2, 3, 4), None, (1, 2)), ((2, 3, 4), "fro", (0, 2)),
    ((2, 3, 4), 1, (2, 1)), ((2, 3, 4), np.inf, (0, 1)), ((2, 3, 4), -1, (1, 2)),
]


@pytest.mark.parametrize("shape,ord,axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(backend, rng, shape, ord, axis, keepdims):
    x = _general(rng, shape)
    x[..., 0] = 0.0   # so that ord=0 counts something
    out = jnp.linalg.norm(jnp.asarray(x), ord=ord, axis=axis, keepdims=keepdims)
    assert_close(out, np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims), rtol=1e-4)


def test_norm_of_ints_and_transposed(backend, rng):
    ints = np.arange(-4, 8).reshape(3, 4).astype(np.int32)
    assert_close(jnp.linalg.norm(ints), np.float32(np.linalg.norm(ints)), rtol=1e-5)
    x = _general(rng, (4, 3))
    assert_close(jnp.linalg.norm(jnp.asarray(x).T, ord=1), np.linalg.norm(x.T, ord=1), rtol=1e-5)


@pytest.mark.parametrize("kw,error", [
    ({"ord": 3}, ValueError),
    ({"ord": "fro", "axis": 0}, ValueError),
    ({"axis": (0, 1, 2)}, ValueError),
])
def test_norm_bad_arguments(backend, rng, kw, error):
    with pytest.raises(error):
        jnp.linalg.norm(jnp.asarray(_general(rng, (2, 3, 4))), **{"axis": (1, 2), **kw})


TRIANGULAR_FLAGS = [   # (left_side, lower, transpose_a, unit_diagonal)
    (True, True, False, False), (True, False, False, False), (True, True, True, False),
    (True, False, True, True), (False, True, False, False), (False, False, False, False),
    (False, True, True, True), (False, False, True, False),
]


@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal", TRIANGULAR_FLAGS)
@pytest.mark.parametrize("batch,n,k", [((), 4, 3), ((2,), 4, 3), ((2,), 37, 9)])   # 37 x 9:
def test_lax_triangular_solve(backend, rng, left_side, lower, transpose_a, unit_diagonal,
                              batch, n, k):   # blocks of 16 unknowns, tile edges on wasm
    # off the diagonal small enough that a unit triangle stays well conditioned
    a = _general(rng, batch + (n, n)) * (4 / n) + n * np.eye(n, dtype=np.float32)   # other triangle
    b = _general(rng, batch + ((n, k) if left_side else (k, n)))          # must be ignored
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - t * np.eye(n, dtype=np.float32) + np.eye(n, dtype=np.float32)
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    expected = np.linalg.solve(op, b) if left_side else \
        np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    out = lax_linalg.triangular_solve(jnp.asarray(a), jnp.asarray(b), left_side=left_side,
                                      lower=lower, transpose_a=transpose_a,
                                      unit_diagonal=unit_diagonal)
    assert_close(out, expected, **SOLVE_TOL)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (3, 5), (5, 3),
                                   (2, 37, 37), (23, 40)])   # blocks of 16 columns on wasm
def test_lax_lu(backend, rng, shape):
    a = _general(rng, shape)
    lu, pivots, perm = (np.asarray(v) for v in lax_linalg.lu(jnp.asarray(a)))
    m, n = shape[-2:]
    k = min(m, n)
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k, dtype=np.float32)
    upper = np.triu(lu)[..., :k, :]
    permuted = np.take_along_axis(a, perm[..., None].astype(np.int64), axis=-2)
    np.testing.assert_allclose(lower @ upper, permuted, rtol=1e-4, atol=1e-5)
    assert pivots.shape == shape[:-2] + (k,) and pivots.dtype == np.int32
    assert np.all(np.abs(np.tril(lu, -1)) <= 1 + 1e-6)   # partial pivoting bounds L
    for piv, want in zip(pivots.reshape(-1, k), perm.reshape(-1, m)):
        np.testing.assert_array_equal(_replay(piv, m), want)


def _replay(pivots, m):
    """The permutation that the row swaps `pivots` (row j <-> row pivots[j]) make."""
    rows = np.arange(m)
    for j, p in enumerate(pivots):
        rows[[j, p]] = rows[[p, j]]
    return rows


def test_solve_kernel_budget(backend, rng):
    """lu, the permutation (fused into a matmul), and two triangular solves."""
    a, b = jnp.asarray(_spd(rng, (4, 4))), jnp.asarray(_general(rng, (4, 2)))
    a.block_until_ready(), b.block_until_ready()
    with jaxlab.capture() as log:
        jnp.linalg.solve(a, b).block_until_ready()
    routines = [e.name for e in log if e.kind == "routine"]
    assert len(routines) == 3
    for name, want in zip(routines, ["lu", "triangular_solve", "triangular_solve"]):
        assert name.startswith(want)
    assert len(log.kernels()) == 1


ERRORS = [   # (call, error, words the message must contain)
    (lambda: jnp.linalg.solve(np.eye(3), np.ones(4)), ValueError, ["(3, 3)", "(4,)"]),
    (lambda: jnp.linalg.solve(np.eye(3), np.ones((2, 3))), ValueError, ["(3, 3)", "(2, 3)"]),
    (lambda: jnp.linalg.solve(np.ones((3, 4)), np.ones(3)), ValueError, ["(3, 4)"]),
    (lambda: jnp.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))), ValueError,
     ["(2,)", "(4,)"]),
    (lambda: jnp.linalg.cholesky(np.ones((3, 4))), TypeError, ["(3, 4)"]),   # as JAX's
    (lambda: jnp.linalg.cholesky(np.ones(3)), TypeError, ["(3,)"]),
    (lambda: jnp.linalg.inv(np.ones((2, 3))), ValueError, ["(2, 3)"]),
    (lambda: jnp.linalg.det(np.ones((2, 3))), ValueError, ["(2, 3)"]),
    (lambda: lax_linalg.triangular_solve(np.eye(3, dtype=np.float32), np.ones((4, 2), np.float32),
                                         left_side=True), ValueError, ["(3, 3)", "(4, 2)"]),
]


@pytest.mark.parametrize("call,error,words", ERRORS)
def test_errors_then_engine_keeps_working(backend, rng, call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)
    a = _spd(rng, (3, 3))
    assert_close(jnp.linalg.inv(jnp.asarray(a)), np.linalg.inv(a), **SOLVE_TOL)


def _grad_cases():
    """(function of a, its gradient from NumPy), for sum(f(a) * w)-style losses."""
    def solve_a(a, b, w):
        ai = np.linalg.inv(a)
        return lambda x: (jnp.linalg.solve(x, b) * w).sum(), -(ai.T @ w) @ (ai @ b).T

    def inv_a(a, b, w):
        ai = np.linalg.inv(a)
        w = w @ w.T   # square, like inv(a)
        return lambda x: (jnp.linalg.inv(x) * w).sum(), -ai.T @ w @ ai.T

    def det_a(a, b, w):
        return lambda x: jnp.linalg.det(x), np.linalg.det(a) * np.linalg.inv(a).T

    def logdet_a(a, b, w):
        return lambda x: jnp.linalg.slogdet(x).logabsdet, np.linalg.inv(a).T
    return [solve_a, inv_a, det_a, logdet_a]


@pytest.mark.parametrize("case", _grad_cases())
def test_gradients_through_lu(backend, rng, case):
    """lu has no derivative of its own: solve/inv/det/slogdet carry custom rules."""
    a = _spd(rng, (4, 4)) + np.triu(np.ones((4, 4), np.float32))   # not symmetric
    b, w = _general(rng, (4, 3)), _general(rng, (4, 3))
    fn, expected = case(a, b, w)
    assert_close(jaxlab.grad(fn)(jnp.asarray(a)), expected.astype(np.float32), rtol=2e-3,
                 atol=1e-3)


def test_solve_gradient_in_b_and_batched_det_gradient(backend, rng):
    a, b, w = _spd(rng, (2, 4, 4)), _general(rng, (4,)), _general(rng, (2, 4))
    grad_b = jaxlab.grad(lambda v: (jnp.linalg.solve(jnp.asarray(a), v) * w).sum())(b)
    expected = np.einsum("kji,kj->i", np.linalg.inv(a), w)
    assert_close(grad_b, expected.astype(np.float32), **SOLVE_TOL)
    grad_a = jaxlab.grad(lambda x: jnp.linalg.det(x).sum())(jnp.asarray(a))
    expected = np.linalg.det(a)[:, None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    assert_close(grad_a, expected.astype(np.float32), rtol=2e-3, atol=1e-2)


TRANSFORMED = [   # (function, NumPy reference); batched over a leading axis by vmap
    (jnp.linalg.det, np.linalg.det),
    (lambda a: jnp.linalg.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a).logabsdet),
    (jnp.linalg.inv, np.linalg.inv),
    (lambda a: jnp.linalg.solve(a, jnp.ones(4)), lambda a: np.linalg.solve(a, np.ones(4))),
    (jnp.linalg.cholesky, np.linalg.cholesky),
    (lambda a: jnp.linalg.norm(a, ord=1), lambda a: np.linalg.norm(a, ord=1)),
]


@pytest.mark.parametrize("fn,reference", TRANSFORMED)
def test_under_jit_and_vmap(backend, rng, fn, reference):
    a = _spd(rng, (3, 4, 4))
    assert_close(jaxlab.jit(fn)(a[0]), reference(a[0]).astype(np.float32), **SOLVE_TOL)
    assert_close(jaxlab.vmap(fn)(a), np.stack([reference(m) for m in a]).astype(np.float32),
                 **SOLVE_TOL)


@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_jvp_with_unit_diagonal_matches_jax(backend, rng, lower):
    """The tangent reads only the strict triangle that the solve reads (upper too)."""
    import jax
    a = rng.normal(size=(3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    b = rng.normal(size=(3, 2)).astype(np.float32)
    ta = rng.normal(size=(3, 3)).astype(np.float32)
    kw = dict(left_side=True, lower=lower, unit_diagonal=True)
    _, want = jax.jvp(lambda m: jax.lax.linalg.triangular_solve(m, b, **kw), (a,), (ta,))
    _, got = jaxlab.jvp(lambda m: lax_linalg.triangular_solve(m, jnp.asarray(b), **kw),
                        (jnp.asarray(a),), (jnp.asarray(ta),))
    assert_close(got, np.asarray(want), rtol=1e-4, atol=1e-5)
