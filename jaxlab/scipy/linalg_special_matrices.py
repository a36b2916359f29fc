"""jax.scipy.linalg's structured matrices: Toeplitz, Hankel, circulant, block diagonal,
companion and Leslie matrices built from their entries by gathers (so they trace and
differentiate), and the fixed ones of a static size (Pascal, Hilbert and its inverse, DFT,
Hadamard, Helmert) tabulated on the host."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.numpy._util import asarray_

__all__ = ["toeplitz", "hankel", "circulant", "block_diag", "companion", "leslie", "pascal",
           "hilbert", "invhilbert", "dft", "hadamard", "helmert"]


def _common_dtype(*xs: Array) -> list[Array]:
    dtype = jnp.result_type(*xs)
    return [x.astype(dtype) for x in xs]


def _gathered(values: Array, index: np.ndarray) -> Array:
    """values[..., index] for a static 2-D index table."""
    return jnp.take(values, jnp.asarray(index.astype(np.int32)), axis=-1)


def toeplitz(c: Any, r: Any = None) -> Array:
    """T[i, j] = c[i - j] below the diagonal, r[j - i] above (r defaults to conj(c));
    leading axes of c and r are batch axes."""
    c = asarray_(c)
    r = jnp.conjugate(c) if r is None else asarray_(r)
    c, r = _common_dtype(c, r)
    n, m = c.shape[-1], r.shape[-1]
    values = jnp.concatenate([jnp.flip(r[..., 1:], axis=-1), c], axis=-1)
    rows, cols = np.indices((n, m))
    return _gathered(values, m - 1 + rows - cols)


def hankel(c: Any, r: Any = None) -> Array:
    """H[i, j] = c[i + j] while i + j < len(c), then r[i + j - len(c) + 1]."""
    c = asarray_(c)
    r = jnp.zeros_like(c) if r is None else asarray_(r)
    c, r = _common_dtype(c, r)
    n, m = c.shape[-1], r.shape[-1]
    values = jnp.concatenate([c, r[..., 1:]], axis=-1)
    rows, cols = np.indices((n, m))
    return _gathered(values, rows + cols)


def circulant(c: Any) -> Array:
    """C[i, j] = c[(i - j) mod n]."""
    c = asarray_(c)
    n = c.shape[-1]
    rows, cols = np.indices((n, n))
    return _gathered(c, (rows - cols) % n)


def block_diag(*arrs: Any) -> Array:
    """The arrays (scalars as 1x1, vectors as rows) along the diagonal, zeros elsewhere."""
    if not arrs:
        return jnp.zeros((1, 0))
    blocks = [jnp.atleast_2d(asarray_(a)) for a in arrs]
    dtype = jnp.result_type(*blocks)
    for b in blocks:
        if b.ndim != 2:
            raise ValueError("Input array must be at most 2-dimensional")
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        pad = ((0, 0), (left, width - left - b.shape[1]))
        rows.append(jnp.pad(b.astype(dtype), pad))
        left += b.shape[1]
    return jnp.concatenate(rows, axis=0)


def companion(a: Any) -> Array:
    """The companion matrix of the polynomial a[0] x^n-1 + ... + a[-1]: its first row is
    -a[1:] / a[0], ones below the diagonal (leading axes of a are batch axes)."""
    a = asarray_(a)
    if a.ndim < 1 or a.shape[-1] < 2:
        raise ValueError(f"The length of a must be at least 2; got a.shape={a.shape}")
    first = -a[..., 1:] / a[..., :1]
    n = a.shape[-1] - 1
    below = jnp.broadcast_to(jnp.eye(n - 1, n, dtype=first.dtype), a.shape[:-1] + (n - 1, n))
    return jnp.concatenate([first[..., None, :], below], axis=-2)


def leslie(f: Any, s: Any) -> Array:
    """The Leslie matrix: fecundities f on the first row, survival rates s below the
    diagonal."""
    f, s = asarray_(f), asarray_(s)
    if f.ndim != 1 or s.ndim != 1:
        raise ValueError("Incorrect shape for f or s: both must be 1-dimensional")
    n = f.shape[0]
    if s.shape[0] != n - 1:
        raise ValueError(f"Incorrect lengths for f and s. The length of s should be "
                         f"len(f)-1. len(f)={n}, len(s)={s.shape[0]}")
    dtype = jnp.result_type(f, s, jnp.float32) if n else f.dtype
    below = s.astype(dtype)[:, None] * jnp.eye(n - 1, n, dtype=dtype)
    return jnp.concatenate([f.astype(dtype)[None], below], axis=0)


def _binomials(n: int) -> np.ndarray:
    """The table C(i, j) for 0 <= i, j < 2n, exactly (Python integers)."""
    return np.array([[math.comb(i, j) for j in range(2 * n)] for i in range(2 * n)],
                    dtype=object)


def pascal(n: int, kind: str | None = None) -> Array:
    """The Pascal matrix: C(i + j, i) (symmetric), C(i, j) (lower) or C(j, i) (upper)."""
    kind = "symmetric" if kind is None else kind
    table = _binomials(n)
    rows, cols = np.indices((n, n))
    made = {"symmetric": lambda: table[rows + cols, rows], "lower": lambda: table[rows, cols],
            "upper": lambda: table[cols, rows]}
    if kind not in made:
        raise ValueError(f"Expected kind to be one of 'symmetric', 'lower', 'upper'; "
                         f"got {kind!r}")
    return jnp.asarray(made[kind]().astype(np.float64), dtype=jnp.float32)


def hilbert(n: int) -> Array:
    """H[i, j] = 1 / (i + j + 1)."""
    rows, cols = np.indices((n, n))
    return jnp.asarray(1.0 / (rows + cols + 1), dtype=jnp.float32)


def invhilbert(n: int) -> Array:
    """The inverse of hilbert(n), from its closed form in binomial coefficients."""
    table = _binomials(n + 1) if n else _binomials(1)
    out = np.zeros((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            out[i, j] = (-1) ** (i + j) * (i + j + 1) * table[n + i, n - j - 1] * \
                table[n + j, n - i - 1] * table[i + j, i] ** 2
    return jnp.asarray(out.astype(np.float64), dtype=jnp.float32)


_DFT_SCALES = {None: lambda n: 1.0, "sqrtn": lambda n: 1 / math.sqrt(n), "n": lambda n: 1 / n}


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Array:
    """The discrete Fourier transform matrix exp(-2 pi i j k / n), times 1, 1/sqrt(n) or
    1/n."""
    if scale not in _DFT_SCALES:
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
    rows, cols = np.indices((n, n))
    m = np.exp(-2j * np.pi * (rows * cols % max(n, 1)) / max(n, 1)) * _DFT_SCALES[scale](n)
    return jnp.asarray(m, dtype=jnp.complex64 if dtype is None else dtype)


def hadamard(n: int, dtype: Any = int) -> Array:
    """The Sylvester Hadamard matrix of order n, a power of 2."""
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive integer, and n must be a power of 2")
    h = np.ones((1, 1), dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False) -> Array:
    """Helmert's orthogonal contrasts: row k has k entries 1/sqrt(k(k+1)) then -k/sqrt(k(k+1));
    with full, the first row 1/sqrt(n) on top."""
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    norms = np.sqrt(np.arange(n) * np.arange(1, n + 1))
    h[1:] /= norms[1:, None]
    h[0] = 1 / math.sqrt(n) if n else h[0]
    return jnp.asarray(h if full else h[1:], dtype=jnp.float32)
