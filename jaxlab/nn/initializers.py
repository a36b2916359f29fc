"""jax.nn.initializers: functions (key, shape, dtype) -> a new parameter array.

The random draws are jaxlab.random's (bit-identical to jax.random's), so each
initializer gives JAX's values for the same key.
"""
from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

import numpy as np

from jaxlab import numpy as jnp
from jaxlab import random
from jaxlab.array import Array
from jaxlab.ir.dtypes import default_float

# truncated_normal(-2, 2) has this standard deviation: dividing by it gives variance 1
_TRUNCATED_STD = 0.87962566103423978


class Initializer(Protocol):
    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = None) -> Array: ...


def _dtype(dtype: Any) -> Any:
    return default_float() if dtype is None else dtype


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Array:
    """An initializer that returns zeros (the key is not used)."""
    return jnp.zeros(shape, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Array:
    """An initializer that returns ones (the key is not used)."""
    return jnp.ones(shape, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling the shape with `value`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        return jnp.full(shape, value, _dtype(dtype))
    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform values in [0, scale)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        return random.uniform(key, shape, _dtype(dtype)) * scale
    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """Normal values with mean 0 and standard deviation `stddev`."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        return random.normal(key, shape, _dtype(dtype)) * stddev
    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """`stddev` times a standard normal truncated to [lower, upper]."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        return random.truncated_normal(key, lower, upper, shape, _dtype(dtype)) * stddev
    return init


def _axes(axis: int | Sequence[int], ndim: int) -> list[int]:
    return [a % ndim for a in ((axis,) if isinstance(axis, int) else axis)]


def _fans(shape: tuple[int, ...], in_axis: Any, out_axis: Any, batch_axis: Any) \
        -> tuple[float, float]:
    """(fan_in, fan_out): the sizes of the input and output axes, each times the
    receptive field (the product of the axes that are none of in, out or batch)."""
    if len(shape) <= 1 and (in_axis, out_axis) == (-2, -1):
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    ndim = len(shape)
    size = {name: math.prod(shape[a] for a in _axes(ax, ndim)) for name, ax in
            (("in", in_axis), ("out", out_axis), ("batch", batch_axis))}
    receptive = math.prod(shape) / size["in"] / size["out"] / size["batch"]
    return size["in"] * receptive, size["out"] * receptive


# mode -> the denominator of the variance from (fan_in, fan_out)
_DENOMINATORS = {"fan_in": lambda i, o: i, "fan_out": lambda i, o: o,
                 "fan_avg": lambda i, o: (i + o) / 2, "fan_geo_avg": lambda i, o: math.sqrt(i * o)}
# distribution -> a draw of the given variance
_DRAWS = {
    "truncated_normal": lambda key, shape, dtype, var: random.truncated_normal(
        key, -2.0, 2.0, shape, dtype) * (math.sqrt(var) / _TRUNCATED_STD),
    "normal": lambda key, shape, dtype, var: random.normal(key, shape, dtype) * math.sqrt(var),
    "uniform": lambda key, shape, dtype, var: random.uniform(
        key, shape, dtype, -1.0) * math.sqrt(3 * var),
}


def variance_scaling(scale: float, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Draws of variance scale / n, n from the fans as `mode` says."""
    if mode not in _DENOMINATORS:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in _DRAWS:
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        shape = tuple(int(d) for d in shape)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        variance = scale / _DENOMINATORS[mode](fan_in, fan_out)
        return _DRAWS[distribution](key, shape, _dtype(dtype), variance)
    return init


def _scaled(scale: float, mode: str, distribution: str):
    """A named variance_scaling family (glorot, he, lecun)."""
    def family(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
               batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    return family


glorot_uniform = xavier_uniform = _scaled(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _scaled(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _scaled(1.0, "fan_in", "uniform")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _scaled(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _scaled(2.0, "fan_in", "truncated_normal")


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """A (scaled) matrix with orthonormal rows or columns, from the QR factorization of
    a normal draw; the shape's other axes are flattened into the rows."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        shape = tuple(int(d) for d in shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        wide = n_rows < n_cols
        a = random.normal(key, (n_cols, n_rows) if wide else (n_rows, n_cols), _dtype(dtype))
        q, r = jnp.linalg.qr(a)
        q = q * jnp.sign(jnp.diagonal(r))   # the unique Q whose R has a positive diagonal
        if wide:
            q = q.T
        rest = tuple(np.delete(np.array(shape), column_axis))
        return scale * jnp.moveaxis(q.reshape(rest + (n_cols,)), -1, column_axis)
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) \
        -> Initializer:
    """A convolution kernel that is zero except at its spatial centre, where it holds an
    orthogonal matrix (shape: spatial axes, then in and out features)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Array:
        shape = tuple(int(d) for d in shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-2] > shape[-1]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:], dtype)
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, _dtype(dtype)).at[centre].set(matrix)
    return init
