"""jaxlab.numpy shape manipulation, differential against NumPy."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close, sample_data as _data

I32 = np.int32




# name -> (host source from the data, the view of it that equals the data)
LAYOUTS = {
    "contiguous": (lambda d: d, lambda a: a),
    "transposed": (lambda d: np.ascontiguousarray(d.T), lambda a: a.T),
    "stepped": (lambda d: np.repeat(d, 2, axis=0) if d.ndim else d,
                lambda a: a[::2] if a.ndim else a),
    "reversed": (lambda d: np.ascontiguousarray(np.flip(d)),
                 lambda a: a[(slice(None, None, -1),) * a.ndim]),
}


def jaxlab_input(data, layout):
    """A jaxlab array equal to `data`, built as a (non-contiguous) view in `layout`."""
    source, view = LAYOUTS[layout]
    return view(jnp.asarray(source(data)))


# id -> (fn(xp, a) for xp in (np, jnp), input shape)
CASES = {
    "reshape": (lambda xp, a: xp.reshape(a, (4, 3)), (3, 4)),
    "reshape_infer": (lambda xp, a: xp.reshape(a, (2, -1, 2)), (3, 4)),
    "reshape_method": (lambda xp, a: a.reshape(6, 2), (3, 4)),
    "ravel": (lambda xp, a: xp.ravel(a), (2, 3, 4)),
    "flatten": (lambda xp, a: a.flatten(), (3, 4)),
    "transpose": (lambda xp, a: xp.transpose(a), (2, 3, 4)),
    "transpose_axes": (lambda xp, a: xp.transpose(a, (2, 0, 1)), (2, 3, 4)),
    "transpose_neg": (lambda xp, a: xp.transpose(a, (-1, 0, -2)), (2, 3, 4)),
    "T": (lambda xp, a: a.T, (3, 4)),
    "mT": (lambda xp, a: a.mT, (2, 3, 4)),
    "swapaxes": (lambda xp, a: xp.swapaxes(a, 0, -1), (2, 3, 4)),
    "swapaxes_method": (lambda xp, a: a.swapaxes(1, 2), (2, 3, 4)),
    "moveaxis": (lambda xp, a: xp.moveaxis(a, 0, -1), (2, 3, 4)),
    "moveaxis_many": (lambda xp, a: xp.moveaxis(a, (0, 1), (2, 0)), (2, 3, 4)),
    "expand_dims": (lambda xp, a: xp.expand_dims(a, -1), (3, 4)),
    "expand_dims_many": (lambda xp, a: xp.expand_dims(a, (0, 2, -1)), (3, 4)),
    "squeeze": (lambda xp, a: xp.squeeze(a), (1, 3, 1, 4)),
    "squeeze_axis": (lambda xp, a: xp.squeeze(a, (0, 2)), (1, 3, 1, 4)),
    "broadcast_to": (lambda xp, a: xp.broadcast_to(a, (2, 3, 4)), (3, 4)),
    "broadcast_to_ones": (lambda xp, a: xp.broadcast_to(a, (2, 3, 5)), (3, 1)),
    "flip": (lambda xp, a: xp.flip(a), (3, 4)),
    "flip_axis": (lambda xp, a: xp.flip(a, -1), (2, 3, 4)),
    "flip_axes": (lambda xp, a: xp.flip(a, (0, 2)), (2, 3, 4)),
    "roll_flat": (lambda xp, a: xp.roll(a, 5), (3, 4)),
    "roll_axis": (lambda xp, a: xp.roll(a, -9, axis=1), (3, 4)),
    "roll_axes": (lambda xp, a: xp.roll(a, (1, -2, 1), (0, 1, 0)), (3, 4)),
    "tile": (lambda xp, a: xp.tile(a, 3), (3, 4)),
    "tile_more_dims": (lambda xp, a: xp.tile(a, (2, 1, 2)), (3, 4)),
    "tile_fewer_reps": (lambda xp, a: xp.tile(a, (2,)), (2, 3, 4)),
    "tile_zero": (lambda xp, a: xp.tile(a, (0, 2)), (3, 4)),
    "repeat_flat": (lambda xp, a: xp.repeat(a, 2), (3, 4)),
    "repeat_axis": (lambda xp, a: xp.repeat(a, 3, axis=-1), (3, 4)),
    "repeat_each": (lambda xp, a: xp.repeat(a, np.array([2, 0, 1]), axis=0), (3, 4)),
    "repeat_many": (lambda xp, a: xp.repeat(a, np.arange(12) % 3), (3, 4)),
    "repeat_method": (lambda xp, a: a.repeat(2, axis=0), (3, 4)),
    "pad_int": (lambda xp, a: xp.pad(a, 2), (3, 4)),
    "pad_pairs": (lambda xp, a: xp.pad(a, ((1, 0), (0, 3))), (3, 4)),
    "pad_pair_all": (lambda xp, a: xp.pad(a, (2, 1), constant_values=7), (3, 4)),
    "pad_values": (lambda xp, a: xp.pad(a, 1, constant_values=((1, 2), (3, 4))), (3, 4)),
    "pad_edge": (lambda xp, a: xp.pad(a, ((2, 1), (0, 3)), mode="edge"), (3, 4)),
    "pad_reflect": (lambda xp, a: xp.pad(a, ((2, 1), (3, 3)), mode="reflect"), (3, 4)),
    "pad_reflect_wide": (lambda xp, a: xp.pad(a, (7, 5), mode="reflect"), (4,)),
    "pad_symmetric": (lambda xp, a: xp.pad(a, (4, 2), mode="symmetric"), (3, 4)),
    "pad_wrap": (lambda xp, a: xp.pad(a, (5, 1), mode="wrap"), (3, 4)),
    "take_axis": (lambda xp, a: xp.take(a, np.array([[2, 0], [-1, 1]]), axis=1), (3, 4)),
    "take_flat": (lambda xp, a: xp.take(a, np.array([11, 0, -12, 5])), (3, 4)),
    "take_scalar": (lambda xp, a: xp.take(a, 2, axis=0), (3, 4)),
    "take_clip": (lambda xp, a: xp.take(a, np.array([-7, 0, 9]), axis=1, mode="clip"), (3, 4)),
    "take_wrap": (lambda xp, a: xp.take(a, np.array([-7, 0, 9, -1]), axis=0, mode="wrap"),
                  (3, 4)),
    "take_method": (lambda xp, a: a.take(np.array([1, 1]), axis=0), (3, 4)),
    "take_along_axis": (lambda xp, a: xp.take_along_axis(
        a, np.array([[3, 0], [1, 1], [-1, 2]]), axis=1), (3, 4)),
    "take_along_axis_bcast": (lambda xp, a: xp.take_along_axis(
        a, np.array([[2, 0, 1, 1], [0, 0, 0, 2]]), axis=0), (3, 4)),
    "take_along_axis_flat": (lambda xp, a: xp.take_along_axis(
        a, np.array([11, 3, 3]), axis=None), (3, 4)),
    "atleast_1d": (lambda xp, a: xp.atleast_1d(a), ()),
    "atleast_2d": (lambda xp, a: xp.atleast_2d(a), (4,)),
    "atleast_3d": (lambda xp, a: xp.atleast_3d(a), (3, 4)),
    "atleast_3d_1d": (lambda xp, a: xp.atleast_3d(a), (4,)),
    "split_piece": (lambda xp, a: xp.split(a, 2, axis=1)[1], (3, 4)),
    "chain": (lambda xp, a: xp.flip(xp.reshape(xp.transpose(a), (2, 6)), 1)[::-1, 1::2], (3, 4)),
    "chain_deep": (lambda xp, a: xp.moveaxis(xp.broadcast_to(a[:, None], (3, 2, 4)), 1, 0)
                   .reshape(6, 4)[::-2, ::3], (3, 4)),
    "chain_pad_roll": (lambda xp, a: xp.roll(xp.pad(a[::-1], 1, mode="edge"), 2, 0).T,
                       (3, 4)),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", list(CASES))
def test_shape_op_float32(backend, case, layout):
    fn, shape = CASES[case]
    data = _data(shape, np.float32)
    assert_close(fn(jnp, jaxlab_input(data, layout)), fn(np, data))


@pytest.mark.parametrize("case", list(CASES))
def test_shape_op_int32(backend, case):
    fn, shape = CASES[case]
    data = _data(shape, I32)
    out = fn(jnp, jnp.asarray(data))
    assert out.dtype == np.int32
    assert_close(out, fn(np, data))


# 0-d and empty inputs: id -> (fn, shape)
EDGE_CASES = {
    "reshape_0d": (lambda xp, a: xp.reshape(a, (1, 1)), ()),
    "ravel_0d": (lambda xp, a: xp.ravel(a), ()),
    "transpose_0d": (lambda xp, a: xp.transpose(a), ()),
    "expand_0d": (lambda xp, a: xp.expand_dims(a, 0), ()),
    "broadcast_0d": (lambda xp, a: xp.broadcast_to(a, (2, 3)), ()),
    "flip_0d": (lambda xp, a: xp.flip(a), ()),
    "roll_0d": (lambda xp, a: xp.roll(a, 3), ()),
    "tile_0d": (lambda xp, a: xp.tile(a, (2, 2)), ()),
    "repeat_0d": (lambda xp, a: xp.repeat(a, 3), ()),
    "pad_0d": (lambda xp, a: xp.pad(a, 2), ()),
    "atleast_2d_0d": (lambda xp, a: xp.atleast_2d(a), ()),
    "reshape_empty": (lambda xp, a: xp.reshape(a, (-1, 3)), (2, 0, 3)),
    "transpose_empty": (lambda xp, a: xp.transpose(a), (0, 3)),
    "flip_empty": (lambda xp, a: xp.flip(a, 0), (0, 3)),
    "roll_empty": (lambda xp, a: xp.roll(a, 2, axis=1), (0, 3)),
    "tile_empty": (lambda xp, a: xp.tile(a, (2, 2)), (0, 3)),
    "repeat_empty": (lambda xp, a: xp.repeat(a, 2, axis=1), (0, 3)),
    "pad_empty": (lambda xp, a: xp.pad(a, 1), (0, 3)),
    "pad_edge_empty": (lambda xp, a: xp.pad(a, ((0, 0), (1, 2)), mode="edge"), (0, 3)),
    "take_empty": (lambda xp, a: xp.take(a, np.array([], np.int32), axis=1), (2, 3)),
    "split_empty": (lambda xp, a: xp.split(a, 3, axis=0)[1], (0, 3)),
    "broadcast_to_empty": (lambda xp, a: xp.broadcast_to(a, (0, 3)), (1, 3)),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_shape_op_edge_shapes(backend, case):
    fn, shape = EDGE_CASES[case]
    data = _data(shape, np.float32)
    assert_close(fn(jnp, jnp.asarray(data)), fn(np, data))


# Functions of several arrays (promoting float32 with int32): id -> fn(xp, a, b)
MULTI_CASES = {
    "concatenate": lambda xp, a, b: xp.concatenate([a, b, a], axis=1),
    "concatenate_none": lambda xp, a, b: xp.concatenate([a, b], axis=None),
    "concatenate_empty": lambda xp, a, b: xp.concatenate([a[:, :0], b], axis=-1),
    "stack": lambda xp, a, b: xp.stack([a, b], axis=1),
    "stack_last": lambda xp, a, b: xp.stack([a.T, b.T, a.T], axis=-1),
    "hstack": lambda xp, a, b: xp.hstack([a, b]),
    "hstack_1d": lambda xp, a, b: xp.hstack([a[0], b[1], a[2, 1]]),
    "vstack": lambda xp, a, b: xp.vstack([a, b[0], a[1]]),
    "dstack": lambda xp, a, b: xp.dstack([a, b]),
    "broadcast_arrays": lambda xp, a, b: xp.broadcast_arrays(a[:, :1], b[0])[0],
}


@pytest.mark.parametrize("case", list(MULTI_CASES))
def test_multi_array_ops(backend, case):
    fn = MULTI_CASES[case]
    a, b = _data((3, 4), np.float32), _data((3, 4), I32, seed=1)
    assert_close(fn(jnp, jnp.asarray(a)[::-1], jnp.asarray(b)), fn(np, a[::-1], b))


SPLITS = [
    ("sections", lambda xp, a: xp.split(a, 3, axis=1), (2, 6)),
    ("points", lambda xp, a: xp.split(a, [1, 4], axis=1), (2, 6)),
    ("points_negative_and_past_end", lambda xp, a: xp.split(a, [-2, 1, 9]), (5,)),
    ("array_split", lambda xp, a: xp.array_split(a, 4), (10, 2)),
    ("array_split_more_than_size", lambda xp, a: xp.array_split(a, 5, axis=-1), (2, 3)),
    ("atleast_many", lambda xp, a: xp.atleast_2d(a, a[0], a[0, 0]), (2, 3)),
    ("broadcast_arrays", lambda xp, a: xp.broadcast_arrays(a, a[:1], 2.0), (2, 3)),
]


@pytest.mark.parametrize("name,fn,shape", SPLITS, ids=[s[0] for s in SPLITS])
def test_list_results(backend, name, fn, shape):
    data = _data(shape, np.float32)
    got, want = fn(jnp, jaxlab_input(data, "transposed")), fn(np, data)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w, np.float32))


def test_take_fills_out_of_range_like_jax(backend):
    a = _data((3, 4), np.float32)
    idx = np.array([0, 3, 4, -4, -5, 9])
    ok = (idx >= -4) & (idx < 4)
    want = np.where(ok, a[:, np.where(ok, idx, 0)], np.nan)
    assert_close(jnp.take(a, idx, axis=1), want)
    assert_close(jnp.take(a, idx, axis=1, fill_value=-1.0), np.where(ok, want, -1.0))
    ints = np.arange(4, dtype=I32)
    assert_close(jnp.take(ints, idx), np.where(ok, ints[np.where(ok, idx, 0)],
                                               np.iinfo(np.int32).min))
    assert_close(jnp.take_along_axis(a, idx.reshape(1, -1), axis=1), want)  # broadcast


# Pure movement: id -> fn(a) of a realized (3, 4) float32 array
MOVEMENT = {
    "reshape_transpose": lambda a: jnp.transpose(jnp.reshape(a, (2, 6))).reshape(4, 3),
    "slices": lambda a: a[::-1, 1:3][None, ..., ::-2],
    "flip_broadcast": lambda a: jnp.broadcast_to(jnp.flip(a, 1), (2, 3, 4)),
    "expand_squeeze_moveaxis": lambda a: jnp.moveaxis(jnp.squeeze(jnp.expand_dims(a, 0)), 0, 1),
    "swapaxes_mT": lambda a: jnp.swapaxes(a[None], 0, 2).mT,
    "tile_repeat": lambda a: jnp.repeat(jnp.tile(a, (2, 1)), 2, axis=1),
    "split_piece": lambda a: jnp.split(a, 2, axis=1)[1].T,
    "int_and_newaxis": lambda a: a[1][None, :, None][..., 0],
    "atleast_3d": lambda a: jnp.atleast_3d(a[0]),
}


@pytest.mark.parametrize("case", list(MOVEMENT))
def test_pure_movement_emits_no_kernels(backend, case):
    data = _data((3, 4), np.float32)
    a = jnp.asarray(data)
    a.block_until_ready()
    with jaxlab.capture() as log:
        out = MOVEMENT[case](a)
    assert len(log) == 0, log.summary()
    with jaxlab.capture() as log:
        out.block_until_ready()
    assert len(log.kernels()) <= 1     # one copy into a fresh buffer when read
    assert_close(out, MOVEMENT[case](data))


def test_pad_and_roll_are_one_kernel(backend):
    data = _data((3, 4), np.float32)
    a = jnp.asarray(data)
    a.block_until_ready()
    with jaxlab.capture() as log:
        out = jnp.roll(jnp.pad(a, ((1, 2), (3, 3)), mode="reflect"), 2, axis=1) * 2
        out.block_until_ready()
    assert len(log.kernels()) == 1
    assert_close(out, np.roll(np.pad(data, ((1, 2), (3, 3)), mode="reflect"), 2, axis=1) * 2)


# id -> (fn, exception, words that the message must contain)
ERRORS = {
    "reshape_size": (lambda a: jnp.reshape(a, (5, 3)), TypeError, ["(3, 4)", "(5, 3)"]),
    "reshape_two_unknowns": (lambda a: jnp.reshape(a, (-1, -1)), TypeError, ["unknown"]),
    "reshape_infer_bad": (lambda a: jnp.reshape(a, (5, -1)), TypeError, ["size 12"]),
    "transpose_not_perm": (lambda a: jnp.transpose(a, (0, 0)), TypeError, ["(0, 0)"]),
    "transpose_bad_axis": (lambda a: jnp.transpose(a, (0, 2)), ValueError, ["axis 2"]),
    "swapaxes_axis": (lambda a: jnp.swapaxes(a, 0, 2), ValueError, ["axis 2", "dimension 2"]),
    "moveaxis_lengths": (lambda a: jnp.moveaxis(a, (0, 1), 0), ValueError, ["moveaxis"]),
    "expand_dims_repeated": (lambda a: jnp.expand_dims(a, (0, 0)), ValueError, ["repeated"]),
    "squeeze_not_one": (lambda a: jnp.squeeze(a, 1), ValueError, ["axis 1", "size 4"]),
    "flip_axis": (lambda a: jnp.flip(a, 3), ValueError, ["axis 3"]),
    "broadcast_to": (lambda a: jnp.broadcast_to(a, (4, 4)), ValueError, ["(3, 4)", "(4, 4)"]),
    "concatenate_shapes": (lambda a: jnp.concatenate([a, a.T]), TypeError, ["(4, 3)"]),
    "stack_shapes": (lambda a: jnp.stack([a, a[0]]), ValueError, ["(4,)"]),
    "split_unequal": (lambda a: jnp.split(a, 3, axis=1), ValueError, ["equal division"]),
    "split_zero": (lambda a: jnp.split(a, 0), ValueError, ["sections"]),
    "repeat_negative": (lambda a: jnp.repeat(a, -1), TypeError, ["non-negative"]),
    "repeat_length": (lambda a: jnp.repeat(a, np.array([1, 2]), axis=1), ValueError,
                      ["(2,)", "size 4"]),
    "tile_float": (lambda a: jnp.tile(a, 1.5), TypeError, ["integers"]),
    "pad_negative": (lambda a: jnp.pad(a, -1), ValueError, ["non-negative"]),
    "pad_width_shape": (lambda a: jnp.pad(a, ((1, 2, 3),)), ValueError, ["pad_width"]),
    "pad_mode": (lambda a: jnp.pad(a, 1, mode="median"), NotImplementedError, ["median"]),
    "pad_edge_empty": (lambda a: jnp.pad(a[:0], 1, mode="edge"), ValueError, ["empty axis 0"]),
    "take_float_indices": (lambda a: jnp.take(a, np.array([0.5])), TypeError, ["integers"]),
    "take_mode": (lambda a: jnp.take(a, np.array([0]), mode="raise"), ValueError, ["raise"]),
    "take_along_ndim": (lambda a: jnp.take_along_axis(a, np.array([0]), axis=1), ValueError,
                        ["(1,)", "(3, 4)"]),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_name_shapes_and_axes(backend, case):
    fn, exc, words = ERRORS[case]
    data = _data((3, 4), np.float32)
    a = jnp.asarray(data)
    with pytest.raises(exc) as info:
        fn(a)
    for w in words:
        assert w in str(info.value), str(info.value)
    assert_close(jnp.flip(a, 0) * 2 + 1, np.flip(data, 0) * 2 + 1)   # the engine still works
