"""complex64 on every device: values against NumPy, promotion and grads against JAX."""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is the oracle for promotion and grads")
import jax.numpy as jjnp  # noqa: E402

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(3)


def _c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


A, B = _c(3, 4), _c(3, 4)
M, N = _c(3, 5), _c(5, 2)


def close(actual, expected, rtol=2e-5, atol=2e-6):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# (name, f written against a numpy-like module) for one or two complex arrays
UNARY = {
    "neg": lambda m, x: -x, "exp": lambda m, x: m.exp(x), "log": lambda m, x: m.log(x),
    "sqrt": lambda m, x: m.sqrt(x), "sin": lambda m, x: m.sin(x), "cos": lambda m, x: m.cos(x),
    "abs": lambda m, x: m.abs(x), "real": lambda m, x: m.real(x), "imag": lambda m, x: m.imag(x),
    "conj": lambda m, x: m.conj(x), "angle": lambda m, x: m.angle(x),
    "square": lambda m, x: x ** 2, "cube_inv": lambda m, x: x ** -3,
    "sign": lambda m, x: m.sign(x), "isfinite": lambda m, x: m.isfinite(x),
    "isnan": lambda m, x: m.isnan(x), "sum": lambda m, x: m.sum(x, axis=1),
    "mean": lambda m, x: m.mean(x), "prod": lambda m, x: m.prod(x, axis=0),
    "prod_all": lambda m, x: m.prod(x[:, :3]), "cumsum": lambda m, x: m.cumsum(x, axis=1),
    "cumprod": lambda m, x: m.cumprod(x, axis=1),
    "transpose_slice": lambda m, x: x.T[1:, ::2], "methods": lambda m, x: x.real + x.imag,
    "concat_pad": lambda m, x: m.pad(m.concatenate([x, x[:1]]), 1),
    "take": lambda m, x: m.take(x, m.asarray([2, 0, 0]), axis=1),
    "astype_bool": lambda m, x: x.astype(bool),
}
BINARY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
    "pow": lambda x, y: x ** y, "where": lambda x, y: jnp_or_np(x).where(x.real > 0, x, y),
    "vecdot": lambda x, y: jnp_or_np(x).vecdot(x, y, axis=0),   # conjugates x
}


def jnp_or_np(x):
    return jnp if isinstance(x, jaxlab.Array) else np


@pytest.mark.parametrize("name", UNARY)
def test_unary_against_numpy(backend, name):
    f = UNARY[name]
    close(f(jnp, jnp.asarray(A)), f(np, A))


@pytest.mark.parametrize("name", BINARY)
def test_binary_against_numpy(backend, name):
    f = BINARY[name]
    close(f(jnp.asarray(A), jnp.asarray(B)), f(A, B), rtol=1e-4)


def test_matmul_dot_einsum(backend):
    m, n = jnp.asarray(M), jnp.asarray(N)
    close(m @ n, M @ N, rtol=1e-5, atol=1e-5)
    close(jnp.dot(m, n), M @ N, rtol=1e-5, atol=1e-5)
    close(jnp.einsum("ij,jk->ki", m, n), np.einsum("ij,jk->ki", M, N), rtol=1e-5, atol=1e-5)
    real = RNG.standard_normal((5, 2)).astype(np.float32)   # promoted to complex
    close(m @ jnp.asarray(real), M @ real.astype(np.complex64), rtol=1e-5, atol=1e-5)


def test_special_values(backend):
    z = np.array([np.inf + 0j, complex(0, np.nan), 0j, -1 + 0j], np.complex64)
    x = jnp.asarray(z)
    close(jnp.isfinite(x), np.isfinite(z))
    close(jnp.isnan(x), np.isnan(z))
    close(jnp.isinf(x), np.isinf(z))
    close(jnp.sqrt(jnp.asarray(np.array([-4 + 0j, -4 - 0j], np.complex64))),
          np.sqrt(np.array([-4 + 0j, -4 - 0j], np.complex64)))


@pytest.mark.parametrize("operands", [
    (np.float32, np.complex64), (np.int32, np.complex64), (np.float16, 1j),
    (np.complex64, 2.0), (np.int32, 1j), (np.bool_, 1j), (np.complex64, 1)])
def test_promotion_as_jax(operands):
    def make(m, t):
        return t if not isinstance(t, type) else m.ones(2, t)
    ours = make(jnp, operands[0]) + make(jnp, operands[1])
    theirs = make(jjnp, operands[0]) + make(jjnp, operands[1])
    assert ours.dtype == theirs.dtype
    assert ours.weak_type == theirs.weak_type


def test_creation_and_conversion(backend):
    assert jnp.asarray(1 + 2j).dtype == np.complex64
    assert jnp.array([1, 2j]).dtype == np.complex64
    assert jnp.asarray(np.ones(2, np.complex128)).dtype == np.complex64
    close(jnp.zeros((2,), jnp.complex64), np.zeros(2, np.complex64))
    close(jnp.asarray(np.arange(3.0)).astype(jnp.complex64), np.arange(3.0).astype(np.complex64))
    assert jnp.complex64(1.5).dtype == np.complex64
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        close(jnp.asarray(A).astype(jnp.float32), A.real)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(jnp.asarray(A).astype(bool), A.astype(bool))
    assert "1.+2.j" in repr(jnp.asarray(np.array([1 + 2j], np.complex64)))
    assert jnp.iscomplexobj(jnp.asarray(A)) and not jnp.iscomplexobj(jnp.ones(2))


def test_refused_ops_name_the_dtype(backend):
    with pytest.raises(TypeError, match="complex64"):
        jnp.floor(jnp.asarray(A))
    with pytest.raises(TypeError, match="complex64"):
        jnp.sort(jnp.asarray(A))


def test_jit_and_vmap(backend):
    f = jaxlab.jit(lambda x, y: jnp.sum(x * jnp.conj(y), axis=0) + 1j)
    close(f(jnp.asarray(A), jnp.asarray(B)), np.sum(A * np.conj(B), axis=0) + 1j, rtol=1e-5)
    close(f(jnp.asarray(B), jnp.asarray(A)), np.sum(B * np.conj(A), axis=0) + 1j, rtol=1e-5)
    g = jaxlab.vmap(lambda x: jnp.real(x) * x)
    close(g(jnp.asarray(A)), A.real * A)


# grads against jax.grad: real output of complex input (JAX's convention), holomorphic
GRADS = {
    "abs2": lambda m, z: m.sum(m.abs(z) ** 2),
    "real_exp": lambda m, z: m.sum(m.real(m.exp(z) * m.conj(z))),
    "imag_matmul": lambda m, z: m.sum(m.imag(z @ m.transpose(z))),
    "abs_log": lambda m, z: m.sum(m.abs(m.log(z)) + m.angle(z)),
    "sqrt_div": lambda m, z: m.sum(m.real(m.sqrt(z) / (z + 2.0))),
    "cumprod": lambda m, z: m.sum(m.imag(m.cumprod(z, axis=1))),
}


@pytest.mark.parametrize("name", GRADS)
def test_grad_of_real_output_as_jax(backend, name):
    z = _c(3, 3)
    ours = jaxlab.grad(lambda x: GRADS[name](jnp, x))(jnp.asarray(z))
    theirs = jax.grad(lambda x: GRADS[name](jjnp, x))(z)
    close(ours, np.asarray(theirs), rtol=1e-4, atol=1e-5)


def test_grad_holomorphic_as_jax(backend):
    z = _c(4)
    def f(m, x):
        return m.sum(m.sin(x) * x ** 2 + m.exp(x))
    ours = jaxlab.grad(lambda x: f(jnp, x), holomorphic=True)(jnp.asarray(z))
    theirs = jax.grad(lambda x: f(jjnp, x), holomorphic=True)(z)
    close(ours, np.asarray(theirs), rtol=1e-4, atol=1e-5)


def test_grad_refusals_as_jax():
    with pytest.raises(TypeError, match="holomorphic=True"):
        jaxlab.grad(lambda x: jnp.sum(x))(jnp.asarray(A))
    with pytest.raises(TypeError, match="requires inputs with complex dtype"):
        jaxlab.grad(lambda x: jnp.sum(x), holomorphic=True)(jnp.ones(3))


def test_real_to_complex_grad_as_jax(backend):
    x = RNG.standard_normal(4).astype(np.float32)
    def f(m, v):
        return m.sum(m.abs(m.exp(1j * v) * (v + 2j)) ** 2)
    close(jaxlab.grad(lambda v: f(jnp, v))(jnp.asarray(x)),
          np.asarray(jax.grad(lambda v: f(jjnp, v))(x)), rtol=1e-4, atol=1e-5)


def test_loops_norms_and_creation(backend):
    z = jnp.asarray(A[0])
    close(jnp.linalg.norm(z), np.linalg.norm(A[0]).astype(np.float32), rtol=1e-5)
    close(jnp.vdot(z, jnp.asarray(B[0])), np.vdot(A[0], B[0]), rtol=1e-5)
    close(jnp.full(2, 1 + 1j), np.full(2, 1 + 1j, np.complex64))
    loop = lambda v: jaxlab.lax.fori_loop(0, 3, lambda i, c: c * 1j + v, v)  # noqa: E731
    expected = A[0]
    for _ in range(3):
        expected = expected * 1j + A[0]
    close(loop(z), expected, rtol=1e-5)
    close(jaxlab.jit(loop)(z), expected, rtol=1e-5)
    ys = jaxlab.lax.scan(lambda c, x: (c + x, c * x), z[0], z)[1]
    carry, want = A[0][0], []
    for x in A[0]:
        want.append(carry * x)
        carry = carry + x
    close(ys, np.array(want, np.complex64), rtol=1e-5)
