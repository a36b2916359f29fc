"""Dtypes as JAX has them: NumPy dtypes to the user, JAX's promotion and queries,
64-bit requests narrowed with JAX's warning, lax strict about dtypes."""
from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax
from tests.conftest import assert_close

NAMES = ["bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32", "bfloat16",
         "float16", "float32"]


@pytest.mark.parametrize("name", NAMES)
def test_scalar_types_are_numpy_dtypes(backend, name):
    scalar_type = getattr(jnp, name)
    numpy_type = getattr(jjnp, name).dtype.type   # NumPy's own, or ml_dtypes' bfloat16
    x = jnp.zeros(3, scalar_type)
    assert isinstance(x.dtype, np.dtype)
    assert x.dtype == scalar_type == numpy_type
    assert np.dtype(scalar_type) == getattr(jjnp, name).dtype
    assert jnp.zeros(2, np.dtype(numpy_type).name).dtype == x.dtype
    assert jnp.ones(2, numpy_type).dtype == x.dtype
    made = scalar_type(3)
    assert made.shape == () and made.dtype == scalar_type
    assert {scalar_type: 1}[numpy_type] == 1   # hashes like NumPy's type


def test_python_types_and_dtype_class(backend):
    assert jnp.zeros(2, float).dtype == np.float32
    assert jnp.zeros(2, int).dtype == np.int32
    assert jnp.dtype is np.dtype
    assert jnp.float32(3.5).item() == 3.5
    assert isinstance(np.float32(1), jnp.float32)


@pytest.mark.parametrize("make", [
    lambda m, t: m.zeros(3, t.float64), lambda m, t: m.array([1, 2], dtype="int64"),
    lambda m, t: m.ones(2).astype(t.float64), lambda m, t: m.arange(3, dtype=t.int64)])
def test_64_bit_requests_narrow_with_jax_warning(backend, make):
    with pytest.warns(UserWarning) as ours:
        got = make(jnp, jnp)
    with pytest.warns(UserWarning) as theirs:
        want = make(jjnp, jjnp)
    assert got.dtype == want.dtype
    assert str(ours[0].message) == str(theirs[0].message)
    assert ours[0].filename == __file__    # points at the caller, as JAX's does


def test_64_bit_host_data_narrows_silently(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.asarray(np.arange(3)).dtype == jjnp.asarray(np.arange(3)).dtype
        assert jnp.asarray(np.ones(3)).dtype == np.float32


def test_host_data_keeps_its_narrow_dtype(backend):
    for name in ("int8", "uint8", "int16", "uint16", "bfloat16"):
        data = np.arange(-3, 4).astype(jjnp.dtype(name))
        assert jnp.asarray(data).dtype == jjnp.asarray(data).dtype == data.dtype
        np.testing.assert_array_equal(np.asarray(jnp.asarray(data)), data)


def test_x64_config(x64):
    assert jaxlab.config.jax_enable_x64 is True
    assert jnp.zeros(2).dtype == np.float64 and jnp.asarray(1).dtype == np.int64
    jaxlab.config.update("jax_enable_x64", False)
    assert jnp.zeros(2).dtype == np.float32
    with pytest.raises(AttributeError, match="jax_nonsense"):
        jaxlab.config.update("jax_nonsense", 1)


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float32", "bool"),
                                     ("int32", "float16"), ("uint32", "float32"),
                                     ("bool", "float32")])
def test_astype_matches_jax(backend, src, dst):
    data = np.array([-2.5, -1.0, 0.0, 0.5, 3.0, 7.75]).astype(src)
    want = jjnp.asarray(data).astype(dst)
    got = jnp.asarray(data).astype(getattr(jnp, dst))
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want))
    assert jnp.astype(jnp.asarray(data), dst).dtype == want.dtype


def test_astype_gradient(backend):
    f = lambda m: lambda x: (m.sin(x).astype(m.float16).astype(m.float32) * x).sum()
    x = np.linspace(-1, 1, 5).astype(np.float32)
    assert_close(jaxlab.grad(f(jnp))(jnp.asarray(x)), np.asarray(jax.grad(f(jjnp))(x)),
                 rtol=1e-3, atol=1e-3)


DTYPE_ARGS = [jnp.int8, jnp.int16, jnp.int32, jnp.int64, jnp.uint8, jnp.uint16, jnp.uint32,
              jnp.uint64, jnp.bfloat16, jnp.float16, jnp.float32, jnp.float64, jnp.bool_]


def _jax_twin(d):
    return getattr(jjnp, d.__name__)


@pytest.mark.parametrize("a", DTYPE_ARGS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("b", DTYPE_ARGS + [1, 1.5, True], ids=str)
def test_promotion_queries_match_jax(a, b):
    jb = _jax_twin(b) if isinstance(b, type) else b
    assert jnp.result_type(a, b) == jjnp.result_type(_jax_twin(a), jb)
    if isinstance(b, type):
        assert jnp.promote_types(a, b) == jjnp.promote_types(_jax_twin(a), jb)
        assert jnp.can_cast(a, b) == jjnp.can_cast(_jax_twin(a), jb)
        assert jnp.issubdtype(a, b) == jjnp.issubdtype(_jax_twin(a), jb)


@pytest.mark.parametrize("kind", ["bool", "integral", "real floating", "numeric",
                                  "signed integer", ("integral", "real floating"),
                                  jnp.float32, np.int32])
def test_isdtype_and_abstract_classes(kind):
    for d in DTYPE_ARGS:
        assert jnp.isdtype(d, kind) == jjnp.isdtype(_jax_twin(d), kind)
        for abstract in ("floating", "integer", "number", "inexact", "signedinteger",
                         "unsignedinteger"):
            assert jnp.issubdtype(d, getattr(jnp, abstract)) == \
                jjnp.issubdtype(_jax_twin(d), getattr(jjnp, abstract))


def test_promotion_with_x64_matches_jax(x64):
    for a in DTYPE_ARGS:
        for b in DTYPE_ARGS + [1, 1.5, True]:
            jb = _jax_twin(b) if isinstance(b, type) else b
            assert jnp.result_type(a, b) == jjnp.result_type(_jax_twin(a), jb), (a, b)


def test_finfo_iinfo(backend):
    for d in (jnp.float32, jnp.float16, jnp.bfloat16, jnp.ones(2)):
        mine, theirs = jnp.finfo(d), jjnp.finfo(np.dtype(d.dtype) if hasattr(d, "shape") else
                                                 _jax_twin(d))
        assert (mine.eps, mine.max, mine.tiny, mine.bits) == \
            (theirs.eps, theirs.max, theirs.tiny, theirs.bits)
    for d in (jnp.int8, jnp.int16, jnp.int32, jnp.uint8, jnp.uint16, jnp.uint32):
        assert (jnp.iinfo(d).min, jnp.iinfo(d).max) == \
            (jjnp.iinfo(_jax_twin(d)).min, jjnp.iinfo(_jax_twin(d)).max)


@pytest.mark.parametrize("a,b", [(1, 1.5), (1.0, True), (jnp.float32(1), 1),
                                 (jnp.uint32(1), -1), (jnp.float16(1), 1.0),
                                 (jnp.float32(1), jnp.float16(1))])
def test_lax_is_strict_about_dtypes(backend, a, b):
    j = lambda v: jjnp.asarray(np.asarray(v)) if isinstance(v, jaxlab.Array) else v
    with pytest.raises(TypeError) as theirs:
        jax.lax.add(j(a), j(b))
    with pytest.raises(TypeError) as ours:
        lax.add(a, b)
    if "same dtypes" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


def test_lax_accepts_matching_scalars(backend):
    assert lax.add(1, 1).dtype == np.int32 and int(lax.add(1, 1)) == 2
    assert float(lax.max(jnp.float32(1.5), 2.0)) == 2.0
