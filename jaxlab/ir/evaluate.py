"""evaluate(): the meaning of every AluOp, written with NumPy over whole arrays.

This table is the semantic reference for all backends: integer division
truncates (by zero gives -1, modulo by zero gives the dividend, as XLA),
float-to-int casts truncate and saturate with NaN -> 0, shifts use the low 5
bits of the amount.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType, uncanonical
from jaxlab.ir.mathconst import ERF_SERIES_BELOW, ERF_SERIES_TERMS, ERFC_COEFFS, TWO_OVER_SQRT_PI


def _idiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) if a.dtype.kind == "u" else _trunc_div_signed(a, safe)
    return np.where(b == 0, np.array(-1).astype(a.dtype), q).astype(a.dtype)


def _magnitude(v: np.ndarray) -> np.ndarray:
    """|v| as uint64: |INT64_MIN| = 2^63 has no int64 (np.abs leaves it negative)."""
    return np.abs(v.astype(np.int64)).astype(np.uint64)


def _trunc_div_signed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = (_magnitude(a) // _magnitude(b)).astype(np.int64)
    return (np.where((a < 0) != (b < 0), -q, q)).astype(a.dtype)


def _mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if _floating(a):
        return np.fmod(a, b)
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, a, np.fmod(a, safe)).astype(a.dtype)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.true_divide(a, b).astype(a.dtype)


def _floating(a: np.ndarray) -> bool:
    return uncanonical(a.dtype).is_float   # bfloat16's NumPy kind is "V"


def cast_array(x: np.ndarray, dtype: DType) -> np.ndarray:
    """NumPy cast with XLA's float->int rule: truncate, saturate, NaN -> 0."""
    target = dtype.np
    if _floating(x) and dtype.is_int:
        lo, hi = dtype.bounds
        x = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
        # float64 rounds a 64-bit bound up past it: saturate those by comparison
        out = np.clip(x, lo, hi).astype(target)
        return np.where(x >= float(hi), np.array(hi, target), out)
    if dtype is DType.bool:
        return x != 0
    return x.astype(target)


def _shift(fn: Callable) -> Callable:
    """Shifts use the amount's low 5 bits (6 for 64-bit values)."""
    return lambda a, b: fn(a, (b & (63 if a.itemsize == 8 else 31)).astype(a.dtype)) \
        .astype(a.dtype)


def _threefry(k0, k1, c0, c1, which: int) -> np.ndarray:
    return threefry2x32(k0, k1, c0, c1)[which]


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(k0, k1, c0, c1) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011), as JAX uses it.
    Arguments are anything NumPy converts to uint32 (arrays broadcast)."""
    k0, k1, c0, c1 = np.broadcast_arrays(*(np.asarray(v, np.uint32) for v in (k0, k1, c0, c1)))
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA))
    with np.errstate(over="ignore"):   # uint32 arithmetic wraps by design
        x0, x1 = c0 + ks[0], c1 + ks[1]
        for group in range(5):
            for r in _ROTATIONS[group % 2]:
                x0 = x0 + x1
                x1 = ((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))) ^ x0
            x0 = x0 + ks[(group + 1) % 3]
            x1 = x1 + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x0, x1


# Chebyshev-fitted erfc (fractional error < 1.2e-7 for all x), and a Taylor
# series for erf near zero where 1 - erfc would cancel (mathconst's constants).
def _erfc64(x: np.ndarray) -> np.ndarray:
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = np.zeros_like(t)
    for c in reversed(ERFC_COEFFS[1:]):
        poly = (poly + c) * t
    r = t * np.exp(-z * z + ERFC_COEFFS[0] + poly)
    return np.where(x >= 0, r, 2.0 - r)


def _erf64(x: np.ndarray) -> np.ndarray:
    x2, term, series = x * x, x.copy(), x.copy()
    for n in range(1, ERF_SERIES_TERMS + 1):
        term = term * -x2 / n
        series = series + term / (2 * n + 1)
    small = series * TWO_OVER_SQRT_PI
    return np.where(np.abs(x) < ERF_SERIES_BELOW, small, 1.0 - _erfc64(x))


def _erf(x: np.ndarray) -> np.ndarray:
    return _erf64(x.astype(np.float64)).astype(x.dtype)


def _erfc(x: np.ndarray) -> np.ndarray:
    return _erfc64(x.astype(np.float64)).astype(x.dtype)


def _float_unary(fn: Callable) -> Callable:
    return lambda x: fn(x).astype(x.dtype)


EVAL_TABLE: dict[AluOp, Callable] = {
    AluOp.Add: lambda a, b: (a + b).astype(a.dtype),
    AluOp.Sub: lambda a, b: (a - b).astype(a.dtype),
    AluOp.Mul: lambda a, b: (a * b).astype(a.dtype),
    AluOp.Div: _div,
    AluOp.Idiv: _idiv,
    AluOp.Mod: _mod,
    AluOp.Min: np.minimum,
    AluOp.Max: np.maximum,
    AluOp.Cmplt: np.less,
    AluOp.Cmpne: np.not_equal,
    AluOp.And: np.bitwise_and,
    AluOp.Or: np.bitwise_or,
    AluOp.Xor: np.bitwise_xor,
    AluOp.Shl: _shift(np.left_shift),
    AluOp.Shr: _shift(np.right_shift),
    AluOp.Where: lambda c, a, b: np.where(c, a, b).astype(a.dtype),
    AluOp.Sin: _float_unary(np.sin),
    AluOp.Cos: _float_unary(np.cos),
    AluOp.Asin: _float_unary(np.arcsin),
    AluOp.Atan: _float_unary(np.arctan),
    AluOp.Exp: _float_unary(np.exp),
    AluOp.Log: _float_unary(np.log),
    AluOp.Sqrt: _float_unary(np.sqrt),
    AluOp.Reciprocal: _float_unary(np.reciprocal),
    AluOp.Floor: _float_unary(np.floor),
    AluOp.Ceil: _float_unary(np.ceil),
    AluOp.Erf: _erf,
    AluOp.Erfc: _erfc,
    AluOp.Tanh: _float_unary(np.tanh),
}


def evaluate(exp: AluExp, env: Mapping[str, np.ndarray] | None = None,
             buffers: Sequence[np.ndarray] = ()) -> np.ndarray:
    """Evaluate over NumPy arrays; Special/Variable names are looked up in env.

    Every node is computed once (the DAG is walked in topological order), and
    arrays broadcast against each other, so index variables shaped (n, 1) and
    (1, r) give an (n, r) result.
    """
    env = env or {}
    values: dict[AluExp, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for node in exp.toposort():
            values[node] = _eval_node(node, [values[s] for s in node.src], env, buffers)
    return values[exp]


def _eval_node(node: AluExp, args: list, env: Mapping, buffers: Sequence) -> np.ndarray:
    op = node.op
    if op is AluOp.Const:
        return np.array(node.arg, dtype=node.dtype.np)
    if op is AluOp.Special:
        return _lookup(env, node.arg[0])
    if op is AluOp.Variable:
        return _lookup(env, node.arg)
    if op is AluOp.GlobalIndex:
        buf = buffers[node.arg]
        if buf.size == 0:
            return np.zeros(np.shape(args[0]), dtype=node.dtype.np)
        return np.take(buf.reshape(-1), args[0], mode="clip")
    if op is AluOp.Cast:
        return cast_array(np.asarray(args[0]), node.dtype)
    if op is AluOp.Bitcast:
        return np.asarray(args[0]).view(node.dtype.np)
    if op is AluOp.Threefry2x32:
        return _threefry(*args, node.arg)
    if op in (AluOp.GlobalView, AluOp.Valid):
        raise ValueError("evaluate() needs a lowered kernel: view leaves have no index yet")
    return np.asarray(EVAL_TABLE[op](*(np.asarray(a) for a in args)))


def _lookup(env: Mapping, name: str) -> np.ndarray:
    if name not in env:
        raise KeyError(f"evaluate(): no value given for index/variable {name!r}")
    return np.asarray(env[name])
