"""Python scalars: weakly typed (JAX's promotion), kernel arguments (never kernel text),
traced as weak abstract values by jit, OverflowError for ints out of range."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine.devices import get_device
from tests.conftest import assert_close

DTYPES = ["bool", "int32", "uint32", "float16", "float32"]
SCALARS = [True, 3, -2, 2.5]
OPS = ["add", "multiply", "maximum", "subtract", "less"]


def _operands(dtype: str, scalar, lib):
    arr = lib.asarray(np.array([1, 0, 1], dtype=dtype))
    return arr, scalar


@pytest.mark.parametrize("op", OPS)
def test_weak_promotion_matches_jax(backend: str, op: str) -> None:
    for dtype in DTYPES:
        for scalar in SCALARS:
            if op == "subtract" and (dtype == "bool" or scalar is True):
                continue   # JAX refuses boolean subtraction too
            if dtype == "uint32" and isinstance(scalar, int) and scalar < 0:
                continue
            for order in (1, -1):
                want = getattr(jjnp, op)(*_operands(dtype, scalar, jjnp)[::order])
                got = getattr(jnp, op)(*_operands(dtype, scalar, jnp)[::order])
                assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), \
                    f"{op}({dtype} array, {scalar!r})"
                assert_close(got, np.asarray(want))


@pytest.mark.parametrize("expr", [
    "lib.asarray(2.5)", "lib.asarray(3)", "lib.asarray(True)", "lib.asarray(2.5, dtype=lib.float32)",
    "lib.add(2.0, 3.0)", "lib.sin(lib.asarray(2.0))", "lib.asarray(2.0) < 3.0",
    "lib.asarray(2.0) * lib.ones(2, lib.float16)", "lib.ones(2, lib.bool_) + 1",
    "lib.ones(2, lib.uint32) * 2.5", "lib.float32(2) * 2",
])
def test_weak_type_of_results_matches_jax(backend: str, expr: str) -> None:
    want = eval(expr, {"lib": jjnp})
    got = eval(expr, {"lib": jnp})
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), expr
    assert_close(got, np.asarray(want))


@pytest.mark.parametrize("expr", [
    "lib.asarray(2**40)", "lib.asarray(2**31)", "lib.int32(2**31)", "lib.int32(-2**31 - 1)",
    "lib.asarray(-1, dtype=lib.uint32)", "lib.uint32(-1)", "lib.asarray([2**40])",
    "lib.ones(2, lib.int32) + 2**40", "lib.ones(2, lib.float32) * 2**40",
    "lib.ones(2, lib.uint32) * 2**32",
])
def test_ints_out_of_range_raise_overflow_error_as_in_jax(backend: str, expr: str) -> None:
    with pytest.raises(OverflowError):
        eval(expr, {"lib": jjnp})
    with pytest.raises(OverflowError):
        eval(expr, {"lib": jnp})


@pytest.mark.parametrize("expr", [
    "lib.asarray(2**32 - 1, dtype=lib.uint32)", "lib.asarray(-2**31)",
    "lib.ones(2, lib.uint32) + (-1)", "lib.asarray(2**31, dtype=lib.float32)",
])
def test_ints_in_range_convert_as_in_jax(backend: str, expr: str) -> None:
    want = eval(expr, {"lib": jjnp})
    got = eval(expr, {"lib": jnp})
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want))


def test_scalar_operands_compile_one_kernel_for_3000_values(backend: str) -> None:
    cache = get_device(backend).cache
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    (x * 0.5).block_until_ready()   # the kernel, compiled once
    before = len(cache), cache.misses
    outs = [(x * float(i)).block_until_ready() for i in range(3000)]
    assert (len(cache), cache.misses) == before, "a Python scalar became kernel text"
    for i in (0, 1, 1234, 2999):
        assert_close(outs[i], np.arange(5, dtype=np.float32) * np.float32(i))


def test_kernel_text_holds_no_scalar_value(backend: str) -> None:
    x = jnp.asarray(np.ones(7, np.float32))
    with jaxlab.capture() as log:
        (x * 123.25 + 77.5).block_until_ready()
    (event,) = log.kernels()
    assert "123.25" not in event.source and "77.5" not in event.source
    assert "123.25" not in event.ir


def test_jit_traces_python_scalars_as_weak_values_without_retracing(backend: str) -> None:
    traces = []

    def f(x, s):
        traces.append(1)
        return x * s + 1.0

    jf = jaxlab.jit(f)
    x16 = jnp.asarray(np.arange(4, dtype=np.float16))
    cache = get_device(backend).cache
    jf(x16, 0.5).block_until_ready()
    before = len(cache), cache.misses
    for i in range(20):
        out = jf(x16, float(i))
        assert out.dtype == np.float16     # the weak scalar does not promote float16
        assert_close(out, np.arange(4, dtype=np.float16) * np.float16(i) + 1, rtol=1e-3)
    assert len(traces) == 1
    assert (len(cache), cache.misses) == before


def test_integer_step_counter_does_not_recompile(backend: str) -> None:
    traces = []

    @jaxlab.jit
    def step(w, i):
        traces.append(1)
        return w - 0.1 * i * w

    w = jnp.ones(3)
    for i in range(6):
        w = step(w, i)
    assert len(traces) == 1
    want = np.ones(3, np.float32)
    for i in range(6):
        want = want - np.float32(0.1) * np.float32(i) * want
    assert_close(w, want, rtol=1e-5)
    closed = jaxlab.make_jaxpr(lambda w, i: w * i)(jnp.ones(2, jnp.uint32), 3)
    want = jax.make_jaxpr(lambda w, i: w * i)(jjnp.ones(2, jjnp.uint32), 3)
    assert [a.weak_type for a in closed.in_avals] == [False, True]
    assert [str(a.dtype) for a in closed.out_avals] == [str(a.dtype) for a in want.out_avals]


def test_python_scalar_argument_goes_to_the_programs_device(backend: str) -> None:
    x = jnp.ones(3)
    with jaxlab.default_device("cpu"):   # the scalar is made on another device
        out = jaxlab.jit(lambda x, s: x + s)(x, 2.0)
    assert out.device is x.device
    assert_close(out, np.full(3, 3.0, np.float32))
