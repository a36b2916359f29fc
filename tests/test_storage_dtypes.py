"""The 8/16-bit integers, bfloat16 and (with x64) the 64-bit types, computed on every
device that has them: values and result dtypes as JAX's."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import computes

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
    for target in ("float32", "int32", "uint8", "int16", "bool", "float16"):
        _same(jnp.asarray(np.asarray(narrow)).astype(target), narrow.astype(target))


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


@pytest.mark.parametrize("name", WIDE)
def test_64_bit_types_with_x64(backend, x64, name):
    if not computes(backend, name):   # a clear refusal where a device lacks the type
        with pytest.raises(TypeError, match=f"{name} is not supported on the {backend}"):
            np.asarray(_pair(jnp, name)[0] + 1)
        return
    for op, f in ELEMENTWISE.items():
        _same(f(jnp, *_pair(jnp, name)), f(jjnp, *_pair(jjnp, name)))
    for op, f in REDUCTIONS.items():
        _same(f(jnp, _pair(jnp, name)[0]), f(jjnp, _pair(jjnp, name)[0]))
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
