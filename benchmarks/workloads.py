"""The workloads of shared/bench/WORKLOADS.md, written once per library.

Each workload gives: inputs (from a fixed seed), one function per library
taking those inputs, the work it does (bytes or flops or steps) for the
figure, and a NumPy reference to check every result before it is timed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class Workload:
    name: str
    title: str
    unit: str                                   # "GB/s", "GFLOP/s", "steps/s", ...
    inputs: Callable[[str], tuple]             # size class ("cpu" | "gpu") -> numpy inputs
    work: Callable[[tuple], float]             # units of work per call (bytes, flops, 1)
    numpy: Callable[..., Any]
    build: dict[str, Callable[[Any], Callable]]  # library -> (module) -> fn(*inputs)
    rtol: float = 1e-4


def _rng() -> np.random.Generator:
    return np.random.default_rng(1234)


# --- W1: fused elementwise chain ----------------------------------------------------
def _w1_np(x):
    return np.tanh(x * 1.5 + 0.3) * np.exp(-x * x) + np.sin(x)


def _w1(m):
    return lambda x: m.tanh(x * 1.5 + 0.3) * m.exp(-x * x) + m.sin(x)


# --- W2: row softmax ----------------------------------------------------------------
def _w2_np(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _w2(m):
    def f(x):
        e = m.exp(x - m.max(x, axis=1, keepdims=True))
        return e / m.sum(e, axis=1, keepdims=True)
    return f


# --- W3: matmul -----------------------------------------------------------------------
def _w3(m):
    return lambda a, b: a @ b


# --- W4: MLP training step ---------------------------------------------------------------
LAYERS = (784, 512, 512, 10)
BATCH = 256
LR = 0.01


def _w4_inputs(_: str) -> tuple:
    r = _rng()
    params = []
    for i, o in zip(LAYERS[:-1], LAYERS[1:]):
        params.append((r.standard_normal((i, o)).astype(np.float32) / math.sqrt(i),
                       np.zeros(o, np.float32)))
    x = r.standard_normal((BATCH, LAYERS[0])).astype(np.float32)
    labels = r.integers(0, LAYERS[-1], BATCH)
    y = np.eye(LAYERS[-1], dtype=np.float32)[labels]
    return (params, x, y)


def _mlp_loss(m, nn_log_softmax):
    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = m.maximum(h, 0.0)
        return -m.mean(m.sum(nn_log_softmax(h) * y, axis=1))
    return loss


def _log_softmax(m):
    def f(z):
        z = z - m.max(z, axis=1, keepdims=True)
        return z - m.log(m.sum(m.exp(z), axis=1, keepdims=True))
    return f


def _w4_step(lib):
    """jit(value_and_grad) + SGD, for jaxlab or jax (same API)."""
    m = lib.numpy
    loss = _mlp_loss(m, _log_softmax(m))

    @lib.jit
    def step(params, x, y):
        val, grads = lib.value_and_grad(loss)(params, x, y)
        new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
        return new, val
    return step


def _w4_np(params, x, y):
    """One SGD step in NumPy (float64 for the reference loss)."""
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0.0)
    z = h - h.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.mean(np.sum(logp * y, axis=1))


# --- W5: conv2d -----------------------------------------------------------------------------
def _w5_np(x, w):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    return np.einsum("nchwij,ocij->nohw", cols, w, optimize=True)


def _w5(lax):
    return lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME")


# --- W6: sort and cholesky --------------------------------------------------------------------
def _w6_inputs(size: str) -> tuple:
    r = _rng()
    n = 1 << 20 if size == "cpu" else 1 << 24
    a = r.standard_normal((512, 512)).astype(np.float32)
    spd = (a @ a.T / 512 + np.eye(512, dtype=np.float32)).astype(np.float32)
    return (r.standard_normal(n).astype(np.float32), spd)


# --- W6's parts apart, for the GPU table: sort of 16M floats, Cholesky of one 512x512
# matrix and of a batch of 64 256x256 (issue 13 names torch's figures for each) ----------
def _sort_input(size: str) -> tuple:
    return (_rng().standard_normal(1 << 20 if size == "cpu" else 1 << 24).astype(np.float32),)


def _spd(batch: tuple, n: int) -> np.ndarray:
    a = _rng().standard_normal(batch + (n, n)).astype(np.float32)
    return (a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _cholesky_input(_: str) -> tuple:
    return (_spd((), 512),)


def _batched_cholesky_input(_: str) -> tuple:
    return (_spd((64,), 256),)


# --- the wasm device's other factorizations at 512, against JAX: a triangular solve
# (a well-conditioned lower factor, 512 right-hand sides) and LU with partial pivoting ------
def _triangular_input(_: str) -> tuple:
    low = np.linalg.cholesky(_spd((), 512).astype(np.float64)).astype(np.float32)
    return low, _rng().standard_normal((512, 512)).astype(np.float32)


def _triangular_solve(m):
    return lambda low, b: m.lax.linalg.triangular_solve(low, b, left_side=True, lower=True)


def _lu_input(_: str) -> tuple:
    return (_rng().standard_normal((512, 512)).astype(np.float32),)


def _lu(m):
    return lambda a: m.lax.linalg.lu(a)[0]


def _lu_np(a: np.ndarray) -> np.ndarray:
    """LU with partial pivoting (LAPACK's getrf order), L and U packed: the reference."""
    lu = a.astype(np.float64)
    for k in range(lu.shape[0] - 1):
        p = k + int(np.argmax(np.abs(lu[k:, k])))
        lu[[k, p]] = lu[[p, k]]
        lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu


def _sort(m):
    return lambda x: m.sort(x)


def _cholesky(m):
    return lambda a: m.linalg.cholesky(a)


# --- EIGH, SVD: decompositions of one 256x256 matrix -----------------------------------------
# Vectors are compared through their absolute values: their signs are not defined.
DECOMP_N = 256


def _symmetric_input(_: str) -> tuple:
    a = _rng().standard_normal((DECOMP_N, DECOMP_N)).astype(np.float32)
    return ((a + a.T).astype(np.float32),)


def _general_input(_: str) -> tuple:
    return (_rng().standard_normal((DECOMP_N, DECOMP_N)).astype(np.float32),)


def _eigh(m):
    def f(a):
        w, v = m.linalg.eigh(a)
        return w, m.abs(v)
    return f


def _svd(m):
    def f(a):
        u, s, vh = m.linalg.svd(a)
        return s, m.abs(u), m.abs(vh)
    return f


def _qr(m):
    # LAPACK's reflectors on every side: q and r themselves, signs included
    return lambda a: m.linalg.qr(a)


# --- W8/W9: FFT of complex64 (one long transform; a batch of rows) ----------------------
def _complex_signal(shape: tuple) -> tuple:
    r = _rng()
    return ((r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(np.complex64),)


def _fft_flops(inp: tuple) -> float:
    """5 n log2 n per transform of n points (the conventional count), in GFLOP."""
    x = inp[0]
    n = x.shape[-1]
    return 5 * n * math.log2(n) * (x.size // n) / 1e9


def _fft(m):
    return lambda x: m.fft.fft(x)


_FFT_BUILD = {"jaxlab": lambda lib: lib.jit(_fft(lib.numpy)),
              "jax": lambda lib: lib.jit(_fft(lib.numpy)), "numpy": lambda lib: _fft(np)}


WORKLOADS: dict[str, Workload] = {
    "W1": Workload(
        "W1", "fused elementwise chain (jit)", "GB/s",
        lambda s: (_rng().standard_normal(4 << 20 if s == "cpu" else 64 << 20)
                   .astype(np.float32),),
        lambda inp: inp[0].nbytes * 2 / 1e9, _w1_np,
        {"jaxlab": lambda lib: lib.jit(_w1(lib.numpy)), "jax": lambda lib: lib.jit(_w1(lib.numpy)),
         "numpy": lambda lib: _w1(np)}, rtol=1e-4),
    "W2": Workload(
        "W2", "row softmax (jit)", "GB/s",
        lambda s: (_rng().standard_normal((4096, 1024) if s == "cpu" else (16384, 4096))
                   .astype(np.float32),),
        lambda inp: inp[0].nbytes * 2 / 1e9, _w2_np,
        {"jaxlab": lambda lib: lib.jit(_w2(lib.numpy)), "jax": lambda lib: lib.jit(_w2(lib.numpy)),
         "numpy": lambda lib: _w2(np)}, rtol=1e-4),
    "W3": Workload(
        "W3", "matmul a @ b", "GFLOP/s",
        lambda s: tuple(_rng().standard_normal((n, n)).astype(np.float32)
                        for n in [1024 if s == "cpu" else 4096] * 2),
        lambda inp: 2 * inp[0].shape[0] ** 3 / 1e9, lambda a, b: a @ b,
        {"jaxlab": lambda lib: lib.jit(_w3(lib.numpy)), "jax": lambda lib: lib.jit(_w3(lib.numpy)),
         "numpy": lambda lib: _w3(np)}, rtol=1e-3),
    "W4": Workload(
        "W4", "MLP train step 784-512-512-10, batch 256", "steps/s",
        _w4_inputs, lambda inp: 1.0, _w4_np,
        {"jaxlab": _w4_step, "jax": _w4_step}, rtol=1e-3),
    "W5": Workload(
        "W5", "conv2d 3x3 SAME NCHW", "GFLOP/s",
        lambda s: (_rng().standard_normal((8, 32, 64, 64) if s == "cpu" else (32, 64, 128, 128))
                   .astype(np.float32),
                   _rng().standard_normal((64, 32, 3, 3) if s == "cpu" else (128, 64, 3, 3))
                   .astype(np.float32)),
        lambda inp: 2 * math.prod(inp[0].shape[:1] + inp[0].shape[2:]) * math.prod(
            inp[1].shape) / 1e9,
        _w5_np,
        {"jaxlab": lambda lib: lib.jit(_w5(lib.lax)), "jax": lambda lib: lib.jit(_w5(lib.lax)),
         "numpy": lambda lib: _w5_np}, rtol=1e-3),
    "W6": Workload(
        "W6", "sort 1M floats + cholesky 512", "Melem/s",
        _w6_inputs, lambda inp: inp[0].size / 1e6,
        lambda x, a: (np.sort(x), np.linalg.cholesky(a)),
        {"jaxlab": lambda lib: lambda x, a: (lib.numpy.sort(x), lib.numpy.linalg.cholesky(a)),
         "jax": lambda lib: lib.jit(lambda x, a: (lib.numpy.sort(x),
                                                  lib.numpy.linalg.cholesky(a))),
         "numpy": lambda lib: lambda x, a: (np.sort(x), np.linalg.cholesky(a))}, rtol=1e-3),
    "SORT": Workload(
        "SORT", "sort of 1M float32 values (16M on the GPU)", "Melem/s", _sort_input,
        lambda inp: inp[0].size / 1e6, _sort(np),
        {"jaxlab": lambda lib: lib.jit(_sort(lib.numpy)), "jax": lambda lib: lib.jit(_sort(lib.numpy)),
         "numpy": lambda lib: _sort(np)}),
    "CHOL": Workload(
        "CHOL", "cholesky of a 512x512 matrix", "calls/s", _cholesky_input, lambda inp: 1.0,
        _cholesky(np),
        {"jaxlab": lambda lib: lib.jit(_cholesky(lib.numpy)),
         "jax": lambda lib: lib.jit(_cholesky(lib.numpy)), "numpy": lambda lib: _cholesky(np)},
        rtol=1e-3),
    "CHOLB": Workload(
        "CHOLB", "cholesky of a batch of 64 256x256 matrices", "calls/s",
        _batched_cholesky_input, lambda inp: 1.0, _cholesky(np),
        {"jaxlab": lambda lib: lib.jit(_cholesky(lib.numpy)),
         "jax": lambda lib: lib.jit(_cholesky(lib.numpy)), "numpy": lambda lib: _cholesky(np)},
        rtol=1e-3),
    "TRSM": Workload(
        "TRSM", "triangular solve L x = b, L 512x512 lower, 512 right-hand sides", "GFLOP/s",
        _triangular_input, lambda inp: 512 ** 3 / 1e9, lambda low, b: np.linalg.solve(low, b),
        {"jaxlab": lambda lib: lib.jit(_triangular_solve(lib)),
         "jax": lambda lib: lib.jit(_triangular_solve(lib))}, rtol=1e-3),
    "LU": Workload(
        "LU", "lu of a 512x512 matrix, partial pivoting (the packed factors timed with the rest)",
        "GFLOP/s", _lu_input, lambda inp: 2 * 512 ** 3 / 3 / 1e9, _lu_np,
        {"jaxlab": lambda lib: lib.jit(_lu(lib)), "jax": lambda lib: lib.jit(_lu(lib))}, rtol=1e-3),
    "EIGH": Workload(
        "EIGH", f"eigh of a {DECOMP_N}x{DECOMP_N} symmetric matrix (values and vectors)",
        "calls/s", _symmetric_input, lambda inp: 1.0, _eigh(np),
        {"jaxlab": lambda lib: lib.jit(_eigh(lib.numpy)), "jax": lambda lib: lib.jit(_eigh(lib.numpy)),
         "numpy": lambda lib: _eigh(np)}, rtol=1e-3),
    "SVD": Workload(
        "SVD", f"svd of a {DECOMP_N}x{DECOMP_N} matrix (u, s, vh)", "calls/s",
        _general_input, lambda inp: 1.0, _svd(np),
        {"jaxlab": lambda lib: lib.jit(_svd(lib.numpy)), "jax": lambda lib: lib.jit(_svd(lib.numpy)),
         "numpy": lambda lib: _svd(np)}, rtol=1e-3),
    "QR": Workload(
        "QR", f"qr of a {DECOMP_N}x{DECOMP_N} matrix (q, r)", "calls/s",
        _general_input, lambda inp: 1.0, _qr(np),
        {"jaxlab": lambda lib: lib.jit(_qr(lib.numpy)),
         "jax": lambda lib: lib.jit(_qr(lib.numpy)), "numpy": lambda lib: _qr(np)}, rtol=1e-3),
    "W8": Workload(
        "W8", "FFT of 2^20 complex64 (one transform)", "GFLOP/s",
        lambda s: _complex_signal((1 << 20 if s == "cpu" else 1 << 24,)),
        _fft_flops, lambda x: np.fft.fft(x), _FFT_BUILD, rtol=1e-5),
    "W9": Workload(
        "W9", "FFT of 1024 rows of 1024 complex64", "GFLOP/s",
        lambda s: _complex_signal((1024 if s == "cpu" else 16384, 1024)),
        _fft_flops, lambda x: np.fft.fft(x), _FFT_BUILD, rtol=1e-5),
}
