"""jaxlab.numpy's composed elementwise functions (fmax ... bitwise_count, frexp, ldexp,
modf, spacing), differential against JAX (NumPy where JAX flushes subnormals)."""
from __future__ import annotations

import jax
import jax.numpy as jnp_ref
import ml_dtypes
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

F = np.array([-2.5, -1, -0.5, 0, 1e-3, 0.5, 1.5, 2.5, 3.7, np.nan, np.inf, -np.inf], np.float32)
G = np.array([1, np.nan, -1, 0, 2, 0.5, np.nan, 3, -4, 1, 2, 0], np.float32)
I = np.array([12, -18, 0, 7, -1, 2**31 - 1, -2**31, 5, 6, 9, 100, 0], np.int32)
K = np.array([8, 12, 0, 3, 5, 6, 4, 0, -9, 6, 75, 13], np.int32)
BESSEL = np.array([0, 1, -5, 14.9, 15.1, 29.9, 30.1, 50, 87], np.float32)
H = np.array([1, 3, 0.1, 7, 0, 6e-8, -1e-6, 65000, np.inf, np.nan], np.float16)

CASES = [("fmax", (F, G)), ("fmin", (G, F)), ("fmax", (I, K)), ("rint", (F,)),
         ("rint", (I,)), ("sinc", (F,)), ("heaviside", (F, G)),
         ("float_power", (np.abs(F), G)), ("logaddexp2", (F, G)), ("isposinf", (F,)),
         ("isneginf", (F,)), ("isposinf", (I,)), ("i0", (F,)), ("i0", (BESSEL,)),
         ("fabs", (F,)), ("fabs", (I,)), ("gcd", (I, K)), ("lcm", (I[:5], K[:5])),
         ("bitwise_count", (I,)), ("bitwise_count", (K.astype(np.uint8),)),
         ("frexp", (F,)), ("frexp", (H,)), ("ldexp", (F, K)),
         ("ldexp", (np.array([3, 1e-30, 1e30, 1.5], np.float32),
                    np.array([200, -200, -130, -160], np.int32))),
         ("ldexp", (H, np.int32(-3))), ("modf", (F,)), ("spacing", (F,)),
         ("spacing", (np.abs(H),))]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(backend, name, args):
    expected, actual = getattr(jnp_ref, name)(*args), getattr(jnp, name)(*args)
    pairs = zip(expected, actual) if isinstance(expected, tuple) else [(expected, actual)]
    for e, a in pairs:
        assert a.dtype == e.dtype
        assert_close(np.asarray(a, np.float64), np.asarray(e, np.float64), rtol=2e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_subnormals_as_numpy(backend, dtype):
    """JAX's XLA flushes subnormals; jaxlab gives NumPy's frexp, ldexp and spacing."""
    x = np.array([1e-40, -3e-39, 6e-8, 1.0, -7.0], np.float32).astype(dtype)
    wide = x.astype(np.float32)
    mantissa, exponent = jnp.frexp(x)
    assert_close(np.asarray(mantissa, np.float32), np.frexp(wide)[0])
    assert_close(np.asarray(exponent), np.frexp(wide)[1].astype(np.int32))
    assert_close(np.asarray(jnp.ldexp(x, np.int32(-20)), np.float32),
                 np.ldexp(wide, -20).astype(dtype).astype(np.float32))
    bits = {np.dtype(np.float32): np.int32}.get(np.dtype(dtype), np.int16)
    magnitude = np.abs(x)
    gap = (magnitude.view(bits) + 1).view(dtype).astype(np.float32) - np.abs(wide)
    assert_close(np.asarray(jnp.spacing(x), np.float32), np.copysign(gap, wide))


def test_transformations(backend):
    x = np.array([0.0, 0.3, -2.0, 20.0], np.float32)
    assert_close(jaxlab.grad(lambda v: jnp.sum(jnp.sinc(v) + jnp.i0(v)))(x),
                 jax.grad(lambda v: jnp_ref.sum(jnp_ref.sinc(v) + jnp_ref.i0(v)))(x),
                 rtol=1e-5)
    assert_close(jaxlab.grad(jaxlab.grad(jnp.sinc))(0.0), jax.grad(jax.grad(jnp_ref.sinc))(0.0))
    assert_close(jaxlab.jit(jnp.gcd)(I, K), jnp_ref.gcd(I, K))
    assert_close(jaxlab.vmap(jnp.lcm)(I[:4], K[:4]), jax.vmap(jnp_ref.lcm)(I[:4], K[:4]))


@pytest.mark.parametrize("call,error", [
    (lambda: jnp.gcd(1.0, 2.0), ValueError),
    (lambda: jnp.lcm(np.float32(1), 2), ValueError),
    (lambda: jnp.ldexp(1.0, 2.0), ValueError),
    (lambda: jnp.bitwise_count(1.0), TypeError),
    (lambda: jnp.fabs(1j), TypeError),
    (lambda: jnp.isposinf(np.complex64(1)), ValueError),
    (lambda: jnp.fmax([1.0], 2.0), TypeError),
    (lambda: jnp.frexp(np.complex64(1)), TypeError),
], ids=["gcd", "lcm", "ldexp", "bitwise_count", "fabs", "isposinf", "list", "frexp"])
def test_errors(call, error):
    with pytest.raises(error):
        call()
