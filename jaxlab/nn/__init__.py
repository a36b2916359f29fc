"""jaxlab.nn: activations and normalisations, as jax.nn, built from jaxlab.numpy
so that jit, grad and vmap go through them and their elementwise parts fuse."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.custom_derivatives import custom_jvp
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, canonical_axes, canonical_axis

Axis = int | tuple[int, ...] | None

__all__ = ["relu", "gelu", "silu", "swish", "sigmoid", "softplus", "log_sigmoid", "softmax",
           "log_softmax", "logsumexp", "one_hot", "standardize", "identity", "elu", "celu",
           "selu", "leaky_relu", "relu6", "hard_tanh", "hard_sigmoid", "hard_silu",
           "hard_swish", "glu", "soft_sign", "sparse_plus", "sparse_sigmoid", "squareplus",
           "mish"]


def _inexact(x: Any) -> Array:
    x = asarray_(x)
    return x if x.jdtype.is_float else x.astype(DType.float32)


@custom_jvp
def relu(x: Any) -> Array:
    """max(x, 0), with derivative 0 at 0 (as JAX; maximum's rule would give 1/2)."""
    return jnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals: tuple, tangents: tuple) -> tuple[Array, Array]:
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


def _minus_abs(x: Array) -> Array:
    # -|x| whose derivative agrees with the x >= 0 branch the callers pick
    return jnp.where(x >= 0, -x, x)


def sigmoid(x: Any) -> Array:
    """1 / (1 + e^-x), from e^-|x| so that neither branch nor its gradient overflows."""
    x = _inexact(x)
    z = jnp.exp(_minus_abs(x))
    return jnp.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def softplus(x: Any) -> Array:
    """log(1 + e^x) = max(x, 0) + log1p(e^-|x|), as jnp.logaddexp(x, 0)."""
    x = _inexact(x)
    return jnp.where(x >= 0, x, 0.0) + jnp.log1p(jnp.exp(_minus_abs(x)))


def log_sigmoid(x: Any) -> Array:
    return -softplus(-_inexact(x))


def silu(x: Any) -> Array:
    """x * sigmoid(x)."""
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Array:
    """x * Phi(x); with approximate=True (JAX's default) Phi is the tanh form."""
    x = _inexact(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return x * (0.5 * (1.0 + jnp.tanh(inner)))
    return 0.5 * x * lax.erfc(-x * math.sqrt(0.5))


def identity(x: Any) -> Array:
    return asarray_(x)


def elu(x: Any, alpha: Any = 1.0) -> Array:
    """x for x > 0, alpha * (e^x - 1) below (expm1 of a clamped x: no overflow in grad)."""
    x = _inexact(x)
    positive = x > 0
    return jnp.where(positive, x, alpha * jnp.expm1(jnp.where(positive, 0.0, x)))


def celu(x: Any, alpha: Any = 1.0) -> Array:
    x = _inexact(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(x: Any) -> Array:
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Array:
    x = _inexact(x)
    return jnp.where(x >= 0, x, negative_slope * x)


@custom_jvp
def relu6(x: Any) -> Array:
    """min(max(x, 0), 6), with derivative 0 at both kinks (as JAX)."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda t, out, x: jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t)))


def hard_tanh(x: Any) -> Array:
    x = _inexact(x)
    return jnp.where(x > 1, 1.0, jnp.where(x < -1, -1.0, x))


def hard_sigmoid(x: Any) -> Array:
    return relu6(_inexact(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Array:
    x = _inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def glu(x: Any, axis: int = -1) -> Array:
    """The first half of x along axis gated by the sigmoid of the second half."""
    x = asarray_(x)
    axis = canonical_axis(axis, x.ndim)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} of shape {x.shape} must have an even size")
    first, second = jnp.split(x, 2, axis)
    return first * sigmoid(second)


def soft_sign(x: Any) -> Array:
    x = _inexact(x)
    return x / (jnp.abs(x) + 1)


def sparse_plus(x: Any) -> Array:
    """0 below -1, x above 1, (x + 1)^2 / 4 between."""
    x = _inexact(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Array:
    return 0.5 * jnp.clip(_inexact(x) + 1.0, 0.0, 2.0)


def squareplus(x: Any, b: Any = 4) -> Array:
    x = _inexact(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def mish(x: Any) -> Array:
    x = _inexact(x)
    return x * jnp.tanh(softplus(x))


def _shifted(x: Any, axis: Axis) -> tuple[Array, tuple[int, ...]]:
    """x minus its max along axis (a constant to differentiation: it cancels out)."""
    x = _inexact(x)
    axes = canonical_axes(axis, x.ndim)
    return x - lax.stop_gradient(jnp.max(x, axes, keepdims=True)), axes


def softmax(x: Any, axis: Axis = -1) -> Array:
    """exp(x) / sum(exp(x)) along axis, shifted by the max so exp cannot overflow."""
    shifted, axes = _shifted(x, axis)
    unnormalized = jnp.exp(shifted)
    return unnormalized / jnp.sum(unnormalized, axes, keepdims=True)


def log_softmax(x: Any, axis: Axis = -1) -> Array:
    shifted, axes = _shifted(x, axis)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axes, keepdims=True))


def logsumexp(a: Any, axis: Axis = None, keepdims: bool = False) -> Array:
    """log(sum(exp(a))) along axis, shifted by the max (0 where the max is infinite)."""
    a = _inexact(a)
    axes = canonical_axes(axis, a.ndim)
    amax = jnp.max(a, axes, keepdims=True)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    out = jnp.log(jnp.sum(jnp.exp(a - amax), axes, keepdims=True)) + amax
    return out if keepdims else jnp.squeeze(out, axes)


def one_hot(x: Any, num_classes: int, dtype: Any = DType.float32, axis: int = -1) -> Array:
    """x[..., None] == arange(num_classes) along a new axis; out-of-range x gives zeros."""
    x = asarray_(x)
    axis = canonical_axis(axis, x.ndim + 1)
    classes_shape = [1] * x.ndim
    classes_shape.insert(axis, num_classes)
    classes = jnp.arange(num_classes, dtype=x.jdtype).reshape(classes_shape)
    return jnp.asarray(jnp.expand_dims(x, axis) == classes, dtype=dtype)


def standardize(x: Any, axis: Axis = -1, mean: Any = None, variance: Any = None,
                epsilon: float = 1e-5) -> Array:
    """(x - mean) / sqrt(variance + epsilon); as JAX, the variance defaults to
    E[x^2] - E[x]^2 (one pass over x), clipped at 0."""
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True)
    if variance is None:
        variance = jnp.maximum(jnp.mean(jnp.square(x), axis, keepdims=True)
                               - jnp.square(mean), 0.0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


# jax.nn's initializers, attention and further log-domain helpers (their own modules)
from jaxlab.nn import initializers  # noqa: E402,F401
from jaxlab.nn.attention import dot_product_attention  # noqa: E402,F401
from jaxlab.nn.log_functions import log1mexp, logmeanexp  # noqa: E402,F401
from jaxlab.numpy import tanh  # noqa: E402,F401

__all__ += ["dot_product_attention", "initializers", "log1mexp", "logmeanexp", "tanh"]
