"""jax.lax's structured functions (jaxlab/lax/{gather_scatter, reducing, scanning,
conv_layouts, conv_variants, dots}.py) against JAX on every device: gather and the
scatters in the forms jnp indexing produces (and batching dims, fill and drop), reduce
over monoids, tuples and other associative computations, associative_scan, convolution
layouts and conv_transpose; with jit, grad and vmap, and JAX's exceptions."""
from __future__ import annotations

import jax
import jax.lax as jlax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.lax as lax
import jaxlab.numpy as jnp
from tests.test_lax_functions import match_jax, reference

JAX, OURS = (jlax, jjnp), (lax, jnp)
X = np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1
X3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8
ROWS = np.array([[2], [0], [5], [2]], np.int32)          # 5 is out of bounds
POINTS = np.array([[2, 1], [0, 3], [1, 1]], np.int32)
I32 = np.array([[5, 3, 12], [1, 7, 6]], np.int32)
B = np.array([[True, True, False], [True, False, False]])


def _gdn(m, *args):
    return m[0].GatherDimensionNumbers(*args)


def _sdn(m, *args):
    return m[0].ScatterDimensionNumbers(*args)


GATHERS = {   # id -> (dimension numbers args, indices, slice sizes, keyword args)
    "rows": (((1,), (0,), (0,)), ROWS, (1, 4), {}),
    "rows_fill": (((1,), (0,), (0,)), ROWS, (1, 4), {"mode": "fill"}),
    "rows_fill_value": (((1,), (0,), (0,)), ROWS, (1, 4), {"mode": "fill", "fill_value": -2.0}),
    "rows_clip": (((1,), (0,), (0,)), ROWS, (1, 4), {"mode": "clip"}),
    "columns": (((0,), (1,), (1,)), ROWS, (3, 1), {}),
    "points": (((), (0, 1), (0, 1)), POINTS, (1, 1), {}),
    "window": (((0, 1), (), (0, 1)), np.array([2, 1], np.int32), (2, 3), {}),
    "windows_batched": (((1, 2), (), (0, 1)), POINTS, (2, 2), {}),
    "rows_2d_batch": (((2,), (0,), (0,)), ROWS.reshape(2, 2, 1), (1, 4), {"mode": "fill"}),
}


def _gather(m, name, x):
    dn, idx, sizes, kw = GATHERS[name]
    return m[0].gather(x, idx, _gdn(m, *dn), sizes, **kw)


@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_matches_jax(backend, name):
    match_jax(_gather(OURS, name, X), reference(("gather", name), lambda: _gather(JAX, name, X)))


def test_index_take_matches_jax(backend):
    def take(m):
        return m[0].index_take(X3, (np.array([0, 2, 5]), np.array([1, 3, 1])), (1, 2))
    match_jax(take(OURS), reference(("index_take",), lambda: take(JAX)))


def _batching_dims_gather(m, x):
    dn = _gdn(m, (1,), (1,), (1,), (0,), (0,))
    return m[0].gather(x, np.array([[2], [0]], np.int32), dn, (1, 1, 4))


def test_gather_with_batching_dims_matches_jax(backend):
    match_jax(_batching_dims_gather(OURS, X3),
              reference(("gather", "batching"), lambda: _batching_dims_gather(JAX, X3)))


SCATTERS = {   # id -> (function name, dimension numbers args, indices, updates, kwargs)
    "add_rows": ("scatter_add", ((1,), (0,), (0,)), ROWS, np.ones((4, 4), np.float32), {}),
    "add_rows_clip": ("scatter_add", ((1,), (0,), (0,)), ROWS, np.ones((4, 4), np.float32),
                      {"mode": "clip"}),
    "sub_rows": ("scatter_sub", ((1,), (0,), (0,)), ROWS, np.ones((4, 4), np.float32), {}),
    "mul_rows_promise": ("scatter_mul", ((1,), (0,), (0,)), ROWS,
                         np.full((4, 4), 2, np.float32), {"mode": "promise_in_bounds"}),
    "min_points": ("scatter_min", ((), (0, 1), (0, 1)), POINTS,
                   np.array([-5, 9, 0], np.float32), {}),
    "max_points": ("scatter_max", ((), (0, 1), (0, 1)), POINTS,
                   np.array([-5, 9, 0], np.float32), {}),
    "set_columns": ("scatter", ((0,), (1,), (1,)), np.array([[3], [0]], np.int32),
                    np.arange(6, dtype=np.float32).reshape(3, 2), {}),
    "set_window_dropped": ("scatter", ((0, 1), (), (0, 1)), np.array([[2, 1], [0, 0]], np.int32),
                           np.ones((2, 3, 2), np.float32), {}),
    "add_window_part": ("scatter_add", ((1, 2), (), (0, 1)), np.array([[1, 1], [0, 2]], np.int32),
                        np.ones((2, 2, 2), np.float32), {}),
}


def _scatter(m, name, x, updates=None):
    fn, dn, idx, upd, kw = SCATTERS[name]
    return getattr(m[0], fn)(x, idx, upd if updates is None else updates, _sdn(m, *dn), **kw)


@pytest.mark.parametrize("name", list(SCATTERS))
def test_scatter_matches_jax(backend, name):
    match_jax(_scatter(OURS, name, X),
              reference(("scatter", name), lambda: _scatter(JAX, name, X)))


def test_scatter_with_batching_dims_and_ints_matches_jax(backend):
    def run(m):
        x = np.zeros((2, 3), np.int32)
        dn = _sdn(m, (), (1,), (1,), (0,), (0,))
        return m[0].scatter_add(x, np.array([[2], [2]], np.int32), np.array([4, 7], np.int32), dn)
    match_jax(run(OURS), reference(("scatter", "batching"), lambda: run(JAX)))


def test_gather_scatter_under_jit_grad_and_vmap_match_jax(backend):
    def loss(m):
        def f(x, u):
            picked = _gather(m, "rows_clip", x)   # (a broken promise is undefined)
            return (_scatter(m, "add_rows", x, u * picked) ** 2).sum()
        return f
    u = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    match_jax(jaxlab.jit(jaxlab.grad(loss(OURS), (0, 1)))(X, u),
              reference(("gather-scatter", "grad"),
                        lambda: jax.jit(jax.grad(loss(JAX), (0, 1)))(X, u)))

    def per_row(m):
        dn = _gdn(m, (1,), (0,), (0,))
        return lambda i: m[0].gather(X, i, dn, (1, 4))
    idx = np.array([[[1]], [[2]], [[0]]], np.int32)
    match_jax(jaxlab.vmap(per_row(OURS))(idx),
              reference(("gather", "vmap"), lambda: jax.vmap(per_row(JAX))(idx)))


REDUCES = {   # id -> function of the (lax, numpy) modules
    "add": lambda m: m[0].reduce(X, 0.0, m[0].add, (0,)),
    "add_init_once": lambda m: m[0].reduce(X, 1.0, m[0].add, (1,)),
    "max_all": lambda m: m[0].reduce(X, -np.inf, m[0].max, (0, 1)),
    "lambda_fold": lambda m: m[0].reduce(X[:, :3], 0.0, lambda a, b: a + b, (1,)),
    "tuple_argmax": lambda m: m[0].reduce(
        (X[0], np.arange(4, dtype=np.int32)), (-np.inf, np.int32(0)),
        lambda a, b: (m[1].maximum(a[0], b[0]), m[1].where(a[0] >= b[0], a[1], b[1])), (0,)),
    "empty_axis": lambda m: m[0].reduce(X[:, :0], 3.0, lambda a, b: a * b, (1,)),
    "reduce_and_bool": lambda m: m[0].reduce_and(B, (1,)),
    "reduce_xor_bool": lambda m: m[0].reduce_xor(B, (1,)),
    "reduce_or_int": lambda m: m[0].reduce_or(I32, (0, 1)),
    "reduce_xor_int": lambda m: m[0].reduce_xor(I32, (1,)),
    "associative_scan_reverse": lambda m: m[0].associative_scan(m[1].add, X, reverse=True,
                                                                axis=1),
    "associative_scan_tuple": lambda m: m[0].associative_scan(
        lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (X[1] + 2, X[2])),
    "cumlogsumexp": lambda m: m[0].cumlogsumexp(X, axis=1),
}


@pytest.mark.parametrize("name", list(REDUCES))
def test_reductions_and_scans_match_jax(backend, name):
    match_jax(REDUCES[name](OURS), reference(("reduce", name), lambda: REDUCES[name](JAX)))


SCAN_GRADS = {
    "reduce_fold": lambda m: lambda x: m[0].reduce(x, 1.0, lambda a, b: a * b, (1,)).sum(),
    "associative_scan": lambda m: lambda x: (m[0].associative_scan(m[1].multiply, x, axis=1)
                                             ** 2).sum(),
    "cumlogsumexp": lambda m: lambda x: (m[0].cumlogsumexp(x, axis=1) * x).sum(),
}


@pytest.mark.parametrize("name", list(SCAN_GRADS))
def test_reduction_grads_match_jax(backend, name):
    match_jax(jaxlab.jit(jaxlab.grad(SCAN_GRADS[name](OURS)))(X),
              reference(("reduce grad", name), lambda: jax.jit(jax.grad(SCAN_GRADS[name](JAX)))(X)))


LHS = np.random.default_rng(0).standard_normal((2, 5, 6, 3)).astype(np.float32)
KERNEL = np.random.default_rng(1).standard_normal((3, 2, 3, 4)).astype(np.float32)
CONVS = {
    "nhwc": lambda m: m[0].conv_general_dilated(LHS, KERNEL, (1, 2), "SAME",
                                                dimension_numbers=("NHWC", "HWIO", "NHWC")),
    "nhwc_to_nchw": lambda m: m[0].conv_general_dilated(
        LHS, KERNEL, (1, 1), "VALID", rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NCHW"), precision=m[0].Precision.HIGHEST),
    "general_padding": lambda m: m[0].conv_with_general_padding(
        LHS.transpose(0, 3, 1, 2), KERNEL.transpose(3, 2, 0, 1), (2, 1), [(1, 0), (2, 1)],
        (1, 2), None),
    "transpose_same": lambda m: m[0].conv_transpose(LHS, KERNEL, (2, 3), "SAME"),
    "transpose_valid_kernel": lambda m: m[0].conv_transpose(
        LHS, KERNEL.transpose(0, 1, 3, 2), (2, 1), "VALID", transpose_kernel=True),
    "transpose_explicit": lambda m: m[0].conv_transpose(LHS, KERNEL, (1, 2), [(1, 2), (0, 1)],
                                                        rhs_dilation=(1, 2)),
    "batch_matmul": lambda m: m[0].batch_matmul(X3, X3.transpose(0, 2, 1), "highest"),
}


@pytest.mark.parametrize("name", list(CONVS))
def test_convolutions_match_jax(backend, name):
    ours, theirs = CONVS[name](OURS), reference(("conv", name), lambda: CONVS[name](JAX))
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)


def test_conv_transpose_grad_matches_jax(backend):
    def loss(m):
        return lambda x: (m[0].conv_transpose(x, KERNEL, (2, 1), "SAME") ** 2).sum()
    np.testing.assert_allclose(np.asarray(jaxlab.grad(loss(OURS))(LHS)),
                               np.asarray(reference(("conv_transpose", "grad"),
                                                    lambda: jax.grad(loss(JAX))(LHS))),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dimension_numbers", [None, ("NHWC", "HWIO", "NHWC"),
                                               ("NCHW", "OIWH", "NCHW"), ("NHWC", "HWIO", "NCHW")])
def test_conv_dimension_numbers_match_jax(dimension_numbers):
    ours = lax.conv_dimension_numbers((1, 3, 5, 5), (4, 3, 2, 2), dimension_numbers)
    theirs = jlax.conv_dimension_numbers((1, 3, 5, 5), (4, 3, 2, 2), dimension_numbers)
    assert tuple(ours) == tuple(theirs)
    assert lax.conv_dimension_numbers((1, 3, 5, 5), (4, 3, 2, 2), ours) == ours


def test_precision_matches_jax():
    for name in ("default", "high", "highest", "float32", "bfloat16", "tensorfloat32"):
        assert lax.Precision(name).name == jlax.Precision(name).name
    assert [p.value for p in lax.Precision] == [p.value for p in jlax.Precision]
    assert str(lax.Precision.HIGH) == str(jlax.Precision.HIGH)
    for mode in ("clip", None, "fill", "promise_in_bounds"):
        assert lax.GatherScatterMode.from_any(mode).name == \
            jlax.GatherScatterMode.from_any(mode).name


ERRORS = {
    "gather_slice_rank": lambda m: m[0].gather(X, ROWS, _gdn(m, (1,), (0,), (0,)), (1, 4, 1)),
    "gather_collapse_size": lambda m: m[0].gather(X, ROWS, _gdn(m, (1,), (0,), (0,)), (2, 4)),
    "gather_slice_too_big": lambda m: m[0].gather(X, ROWS, _gdn(m, (1,), (0,), (0,)), (1, 5)),
    "gather_float_indices": lambda m: m[0].gather(X, ROWS * 1.0, _gdn(m, (1,), (0,), (0,)),
                                                  (1, 4)),
    "gather_bad_mode": lambda m: m[0].gather(X, ROWS, _gdn(m, (1,), (0,), (0,)), (1, 4),
                                             mode="bogus"),
    "index_take_unsorted": lambda m: m[0].index_take(X3, (ROWS[:, 0], ROWS[:, 0]), (2, 0)),
    "scatter_update_rank": lambda m: m[0].scatter_add(X, ROWS, 1.0, _sdn(m, (1,), (0,), (0,))),
    "scatter_dtypes": lambda m: m[0].scatter_add(X, ROWS, np.ones((4, 4), np.int32),
                                                 _sdn(m, (1,), (0,), (0,))),
    "reduce_init_shape": lambda m: m[0].reduce(X, np.zeros(2, np.float32),
                                               lambda a, b: a + b, (1,)),
    "reduce_or_float": lambda m: m[0].reduce_or(X, (0,)),
    "associative_scan_lengths": lambda m: m[0].associative_scan(
        m[1].add, (np.ones(5, np.float32), np.ones(4, np.float32))),
    "conv_layout_length": lambda m: m[0].conv_dimension_numbers(
        (1, 3, 5, 5), (4, 3, 2, 2), ("NHWC", "HWIO", "NHW")),
    "conv_layout_letters": lambda m: m[0].conv_dimension_numbers(
        (1, 3, 5, 5), (4, 3, 2, 2), ("NHWC", "HWIO", "NHWX")),
    "conv_ranks": lambda m: m[0].conv_dimension_numbers((1, 3, 5, 5), (4, 3, 2), None),
    "conv_transpose_padding": lambda m: m[0].conv_transpose(LHS, KERNEL, (1, 1), "FULL"),
    "batch_matmul_ranks": lambda m: m[0].batch_matmul(X3, X),
    "batch_matmul_batch": lambda m: m[0].batch_matmul(X3, np.ones((3, 4, 2), np.float32)),
    "precision_name": lambda m: m[0].Precision("bogus"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_what_jax_raises(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](JAX)
    with pytest.raises(type(theirs.value)):
        ERRORS[name](OURS)


def test_one_hot_mode_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="ONE_HOT"):
        lax.gather(X, ROWS, lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4), mode="one_hot")
