"""Routines written with NumPy over whole (batched) arrays.

The cpu backend runs these directly; other CPU backends may run them on
zero-copy views of their own memory. Semantics follow jax.lax.linalg:
a failed Cholesky gives NaNs instead of raising.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from jaxlab.ir.kernel import Routine


def _sort(x: np.ndarray, **_) -> list[np.ndarray]:
    return [np.sort(x, axis=-1)]   # values only: stability cannot be observed


def _argsort(x: np.ndarray, **_) -> list[np.ndarray]:
    return [np.argsort(x, axis=-1, kind="stable").astype(np.int32)]


def _cholesky(a: np.ndarray, **_) -> list[np.ndarray]:
    a64 = a.astype(np.float64)
    out = np.full_like(a64, np.nan)
    flat = (math.prod(a.shape[:-2]), *a.shape[-2:])   # not -1: a 0x0 matrix has size 0
    flat_in, flat_out = a64.reshape(flat), out.reshape(flat)
    for i, m in enumerate(flat_in):   # one LAPACK call per matrix, so one failure stays local
        try:
            flat_out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            pass
    return [out.astype(a.dtype)]


def _triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                      transpose_a: bool, unit_diagonal: bool) -> list[np.ndarray]:
    """Solve op(a) x = b (left_side) or x op(a) = b, with a triangular."""
    a64 = np.tril(a) if lower else np.triu(a)
    a64 = a64.astype(np.float64)
    if unit_diagonal:
        n = a.shape[-1]
        a64[..., np.arange(n), np.arange(n)] = 1.0
    if transpose_a:
        a64 = np.swapaxes(a64, -1, -2)
    b64 = b.astype(np.float64)
    if left_side:
        x = np.linalg.solve(a64, b64)
    else:  # x A = b  <=>  A^T x^T = b^T
        x = np.swapaxes(np.linalg.solve(np.swapaxes(a64, -1, -2), np.swapaxes(b64, -1, -2)),
                        -1, -2)
    return [x.astype(b.dtype)]


def _lu(a: np.ndarray, **_) -> list[np.ndarray]:
    """LU with partial pivoting: (lu, pivots, permutation) as jax.lax.linalg.lu."""
    m, n = a.shape[-2:]
    lu = a.astype(np.float64).reshape(math.prod(a.shape[:-2]), m, n).copy()
    batch = lu.shape[0]
    k = min(m, n)
    pivots = np.zeros((batch, k), np.int32)
    perm = np.tile(np.arange(m, dtype=np.int32), (batch, 1))
    rows = np.arange(batch)
    for j in range(k):   # a loop over columns, vectorised over the batch and the rows
        p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
        pivots[:, j] = p
        lu[rows, j], lu[rows, p] = lu[rows, p].copy(), lu[rows, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p].copy(), perm[rows, j].copy()
        pivot = lu[:, j, j:j + 1]
        with np.errstate(all="ignore"):
            lu[:, j + 1:, j] = np.where(pivot != 0, lu[:, j + 1:, j] / pivot, 0.0)
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    shape = a.shape[:-2]
    return [lu.reshape(a.shape).astype(a.dtype), pivots.reshape(*shape, k),
            perm.reshape(*shape, m)]


ROUTINE_IMPLS: dict[str, Callable[..., list[np.ndarray]]] = {
    "sort": _sort, "argsort": _argsort, "cholesky": _cholesky,
    "triangular_solve": _triangular_solve, "lu": _lu,
}


def run_routine(routine: Routine, inputs: list[np.ndarray]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return ROUTINE_IMPLS[routine.name](*inputs, **routine.param)
