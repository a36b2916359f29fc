"""Random kernels, run on wasm and on the cpu reference: the two must agree.

Expressions mix every dtype and most ops, over loads whose indices are
contiguous, broadcast, strided or gathered, at sizes that leave vector tails,
so the scalar, vector and lane-by-lane paths of the code generator all run.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("wasmtime")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jaxlab.backends.wasm.runtime import WasmBackend  # noqa: E402
from jaxlab.ir.alu import AluExp, AluOp  # noqa: E402
from jaxlab.ir.dtypes import DType  # noqa: E402
from jaxlab.ir.kernel import Kernel, Reduction, acc_variable  # noqa: E402
from tests.test_wasm_codegen import run_cpu, run_wasm  # noqa: E402

I32, U32, F32, F16, BOOL = DType.int32, DType.uint32, DType.float32, DType.float16, DType.bool
F64, I64, U64 = DType.float64, DType.int64, DType.uint64
SLOTS = {F32: 0, I32: 1, U32: 2, BOOL: 3, F16: 4, F64: 5, I64: 6, U64: 7}
N_IN = 60   # elements per input buffer
BACKENDS: dict[int, WasmBackend] = {}


def _backend(threads: int = 1) -> WasmBackend:
    """One thread, or three that split every kernel however small."""
    if threads not in BACKENDS:
        BACKENDS[threads] = WasmBackend(threads=threads)
        BACKENDS[threads].min_thread_work = 0
    return BACKENDS[threads]


@st.composite
def index(draw, out: AluExp, red: AluExp | None, last: int):
    """An input index built from the output index (and ridx): in or out of bounds.
    Dividing by the last output dimension gives the row, the remainder the column."""
    axes = [out] + ([red] if red is not None else [])
    e = AluExp.const(draw(st.integers(0, 5)), I32)
    for ax in axes:
        kind = draw(st.sampled_from(["lin", "div", "mod", "none"]))
        k = draw(st.sampled_from([1, 2, 3, 5, last]))
        e = e + {"lin": ax * k, "div": ax // k, "mod": ax % k, "none": AluExp.const(0, I32)}[kind]
    return e.simplify()


BINARY = {F32: [AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Div, AluOp.Max, AluOp.Min, AluOp.Mod],
          I32: [AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Idiv, AluOp.Mod, AluOp.Max, AluOp.Min,
                AluOp.And, AluOp.Or, AluOp.Xor, AluOp.Shl, AluOp.Shr],
          BOOL: [AluOp.And, AluOp.Or, AluOp.Xor, AluOp.Add, AluOp.Mul, AluOp.Max, AluOp.Min]}
BINARY[U32] = BINARY[I64] = BINARY[U64] = BINARY[I32]
BINARY[F16] = BINARY[F64] = BINARY[F32]
UNARY = [AluOp.Sqrt, AluOp.Floor, AluOp.Ceil, AluOp.Reciprocal, AluOp.Exp, AluOp.Sin]


@st.composite
def expr(draw, dtype: DType, out: AluExp, red: AluExp | None, last: int, depth: int = 3):
    choice = draw(st.integers(0, 7 if depth > 0 else 1))
    if choice == 0:
        return AluExp.load(SLOTS[dtype], draw(index(out, red, last)), dtype)
    if choice == 1:
        value = draw({F32: st.sampled_from([0.0, -1.5, 2.0, 1e30, float("nan")]),
                      F16: st.sampled_from([0.0, -1.5, 0.1, 60000.0, float("inf")]),
                      I32: st.sampled_from([0, 1, -1, 3, -7, 2 ** 31 - 1]),
                      U32: st.sampled_from([0, 1, 3, 2 ** 32 - 1]),
                      BOOL: st.booleans(),
                      F64: st.sampled_from([0.0, -1.5, 1e300, float("-inf"), float("nan")]),
                      I64: st.sampled_from([0, -1, 3, -7, 2 ** 40, -(2 ** 63)]),
                      U64: st.sampled_from([0, 1, 2 ** 63 + 5, 2 ** 64 - 1])}[dtype])
        return AluExp.const(value, dtype)
    sub = lambda d: expr(d, out, red, last, depth - 1)  # noqa: E731
    if choice in (2, 3, 4):
        op = draw(st.sampled_from(BINARY[dtype]))
        if op is AluOp.Mod and dtype.is_float:
            # fmod is exact, but of operands computed within an ulp of NumPy's (exp, sin)
            # the remainder can differ entirely (1e30 % exp(x)): float mod of exact leaves
            sub = lambda d: expr(d, out, red, last, 0)  # noqa: E731
        return AluExp(op, dtype, (draw(sub(dtype)), draw(sub(dtype))))
    if choice == 5:
        src = draw(st.sampled_from([d for d in SLOTS if d is not dtype]))
        return draw(sub(src)).cast(dtype)
    if choice == 6:
        cmp_dtype = draw(st.sampled_from(list(SLOTS)))
        cond = AluExp(draw(st.sampled_from([AluOp.Cmplt, AluOp.Cmpne])), BOOL,
                      (draw(sub(cmp_dtype)), draw(sub(cmp_dtype))))
        if dtype is BOOL:
            return cond
        return cond.where(draw(sub(dtype)), draw(sub(dtype)))
    if dtype.is_float:
        return draw(sub(dtype)).unary(draw(st.sampled_from(UNARY)))
    return draw(sub(dtype))


INPUTS = [np.random.default_rng(5).standard_normal(N_IN).astype(np.float32) * 3,
          np.random.default_rng(6).integers(-50, 50, N_IN).astype(np.int32),
          np.random.default_rng(7).integers(0, 2 ** 32, N_IN, dtype=np.uint64).astype(np.uint32),
          np.random.default_rng(8).integers(0, 2, N_IN).astype(bool)]
INPUTS.append((INPUTS[0] * 7).astype(np.float16))
INPUTS[0][::7] = np.nan
INPUTS += [np.random.default_rng(9).standard_normal(N_IN) * 1e3,
           np.random.default_rng(10).integers(-2 ** 62, 2 ** 62, N_IN),
           np.random.default_rng(11).integers(0, 2 ** 64, N_IN, dtype=np.uint64)]
INPUTS[5][::5] = np.nan


def _fused_multiply_add_overflow(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Where one side is NaN and the other infinite. wasm fuses `acc + a * b` into one
    relaxed madd, which may keep the exact product: -inf + (1e30 * 1e30) stays -inf there,
    while the reference rounds the product to +inf first and gets NaN. Both are valid."""
    return (np.isnan(got) & np.isinf(want)) | (np.isinf(got) & np.isnan(want))


def _compare(kernel: Kernel, threads: int = 1) -> None:
    got = run_wasm(_backend(threads), kernel, *INPUTS)
    want = run_cpu(kernel, *INPUTS)
    if want.dtype.kind == "f" and kernel.reduction is not None:
        either = _fused_multiply_add_overflow(got, want)
        got, want = np.where(either, 0, got), np.where(either, 0, want)
    # a math function is within a few ulp of NumPy's in the dtype it runs in, so a
    # float64 result computed through float32 (cast<f64>(exp(x))) keeps float32's error
    narrowest = min((n.dtype.itemsize for n in kernel.exp.toposort() if n.dtype.is_float),
                    default=8)
    if want.dtype == np.float16:   # exp and sin may round to the other neighbour
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3, equal_nan=True)
    elif want.dtype == np.float64 and narrowest < 8:
        np.testing.assert_allclose(got, want, rtol=2e-5 if narrowest == 4 else 1e-3,
                                   atol=1e-5 if narrowest == 4 else 1e-3, equal_nan=True)
    elif want.dtype == np.float64:   # the math functions are within 2 ulp of NumPy's
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    elif want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


SHAPES = st.sampled_from([(1,), (3,), (8,), (13,), (4, 5), (6, 8), (3, 12), (2, 3, 7),
                          (13, 12), (14, 9), (2, 13, 8)])
DTYPES = st.sampled_from([F32, I32, U32, BOOL, F16, F64, I64, U64])


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data(), SHAPES, DTYPES, st.sampled_from([1, 3]))
def test_random_elementwise_kernels(data, shape, dtype, threads) -> None:
    n = int(np.prod(shape))
    exp = data.draw(expr(dtype, AluExp.special("gidx", n), None, shape[-1])).simplify()
    _compare(Kernel(shape=shape, inputs=tuple((d, N_IN) for d in SLOTS), exp=exp), threads)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data(), SHAPES, st.sampled_from([1, 3, 4, 9, 20, 33]),
       st.sampled_from([F32, I32, BOOL, F16, F64, I64, U64]),
       st.sampled_from([AluOp.Add, AluOp.Max, AluOp.Min]), st.sampled_from([1, 3]))
def test_random_reduction_kernels(data, shape, steps, dtype, op, threads) -> None:
    n = int(np.prod(shape))
    g, r = AluExp.special("gidx", n), AluExp.special("ridx", steps)
    body = data.draw(expr(dtype, g, r, shape[-1], depth=2)).simplify()
    acc = acc_variable(dtype)
    epilogue = data.draw(st.sampled_from([acc, (acc.cast(F32) * 2.0) if dtype is not F32 else acc * 2.0]))
    k = Kernel(shape=shape, inputs=tuple((d, N_IN) for d in SLOTS), exp=body,
               reduction=Reduction(op, steps, epilogue), reduce_shape=(steps,))
    _compare(k, threads)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 20), st.integers(1, 19), st.integers(1, 13), st.booleans(), st.booleans(),
       st.sampled_from([F32, I32, F64, I64]), st.sampled_from([AluOp.Add, AluOp.Max]),
       st.sampled_from(["mul", "add", "where"]), st.sampled_from([1, 3]))
def test_random_matmul_like_kernels(m, n, k, a_t, b_t, dtype, op, combine, threads) -> None:
    """a[row, ridx] (x) b[ridx, col], either operand stored transposed: register tiles,
    packed strips and every tail."""
    g, r = AluExp.special("gidx", m * n), AluExp.special("ridx", k)
    row, col = g // n, g % n
    a = AluExp.load(SLOTS[dtype], (r * m + row) if a_t else (row * k + r), dtype)
    b = AluExp.load(SLOTS[dtype], (col * k + r) if b_t else (r * n + col), dtype)
    body = {"mul": a * b, "add": a + b, "where": a.lt(b).where(a, b * 2)}[combine].simplify()
    inputs = tuple((d, max(N_IN, 400)) for d in SLOTS)
    kern = Kernel(shape=(m, n), inputs=inputs, exp=body,
                  reduction=Reduction(op, k, acc_variable(dtype)), reduce_shape=(k,))
    arrays = [np.resize(x, 400) for x in INPUTS]
    got, want = run_wasm(_backend(threads), kern, *arrays), run_cpu(kern, *arrays)
    if dtype.is_float:
        tol = 1e-4 if dtype is F32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 13), st.integers(1, 11), st.sampled_from([F32, I32, U32, BOOL, F16]),
       st.sampled_from([1, 3]))
def test_random_transposes(m, n, dtype, threads) -> None:
    """out[r, c] from inputs stored column-major: lanes run down the rows."""
    g = AluExp.special("gidx", m * n)
    row, col = g // n, g % n
    a = AluExp.load(SLOTS[dtype], col * m + row, dtype)
    f = AluExp.load(SLOTS[F32], col * m + row, F32)
    exp = f.lt(AluExp.const(0.5, F32)).where(a, a.cast(F32).cast(dtype)).simplify()
    kern = Kernel(shape=(m, n), inputs=tuple((d, max(N_IN, 200)) for d in SLOTS), exp=exp)
    arrays = [np.resize(x, 200) for x in INPUTS]
    got, want = run_wasm(_backend(threads), kern, *arrays), run_cpu(kern, *arrays)
    np.testing.assert_array_equal(got, want)
