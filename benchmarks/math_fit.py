"""Where the float32 math polynomials of ir/mathconst.py come from, and what they cost
in accuracy: a minimax fit (Lawson's iteratively reweighted least squares, float64) of
each polynomial, then a dense sweep of float32 inputs through the rewritten IR
(ir/mathlib.py, evaluated in NumPy float32: no FMA) against float64 NumPy, in ulps.

    python -m benchmarks.math_fit [--points 2000001]

The webgpu device's sin and cos (backends/webgpu/ops.py) use SIN_PI_POLY; their ulps on
a device come from tests/test_webgpu_math.py.
"""
from __future__ import annotations

import argparse
from typing import Callable, Sequence

import numpy as np

from jaxlab.ir import mathconst as K
from jaxlab.ir import mathlib
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.vocabulary import Capabilities


def minimax(target: np.ndarray, weight: np.ndarray, u: np.ndarray, degree: int,
            rounds: int = 300) -> tuple[np.ndarray, float]:
    """Coefficients c (lowest power first) of sum c_k u^k ~ target minimising the largest
    weighted error on the grid u, and that error: least squares reweighted by each
    point's error (Lawson), which converges to the minimax fit."""
    a = np.stack([u ** k for k in range(degree + 1)], 1) * weight[:, None]
    b = target * weight
    w = np.full(len(u), 1.0 / len(u))
    for _ in range(rounds):
        root = np.sqrt(w)
        c = np.linalg.lstsq(a * root[:, None], b * root, rcond=None)[0]
        w = w * np.abs(a @ c - b)
        w /= w.sum()
    return c, float(np.max(np.abs(a @ c - b)))


def fit_exp(degree: int = 4) -> tuple[np.ndarray, float]:
    """e^r = 1 + r + r^2 P(r) on |r| <= ln2/2, relative error."""
    r = np.linspace(-np.log(2) / 2, np.log(2) / 2, 20001) * 1.0001
    r = r[r != 0]
    return minimax((np.expm1(r) - r) / r ** 2, r ** 2 / np.exp(r), r, degree)


def fit_sin_pi(degree: int = 3) -> tuple[np.ndarray, float]:
    """sin r = r + r^3 P(r^2) on |r| <= pi/2, relative error."""
    r = np.linspace(1e-4, np.pi / 2 * 1.0001, 20001)
    return minimax((np.sin(r) - r) / r ** 3, r ** 3 / np.sin(r), r * r, degree)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps of want rounded to float32 (want in float64)."""
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))


def sweep(build: Callable[[AluExp], AluExp], ref: Callable[[np.ndarray], np.ndarray],
          x: np.ndarray) -> tuple[float, float]:
    """(max ulps, x where) of the rewrite of build(x) over the float32 inputs x."""
    exp = mathlib.expand(build(AluExp.variable("x", DType.float32)),
                         Capabilities(native=frozenset()))
    with np.errstate(all="ignore"):
        got, want = evaluate(exp, {"x": x}), ref(x.astype(np.float64))
        finite = np.isfinite(want.astype(np.float32))
    err = ulps(got[finite], want[finite])
    return float(err.max()), float(x[finite][np.argmax(err)])


def _show(name: str, coeffs: np.ndarray, err: float, used: Sequence[float]) -> None:
    print(f"{name}: minimax relative error {err:.2e}; coefficients, highest power first:")
    print("  fit  ", ", ".join(f"{c:.9e}" for c in coeffs[::-1]))
    print("  used ", ", ".join(f"{c:.9e}" for c in used))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2_000_001)
    args = ap.parse_args(argv)
    _show("exp: P(r) of 1 + r + r^2 P(r)", *fit_exp(), K.EXP_POLY[:-2])
    _show("exp, one-sided (wasm's exp_nonpos, exp_nonneg): the same to degree 5", *fit_exp(3),
          K.EXP_POLY5[:-2])
    _show("sin on |r| <= pi/2: P(z) of r + r^3 P(r^2)", *fit_sin_pi(), K.SIN_PI_POLY)
    n = args.points
    cases = {
        "exp": (lambda v: v.unary(AluOp.Exp), np.exp, np.linspace(-104, 89, n, dtype=np.float32)),
        "exp(-x*x)": (lambda v: (v * -1.0 * v).unary(AluOp.Exp),
                      lambda v: np.exp(-(v.astype(np.float32) ** 2).astype(np.float64)),
                      np.linspace(-11, 11, n, dtype=np.float32)),
        "tanh": (lambda v: v.unary(AluOp.Tanh), np.tanh, np.linspace(-12, 12, n, dtype=np.float32)),
    }
    for name, (build, ref, x) in cases.items():
        worst, where = sweep(build, ref, x)
        print(f"{name:10s} max {worst:.3f} ulp (float64 NumPy) over {n} points, at x = {where!r}")


if __name__ == "__main__":
    main()
