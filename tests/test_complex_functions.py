"""Complex elementwise functions on every device: values against NumPy and JAX, the
special values at infinities, NaNs and signed zeros, and holomorphic grads against JAX."""
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX is the oracle for values and grads")
import jax.numpy as jjnp  # noqa: E402

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(7)
FUNCTIONS = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
             "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
             "arctanh", "sign"]


def _sample():
    """Normal points, points near 0 and the unit circle, and parts up to 3e38 (|z|^2
    overflows float32 past 1.8e19: no function may overflow before its value does)."""
    normal = RNG.standard_normal(12) + 1j * RNG.standard_normal(12)
    scales = np.array([1e-30, 1e-4, 1e4, 1e20, 1e38, 3e38])
    angles = np.exp(1j * RNG.uniform(-np.pi, np.pi, scales.size))
    unit = np.exp(1j * np.array([0.1, 1.5, 3.0])) * (1 + 1e-3)
    huge = np.array([3e38 + 3e38j, -3e38 + 1e30j, 1e20 - 1e20j])
    return np.concatenate([normal, scales * angles, unit, huge]).astype(np.complex64)


Z = _sample()


def _numpy(name, z):
    """NumPy in complex128, rounded to complex64 (what complex64 can hold)."""
    with np.errstate(all="ignore"):
        return getattr(np, name)(z.astype(np.complex128)).astype(np.complex64)


PARTS = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan]
SPECIAL = np.array([complex(a, b) for a in PARTS for b in PARTS], np.complex64)
# NumPy's complex expm1 is exp(z) - 1; the standard's values where that differs
# (keyed by repr: NaN keys would never match)
EXPM1_STANDARD = {repr(complex(*z)): complex(*v) for z, v in [
    ((np.inf, 0.0), (np.inf, 0.0)), ((np.inf, np.inf), (np.inf, np.nan)),
    ((np.inf, np.nan), (np.inf, np.nan)), ((-np.inf, np.inf), (-1.0, 0.0)),
    ((-np.inf, np.nan), (-1.0, 0.0)), ((np.nan, 0.0), (np.nan, 0.0))]}


def _kinds(x):
    """Per part: NaN, an infinity, zero or finite -- and the magnitude (signs apart:
    the standard leaves many of them unspecified where NumPy picks C99's)."""
    parts = np.stack([x.real, x.imag])
    kind = np.select([np.isnan(parts), np.isinf(parts), parts == 0], [0, 1, 2], 3)
    return kind, np.where(kind == 3, np.abs(parts), 0)


def _standard(name):
    want = _numpy(name, SPECIAL)
    if name == "expm1":
        for i, z in enumerate(SPECIAL):
            key = repr(complex(z.real, abs(z.imag)))
            if key in EXPM1_STANDARD:
                v = EXPM1_STANDARD[key]
                want[i] = complex(v.real, np.copysign(v.imag, z.imag))
    return want


NORMAL = (RNG.standard_normal(12) + 1j * RNG.standard_normal(12)).astype(np.complex64)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values(backend, name):
    """One evaluation per function (each compiles a kernel per device): finite values
    against NumPy and JAX, the special values' kinds against the standard's, and every
    sign of a zero or an infinity as the cpu device gives it (the Array API suite checks
    those against the standard's tables)."""
    z = np.concatenate([Z, NORMAL, SPECIAL])
    ours = np.asarray(getattr(jnp, name)(jnp.asarray(z)))
    assert ours.dtype == np.complex64
    sample, normal, special = np.split(ours, [Z.size, Z.size + NORMAL.size])

    want = _numpy(name, Z)
    finite = np.isfinite(want)   # beyond float32 (exp of 1e38) NumPy's is inf too
    np.testing.assert_allclose(sample[finite], want[finite], rtol=2e-6, atol=1e-7)
    assert np.all(~np.isfinite(sample[~finite]))
    np.testing.assert_allclose(normal, np.asarray(getattr(jjnp, name)(NORMAL)), rtol=1e-5,
                               atol=1e-6)

    if name != "sign":   # NumPy's sign of an infinite z is not z / |z|
        (kind, size), (want_kind, want_size) = _kinds(special), _kinds(_standard(name))
        bad = np.flatnonzero(np.any(kind != want_kind, axis=0))
        assert bad.size == 0, f"at {SPECIAL[bad]}: {special[bad]}, want {_standard(name)[bad]}"
        np.testing.assert_allclose(size, want_size, rtol=1e-6)

    with jaxlab.default_device("cpu"):
        cpu = np.asarray(getattr(jnp, name)(jnp.asarray(SPECIAL)))
    for part in ("real", "imag"):
        a, b = getattr(special, part), getattr(cpu, part)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        signed = ~np.isnan(b)
        np.testing.assert_array_equal(np.signbit(a[signed]), np.signbit(b[signed]))


def test_sign_of_zero_is_positive_zero(backend):
    out = np.asarray(jnp.sign(jnp.asarray(np.array([0j, complex(-0.0, -0.0)], np.complex64))))
    assert not np.any(np.signbit(out.real)) and not np.any(np.signbit(out.imag))
    assert np.all(out == 0)


# grads of holomorphic functions: f'(z), as JAX's rules (acosh at Re z > 0: JAX's
# rsqrt(z^2 - 1) has the other sign for Re z < 0, see docs/JAX-DIFFERENCES.md)
@pytest.mark.parametrize("name", ["tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                                  "arcsinh", "arccosh", "arctanh", "expm1", "log1p"])
def test_grad_holomorphic_as_jax(backend, name):
    z = (0.3 + np.abs(RNG.standard_normal(4)) + 1j * RNG.standard_normal(4)) \
        .astype(np.complex64) * 0.6
    ours = jaxlab.grad(lambda x: jnp.sum(getattr(jnp, name)(x)), holomorphic=True)(
        jnp.asarray(z))
    theirs = jax.grad(lambda x: jjnp.sum(getattr(jjnp, name)(x)), holomorphic=True)(z)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-5)


def test_acosh_grad_is_the_principal_branch_derivative(backend):
    z = np.array([-2 + 0.1j, -0.5 - 1j], np.complex64)
    ours = jaxlab.grad(lambda x: jnp.sum(jnp.arccosh(x)), holomorphic=True)(jnp.asarray(z))
    z128 = z.astype(np.complex128)
    want = 1 / (np.sqrt(z128 - 1) * np.sqrt(z128 + 1))
    np.testing.assert_allclose(np.asarray(ours), want.astype(np.complex64), rtol=1e-5)


def test_jit_vmap_and_jaxpr(backend):
    z = jnp.asarray(Z[:6])
    f = jnp.arccosh
    np.testing.assert_allclose(np.asarray(jaxlab.jit(f)(z)), np.asarray(f(z)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jaxlab.vmap(f)(z)), np.asarray(f(z)), rtol=1e-6)
    assert "acosh" in str(jaxlab.make_jaxpr(f)(z))
    big = np.array([1 + 100j, 0.3 - 0.2j], np.complex64)   # sin / cos overflow: inf / inf
    np.testing.assert_allclose(np.asarray(jaxlab.lax.tan(jnp.asarray(big))),
                               _numpy("tan", big), rtol=2e-6)


def test_real_operands_unchanged(backend):
    """Real operands keep their real rules and dtypes (cosh of float32 is float32)."""
    x = np.linspace(-2, 2, 7).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("cosh", "tan", "arccosh", "arctanh", "expm1", "log1p"):
            ours = getattr(jnp, name)(jnp.asarray(x))
            assert ours.dtype == np.float32
            np.testing.assert_allclose(np.asarray(ours), getattr(np, name)(x), rtol=1e-5,
                                       atol=1e-6)
