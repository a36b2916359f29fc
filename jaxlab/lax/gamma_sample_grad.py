"""lax.random_gamma_grad: how a Gamma(a, 1) sample moves when `a` moves with the
sample's quantile held fixed (the implicit reparameterisation gradient).

With P(a, x) the regularized lower incomplete gamma function and u = P(a, x) fixed,
dx/da = -(dP/da) / (dP/dx), and dP/dx = x^(a-1) e^-x / Gamma(a). dP/da comes from
P's power series where x <= max(1, a) and from the continued fraction of Q = 1 - P
elsewhere, each carried with its derivative in `a` term by term (forward mode by
hand), until the derivative's terms stop changing it (float epsilon), as XLA does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.api import jit
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType, to_dtype
from jaxlab.lax.control_flow import while_loop
from jaxlab.lax.special import digamma, lgamma
from jaxlab.numpy._util import asarray_

__all__ = ["random_gamma_grad"]

_MAX_FRACTION_TERMS = 2000   # the continued fraction converges long before for float32


def _series(a: Array, x: Array, active: Array, eps: float) -> tuple[Array, Array]:
    """S = sum_n x^n / ((a+1)...(a+n)) and dS/da, for P = x^a e^-x S / Gamma(a+1)."""
    def running(state: tuple) -> Array:
        return jnp.any(state[0])

    def step(state: tuple) -> tuple:
        active, denom, term, total, d_term, d_total = state
        denom_next = denom + 1
        ratio = x / denom_next
        d_term_next = d_term * ratio - term * x / (denom_next * denom_next)
        term_next = term * ratio
        total_next, d_total_next = total + term_next, d_total + d_term_next
        going = active & (jnp.abs(d_term_next / d_total_next) > eps)
        new = (denom_next, term_next, total_next, d_term_next, d_total_next)
        old = (denom, term, total, d_term, d_total)
        return (going,) + tuple(jnp.where(active, n, o) for n, o in zip(new, old))

    one, zero = jnp.ones_like(a), jnp.zeros_like(a)
    out = while_loop(running, step, (active, a, one, one, zero, zero))
    return out[3], out[5]


def _continued_fraction(a: Array, x: Array, active: Array, eps: float) -> tuple[Array, Array]:
    """F and dF/da with Q = x^a e^-x F / Gamma(a): Legendre's continued fraction, its
    convergents p/q by the three-term recurrence (rescaled when they grow past 1/eps)."""
    def running(state: tuple) -> Array:
        return jnp.any(state[0]) & (state[1] < _MAX_FRACTION_TERMS)

    def step(state: tuple) -> tuple:
        active, n, frac, y, z, p1, q1, p2, q2, dp1, dq1, dp2, dq2, d_frac = state
        n = n + 1
        y, z = y + 1, z + 2
        yn = y * n
        p, q = p1 * z - p2 * yn, q1 * z - q2 * yn
        # d/da of y is -1 and of z is -1, so d(y n)/da = -n
        dp = dp1 * z - p1 - dp2 * yn + p2 * n
        dq = dq1 * z - q1 - dq2 * yn + q2 * n
        defined = q != 0
        frac_next = jnp.where(defined, p / q, frac)
        d_frac_next = jnp.where(defined, (dp - frac_next * dq) / q, d_frac)
        change = jnp.where(defined, jnp.abs(d_frac_next - d_frac), 1.0)
        big = jnp.abs(p) > 1 / eps
        scaled = [jnp.where(big, v * eps, v) for v in (p, q, p1, q1, dp, dq, dp1, dq1)]
        new = (frac_next, y, z, *scaled, d_frac_next)
        old = state[2:]
        going = active & (change > eps)
        return (going, n) + tuple(jnp.where(active, v, o) for v, o in zip(new, old))

    y = 1 - a
    z = x + y + 1
    p2, q2, p1, q1 = jnp.ones_like(x), x, x + 1, z * x
    frac = p1 / q1
    zero = jnp.zeros_like(x)
    d_q1 = -x
    d_frac = (zero - frac * d_q1) / q1
    state = (active, jnp.zeros((), x.jdtype), frac, y, z, p1, q1, p2, q2,
             zero, d_q1, zero, zero, d_frac)
    out = while_loop(running, step, state)
    return out[2], out[13]


def random_gamma_grad(a: Any, x: Any) -> Array:
    """d sample / d a for samples x of Gamma(a, 1), elementwise (a and x broadcast)."""
    a, x = asarray_(a), asarray_(x)
    dtype = jnp.result_type(a, x)
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"random_gamma_grad: a and x must be floating point, got {dtype}")
    narrow = np.dtype(dtype).itemsize < 4    # computed in float32 and rounded, as XLA
    work = DType.float32 if narrow else to_dtype(dtype)
    a, x = jnp.broadcast_arrays(a.astype(work), x.astype(work))
    return _compiled_grad(a, x).astype(dtype)


def _grad(a: Array, x: Array) -> Array:
    eps = float(np.finfo(a.jdtype.np).eps)
    invalid = jnp.isnan(a) | jnp.isnan(x) | (x < 0) | (a <= 0)
    log_density = a * jnp.log(x) - x - lgamma(a)
    underflow = log_density < -float(np.log(np.finfo(a.jdtype.np).max))
    active = ~(invalid | underflow | (x == 0))
    use_fraction = (x > 1) & (x > a)
    total, d_total = _series(a, x, active & ~use_fraction, eps)
    frac, d_frac = _continued_fraction(a, x, active & use_fraction, eps)
    by_series = -(d_total + total * (jnp.log(x) - digamma(a + 1))) * x / a
    by_fraction = (d_frac + frac * (jnp.log(x) - digamma(a))) * x
    out = jnp.where(use_fraction, by_fraction, by_series)
    out = jnp.where(x == 0, 0.0, out)
    return jnp.where(invalid, np.nan, out)


# compiled once per shape, dtype and device (the loops replay prepared kernels)
_compiled_grad = jit(_grad)
