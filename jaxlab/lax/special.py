"""lax's special functions beyond the primitives: erf_inv, lgamma, digamma, built
from jaxlab.numpy so they fuse, run on every device and differentiate."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_

__all__ = ["erf_inv", "lgamma", "digamma"]


def _inexact(x: Any) -> Array:
    x = asarray_(x)
    return x if x.jdtype.is_float else x.astype(DType.float32)


# Giles' single-precision erf_inv ("Approximating the erfinv function", GPU Gems),
# as XLA computes it: a polynomial in w - 2.5 for w < 5, in sqrt(w) - 3 beyond.
_ERF_INV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv(x: Any) -> Array:
    x = _inexact(x)
    if x.jdtype in (DType.float16, DType.bfloat16):   # in float32, rounded once, as XLA
        return erf_inv(x.astype(DType.float32)).astype(x.jdtype)
    w = -jnp.log1p(-x * x)
    central = w < 5.0
    w = jnp.where(central, w - 2.5, jnp.sqrt(w) - 3.0)
    coeffs = [jnp.where(central, c, t) for c, t in zip(_ERF_INV_CENTRAL, _ERF_INV_TAIL)]
    p = coeffs[0]
    for c in coeffs[1:]:   # Horner
        p = c + p * w
    return jnp.where(jnp.abs(x) == 1.0, x * math.inf, p * x)



# Below _SHIFT the recurrences Gamma(x + 1) = x Gamma(x) and psi(x + 1) = psi(x) + 1/x
# move x up to where Stirling's asymptotic series is accurate to float32.
_SHIFT = 6
_LGAMMA_SERIES = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680)     # odd powers of 1/x
_DIGAMMA_SERIES = (-1 / 12, 1 / 120, -1 / 252, 1 / 240)      # even powers of 1/x


def _poly(coeffs: tuple, z: Array) -> Array:
    out = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        out = c + out * z
    return out


def _shifted_up(x: Array) -> tuple[Array, Array, Array]:
    """(x moved to >= _SHIFT, the product of the factors skipped, whether moved)."""
    small = x < _SHIFT
    base = jnp.where(small, x, 1.0)     # a safe dummy where unused
    product = base
    for k in range(1, _SHIFT):
        product = product * (base + k)
    return jnp.where(small, x + _SHIFT, x), product, small


def _lgamma_positive(x: Array) -> Array:
    z, product, small = _shifted_up(x)
    inv = 1.0 / z
    stirling = (z - 0.5) * jnp.log(z) - z + 0.5 * math.log(2 * math.pi) + \
        inv * _poly(_LGAMMA_SERIES, inv * inv)
    return jnp.where(small, stirling - jnp.log(jnp.abs(product)), stirling)


def _digamma_positive(x: Array) -> Array:
    z, _, small = _shifted_up(x)
    inv2 = 1.0 / (z * z)
    series = jnp.log(z) - 0.5 / z + inv2 * _poly(_DIGAMMA_SERIES, inv2)
    base = jnp.where(small, x, 1.0)
    correction = sum(1.0 / (base + k) for k in range(_SHIFT))
    return jnp.where(small, series - correction, series)


def _reflected(x: Array) -> tuple[Array, Array, Array]:
    """(x < 0.5, x where >= 0.5 else 1 - x, a safe x for the sin/tan of the reflection)."""
    left = x < 0.5
    return left, jnp.where(left, 1.0 - x, x), jnp.where(left, x, 0.25)


@custom_jvp
def lgamma(x: Any) -> Array:
    """log|Gamma(x)|; for x < 1/2 by the reflection Gamma(x) Gamma(1-x) = pi / sin(pi x)."""
    x = _inexact(x)
    left, right, safe = _reflected(x)
    value = _lgamma_positive(right)
    reflected = math.log(math.pi) - jnp.log(jnp.abs(jnp.sin(math.pi * safe))) - value
    return jnp.where(left, reflected, value)


lgamma.defjvps(lambda t, out, x: t * digamma(x))


def digamma(x: Any) -> Array:
    """d/dx log Gamma(x); for x < 1/2 by psi(1 - x) - pi / tan(pi x); NaN at poles."""
    x = _inexact(x)
    left, right, safe = _reflected(x)
    value = _digamma_positive(right)
    reflected = value - math.pi / jnp.tan(math.pi * safe)
    pole = (x <= 0) & (x == jnp.floor(x))
    return jnp.where(pole, math.nan, jnp.where(left, reflected, value))
