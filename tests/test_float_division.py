"""Float division by divisors past 2^126. NVIDIA GPUs divide as a * rcp(b), and rcp(b)
of such a b is subnormal, flushed to 0: the WGSL must scale those divisions (a codegen
check, since lavapipe divides exactly either way), and every device must give NumPy's
quotients for them (values checked on each device)."""
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

F32 = DType.float32
LANG, LIMITS = Lang(), Limits()

# numerators and divisors around 2^126 (8.5e37), up to float32's largest; no quotient
# is subnormal (NVIDIA flushes those to 0 in any case)
NUMERATORS = np.array([1e38, 3e38, -2e38, 1e30, 3e38, 7.0, 1e38, -3e38], np.float32)
DIVISORS = np.array([3e38, 1e38, 3e38, 3e38, -1.5e38, 2.0, 8.5e37, np.inf], np.float32)


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
    np.testing.assert_allclose(np.asarray(jnp.divide(a, b)), NUMERATORS / DIVISORS, rtol=1e-6)
    finite = slice(0, 7)   # (x // inf is another matter)
    np.testing.assert_array_equal(np.asarray(jnp.floor_divide(a[finite], b[finite])),
                                  np.asarray(jax.numpy.floor_divide(NUMERATORS[finite],
                                                                    DIVISORS[finite])))
    np.testing.assert_allclose(np.asarray(jnp.arctan2(a, b)), np.arctan2(NUMERATORS, DIVISORS),
                               rtol=1e-6)


def test_complex_signs_and_logs_past_2_to_the_126(backend):
    z = (NUMERATORS[:6] + 1j * DIVISORS[:6]).astype(np.complex64)
    want_sign = z / np.abs(z.astype(np.complex128))
    np.testing.assert_allclose(np.asarray(jnp.sign(jnp.asarray(z))), want_sign, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.log10(jnp.asarray(z))),
                               np.log10(z.astype(np.complex128)), rtol=1e-6)
