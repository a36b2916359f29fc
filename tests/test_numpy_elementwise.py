"""jaxlab.numpy elementwise functions, differential against NumPy with JAX's dtypes."""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

F32, I32, F16 = np.float32, np.int32, np.float16

# --- inputs -----------------------------------------------------------------------

# domain -> (low, high) of the values drawn; integer inputs take the integers inside
DOMAINS = {
    "real": (-3.0, 3.0), "wide": (-20.0, 20.0), "trig": (-1.4, 1.4), "pos": (0.1, 10.0),
    "unit": (-0.99, 0.99), "ge1": (1.0, 10.0), "gt-1": (-0.9, 10.0), "nonzero": (0.5, 4.0),
    "exponent": (0.0, 5.0), "shift": (0.0, 31.0), "bits": (-1000.0, 1000.0),
}


def sample(domain: str, shape: tuple, dtype, rng) -> np.ndarray:
    lo, hi = DOMAINS[domain]
    if np.dtype(dtype).kind == "f":
        out = rng.uniform(lo, hi, shape)
    else:
        out = rng.integers(math.ceil(lo), math.floor(hi) + 1, shape)
    if domain == "nonzero":   # both signs, never zero
        out = out * rng.choice([-1, 1], shape)
    return out.astype(dtype)



def _flip(x):
    return jnp.flip(x)


def _stepped(x):
    return x[::2, 1::3]


# layout -> (NumPy view, the same view built by jaxlab from the uploaded array)
LAYOUTS = {
    "contiguous": (lambda a: a, lambda x: x),
    "transposed": (lambda a: a.T, jnp.transpose),
    "flipped": (lambda a: a[::-1, ::-1], _flip),
    "stepped": (lambda a: a[::2, 1::3], _stepped),
}
CASES = ["contiguous", "transposed", "flipped", "stepped", "0-d", "empty"]


def view(case: str, a: np.ndarray):
    """The NumPy input and the jaxlab input of one layout case of a 2-D array `a`."""
    if case == "0-d":
        return a[0, 0], jnp.asarray(np.asarray(a[0, 0]))
    if case == "empty":
        return a[:0], jnp.asarray(a[:0])
    np_view, jax_view = LAYOUTS[case]
    return np_view(a), jax_view(jnp.asarray(a))


def reference(np_fn, *args, dtype):
    """NumPy's answer computed in float64 (ints too when the result is a float), cast
    to the dtype JAX gives."""
    to_float = np.dtype(dtype).kind == "f"
    wide = [a.astype(np.float64) if to_float or a.dtype.kind == "f" else a
            for a in map(np.asarray, args)]
    with np.errstate(all="ignore"):
        return np.asarray(np_fn(*wide)).astype(dtype)


def jax_dtype(out: str, *dtypes) -> np.dtype:
    """JAX's result dtype: `same` (promoted), `float` (inexact) or `bool`."""
    dt = np.result_type(*dtypes)
    if out == "bool":
        return np.dtype(bool)
    if out == "float" and dt.kind != "f":
        return np.dtype(F32)
    return dt


def check(actual, expected, rtol=1e-5, atol=1e-6):
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert_close(actual, expected, rtol=rtol, atol=atol)


# --- unary ------------------------------------------------------------------------

# (name, NumPy function, domain, result kind, rtol)
UNARY = [
    ("sin", np.sin, "real", "float", 1e-5), ("cos", np.cos, "real", "float", 1e-5),
    ("tan", np.tan, "trig", "float", 1e-5), ("arcsin", np.arcsin, "unit", "float", 1e-5),
    ("arccos", np.arccos, "unit", "float", 1e-5), ("arctan", np.arctan, "real", "float", 1e-5),
    ("sinh", np.sinh, "real", "float", 1e-5), ("cosh", np.cosh, "real", "float", 1e-5),
    ("tanh", np.tanh, "real", "float", 1e-5), ("arcsinh", np.arcsinh, "real", "float", 1e-5),
    ("arccosh", np.arccosh, "ge1", "float", 1e-5), ("arctanh", np.arctanh, "unit", "float", 1e-5),
    ("exp", np.exp, "real", "float", 1e-5), ("exp2", np.exp2, "real", "float", 1e-5),
    ("expm1", np.expm1, "real", "float", 1e-5), ("log", np.log, "pos", "float", 1e-5),
    ("log2", np.log2, "pos", "float", 1e-5), ("log10", np.log10, "pos", "float", 1e-5),
    ("log1p", np.log1p, "gt-1", "float", 1e-5), ("sqrt", np.sqrt, "pos", "float", 1e-5),
    ("cbrt", np.cbrt, "real", "float", 1e-5), ("reciprocal", np.reciprocal, "pos", "float", 1e-5),
    ("deg2rad", np.deg2rad, "real", "float", 1e-6), ("rad2deg", np.rad2deg, "real", "float", 1e-6),
    ("radians", np.radians, "real", "float", 1e-6), ("degrees", np.degrees, "real", "float", 1e-6),
    ("negative", np.negative, "real", "same", 0), ("positive", np.positive, "real", "same", 0),
    ("abs", np.abs, "real", "same", 0), ("absolute", np.absolute, "real", "same", 0),
    ("sign", np.sign, "real", "same", 0), ("square", np.square, "real", "same", 1e-6),
    ("floor", np.floor, "real", "same", 0), ("ceil", np.ceil, "real", "same", 0),
    ("trunc", np.trunc, "real", "same", 0),
    ("round", np.round, "real", "same", 0), ("around", np.round, "real", "same", 0),
    ("isnan", np.isnan, "real", "bool", 0), ("isinf", np.isinf, "real", "bool", 0),
    ("isfinite", np.isfinite, "real", "bool", 0), ("signbit", np.signbit, "real", "bool", 0),
    ("logical_not", np.logical_not, "real", "bool", 0),
]
UNARY_IDS = [row[0] for row in UNARY]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name,np_fn,domain,out,rtol", UNARY, ids=UNARY_IDS)
def test_unary_float32_layouts(backend, rng, name, np_fn, domain, out, rtol, case):
    a, x = view(case, sample(domain, (6, 7), F32, rng))
    expected = reference(np_fn, a, dtype=jax_dtype(out, F32))
    check(getattr(jnp, name)(x), expected, rtol=rtol)


@pytest.mark.parametrize("name,np_fn,domain,out,rtol", UNARY, ids=UNARY_IDS)
def test_unary_int32(backend, rng, name, np_fn, domain, out, rtol):
    a = sample(domain, (3, 5), I32, rng)
    expected = reference(np_fn, a, dtype=jax_dtype(out, I32))
    check(getattr(jnp, name)(jnp.asarray(a)), expected, rtol=rtol)


@pytest.mark.parametrize("name,np_fn,domain,out,rtol", UNARY, ids=UNARY_IDS)
def test_unary_float16_stays_float16(backend, rng, name, np_fn, domain, out, rtol):
    a = sample(domain, (40,), F16, rng)
    expected = reference(np_fn, a, dtype=jax_dtype(out, F16))   # rounded once from float64
    check(getattr(jnp, name)(jnp.asarray(a)), expected, rtol=1e-3, atol=1e-4)


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30, -1e30,
                     1.0, -1.0, 0.5, -0.5, 80.0, -80.0, 1e-7, -1e-7], F32)


@pytest.mark.parametrize("name,np_fn,domain,out,rtol", UNARY, ids=UNARY_IDS)
def test_unary_special_values(backend, name, np_fn, domain, out, rtol):
    expected = reference(np_fn, SPECIALS, dtype=jax_dtype(out, F32))
    check(getattr(jnp, name)(jnp.asarray(SPECIALS)), expected, rtol=max(rtol, 1e-5), atol=0)


# (name, NumPy function, tiny arguments): relative accuracy where naive formulas cancel
NEAR_ZERO = [("expm1", np.expm1), ("log1p", np.log1p), ("sinh", np.sinh),
             ("arcsinh", np.arcsinh), ("arctanh", np.arctanh), ("tanh", np.tanh),
             ("sin", np.sin), ("arcsin", np.arcsin), ("tan", np.tan)]


@pytest.mark.parametrize("name,np_fn", NEAR_ZERO, ids=[r[0] for r in NEAR_ZERO])
def test_relative_accuracy_near_zero(backend, name, np_fn):
    mags = np.geomspace(1e-12, 1e-2, 30)
    a = np.concatenate([mags, -mags]).astype(F32)
    check(getattr(jnp, name)(jnp.asarray(a)), reference(np_fn, a, dtype=F32), rtol=3e-6, atol=0)


def test_arccos_accurate_near_plus_and_minus_one(backend):
    d = np.geomspace(1e-7, 1e-2, 20)
    a = np.concatenate([1 - d, -1 + d, [1.0, -1.0]]).astype(F32)
    check(jnp.arccos(jnp.asarray(a)), reference(np.arccos, a, dtype=F32), rtol=3e-6, atol=0)


def test_arcsinh_arccosh_large_arguments(backend):
    a = np.array([1e4, 1e5, 1e10, 1e20, 1e30, 3e38], F32)
    check(jnp.arcsinh(jnp.asarray(a)), reference(np.arcsinh, a, dtype=F32))
    check(jnp.arcsinh(jnp.asarray(-a)), reference(np.arcsinh, -a, dtype=F32))
    check(jnp.arccosh(jnp.asarray(a)), reference(np.arccosh, a, dtype=F32))


# --- binary -----------------------------------------------------------------------

# (name, NumPy function, x domain, y domain, result kind, dtypes, rtol)
BINARY = [
    ("add", np.add, "real", "real", "same", "fi", 1e-6),
    ("subtract", np.subtract, "real", "real", "same", "fi", 1e-6),
    ("multiply", np.multiply, "real", "real", "same", "fi", 1e-6),
    ("divide", np.divide, "real", "nonzero", "float", "fi", 1e-6),
    ("true_divide", np.true_divide, "real", "nonzero", "float", "fi", 1e-6),
    ("floor_divide", np.floor_divide, "wide", "nonzero", "same", "fi", 1e-6),
    ("remainder", np.remainder, "wide", "nonzero", "same", "fi", 1e-5),
    ("mod", np.mod, "wide", "nonzero", "same", "fi", 1e-5),
    ("fmod", np.fmod, "wide", "nonzero", "same", "fi", 1e-5),
    ("power", np.power, "pos", "real", "same", "f", 1e-5),
    ("power", np.power, "real", "exponent", "same", "i", 0),
    ("maximum", np.maximum, "real", "real", "same", "fi", 0),
    ("minimum", np.minimum, "real", "real", "same", "fi", 0),
    ("arctan2", np.arctan2, "real", "real", "float", "fi", 1e-5),
    ("hypot", np.hypot, "real", "real", "float", "fi", 1e-6),
    ("copysign", np.copysign, "real", "real", "float", "f", 0),
    ("logaddexp", np.logaddexp, "real", "real", "float", "f", 1e-6),
    ("equal", np.equal, "real", "real", "bool", "fi", 0),
    ("not_equal", np.not_equal, "real", "real", "bool", "fi", 0),
    ("less", np.less, "real", "real", "bool", "fi", 0),
    ("less_equal", np.less_equal, "real", "real", "bool", "fi", 0),
    ("greater", np.greater, "real", "real", "bool", "fi", 0),
    ("greater_equal", np.greater_equal, "real", "real", "bool", "fi", 0),
    ("logical_and", np.logical_and, "real", "real", "bool", "fi", 0),
    ("logical_or", np.logical_or, "real", "real", "bool", "fi", 0),
    ("logical_xor", np.logical_xor, "real", "real", "bool", "fi", 0),
    ("bitwise_and", np.bitwise_and, "bits", "bits", "same", "i", 0),
    ("bitwise_or", np.bitwise_or, "bits", "bits", "same", "i", 0),
    ("bitwise_xor", np.bitwise_xor, "bits", "bits", "same", "i", 0),
    ("left_shift", np.left_shift, "bits", "shift", "same", "i", 0),
    ("right_shift", np.right_shift, "bits", "shift", "same", "i", 0),
]
BINARY_ROWS = [pytest.param(name, fn, xd, yd, out, dt, rtol, id=f"{name}-{np.dtype(dt)}")
               for name, fn, xd, yd, out, kinds, rtol in BINARY
               for dt, kind in ((F32, "f"), (I32, "i")) if kind in kinds]
# case -> (x shape, y shape, layout of both operands)
BINARY_SHAPES = {
    "same": ((4, 5), (4, 5), "contiguous"), "broadcast": ((3, 1), (4,), "contiguous"),
    "0-d": ((), (5,), "contiguous"), "empty": ((0, 4), (4,), "contiguous"),
    "transposed": ((4, 5), (4, 5), "transposed"), "flipped": ((4, 5), (4, 5), "flipped"),
    "stepped": ((6, 7), (6, 7), "stepped"),
}


@pytest.mark.parametrize("shapes", list(BINARY_SHAPES))
@pytest.mark.parametrize("name,np_fn,xd,yd,out,dt,rtol", BINARY_ROWS)
def test_binary(backend, rng, name, np_fn, xd, yd, out, dt, rtol, shapes):
    xs, ys, layout = BINARY_SHAPES[shapes]
    a, b = sample(xd, xs, dt, rng), sample(yd, ys, dt, rng)
    if out == "bool" and dt is F32:   # comparisons need ties: a grid of halves
        a, b = np.round(a * 2) / 2, np.round(b * 2) / 2
    np_view, jax_view = LAYOUTS[layout]
    x, y = jax_view(jnp.asarray(a)), jax_view(jnp.asarray(b))
    a, b = np_view(a), np_view(b)
    expected = reference(np_fn, a, b, dtype=jax_dtype(out, dt))
    check(getattr(jnp, name)(x, y), expected, rtol=rtol)


BOOL_BINARY = [("add", np.logical_or), ("multiply", np.logical_and), ("maximum", np.maximum),
               ("minimum", np.minimum), ("bitwise_and", np.bitwise_and),
               ("bitwise_xor", np.bitwise_xor), ("equal", np.equal), ("less", np.less),
               ("logical_or", np.logical_or)]


@pytest.mark.parametrize("name,np_fn", BOOL_BINARY, ids=[r[0] for r in BOOL_BINARY])
def test_binary_on_booleans_stays_boolean(backend, name, np_fn):
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    check(getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b)), np_fn(a, b))


# --- Python scalars and promotion ------------------------------------------------

# (array dtype, operator, Python scalar, scalar on the left?, JAX's result dtype)
SCALAR_PROMOTION = [
    (I32, operator.add, 1.5, False, F32), (I32, operator.add, 2, False, I32),
    (F16, operator.add, 1.0, False, F16), (bool, operator.add, 1, False, I32),
    (bool, operator.add, True, False, bool), (bool, operator.add, 1.5, False, F32),
    (np.uint32, operator.add, 3, False, np.uint32), (F16, operator.mul, 2, False, F16),
    (I32, operator.truediv, 2, False, F32), (F16, operator.truediv, 2, False, F16),
    (I32, operator.pow, 2, False, I32), (I32, operator.pow, 2, True, I32),
    (F32, operator.pow, 3, True, F32), (I32, operator.pow, 0.5, False, F32),
    (I32, operator.floordiv, 2, False, I32), (F16, operator.floordiv, 2, False, F16),
    (I32, operator.mod, 3, True, I32), (I32, operator.sub, 1.5, True, F32),
    (I32, operator.lt, 1.5, False, bool), (F16, operator.ge, 1, True, bool),
    (I32, operator.and_, 6, False, I32), (bool, operator.or_, False, False, bool),
    (I32, operator.lshift, 2, True, I32), (np.uint32, operator.rshift, 1, False, np.uint32),
]


@pytest.mark.parametrize("dt,op,scalar,left,result", SCALAR_PROMOTION,
                         ids=[f"{np.dtype(r[0])}-{r[1].__name__}-{r[2]!r}-{'l' if r[3] else 'r'}"
                              for r in SCALAR_PROMOTION])
def test_python_scalars_are_weakly_typed(backend, dt, op, scalar, left, result):
    a = np.array([0, 1, 2, 5], dt)
    x = jnp.asarray(a)
    out = op(scalar, x) if left else op(x, scalar)
    with np.errstate(all="ignore"):
        ref = op(scalar, a) if left else op(a, scalar)
    check(out, np.asarray(ref).astype(result))


# (dtype of x, dtype of y, JAX's result dtype) for array-array promotion
ARRAY_PROMOTION = [(I32, np.uint32, I32), (F16, F32, F32), (I32, F16, F16),
                   (bool, np.uint32, np.uint32), (bool, F16, F16), (np.uint32, F32, F32)]


@pytest.mark.parametrize("dx,dy,result", ARRAY_PROMOTION)
def test_array_promotion(backend, dx, dy, result):
    a, b = np.array([0, 1, 3], dx), np.array([1, 1, 2], dy)
    check(jnp.add(jnp.asarray(a), jnp.asarray(b)), (a.astype(np.float64) + b).astype(result))


def test_scalar_only_arguments_give_0d_arrays(backend):
    check(jnp.add(1, 2), np.array(3, I32))
    check(jnp.multiply(2, 1.5), np.array(3.0, F32))
    check(jnp.sin(0), np.array(0.0, F32))


# --- operators --------------------------------------------------------------------

# (operator, result kind)
OPERATORS = [(operator.add, "same"), (operator.sub, "same"), (operator.mul, "same"),
             (operator.truediv, "float"), (operator.floordiv, "same"), (operator.mod, "same"),
             (operator.pow, "same"), (divmod, "same"), (operator.lt, "bool"),
             (operator.le, "bool"), (operator.gt, "bool"), (operator.ge, "bool"),
             (operator.eq, "bool"), (operator.ne, "bool")]


@pytest.mark.parametrize("scalar_left", [False, True], ids=["arrays", "scalar-left"])
@pytest.mark.parametrize("dt", [F32, I32], ids=["f32", "i32"])
@pytest.mark.parametrize("op,out", OPERATORS, ids=[r[0].__name__ for r in OPERATORS])
def test_operators(backend, rng, op, out, dt, scalar_left):
    pow_ = op is operator.pow
    a = 2 if scalar_left else sample("exponent" if pow_ else "wide", (3, 4), dt, rng)
    b = sample("exponent" if pow_ else "nonzero", (4,), dt, rng)
    got = op(a if scalar_left else jnp.asarray(a), jnp.asarray(b))
    np_op = (lambda p, q: np.stack(divmod(p, q))) if op is divmod else op
    want = reference(np_op, a, b, dtype=jax_dtype(out, dt))
    for g, w in zip(got, want) if op is divmod else [(got, want)]:
        check(g, w, rtol=1e-5)


@pytest.mark.parametrize("op", [operator.neg, operator.pos, operator.abs, operator.invert],
                         ids=lambda op: op.__name__)
def test_unary_operators(backend, op):
    a = np.array([-3, 0, 7], I32)
    check(op(jnp.asarray(a)), op(a))


# --- semantics that differ between libraries: rounding, division, shifts ----------

def test_round_half_to_even_and_decimals(backend):
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.2345, -1.2355], F32)
    check(jnp.round(jnp.asarray(a)), np.round(a))
    check(jnp.round(jnp.asarray(a), 2), np.round(a, 2))
    check(jnp.asarray(a).round(1), np.round(a, 1))
    check(jnp.round(jnp.asarray(np.array([15, -25], I32))), np.array([15, -25], I32))


def test_floor_divide_and_remainder_follow_python_signs(backend):
    a = np.array([7, -7, 7, -7, 6, -6, 0, 1], I32)
    b = np.array([2, 2, -2, -2, 3, 3, -3, -5], I32)
    for fn in ("floor_divide", "remainder", "fmod"):
        check(getattr(jnp, fn)(jnp.asarray(a), jnp.asarray(b)), getattr(np, fn)(a, b))
        check(getattr(jnp, fn)(jnp.asarray(a.astype(F32) + 0.5), jnp.asarray(b.astype(F32))),
              getattr(np, fn)(a.astype(F32) + 0.5, b.astype(F32)))


def test_division_by_zero(backend):
    a = np.array([1.0, -1.0, 0.0], F32)
    with np.errstate(all="ignore"):
        check(jnp.floor_divide(jnp.asarray(a), 0.0), np.floor_divide(a, np.float32(0)))
        check(jnp.true_divide(jnp.asarray(a), 0.0), a / np.float32(0))
    # integers as JAX (XLA): x % 0 == 0 and fmod(x, 0) == 0
    x = jnp.asarray(np.array([5, -5], I32))
    check(jnp.remainder(x, 0), np.array([0, 0], I32))
    check(jnp.fmod(x, 0), np.array([0, 0], I32))


def test_power_integer_exponents_are_exact(backend):
    a = np.array([-3, -2, -1, 0, 1, 2, 3, 11], I32)
    for k in range(7):
        check(jnp.power(jnp.asarray(a), k), a ** k)
    f = np.array([0.1, -1.7, 3.0, -0.0], F32)
    check(jnp.asarray(f) ** 3, f * f * f, rtol=1e-7)
    with np.errstate(divide="ignore"):
        check(jnp.asarray(f) ** -2, (1 / (f.astype(np.float64) ** 2)).astype(F32), rtol=1e-6)
    check(jnp.power(jnp.asarray(f), 2.0), f * f, rtol=1e-6)   # float exponent: pow of |x|


def test_shifts(backend):
    a = np.array([-8, -1, 1, 1 << 30, 12345], I32)
    for s in (0, 1, 3, 31):
        check(jnp.right_shift(jnp.asarray(a), s), a >> s)
        check(jnp.left_shift(jnp.asarray(a), s), a << s)
    u = np.array([0xFFFFFFF0, 1], np.uint32)
    check(jnp.right_shift(jnp.asarray(u), 4), u >> 4)   # logical for unsigned
    # amounts outside [0, 32) shift every bit out, as in JAX (NumPy leaves it to the CPU)
    big = jnp.asarray(np.array([32, 40, -1, -30, 31], I32))
    check(jnp.left_shift(jnp.asarray(a[:1]), big), np.zeros(5, I32))
    check(jnp.right_shift(jnp.asarray(np.array([-8, 8], I32))[:, None], big),
          np.array([[-1] * 5, [0] * 5], I32))
    check(jnp.right_shift(jnp.asarray(u), jnp.asarray(np.array([32, 33], np.uint32))),
          np.zeros(2, np.uint32))


def test_clip(backend, rng):
    a = np.append(sample("real", (12,), F32, rng), np.nan).astype(F32)
    x = jnp.asarray(a)
    check(jnp.clip(x, -1, 1.5), np.clip(a, -1, 1.5))
    check(jnp.clip(x, None, 0.5), np.clip(a, None, 0.5))
    check(x.clip(0), np.clip(a, 0, None))
    n = np.arange(5, dtype=I32)
    check(jnp.clip(jnp.asarray(n), 1, 3), np.clip(n, 1, 3))
    check(jnp.clip(jnp.asarray(n), 0.5, 2), np.clip(n, 0.5, 2).astype(F32))   # promotes


def test_where(backend, rng):
    c = rng.random((3, 1)) > 0.5
    a, b = sample("real", (4,), F32, rng), sample("real", (3, 4), I32, rng)
    check(jnp.where(jnp.asarray(c), jnp.asarray(a), jnp.asarray(b)), np.where(c, a, b).astype(F32))
    check(jnp.where(jnp.asarray(c), 1, 2.5), np.where(c, 1, 2.5).astype(F32))
    check(jnp.where(jnp.asarray(b), b, 0), np.where(b, b, 0))


def test_where_with_the_condition_alone(backend):
    c = np.array([[0, 3], [2, 0]], I32)
    for ours, theirs in zip(jnp.where(jnp.asarray(c)), np.where(c)):
        check(ours, theirs.astype(I32))
    padded = jaxlab.jit(lambda m: jnp.where(m > 0, size=3, fill_value=-1))(c)
    check(padded[0], np.array([0, 1, -1], I32))
    with pytest.raises(TypeError, match="give both x and y"):
        jnp.where(jnp.asarray(c), 1)
    with pytest.raises(jaxlab.errors.ConcretizationTypeError):
        jaxlab.jit(lambda m: jnp.where(m))(c)


def test_nan_to_num(backend):
    a = np.array([np.nan, np.inf, -np.inf, 1.5], F32)
    check(jnp.nan_to_num(jnp.asarray(a)), np.nan_to_num(a))
    check(jnp.nan_to_num(jnp.asarray(a), nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0))
    h = a.astype(F16)
    check(jnp.nan_to_num(jnp.asarray(h)), np.nan_to_num(h))
    check(jnp.nan_to_num(jnp.asarray(np.array([3], I32))), np.array([3], I32))


def test_hypot_copysign_signbit_special_values(backend):
    a = np.array([np.inf, np.nan, -np.inf, 3e30, 0.0, -0.0, -5.0], F32)
    b = np.array([np.nan, np.inf, 1.0, 4e30, 0.0, -2.0, -np.nan], F32)
    check(jnp.hypot(jnp.asarray(a), jnp.asarray(b)), np.hypot(a, b))
    check(jnp.copysign(1.0, jnp.asarray(b)), np.copysign(F32(1), b))
    check(jnp.signbit(jnp.asarray(a)), np.signbit(a))
    h = np.array([-0.0, 0.0, -np.inf, 2.0, -3.0], F16)
    check(jnp.signbit(jnp.asarray(h)), np.signbit(h))


# --- fusion -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["expm1", "log1p", "sinh", "arccos", "hypot", "floor_divide",
                                  "remainder", "logaddexp", "arcsinh"])
def test_composites_fuse_into_one_kernel(backend, rng, name):
    a = jnp.asarray(sample("unit", (50,), F32, rng))
    a.block_until_ready()
    args = (a, 0.75) if name in ("hypot", "floor_divide", "remainder", "logaddexp") else (a,)
    with jaxlab.capture() as log:
        getattr(jnp, name)(*args).block_until_ready()
    assert len(log.kernels()) == 1


# --- errors -----------------------------------------------------------------------

# (call, exception, words the message must contain)
ERRORS = [
    (lambda: jnp.bitwise_and(jnp.ones(3), 1), TypeError, ["bitwise_and", "float32"]),
    (lambda: jnp.bitwise_or(jnp.ones(3, jnp.int32), 1.5), TypeError, ["bitwise_or", "float32"]),
    (lambda: jnp.invert(jnp.ones(3)), TypeError, ["invert", "float32"]),
    (lambda: jnp.left_shift(jnp.ones(3), 1), TypeError, ["left_shift", "float32"]),
    (lambda: jnp.asarray([True]) - True, TypeError, ["subtract", "bool"]),
    (lambda: -jnp.asarray([True]), TypeError, ["negative", "bool"]),
    (lambda: jnp.power(jnp.arange(3), -1), TypeError, ["integer_pow", "int32"]),
    (lambda: jnp.round(jnp.arange(3), -1), NotImplementedError, ["decimals"]),
    (lambda: jnp.add(jnp.ones((3, 2)), jnp.ones(3)), ValueError, ["(3, 2)", "(3,)"]),
    (lambda: jnp.sin("abc"), TypeError, ["unsupported dtype"]),
]


@pytest.mark.parametrize("call,exc,words", ERRORS)
def test_bad_input_raises_a_clear_error(backend, call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value)
    # the engine keeps working afterwards
    check(jnp.add(jnp.asarray(np.array([1, 2], I32)), 1), np.array([2, 3], I32))


def test_every_function_is_exported():
    names = {row[0] for row in UNARY} | {row[0] for row in BINARY} | {
        "where", "clip", "nan_to_num", "divmod", "bitwise_not", "invert", "cbrt"}
    assert not [n for n in names if not callable(getattr(jnp, n, None))]
