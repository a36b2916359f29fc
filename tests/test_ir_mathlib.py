"""The shared op vocabulary: float math as IR rewrites (ir/mathlib.py), checked in ulps
by evaluating the rewritten IR with NumPy float32, and the kinds and cast rules."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlab.ir import mathlib
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import EVAL_TABLE, evaluate
from jaxlab.ir.floatsign import Sign, sign_of
from jaxlab.ir.kernel import Kernel
from jaxlab.ir.mathconst import two_over_pi_chunks
from jaxlab.ir.vocabulary import FLOAT_MATH, Capabilities, Cast, Kind, cast_rule, kind_of
from tests.ir_helpers import gidx, load

F32, F16 = DType.float32, DType.float16
EXPAND_ALL = Capabilities(native=frozenset())

# (op, sample range, max ulps of NumPy's float32 answer (erf/erfc: evaluate's float64 formula))
CASES = {"exp": (AluOp.Exp, (-87, 88), 2), "log": (AluOp.Log, (1e-30, 1e30), 2),
         "tanh": (AluOp.Tanh, (-10, 10), 2), "atan": (AluOp.Atan, (-100, 100), 2),
         "asin": (AluOp.Asin, (-1, 1), 2), "erf": (AluOp.Erf, (-5, 5), 3),
         "erfc": (AluOp.Erfc, (-5, 10), 5)}
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, -3e38, 1.0, -1.0,
                  2.0, 0.5, 89.0, -104.0, 1e7], np.float32)


def _rewritten(op: AluOp, x: np.ndarray, dtype: DType = F32) -> np.ndarray:
    exp = mathlib.expand(AluExp.variable("x", dtype).unary(op), EXPAND_ALL)
    assert not {n.op for n in exp.toposort()} & FLOAT_MATH   # only primitive ops are left
    return evaluate(exp, {"x": x})


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrites_within_their_ulps(name: str) -> None:
    op, (lo, hi), ulps = CASES[name]
    rng = np.random.default_rng(1)
    if name == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 4001)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, 4001).astype(np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_max_ulp(_rewritten(op, x), EVAL_TABLE[op](x), maxulp=ulps)
        np.testing.assert_array_max_ulp(_rewritten(op, EDGES), EVAL_TABLE[op](EDGES), maxulp=ulps)


def test_float16_math_is_computed_in_float32_and_rounded_once() -> None:
    x = np.linspace(-10, 10, 301).astype(np.float16)
    got = _rewritten(AluOp.Tanh, x, F16)
    assert got.dtype == np.float16
    np.testing.assert_array_max_ulp(got, np.tanh(x.astype(np.float32)).astype(np.float16), 1)


def test_native_ops_are_left_to_the_renderer() -> None:
    x = AluExp.variable("x", F32)
    body = x.unary(AluOp.Sin) + x.unary(AluOp.Exp)
    out = mathlib.expand(body, Capabilities(native=frozenset({AluOp.Sin, AluOp.Exp})))
    assert out is body
    ops = {n.op for n in mathlib.expand(body, Capabilities(native=frozenset({AluOp.Sin})))
           .toposort()}
    assert AluOp.Sin in ops and AluOp.Exp not in ops


def test_expand_kernel_keeps_a_kernel_without_math() -> None:
    k = Kernel(shape=(4,), inputs=((F32, 4),), exp=load(0, gidx(4)) * 2.0)
    assert mathlib.expand_kernel(k, EXPAND_ALL) is k
    k2 = Kernel(shape=(4,), inputs=((F32, 4),), exp=load(0, gidx(4)).unary(AluOp.Log))
    assert AluOp.Log not in {n.op for n in mathlib.expand_kernel(k2, EXPAND_ALL).exp.toposort()}


def test_two_over_pi_table_is_exact() -> None:
    words = two_over_pi_chunks(32, 3)
    value = sum(w << (32 * (2 - i)) for i, w in enumerate(words)) / 2.0 ** 96
    assert abs(value - 2 / np.pi) < 1e-15 and words[0] == 0xA2F9836E
    assert two_over_pi_chunks(24, 2) == [0xA2F983, 0x6E4E44]


def test_kinds_and_cast_rules() -> None:
    assert kind_of(DType.float16) is kind_of(F32) is Kind.FLOAT
    assert cast_rule(Kind.FLOAT, Kind.INT) is Cast.SATURATE
    assert cast_rule(Kind.INT, Kind.UINT) is Cast.WRAP
    assert cast_rule(Kind.UINT, Kind.FLOAT) is Cast.CONVERT
    assert cast_rule(Kind.FLOAT, Kind.BOOL) is Cast.NONZERO
    assert cast_rule(Kind.BOOL, Kind.INT) is Cast.FROM_BOOL
    assert cast_rule(Kind.INT, Kind.INT) is Cast.SAME


def test_known_signs_drop_a_side_of_exps_clamp() -> None:
    x = AluExp.variable("x", F32)
    assert sign_of(x * -1.0 * x) is Sign.NONPOS and sign_of(x * x + 1.0) is Sign.NONNEG
    assert sign_of(x * 2.0) is None and sign_of(0.0 - x * x) is Sign.NONPOS
    assert sign_of((x * x) * (x * -3.0)) is None    # x^3: the sign of x
    ops = [n.op for n in mathlib.expand((x * -1.0 * x).unary(AluOp.Exp), EXPAND_ALL).toposort()]
    assert AluOp.Max in ops and AluOp.Min not in ops     # e^(-x^2) <= 1: no overflow clamp
    x = np.array([-0.0, 1e-3, 3.0, 9.5, 10.5, 13.0, np.inf, np.nan], np.float32)
    with np.errstate(all="ignore"):
        want = np.exp(-x * x)
    v = AluExp.variable("x", F32)
    np.testing.assert_array_max_ulp(_rewritten(AluOp.Exp, -x * x), want, maxulp=2)
    got = evaluate(mathlib.expand((v * -1.0 * v).unary(AluOp.Exp), EXPAND_ALL), {"x": x})
    np.testing.assert_array_max_ulp(got, want, maxulp=2)
