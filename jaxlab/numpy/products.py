"""Products: matmul, dot and friends, all lowered to dot_general (one kernel)."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core.linalg import dot_general_p
from jaxlab.numpy._util import asarray_, broadcast_shapes, broadcast_to_, promote_dtypes
from jaxlab.numpy.shape_ops import expand_dims, squeeze


def matmul(a: Any, b: Any) -> Array:
    dt = promote_dtypes(a, b)
    x, y = asarray_(a, dt), asarray_(b, dt)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: input operands must not be scalars (use multiply)")
    x1, y1 = x.ndim == 1, y.ndim == 1
    if x1:
        x = expand_dims(x, 0)
    if y1:
        y = expand_dims(y, 1)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"matmul: contracting dimensions differ: {a_shape(a)} @ {a_shape(b)} "
                         f"({x.shape[-1]} != {y.shape[-2]})")
    batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
    x = broadcast_to_(x, batch + x.shape[-2:])
    y = broadcast_to_(y, batch + y.shape[-2:])
    nb = len(batch)
    out = dot_general_p.bind(x, y, dimension_numbers=(((nb + 1,), (nb,)),
                                                      (tuple(range(nb)), tuple(range(nb)))))
    if x1:
        out = squeeze(out, -2)
    if y1:
        out = squeeze(out, -1)
    return out


def a_shape(v: Any) -> tuple:
    return tuple(getattr(v, "shape", ()))
