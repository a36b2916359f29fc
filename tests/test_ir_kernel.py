"""Kernels built by hand: names, text, the cpu backend's evaluation, and the op semantics."""
from __future__ import annotations

import math

import numpy as np
import pytest

from jaxlab.backends.cpu import run_kernel_numpy
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate, threefry2x32
from jaxlab.ir.kernel import Kernel, Reduction, acc_variable, reduce_identity
from tests.ir_helpers import gidx, load, ridx

I32, U32, F16, F32, BOOL = DType.int32, DType.uint32, DType.float16, DType.float32, DType.bool





def run(kernel: Kernel, *inputs: np.ndarray) -> np.ndarray:
    out = np.zeros(kernel.size, kernel.dtype.np)
    run_kernel_numpy(kernel, [np.ascontiguousarray(a).reshape(-1) for a in inputs], out)
    return out.reshape(kernel.shape)


def inputs_of(*arrays: np.ndarray) -> tuple[tuple[DType, int], ...]:
    return tuple((DType(a.dtype.name), a.size) for a in arrays)


def reduce_rows(x: np.ndarray, op: AluOp, epilogue: AluExp) -> Kernel:
    """out[i] = epilogue(fold_j x[i, j]) for a 2-d x."""
    rows, cols = x.shape
    body = load(0, gidx(rows) * cols + ridx(cols), DType(x.dtype.name))
    return Kernel(shape=(rows,), inputs=inputs_of(x), exp=body,
                  reduction=Reduction(op, cols, epilogue), reduce_shape=(cols,))


RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
A = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal((4, 2)).astype(np.float32)


def broadcast_add_kernel() -> Kernel:
    g = gidx(20)
    return Kernel(shape=(4, 5), inputs=inputs_of(X, B), exp=load(0, g) + load(1, g // 5))


def matmul_kernel() -> Kernel:
    g, r = gidx(6), ridx(4)
    body = load(0, (g // 2) * 4 + r) * load(1, r * 2 + g % 2)
    return Kernel(shape=(3, 2), inputs=inputs_of(A, W), exp=body,
                  reduction=Reduction(AluOp.Add, 4, acc_variable(F32)), reduce_shape=(4,))


# --- names, text, flops --------------------------------------------------------

def test_elementwise_kernel_name_and_text() -> None:
    k = broadcast_add_kernel()
    assert k.name == "E_4_5" and k.dtype is F32 and k.size == 20
    assert k.text() == ("kernel E_4_5(in0: f32[20], in1: f32[4]) -> f32[20]\n"
                        "  out[gidx] = in0[gidx] + in1[gidx // 5]")


def test_reduction_kernel_name_and_text() -> None:
    acc = acc_variable(F32)
    k = reduce_rows(X, AluOp.Max, (acc * 2.0).cast(I32))
    assert k.name == "r_4_5" and k.dtype is I32
    assert k.text() == ("kernel r_4_5(in0: f32[20]) -> i32[4]\n"
                        "  acc = max over ridx < 5 of in0[(gidx * 5) + ridx]\n"
                        "  out[gidx] = cast<i32>(acc * 2.0)")


@pytest.mark.parametrize("shape, reduce_shape, name", [
    ((), (), "E_1"), ((), (4, 5), "r_1_4_5"), ((2, 3, 4), (7,), "r_2_3_4_7"),
])
def test_kernel_names(shape: tuple, reduce_shape: tuple, name: str) -> None:
    acc = acc_variable(F32)
    reduction = Reduction(AluOp.Add, math.prod(reduce_shape), acc) if reduce_shape else None
    k = Kernel(shape=shape, inputs=(), exp=AluExp.const(1.0, F32), reduction=reduction,
               reduce_shape=reduce_shape)
    assert k.name == name


def test_text_shows_shared_subexpressions_once() -> None:
    x = load(0, gidx(8))
    e = x * x
    k = Kernel(shape=(8,), inputs=((F32, 8),), exp=e + e * 3.0)
    assert k.text().splitlines()[1:] == ["  out[gidx] = t0 = in0[gidx]",
                                         "    t1 = t0 * t0",
                                         "    t1 + (t1 * 3.0)"]


def test_equal_kernels_share_key_and_hash() -> None:
    a, b = matmul_kernel(), matmul_kernel()
    assert a == b and hash(a) == hash(b) and a.key == b.key
    assert broadcast_add_kernel().key != a.key


def test_flops_count_float_ops_per_element() -> None:
    assert matmul_kernel().flops() == 2 * 3 * 2 * 4          # mul + add per step
    assert broadcast_add_kernel().flops() == 20


# --- the cpu backend on hand-built kernels -------------------------------------

def test_elementwise_broadcast() -> None:
    np.testing.assert_array_equal(run(broadcast_add_kernel(), X, B), X + B[:, None])


def test_matmul() -> None:
    np.testing.assert_allclose(run(matmul_kernel(), A, W), A @ W, rtol=1e-6, atol=1e-6)


ACC = acc_variable(F32)
EPILOGUES = {
    "sum-scale-bias": (AluOp.Add, ACC * 0.5 + load(1, gidx(4)),
                       lambda x: x.sum(1) * np.float32(0.5) + B),
    "max-exp": (AluOp.Max, ACC.unary(AluOp.Exp), lambda x: np.exp(x.max(1))),
    "min-compare": (AluOp.Min, ACC.lt(load(1, gidx(4))), lambda x: x.min(1) < B),
    "prod-cast": (AluOp.Mul, ACC.cast(I32), lambda x: x.prod(1).astype(np.int32)),
}


@pytest.mark.parametrize("name", list(EPILOGUES))
def test_reduction_with_epilogue(name: str) -> None:
    op, epilogue, reference = EPILOGUES[name]
    out = run(reduce_rows(X, op, epilogue), X, B)
    expected = reference(X)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_integer_sum_wraps() -> None:
    x = np.full((2, 3), 2**30, np.int32)
    out = run(reduce_rows(x, AluOp.Add, acc_variable(I32)), x)
    np.testing.assert_array_equal(out, [-(2**30), -(2**30)])   # 3 * 2**30 mod 2**32


@pytest.mark.parametrize("op, dtype, identity", [
    (AluOp.Add, F32, 0.0), (AluOp.Mul, F32, 1.0), (AluOp.Max, F32, -math.inf),
    (AluOp.Min, F32, math.inf), (AluOp.Add, I32, 0), (AluOp.Mul, I32, 1),
    (AluOp.Max, I32, -2**31), (AluOp.Min, I32, 2**31 - 1), (AluOp.Max, U32, 0),
    (AluOp.Min, U32, 2**32 - 1), (AluOp.Max, BOOL, False), (AluOp.Min, BOOL, True),
    (AluOp.Max, F16, -math.inf),
], ids=str)
def test_empty_reduction_gives_identity(op: AluOp, dtype: DType, identity) -> None:
    assert reduce_identity(op, dtype) == identity
    k = Kernel(shape=(3,), inputs=(), exp=AluExp.const(7, dtype),
               reduction=Reduction(op, 0, acc_variable(dtype)), reduce_shape=(0,))
    np.testing.assert_array_equal(run(k), np.full(3, identity, dtype.np))


def test_float16_sums_accumulate_in_float32() -> None:
    x = np.full((1, 4000), 0.1, np.float16)
    out = run(reduce_rows(x, AluOp.Add, acc_variable(F16)), x)
    assert out.dtype == np.float16
    assert out[0] == x.astype(np.float32).sum().astype(np.float16) == 400.0
    assert np.cumsum(x)[-1] == 256.0   # what float16 accumulation would have given


def test_large_outputs_run_in_chunks() -> None:
    n = (1 << 20) + 3
    k = Kernel(shape=(n,), inputs=(), exp=gidx(n) % 7)
    np.testing.assert_array_equal(run(k), np.arange(n) % 7)


# --- evaluate(): the semantics every backend follows ------------------------------

def c(value, dtype: DType) -> AluExp:
    return AluExp.const(value, dtype)


NAN, INF = math.nan, math.inf
BINARY_CASES = [
    # op, dtype, a, b, expected
    (AluOp.Idiv, I32, 7, 2, 3), (AluOp.Idiv, I32, -7, 2, -3), (AluOp.Idiv, I32, 7, -2, -3),
    (AluOp.Idiv, I32, -7, -2, 3), (AluOp.Idiv, I32, 5, 0, -1), (AluOp.Idiv, I32, -5, 0, -1),
    (AluOp.Idiv, I32, -2**31, -1, -2**31), (AluOp.Idiv, U32, 5, 0, 2**32 - 1),
    (AluOp.Mod, I32, 7, 3, 1), (AluOp.Mod, I32, -7, 3, -1), (AluOp.Mod, I32, 7, -3, 1),
    (AluOp.Mod, I32, 5, 0, 5), (AluOp.Mod, F32, -7.5, 2.0, -1.5),
    (AluOp.Add, I32, 2**31 - 1, 1, -2**31), (AluOp.Sub, U32, 0, 1, 2**32 - 1),
    (AluOp.Mul, I32, 1 << 16, 1 << 16, 0),
    (AluOp.Shl, I32, 1, 31, -2**31), (AluOp.Shl, I32, 1, 33, 2), (AluOp.Shl, U32, 3, -1, 1 << 31),
    (AluOp.Shr, I32, -8, 1, -4), (AluOp.Shr, U32, 1 << 31, 31, 1), (AluOp.Shr, U32, 8, 35, 1),
    (AluOp.Max, F32, NAN, 1.0, NAN), (AluOp.Max, F32, 1.0, NAN, NAN),
    (AluOp.Min, F32, NAN, 1.0, NAN),
    (AluOp.Cmpne, F32, NAN, NAN, True), (AluOp.Cmplt, F32, NAN, 1.0, False),
    (AluOp.Cmplt, U32, 1, 2**32 - 1, True), (AluOp.Div, F32, 1.0, 0.0, INF),
    (AluOp.Xor, BOOL, True, True, False), (AluOp.And, I32, 6, 3, 2), (AluOp.Or, U32, 6, 3, 7),
]


@pytest.mark.parametrize("op, dtype, a, b, expected", BINARY_CASES,
                         ids=[f"{o.name}-{d}-{a}-{b}" for o, d, a, b, _ in BINARY_CASES])
def test_binary_semantics(op: AluOp, dtype: DType, a, b, expected) -> None:
    e = c(a, dtype).binary(op, c(b, dtype))
    assert_value(evaluate(e), expected, e.dtype)


CAST_CASES = [
    # from, to, value, expected
    (F32, I32, 3.7, 3), (F32, I32, -3.7, -3), (F32, I32, NAN, 0), (F32, I32, 1e10, 2**31 - 1),
    (F32, I32, -1e10, -2**31), (F32, I32, INF, 2**31 - 1), (F32, I32, -INF, -2**31),
    (F32, U32, -1.5, 0), (F32, U32, 5e9, 2**32 - 1), (F32, U32, NAN, 0),
    (F32, BOOL, NAN, True), (F32, BOOL, -0.0, False), (I32, BOOL, -3, True),
    (I32, U32, -1, 2**32 - 1), (U32, I32, 2**32 - 1, -1), (I32, F32, 2**24 + 1, 2.0**24),
    (F32, F16, 70000.0, INF), (BOOL, F32, True, 1.0),
]


@pytest.mark.parametrize("src, dst, value, expected", CAST_CASES,
                         ids=[f"{s}-{d}-{v}" for s, d, v, _ in CAST_CASES])
def test_cast_semantics(src: DType, dst: DType, value, expected) -> None:
    assert_value(evaluate(c(value, src).cast(dst)), expected, dst)


def test_bitcast_keeps_bits() -> None:
    assert_value(evaluate(c(1.0, F32).bitcast(U32)), 0x3F800000, U32)
    assert_value(evaluate(c(-1, I32).bitcast(U32)), 2**32 - 1, U32)


def test_where_selects_per_element() -> None:
    i = AluExp.special("i", 6)
    e = i.lt(3).where(i * 10, i * -1)
    np.testing.assert_array_equal(evaluate(e, {"i": np.arange(6)}), [0, 10, 20, -3, -4, -5])


def assert_value(actual: np.ndarray, expected, dtype: DType) -> None:
    assert actual.dtype == dtype.np
    np.testing.assert_array_equal(actual, np.array(expected).astype(dtype.np))


# Random123's known-answer tests for threefry2x32_20: (key, counter) -> output words
THREEFRY_KAT = [
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
]


@pytest.mark.parametrize("key, counter, expected", THREEFRY_KAT)
def test_threefry_known_answers(key: tuple, counter: tuple, expected: tuple) -> None:
    args = tuple(c(v, U32) for v in key + counter)
    words = [evaluate(AluExp(AluOp.Threefry2x32, U32, args, word)) for word in (0, 1)]
    assert [int(w) for w in words] == list(expected)
    assert [int(w) for w in threefry2x32(*key, *counter)] == list(expected)


def test_threefry_is_elementwise_over_counters() -> None:
    counters = np.arange(5, dtype=np.uint32)
    x0, x1 = threefry2x32(np.uint32(0), np.uint32(0), np.uint32(0), counters)
    assert x0.shape == x1.shape == (5,) and x0.dtype == np.uint32
    assert (int(x0[0]), int(x1[0])) == THREEFRY_KAT[1][2]
    assert len(set(x0.tolist())) == 5
