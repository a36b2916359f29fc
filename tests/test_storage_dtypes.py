"""The 8/16-bit integers, bfloat16 and (with x64) the 64-bit types, computed on every
device that has them: values and result dtypes as JAX's."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp

NARROW = ["int8", "int16", "uint8", "uint16", "bfloat16"]
WIDE = ["int64", "uint64", "float64"]

# operands that wrap, saturate and round: 100 * 3 leaves int8, 250 leaves int8 too
A = [1, 2, 3, 100, 7, 0, 120, 5]
B = [3, 1, 2, 2, 250, 1, 9, 4]

ELEMENTWISE = {
    "add": lambda m, x, y: x + y,
    "sub": lambda m, x, y: x - y,
    "mul": lambda m, x, y: x * y,
    "neg": lambda m, x, y: -x,
    "weak_scalar": lambda m, x, y: x * 3 - 1,
    "divide": lambda m, x, y: x // y if m.issubdtype(x.dtype, m.integer) else x / y,
    "max": lambda m, x, y: m.maximum(x, y),
    "compare": lambda m, x, y: m.where(x < y, x, y),
    "promote_f32": lambda m, x, y: x + m.ones(8, m.float32),
    "promote_i32": lambda m, x, y: x + m.ones(8, m.int32),
}
REDUCTIONS = {
    "sum": lambda m, x: m.sum(x),
    "prod": lambda m, x: m.prod(x[:3]),
    "max": lambda m, x: m.max(x),
    "argmin": lambda m, x: m.argmin(x),
    "mean": lambda m, x: m.mean(x),
    "cumsum": lambda m, x: m.cumsum(x),
    "matmul": lambda m, x: x.reshape(2, 4) @ x.reshape(4, 2),
    "argsort": lambda m, x: m.argsort(x[::-1]),
    "sort": lambda m, x: m.sort(x[::-1]),
}


def _pair(m, name):
    dt = m.dtype(getattr(jjnp, name))
    return m.asarray(np.array(A).astype(dt)), m.asarray(np.array(B).astype(dt))


def _same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64),
                               np.asarray(want).astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("name", NARROW)
def test_elementwise_matches_jax(backend, name):
    for op, f in ELEMENTWISE.items():
        got, want = f(jnp, *_pair(jnp, name)), f(jjnp, *_pair(jjnp, name))
        _same(got, want)


@pytest.mark.parametrize("name", NARROW)
def test_reductions_sorts_and_matmul_match_jax(backend, name):
    for op, f in REDUCTIONS.items():
        _same(f(jnp, _pair(jnp, name)[0]), f(jjnp, _pair(jjnp, name)[0]))


# values that saturate, wrap, round to even, and the specials
FLOATS = np.array([300.0, -300.0, np.nan, np.inf, -np.inf, 127.7, -128.9, 1.00390625,
                   1.01171875, -0.0, 3e38, 1e-40], np.float32)


@pytest.mark.parametrize("name", NARROW)
def test_casts_match_jax(backend, name):
    dt = jjnp.dtype(getattr(jjnp, name))
    _same(jnp.asarray(FLOATS).astype(dt), jjnp.asarray(FLOATS).astype(dt))
    ints = np.array([300, -1, 70000, -70000, 255, 128], np.int32)
    _same(jnp.asarray(ints).astype(dt), jjnp.asarray(ints).astype(dt))
    narrow = jjnp.asarray(FLOATS[np.isfinite(FLOATS)]).astype(dt)
    for target in ("float32", "int32", "uint8", "int16", "float16"):
        _same(jnp.asarray(np.asarray(narrow)).astype(target), narrow.astype(target))
    # bool against NumPy (ml_dtypes): the bfloat16 of 1e-40 is subnormal, which XLA's CPU
    # may flush in the test (JAX 0.10.2 says True, 0.11.2 False; NumPy True)
    _same(jnp.asarray(np.asarray(narrow)).astype(bool), np.asarray(narrow).astype(bool))


def test_bitcasts_between_16_bit_types(backend):
    bits = np.array([0x3F80, 0xBF80, 0x7FC0, 0x0001, 0xFFFF], np.uint16)
    for a, b in (("uint16", "bfloat16"), ("uint16", "int16"), ("uint8", "int8")):
        data = bits.astype(a)
        got = jaxlab.lax.bitcast_convert_type(jnp.asarray(data), jjnp.dtype(getattr(jjnp, b)))
        want = jax.lax.bitcast_convert_type(jjnp.asarray(data), getattr(jjnp, b))
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8 if a == "uint8" else
                                                           np.uint16),
                                      np.asarray(want).view(np.uint8 if a == "uint8" else
                                                            np.uint16))
        back = jaxlab.lax.bitcast_convert_type(got, data.dtype)
        np.testing.assert_array_equal(np.asarray(back), data)


def test_jit_and_grad_in_bfloat16(backend):
    f = lambda m: lambda x: (m.sin(x) * x).sum()
    x = np.linspace(-2, 2, 8).astype(jjnp.bfloat16)
    _same(jaxlab.jit(f(jnp))(jnp.asarray(x)), jax.jit(f(jjnp))(x))
    _same(jaxlab.grad(f(jnp))(jnp.asarray(x)), jax.grad(f(jjnp))(x))


def _computes(backend, name):
    return jaxlab.devices(backend)[0].backend.dtypes >= {jaxlab.ir.dtypes.DType(name)}


def _same_or_refused(backend, f):
    """f(jnp) as f(jax.numpy), or, where JAX's result has a dtype the device does not
    compute (an int64 mean is float64), the device's TypeError naming it."""
    want = f(jjnp)
    if not _computes(backend, want.dtype.name):
        with pytest.raises(TypeError, match=f"{want.dtype.name} is not supported on the "
                                            f"{backend}"):
            np.asarray(f(jnp))
        return
    _same(f(jnp), want)


@pytest.mark.parametrize("name", WIDE)
def test_64_bit_types_with_x64(backend, x64, name):
    if not _computes(backend, name):   # float64 on webgpu (test_float64_refused_on_webgpu)
        with pytest.raises(TypeError, match=f"{name} is not supported on the {backend}"):
            np.asarray(_pair(jnp, name)[0] + 1)
        return
    for op, f in ELEMENTWISE.items():
        _same_or_refused(backend, lambda m: f(m, *_pair(m, name)))
    for op, f in REDUCTIONS.items():
        _same_or_refused(backend, lambda m: f(m, _pair(m, name)[0]))
    big = np.array([2 ** 40, -(2 ** 50), 3], np.int64).astype(jjnp.dtype(name))
    _same(jnp.asarray(big) * 3, jjnp.asarray(big) * 3)


def test_x64_defaults_follow_jax(x64):
    with jaxlab.default_device("cpu"):   # the one device that computes 64-bit types
        _x64_defaults()


def _x64_defaults():
    for make in (lambda m: m.zeros(2), lambda m: m.arange(3), lambda m: m.asarray(1.5),
                 lambda m: m.sum(m.ones(3, m.int8)), lambda m: m.mean(m.arange(3)),
                 lambda m: m.argmax(m.ones(3)), lambda m: m.ones(2, m.int32) / 2):
        assert make(jnp).dtype == make(jjnp).dtype


# 64-bit edges: wraparound at 2^63, carries across the 32-bit words, words of all ones
EDGES = [0, 1, -1, 2 ** 63 - 1, -(2 ** 63), 2 ** 32, 2 ** 32 - 1, -(2 ** 32), 2 ** 31,
         12345678901234, -98765432109, 3, -7, 5, 1 << 62, 0xDEADBEEFCAFE]
EDGE_BINARY = {
    "add": lambda m, x, y: x + y,
    "sub": lambda m, x, y: x - y,
    "mul": lambda m, x, y: x * y,
    "floor_divide": lambda m, x, y: x // y,
    "remainder": lambda m, x, y: x % y,
    "lax_div": lambda m, x, y: (jaxlab.lax if m is jnp else jax.lax).div(x, y),
    "lax_rem": lambda m, x, y: (jaxlab.lax if m is jnp else jax.lax).rem(x, y),
    "minimum": lambda m, x, y: m.minimum(x, y),
    "maximum": lambda m, x, y: m.maximum(x, y),
    "compare": lambda m, x, y: m.stack([x < y, x <= y, x == y, x != y, x > y]),
    "bitwise": lambda m, x, y: m.stack([x & y, x | y, x ^ y, ~x]),
    "where": lambda m, x, y: m.where(x > y, x, y),
}
EDGE_UNARY = {
    "neg": lambda m, x: -x,
    "abs": lambda m, x: m.abs(x),
    "sign": lambda m, x: m.sign(x),
    "sum": lambda m, x: m.sum(x),
    "max_min": lambda m, x: m.stack([m.max(x), m.min(x)]),
    "argmax_argmin": lambda m, x: m.stack([m.argmax(x), m.argmin(x)]),
    "prod": lambda m, x: m.prod(x[10:]),
    "cumsum": lambda m, x: m.cumsum(x),
    # rows of the sort hold ties (stable argsort keeps their order) and words in common
    "sort": lambda m, x: m.sort(m.concatenate([x, x[::-1]]).reshape(4, 8)),
    "argsort": lambda m, x: m.argsort(m.concatenate([x, x[::-1] >> 1]).reshape(2, 16)),
    "gather": lambda m, x: x[m.asarray([3, 0, 15, 4, 4])],
    "scatter_add": lambda m, x: x.at[m.asarray([1, 1, 6])].add(x[3]),
    "scatter_set": lambda m, x: x.at[2:5].set(x[0]),
    "matmul": lambda m, x: x.reshape(4, 4) @ (x.reshape(4, 4) >> 40),
    "arange": lambda m, x: x + m.arange(16, dtype=x.dtype) * (2 ** 40),
    "iota_big": lambda m, x: m.arange(2 ** 33, 2 ** 33 + 48, 3, dtype=x.dtype),
    "jit": lambda m, x: (jaxlab.jit if m is jnp else jax.jit)(lambda v: (v * 3 - 1) // 2)(x),
    "bitcast": lambda m, x: (jaxlab.lax if m is jnp else jax.lax).bitcast_convert_type(
        x, m.uint64 if x.dtype == m.int64 else m.int64),
}
CAST_TARGETS = ("float32", "int32", "uint32", "int8", "uint16", "bool", "bfloat16", "float16",
                "int64", "uint64")


def _edges(m, name, shift=0):
    return m.asarray(np.roll(np.array(EDGES, np.int64), shift).astype(name))


def _refused(backend, name):
    """Whether `backend` does not compute `name`, having checked that it says so."""
    if _computes(backend, name):
        return False
    with pytest.raises(TypeError, match=f"{name} is not supported on the {backend}"):
        np.asarray(_edges(jnp, name) + 1)
    return True


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_64_bit_integer_edges_match_jax(backend, x64, name):
    if _refused(backend, name):
        return
    for op, f in EDGE_BINARY.items():
        # every pair of edges meets once; a zero divisor included
        _exact(f(jnp, _edges(jnp, name), _edges(jnp, name, 3)),
               f(jjnp, _edges(jjnp, name), _edges(jjnp, name, 3)), op)
    for op, f in EDGE_UNARY.items():
        _exact(f(jnp, _edges(jnp, name)), f(jjnp, _edges(jjnp, name)), op)
    for target in CAST_TARGETS:
        _exact(_edges(jnp, name).astype(target), _edges(jjnp, name).astype(target), target)


def _exact(got, want, what):
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=what)


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_64_bit_shifts_and_casts_from_floats_match_jax(backend, x64, name):
    if _refused(backend, name):
        return
    amounts = np.array([0, 1, 31, 32, 33, 63, 64, 65, 7, 40], np.int64).astype(name)
    values = np.resize(np.array(EDGES, np.int64), 10).astype(name)
    for shift in ("left_shift", "right_shift"):
        got = getattr(jnp, shift)(jnp.asarray(values), jnp.asarray(amounts))
        _exact(got, getattr(jjnp, shift)(values, amounts), shift)
    floats = np.array([0.5, -0.5, 1.5, -2.75, 3e9, -3e9, 1e19, -1e19, 9.3e18, -9.3e18,
                       np.nan, np.inf, -np.inf, 16777217.0, 2.0 ** 40 + 2 ** 20], np.float32)
    for source in ("float32", "float16", "bfloat16", "int32", "uint32", "int16", "uint8",
                   "bool"):
        with np.errstate(invalid="ignore", over="ignore"):   # NumPy's own casts
            data = floats.astype(source) if source != "bool" else floats > 0
        _exact(jnp.asarray(data).astype(name), jjnp.asarray(data).astype(name), source)


def test_float64_refused_on_webgpu(x64):
    if "webgpu" not in [d.platform for d in jaxlab.devices()]:
        pytest.skip("no webgpu device")
    with jaxlab.default_device("webgpu"):
        with pytest.raises(TypeError, match="float64 is not supported on the webgpu device.*"
                                            "cpu"):
            np.asarray(jnp.ones(3, jnp.float64) + 1)
        x = jnp.arange(3)   # int64 works; its mean would be float64
        with pytest.raises(TypeError, match="float64"):
            np.asarray(jnp.mean(x))
        assert int(jnp.sum(x)) == 3


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_64_bit_sums_past_32_bits_match_jax(backend, x64, name):
    if _refused(backend, name):
        return
    # 3000 values near 3e9 (past 2^31 and 2^32 in the partial sums), in one long reduction
    # and in rows; a product that needs all 64 bits
    data = (np.arange(3000, dtype=np.int64) * 7919 + 3_000_000_000).astype(name)
    for f in (lambda m, x: m.sum(x), lambda m, x: m.sum(x.reshape(30, 100), axis=1),
              lambda m, x: m.max(x.reshape(3, 1000), axis=0),
              lambda m, x: m.sum(x[:64] * x[64:128])):
        _exact(f(jnp, jnp.asarray(data)), f(jjnp, jjnp.asarray(data)), name)


@pytest.mark.parametrize("name", ["int64", "uint64"])
def test_64_bit_random_words_match_jax(backend, x64, name):
    if _refused(backend, name):
        return
    # values of every magnitude: random words shifted right by 0..63 bits, in rows of 16
    # (the edges' shape: JAX compiles each op once)
    rng = np.random.default_rng(64)
    words = rng.integers(-(2 ** 63), 2 ** 63, (2, 4, 16), dtype=np.int64)
    for a, b in zip(*(w >> rng.integers(0, 64, w.shape) for w in words)):
        x, y = a.astype(name), b.astype(name)
        for op, f in EDGE_BINARY.items():
            _exact(f(jnp, jnp.asarray(x), jnp.asarray(y)),
                   f(jjnp, jjnp.asarray(x), jjnp.asarray(y)), op)
        for target in ("float32", "bfloat16", "float16"):   # rounded once, to nearest even
            _exact(jnp.asarray(x).astype(target), jjnp.asarray(x).astype(target), target)
        floats = (a.astype(np.float32) * rng.choice([1.0, 1.5, -0.75], 16)).astype(np.float32)
        _exact(jnp.asarray(floats).astype(name), jjnp.asarray(floats).astype(name), "float32")
