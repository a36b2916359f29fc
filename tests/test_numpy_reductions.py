"""jaxlab.numpy reductions, differential against NumPy with JAX's dtypes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

F32, I32, F16 = np.float32, np.int32, np.float16


def check(actual, expected, rtol=1e-5, atol=1e-6):
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert_close(actual, expected, rtol=rtol, atol=atol)


def data(shape, dtype, rng) -> np.ndarray:
    """Small values: int products stay exact and ints tie often (for argmax)."""
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-3, 3, shape).astype(dtype)
    return rng.integers(-3, 4, shape).astype(dtype)



def _flip(x):
    return jnp.flip(x)


def _stepped(x):
    return x[::2, 1:, ::-1]


# layout -> (NumPy view, the same view built by jaxlab from the uploaded array)
LAYOUTS = {
    "contiguous": (lambda a: a, lambda x: x),
    "transposed": (lambda a: a.T, jnp.transpose),
    "flipped": (lambda a: a[::-1, ::-1, ::-1], _flip),
    "stepped": (lambda a: a[::2, 1:, ::-1], _stepped),
}


def view(layout: str, a: np.ndarray):
    np_view, jax_view = LAYOUTS[layout]
    return np_view(a), jax_view(jnp.asarray(a))


# result kind -> JAX's result dtype for an input dtype
RESULT = {
    "same": lambda dt: np.dtype(dt),
    "count": lambda dt: np.dtype(I32) if np.dtype(dt) == bool else np.dtype(dt),
    "float": lambda dt: np.dtype(dt) if np.dtype(dt).kind == "f" else np.dtype(F32),
    "bool": lambda dt: np.dtype(bool),
}

# (name, NumPy function, result kind)
REDUCTIONS = [("sum", np.sum, "count"), ("prod", np.prod, "count"), ("max", np.max, "same"),
              ("min", np.min, "same"), ("amax", np.amax, "same"), ("amin", np.amin, "same"),
              ("mean", np.mean, "float"), ("var", np.var, "float"), ("std", np.std, "float"),
              ("any", np.any, "bool"), ("all", np.all, "bool")]
IDS = [r[0] for r in REDUCTIONS]
AXES = [None, 0, 1, -1, (0, 2), (2, -3), (), [1]]


def reference(np_fn, a, kind, **kw):
    wide = a.astype(np.float64) if a.dtype.kind == "f" or kind == "float" else a
    with warnings.catch_warnings():   # NumPy warns about empty means; JAX gives NaN quietly
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np_fn(wide, **kw)).astype(RESULT[kind](a.dtype))


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dt", [F32, I32, bool], ids=["f32", "i32", "bool"])
@pytest.mark.parametrize("name,np_fn,kind", REDUCTIONS, ids=IDS)
def test_reduction_axes(backend, rng, name, np_fn, kind, dt, axis, keepdims):
    a = data((2, 3, 4), dt, rng)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = reference(np_fn, a, kind, axis=np_axis, keepdims=keepdims)
    check(getattr(jnp, name)(jnp.asarray(a), axis=axis, keepdims=keepdims), expected)


@pytest.mark.parametrize("axis", [None, 0, -1], ids=str)
@pytest.mark.parametrize("layout", ["transposed", "flipped", "stepped"])
@pytest.mark.parametrize("name,np_fn,kind", REDUCTIONS, ids=IDS)
def test_reduction_non_contiguous(backend, rng, name, np_fn, kind, layout, axis):
    a, x = view(layout, data((4, 3, 5), F32, rng))
    check(getattr(jnp, name)(x, axis=axis), reference(np_fn, a, kind, axis=axis))


@pytest.mark.parametrize("name,np_fn,kind", REDUCTIONS, ids=IDS)
def test_reduction_of_0d(backend, name, np_fn, kind):
    a = np.asarray(F32(2.5))
    check(getattr(jnp, name)(jnp.asarray(a)), reference(np_fn, a, kind))
    check(getattr(jnp, name)(jnp.asarray(a), axis=()), reference(np_fn, a, kind, axis=()))


@pytest.mark.parametrize("name,np_fn,kind", REDUCTIONS, ids=IDS)
def test_reduction_of_empty(backend, name, np_fn, kind):
    a = np.zeros((0, 3), F32)
    check(getattr(jnp, name)(jnp.asarray(a), axis=1), reference(np_fn, a, kind, axis=1))
    if name in ("max", "min", "amax", "amin"):
        with pytest.raises(ValueError, match="zero-size"):
            getattr(jnp, name)(jnp.asarray(a), axis=0)
    else:   # the identity, or NaN for the statistics (0/0)
        check(getattr(jnp, name)(jnp.asarray(a), axis=0), reference(np_fn, a, kind, axis=0))


def test_initial(backend, rng):
    a = data((3, 4), F32, rng)
    x = jnp.asarray(a)
    check(jnp.sum(x, axis=0, initial=10.0), np.sum(a, axis=0, initial=10.0))
    check(jnp.max(x, axis=1, initial=2.0), np.max(a, axis=1, initial=2.0))
    check(jnp.min(jnp.zeros((0, 2)), axis=0, initial=1.0), np.ones(2, F32))


def test_dtype_argument(backend, rng):
    a = data((3, 4), I32, rng)
    x = jnp.asarray(a)
    check(jnp.sum(x, axis=1, dtype=jnp.float32), a.sum(axis=1).astype(F32))
    check(jnp.mean(x, dtype=jnp.int32), np.asarray(np.trunc(a.mean())).astype(I32))
    check(jnp.prod(jnp.asarray(a != 0), dtype=jnp.float32), np.prod(a != 0).astype(F32))


def test_float16_accumulates_in_float32(backend):
    a = np.full(1000, 0.1, F16)   # a float16 running sum drifts to 105.2
    wide = a.astype(np.float64)
    x = jnp.asarray(a)
    check(jnp.mean(x), np.asarray(wide.mean()).astype(F16))
    check(jnp.var(x), np.asarray(0.0, F16))
    check(jnp.sum(x), np.asarray(wide.sum()).astype(F16))
    check(jnp.cumsum(x), np.cumsum(wide).astype(F16), rtol=1e-3)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("name", ["var", "std"])
def test_ddof(backend, rng, name, ddof):
    a = data((4, 5), F32, rng)
    for axis in (None, 0, 1):
        expected = getattr(np, name)(a.astype(np.float64), axis=axis, ddof=ddof).astype(F32)
        check(getattr(jnp, name)(jnp.asarray(a), axis=axis, ddof=ddof), expected)
    check(getattr(jnp.asarray(a), name)(ddof=ddof), getattr(a.astype(np.float64), name)(
        ddof=ddof).astype(F32))


def test_ddof_at_least_the_count_gives_nan(backend):
    # JAX returns NaN where N - ddof <= 0 (NumPy would divide by zero or a negative)
    x = jnp.asarray(np.arange(6, dtype=F32).reshape(2, 3))
    check(jnp.var(x, axis=0, ddof=2), np.full(3, np.nan, F32))
    check(jnp.std(x, axis=1, ddof=3), np.full(2, np.nan, F32))


# --- positions ----------------------------------------------------------------------

ARG = [("argmax", np.argmax), ("argmin", np.argmin)]


@pytest.mark.parametrize("keepdims", [False, True], ids=["drop", "keepdims"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dt", [F32, I32, bool], ids=["f32", "i32", "bool"])
@pytest.mark.parametrize("name,np_fn", ARG, ids=[r[0] for r in ARG])
def test_arg_reductions(backend, rng, name, np_fn, dt, axis, keepdims):
    a = data((5, 6), dt, rng)   # small integers: ties resolve to the first index
    expected = np.asarray(np_fn(a, axis=axis, keepdims=keepdims)).astype(I32)
    check(getattr(jnp, name)(jnp.asarray(a), axis=axis, keepdims=keepdims), expected)


@pytest.mark.parametrize("layout", ["transposed", "flipped", "stepped"])
@pytest.mark.parametrize("name,np_fn", ARG, ids=[r[0] for r in ARG])
def test_arg_reductions_non_contiguous(backend, rng, name, np_fn, layout):
    a, x = view(layout, data((4, 3, 5), I32, rng))
    for axis in (None, 0, 2):
        check(getattr(jnp, name)(x, axis=axis), np.asarray(np_fn(a, axis=axis)).astype(I32))


@pytest.mark.parametrize("name,np_fn", ARG, ids=[r[0] for r in ARG])
def test_arg_reductions_first_nan_wins(backend, name, np_fn):
    a = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 0.0, 2.0]], F32)
    for axis in (None, 0, 1):
        check(getattr(jnp, name)(jnp.asarray(a), axis=axis),
              np.asarray(np_fn(a, axis=axis)).astype(I32))


# --- running folds -------------------------------------------------------------------

CUMULATIVE = [("cumsum", np.cumsum), ("cumprod", np.cumprod)]


@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("dt", [F32, I32, bool], ids=["f32", "i32", "bool"])
@pytest.mark.parametrize("name,np_fn", CUMULATIVE, ids=[r[0] for r in CUMULATIVE])
def test_cumulative(backend, rng, name, np_fn, dt, axis):
    a = data((3, 7), dt, rng)
    expected = np_fn(a, axis=axis).astype(I32 if dt is bool else dt)   # bools count as int32
    check(getattr(jnp, name)(jnp.asarray(a), axis=axis), expected)


@pytest.mark.parametrize("layout", ["transposed", "flipped", "stepped"])
@pytest.mark.parametrize("name,np_fn", CUMULATIVE, ids=[r[0] for r in CUMULATIVE])
def test_cumulative_non_contiguous(backend, rng, name, np_fn, layout):
    a, x = view(layout, data((3, 4, 5), F32, rng))
    for axis in (None, 0, 2):
        check(getattr(jnp, name)(x, axis=axis), np_fn(a, axis=axis), rtol=1e-5)


@pytest.mark.parametrize("name,np_fn", CUMULATIVE, ids=[r[0] for r in CUMULATIVE])
def test_cumulative_dtype_0d_and_empty(backend, rng, name, np_fn):
    a = data((4, 3), I32, rng)
    check(getattr(jnp, name)(jnp.asarray(a), axis=0, dtype=jnp.float32),
          np_fn(a, axis=0).astype(F32))
    check(getattr(jnp, name)(jnp.asarray(np.asarray(F32(3)))), np_fn(F32(3)).astype(F32))
    empty = np.zeros((0, 3), F32)
    check(getattr(jnp, name)(jnp.asarray(empty), axis=0), np_fn(empty, axis=0))
    check(getattr(jnp, name)(jnp.asarray(empty)), np_fn(empty))


def test_long_cumsum_matches_numpy(backend, rng):
    a = data((1000,), F32, rng)
    check(jnp.cumsum(jnp.asarray(a)), np.cumsum(a.astype(np.float64)).astype(F32),
          rtol=1e-4, atol=1e-4)


# --- methods and fusion ----------------------------------------------------------------

METHODS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all",
           "argmax", "argmin", "cumsum", "cumprod"]


@pytest.mark.parametrize("name", METHODS)
def test_methods(backend, rng, name):
    a = data((3, 4), F32, rng)
    x = jnp.asarray(a)
    check(getattr(x, name)(axis=0), getattr(jnp, name)(x, axis=0))
    check(getattr(x, name)(), getattr(jnp, name)(x))


def _kernels(fn):
    with jaxlab.capture() as log:
        fn().block_until_ready()
    return len(log.kernels())


def test_mean_is_one_kernel(backend, rng):
    x = jnp.asarray(data((6, 10), F32, rng))
    x.block_until_ready()
    assert _kernels(lambda: jnp.mean(x * 2, axis=1) + 1) == 1


# --- errors ----------------------------------------------------------------------------

# (call, exception, text the message must contain)
ERRORS = [
    (lambda x: jnp.sum(x, axis=2), ValueError, "axis 2"),
    (lambda x: jnp.mean(x, axis=-3), ValueError, "axis -3"),
    (lambda x: jnp.var(x, axis=(0, 0)), ValueError, "repeated axis"),
    (lambda x: jnp.argmax(x, axis=5), ValueError, "axis 5"),
    (lambda x: jnp.cumsum(x, axis=2), ValueError, "axis 2"),
    (lambda x: jnp.any(x, axis=1.5), TypeError, "float"),
    (lambda x: jnp.argmin(jnp.zeros((0, 2))), ValueError, "empty"),
    (lambda x: jnp.max(jnp.zeros((2, 0)), axis=1), ValueError, "zero-size"),
    (lambda x: jnp.max(x, where=x > 0), ValueError, "specify 'initial'"),
    (lambda x: jnp.mean(x, where=jnp.ones(4, bool)), ValueError, "broadcast"),
]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_bad_input_raises_a_clear_error(backend, call, exc, text):
    x = jnp.asarray(np.arange(6, dtype=F32).reshape(2, 3))
    with pytest.raises(exc, match=text):
        call(x)
    check(jnp.sum(x, axis=0), np.array([3, 5, 7], F32))   # the engine keeps working


WHERE_CALLS = [
    lambda m, x, w: m.sum(x, where=w), lambda m, x, w: m.sum(x, axis=0, where=w),
    lambda m, x, w: m.prod(x, axis=1, where=w, keepdims=True),
    lambda m, x, w: m.max(x, where=w, initial=0.5), lambda m, x, w: m.min(x, 1, where=w, initial=9),
    lambda m, x, w: m.mean(x, where=w), lambda m, x, w: m.mean(x, axis=0, where=w[0]),
    lambda m, x, w: m.var(x, axis=1, where=w), lambda m, x, w: m.std(x, axis=1, ddof=1, where=w),
    lambda m, x, w: m.any(x < 0, where=w), lambda m, x, w: m.all(x > 0, axis=0, where=w),
]


def test_where_masks_every_reduction_as_jax(backend):
    import jax
    import jax.numpy as jjnp
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], F32)
    w = x > 0
    w[1, 1] = False     # a row with one element left: var(ddof=1) of it is NaN
    for call in WHERE_CALLS:
        ours, theirs = call(jnp, jnp.asarray(x), jnp.asarray(w)), call(jjnp, x, w)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        check(ours, np.asarray(theirs))

    def masked_mean(m):
        return lambda a: m.mean(a * a, where=a > 0)
    check(jaxlab.jit(jaxlab.grad(masked_mean(jnp)))(x), np.asarray(jax.grad(masked_mean(jjnp))(x)))
