"""Float division by divisors past 2^126. NVIDIA GPUs divide as a * rcp(b), and rcp(b)
of such a b is subnormal, flushed to 0: the WGSL must scale those divisions (a codegen
check, since lavapipe divides exactly either way), and every device must give NumPy's
quotients for them (values checked on each device); a subnormal quotient may come back
as 0 where the device flushes subnormals (WGSL allows it). Remainders, floor division
and complex division by such divisors (and by infinities) give JAX's values."""
import jax
import numpy as np
import pytest

import jaxlab.numpy as jnp
from jaxlab.backends.webgpu.codegen import generate
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.tune import Limits, tune
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel
from tests.conftest import may_flush_subnormals

F32 = DType.float32
LANG, LIMITS = Lang(), Limits()

# numerators and divisors around 2^126 (8.5e37), up to float32's largest; 1 / 3e38 is
# subnormal, the last divisor infinite
NUMERATORS = np.array([1e38, 3e38, -2e38, 1e30, 3e38, 7.0, 1e38, 1.0, -3e38], np.float32)
DIVISORS = np.array([3e38, 1e38, 3e38, 3e38, -1.5e38, 2.0, 8.5e37, 3e38, np.inf], np.float32)
FINITE = slice(0, 8)


def assert_quotients(backend, got, want, rtol=1e-6):
    """allclose, except that a subnormal wanted may be a zero where the device flushes."""
    got, want = np.asarray(got), np.asarray(want)
    if may_flush_subnormals(backend):
        flushed = (got == 0) & (np.abs(want) < np.finfo(np.float32).tiny)
        got = np.where(flushed, want, got)
    np.testing.assert_allclose(got, want, rtol=rtol)


def main_source(build, inputs=1):
    gidx = AluExp.special(GIDX, 8)
    loads = [AluExp.load(i, gidx, F32) for i in range(inputs)]
    kernel = Kernel((8,), ((F32, 8),) * inputs, build(*loads))
    source = generate(kernel, tune(kernel, LANG, LIMITS, None), LANG, LIMITS).source
    return source[source.index("fn main"):]


@pytest.mark.parametrize("op", [AluOp.Div, AluOp.Idiv])
def test_a_division_by_a_computed_value_is_scaled(op):
    main = main_source(lambda a, b: a.binary(op, b), inputs=2)
    assert "div_f32(in0[gidx], in1[gidx])" in main


def test_a_division_by_a_bounded_constant_is_plain():
    assert "div_f32" not in main_source(lambda a: a / 3.0)
    assert "div_f32(in0[gidx]" in main_source(lambda a: a / 3e38)


def test_a_remainder_by_a_power_of_two_is_plain():
    # a - b * trunc(a / b) is exact then (x % 2 in pow and round); other divisors loop
    assert "%" in main_source(lambda a: a.binary(AluOp.Mod, 2.0))
    assert "fmod_f32(in0[gidx]" in main_source(lambda a: a.binary(AluOp.Mod, 3.0))
    assert "fmod_f32(in0[gidx]" in main_source(lambda a: a.binary(AluOp.Mod, 2.0 ** 127))


def test_math_functions_divide_unguarded():
    # their divisions are bounded by the range reduction (W1 is tanh, exp and sin)
    math = (AluOp.Tanh, AluOp.Exp, AluOp.Sin, AluOp.Atan, AluOp.Erf, AluOp.Erfc, AluOp.Log)
    def chain(a):
        for op in math:
            a = a.unary(op)
        return a
    main = main_source(chain)
    assert " / " in main and "div_f32" not in main


def test_quotients_past_2_to_the_126(backend):
    a, b = jnp.asarray(NUMERATORS), jnp.asarray(DIVISORS)
    assert_quotients(backend, jnp.divide(a, b), NUMERATORS / DIVISORS)
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(a[FINITE], b[FINITE])),
                                  np.asarray(jax.numpy.floor_divide(NUMERATORS[FINITE],
                                                                    DIVISORS[FINITE])))
    assert_quotients(backend, jnp.arctan2(a, b), np.arctan2(NUMERATORS, DIVISORS))
    assert_quotients(backend, jnp.reciprocal(b), np.reciprocal(DIVISORS))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod"])
def test_remainders_by_huge_and_infinite_divisors_as_jax(backend, name):
    x = np.array([-3e38, 3e38, -7.0, 1e30, 5.0, -1e-30, 2e38, -2e38], np.float32)
    y = np.array([np.inf, -np.inf, 3e38, -3e38, -np.inf, 3e38, 1.5e38, 1.5e38], np.float32)
    ours = np.asarray(getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y)))
    np.testing.assert_allclose(ours, np.asarray(getattr(jax.numpy, name)(x, y)), rtol=1e-6)


def test_complex_signs_and_logs_past_2_to_the_126(backend):
    z = (NUMERATORS[:6] + 1j * DIVISORS[:6]).astype(np.complex64)
    want_sign = z / np.abs(z.astype(np.complex128))
    np.testing.assert_allclose(np.asarray(jnp.sign(jnp.asarray(z))), want_sign, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.log10(jnp.asarray(z))),
                               np.log10(z.astype(np.complex128)), rtol=1e-6)


def test_complex_division_with_huge_parts(backend):
    """Finite wherever the quotient is (JAX's Smith's algorithm overflows to NaN or 0
    at parts near 3e38: docs/JAX-DIFFERENCES.md); NumPy's complex128, rounded."""
    z = (NUMERATORS[:7] + 1j * DIVISORS[:7]).astype(np.complex64)
    w = (DIVISORS[:7] - 1j * NUMERATORS[:7]).astype(np.complex64)
    for num, den in ((z, z), (z, w), (w[::-1], z), (z * np.float32(1e-30), w)):
        want = (num.astype(np.complex128) / den.astype(np.complex128)).astype(np.complex64)
        ours = np.asarray(jnp.asarray(num) / jnp.asarray(den))
        np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-30)


def test_complex_division_special_values_as_jax(backend):
    parts = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]
    special = np.array([complex(a, b) for a in parts for b in parts], np.complex64)
    num, den = np.repeat(special, special.size), np.tile(special, special.size)
    ours = np.asarray(jnp.asarray(num) / jnp.asarray(den))
    theirs = np.asarray(jax.numpy.asarray(num) / jax.numpy.asarray(den))
    for part in ("real", "imag"):
        a, b = getattr(ours, part), getattr(theirs, part)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(b)], b[~np.isnan(b)], rtol=1e-6, atol=1e-7)


def test_float_remainders_are_exact_as_jax(backend):
    """fmod is exact (C's, as JAX's), for quotients of any size: WGSL's %, a - b *
    trunc(a / b), is off by up to |b| where the quotient rounds."""
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((2, 256)) * 2.0 ** rng.integers(-60, 60, (2, 256))) \
        .astype(np.float32)
    for name in ("fmod", "remainder"):
        ours = getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b))
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(getattr(jax.numpy, name)(a, b)))
