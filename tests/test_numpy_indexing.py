"""x[idx] and x.at[idx] with NumPy's indexing rules and JAX's out-of-bounds rules."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.numpy.indexing import NonConcreteBooleanIndexError
from tests.conftest import assert_close, sample_data as _data

A = np.array
S = slice
E = Ellipsis




# The index arrays of a case as NumPy arrays, jaxlab arrays or Python lists.
INDEX_KINDS = {
    "numpy": lambda a: a,
    "jaxlab": jnp.asarray,
    "list": lambda a: a.tolist(),
}


def convert(idx, kind):
    conv = INDEX_KINDS[kind]
    if isinstance(idx, tuple):
        return tuple(conv(i) if isinstance(i, np.ndarray) else i for i in idx)
    return conv(idx) if isinstance(idx, np.ndarray) else idx


# Indices into a (4, 5, 6) array: id -> index
GET_CASES = {
    "int": 2,
    "int_negative": -1,
    "ints": (1, -2, 3),
    "slice": S(1, 3),
    "slice_step": S(None, None, 2),
    "slice_reverse": S(None, None, -1),
    "slice_negative_step": (S(3, 0, -2), S(None, None, -3), S(-2, None)),
    "slice_empty": S(10, 20),
    "slice_empty_reverse": (S(None), S(0, 3, -1)),
    "slices_and_int": (S(1, None), 0, S(None, None, -2)),
    "newaxis": None,
    "newaxis_int": (None, 0, None),
    "ellipsis_int": (E, 1),
    "int_ellipsis_newaxis": (0, E, None),
    "ellipsis": E,
    "empty_tuple": (),
    "array": A([0, 2, 1, 2]),
    "array_2d": A([[0, 1], [3, 2]]),
    "array_negative": A([-1, -4, 0]),
    "array_empty": A([], np.int64),
    "arrays_adjacent": (S(None), A([0, 4, 1]), A([5, 0, 2])),
    "arrays_broadcast": (A([[0], [3]]), A([1, 2, 4])),
    "arrays_separated": (A([0, 1]), S(None), A([1, 2])),
    "arrays_separated_2d": (A([[0, 1]]), S(1, 4), A([[1], [5]])),
    "int_and_array_separated": (0, S(None), A([0, 1])),
    "int_and_array_adjacent": (S(None), 0, A([0, 1])),
    "array_newaxis_array": (A([0, 1]), None, A([1, 2])),
    "ellipsis_array_newaxis": (E, A([0, 1]), None),
    "array_stepped_slice": (A([3, 0]), S(None, None, -2)),
    "all_arrays": (A([1, 3]), A([0, 4]), A([5, 5])),
    "mask": A([True, False, True, True]),
    "mask_2d": (np.arange(20).reshape(4, 5) % 3 == 0),
    "mask_and_int": (S(None), A([True, False, False, True, True]), 2),
    "mask_all_false": A([False] * 4),
    "bool_true": True,
    "bool_false_with_int": (0, False),
}


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
@pytest.mark.parametrize("case", list(GET_CASES))
def test_getitem(backend, case, kind):
    x = _data((4, 5, 6), np.float32)
    idx = GET_CASES[case]
    assert_close(jnp.asarray(x)[convert(idx, kind)], x[idx])


@pytest.mark.parametrize("case", list(GET_CASES))
def test_getitem_int32_of_a_transposed_view(backend, case):
    x = _data((6, 5, 4), np.int32)
    idx = GET_CASES[case]
    view = jnp.asarray(x).T      # a non-contiguous (4, 5, 6) view
    out = view[idx]
    assert out.dtype == np.int32
    assert_close(out, x.T[idx])
    assert_close(view.at[idx].get(), x.T[idx])


# Other shapes: id -> (shape, index)
SHAPE_CASES = {
    "0d_ellipsis": ((), E),
    "0d_empty_tuple": ((), ()),
    "0d_newaxis": ((), (None, E, None)),
    "0d_true": ((), True),
    "1d_reverse_step": ((7,), S(5, None, -2)),
    "1d_step_past_end": ((7,), S(-100, 100, 3)),
    "empty_rows": ((0, 3), S(None)),
    "empty_rows_int": ((0, 3), (S(None), 1)),
    "empty_rows_array": ((0, 3), (E, A([2, 0]))),
    "empty_cols_slice": ((2, 0), (1, S(None, None, -1))),
    "stepped_chain": ((8, 6), (S(1, None, 3), S(None, None, -4))),
}


@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_getitem_shapes(backend, case):
    shape, idx = SHAPE_CASES[case]
    x = _data(shape, np.float32)
    assert_close(jnp.asarray(x)[idx], x[idx])


def test_chained_getitem_of_views(backend):
    x = _data((6, 8), np.float32)
    j = jnp.asarray(x)
    assert_close(j[::-1][1:, ::3][A([0, 2])][:, ::-1], x[::-1][1:, ::3][A([0, 2])][:, ::-1])
    assert_close(j.T[2:7][::2, None][..., 1], x.T[2:7][::2, None][..., 1])


def test_array_indices_out_of_range_clamp(backend):
    x = _data((4, 5), np.float32)
    j = jnp.asarray(x)
    idx = A([-9, -5, -1, 0, 4, 7])
    clamped = np.clip(np.where(idx < 0, idx + 4, idx), 0, 3)
    assert_close(j[idx], x[clamped])
    assert_close(j[jnp.asarray(idx), 1], x[clamped, 1])
    assert_close(j[A([0, 9]), A([7, -1])], x[A([0, 3]), A([4, 4])])
    assert_close(j[jnp.asarray(9)], x[3])               # a 0-d jaxlab index is dynamic


def test_get_fill_mode(backend):
    x = _data((4, 5), np.float32)
    j = jnp.asarray(x)
    idx = A([0, 4, -5, 2])
    want = np.where((idx >= -4)[:, None] & (idx < 4)[:, None], x[np.clip(idx, 0, 3)], np.nan)
    assert_close(j.at[idx].get(mode="fill"), want)
    assert_close(j.at[:, idx].get(mode="fill", fill_value=2.5), np.where(
        (idx >= -5) & (idx < 5), x[:, idx % 5], 2.5))


# Indices for updates of a (4, 5, 6) array (values shaped like x[idx]): id -> index
UPDATE_CASES = {
    "int": 1,
    "ints": (-1, 2),
    "slice": (S(1, 3), S(None), S(2, None)),
    "slice_step": (S(None, None, 2), S(1, None, 3)),
    "slice_negative_step": (S(None, None, -2), S(4, 0, -3)),
    "newaxis_ellipsis": (None, E, 3),
    "slice_empty": S(3, 1),
    "array": A([2, 0]),
    "array_repeated": A([1, 3, 1, 1]),
    "array_negative": (S(None), A([-1, 0, -5])),
    "arrays_adjacent": (S(None), A([0, 4, 0]), A([5, 0, 5])),
    "arrays_separated": (A([0, 1, 0]), S(1, None, 2), A([1, 2, 1])),
    "array_and_reversed_slice": (S(None, None, -1), A([[0], [2]]), 3),
    "mask": (np.arange(20).reshape(4, 5) % 3 == 0),
    "all": E,
}
UPDATE_OPS = {   # op -> NumPy's unbuffered in-place version (repeated indices accumulate)
    "add": np.add.at, "multiply": np.multiply.at, "min": np.minimum.at, "max": np.maximum.at,
}


def _numpy_update(x, idx, op, values):
    out = x.copy()
    if op == "set":
        out[idx] = values
    else:
        UPDATE_OPS[op](out, idx, values)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("case,op", [
    (case, op) for case in UPDATE_CASES for op in ["set", *UPDATE_OPS]
    # set with repeated indices is order-dependent: test_repeated_indices covers it
    if not (op == "set" and case == "array_repeated")])
def test_at_update(backend, case, op, dtype):
    x = _data((4, 5, 6), dtype)
    idx = UPDATE_CASES[case]
    values = _data(x[idx].shape, dtype, seed=1)
    out = getattr(jnp.asarray(x).at[convert(idx, "jaxlab")], op)(values)
    assert out.dtype == dtype
    assert_close(out, _numpy_update(x, idx, op, values))


@pytest.mark.parametrize("case", ["int", "slice_negative_step", "arrays_separated", "mask"])
def test_at_update_broadcasts_values_of_a_view(backend, case):
    x = _data((6, 5, 4), np.float32)
    idx = UPDATE_CASES[case]
    view = jnp.asarray(x).T
    row = _data(x.T[idx].shape[-1:], np.float32, seed=2)
    assert_close(view.at[idx].set(row), _numpy_update(x.T, idx, "set", row))
    assert_close(view.at[idx].add(2), _numpy_update(x.T, idx, "add", np.float32(2)))


def test_repeated_indices(backend):
    x = np.zeros(5, np.float32)
    idx, v = A([1, 3, 1, 1]), A([1.0, 2.0, 3.0, 4.0], np.float32)
    assert_close(jnp.asarray(x).at[idx].add(v), [0, 8, 0, 2, 0])
    assert_close(jnp.asarray(x).at[idx].set(v), [0, 4, 0, 2, 0])    # the last one wins
    assert_close(jnp.asarray(x + 2).at[idx].multiply(v), [2, 24, 2, 4, 2])


def test_out_of_range_updates_are_dropped(backend):
    x = np.arange(5, dtype=np.float32)
    j = jnp.asarray(x)
    assert_close(j.at[A([0, 5, -6, 9])].set(100.0), [100, 1, 2, 3, 4])
    assert_close(j.at[A([-1, 7])].add(A([10.0, 20.0])), [0, 1, 2, 3, 14])
    assert_close(j.at[A([-1, 7])].set(9.0, mode="clip"), [0, 1, 2, 3, 9])
    m = jnp.zeros((3, 3))
    assert_close(m.at[A([0, 1]), A([3, 1])].set(1.0), [[0, 0, 0], [0, 1, 0], [0, 0, 0]])


def test_update_casts_values_to_the_array_dtype(backend):
    x = jnp.arange(4)
    out = x.at[1:3].set(A([2.7, -1.5], np.float32))
    assert out.dtype == np.int32
    assert_close(out, [0, 2, -1, 3])
    assert_close(x.at[A([0])].add(1.9), [1, 1, 2, 3])


def test_basic_indexing_emits_no_kernels(backend):
    j = jnp.asarray(_data((4, 5, 6), np.float32))
    j.block_until_ready()
    with jaxlab.capture() as log:
        out = j[1:, None, ::-2][..., 3][-1, :, S(None, None, 2)]
    assert len(log) == 0 and out.shape == (1, 2)


def test_basic_update_is_one_kernel(backend):
    x = _data((4, 6), np.float32)
    j = jnp.asarray(x)
    j.block_until_ready()
    with jaxlab.capture() as log:
        out = j.at[1::2, ::-3].add(1.0) * 2
        out.block_until_ready()
    assert len(log.kernels()) == 1
    assert_close(out, _numpy_update(x, (S(1, None, 2), S(None, None, -3)), "add", 1.0) * 2)


def test_iteration_and_methods(backend):
    x = _data((3, 4), np.float32)
    j = jnp.asarray(x)
    for row, want in zip(j, x):
        assert_close(row, want)
    assert len(list(j)) == 3


# id -> (index into a (4, 5) array, exception, words the message must contain)
ERRORS = {
    "too_many": ((0, 0, 0), IndexError, ["2-dimensional", "3 were indexed"]),
    "too_many_with_mask": ((np.ones((4, 5), bool), 0), IndexError, ["3 were indexed"]),
    "two_ellipses": ((E, 0, E), IndexError, ["ellipsis"]),
    "float": (1.0, TypeError, ["1.0"]),
    "float_array": (A([0.5]), TypeError, ["0.5"]),
    "float_jaxlab_array": (jnp.asarray([0.5]), TypeError, ["float32"]),
    "list_of_slices": ([S(None), 0], TypeError, ["slice"]),
    "mask_shape": (A([True, False]), IndexError, ["axis 0", "size of axis is 4", "is 2"]),
    "string": ("a", TypeError, ["'a'"]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_index_errors(backend, case):
    idx, exc, words = ERRORS[case]
    x = _data((4, 5), np.float32)
    j = jnp.asarray(x)
    for attempt in (lambda: j[idx], lambda: j.at[idx].set(0.0)):
        with pytest.raises(exc) as info:
            attempt()
        for w in words:
            assert w in str(info.value), str(info.value)
    assert_close(j[1:, ::-1] * 2, x[1:, ::-1] * 2)    # the engine still works


# id -> (fn of a (4, 5) array, exception, words)
UPDATE_ERRORS = {
    "setitem": (lambda j: j.__setitem__(0, 1.0), TypeError, ["immutable", ".at["]),
    "values_shape": (lambda j: j.at[0].set(np.ones(4)), ValueError, ["(4,)", "(5,)"]),
    "values_shape_advanced": (lambda j: j.at[A([0, 1])].add(np.ones((3, 5))), ValueError,
                              ["(3, 5)"]),
    "get_mode": (lambda j: j.at[0].get(mode="wrap"), ValueError, ["'wrap'"]),
    "set_mode": (lambda j: j.at[0].set(1.0, mode="bogus"), ValueError, ["'bogus'"]),
}


@pytest.mark.parametrize("case", list(UPDATE_ERRORS))
def test_update_errors(backend, case):
    fn, exc, words = UPDATE_ERRORS[case]
    x = _data((4, 5), np.float32)
    j = jnp.asarray(x)
    with pytest.raises(exc) as info:
        fn(j)
    for w in words:
        assert w in str(info.value), str(info.value)
    assert_close(j.at[1].add(1.0), _numpy_update(x, 1, "add", np.float32(1)))


def test_traced_boolean_mask_raises(backend):
    x = jnp.asarray(_data((4, 5), np.float32))
    with pytest.raises(NonConcreteBooleanIndexError, match=r"\(4, 5\).*jnp.where"):
        jaxlab.jit(lambda a: a[a > 0])(x)
    assert_close(x[np.asarray(x) > 0], np.asarray(x)[np.asarray(x) > 0])   # concrete: fine


def test_indexing_under_jit_and_vmap(backend):
    x = _data((4, 5), np.float32)
    j = jnp.asarray(x)

    def f(a):
        return a[::-2, A([0, 3])].at[0, 1:].add(1.0) * 2

    want = _numpy_update(x[::-2, A([0, 3])], (0, S(1, None)), "add", 1.0) * 2
    assert_close(jaxlab.jit(f)(j), want)
    assert_close(jaxlab.vmap(lambda r: r[A([4, 0])].at[-1].set(0.0))(j),
                 np.stack([_numpy_update(r[A([4, 0])], -1, "set", 0.0) for r in x]))
