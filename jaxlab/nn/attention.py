"""jax.nn.dot_product_attention with implementation='xla' semantics: logits from a
batched contraction, masks applied as a large negative logit, a float32 softmax."""
from __future__ import annotations

import math
from typing import Any

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_


def _check_operands(query: Array, key: Array, value: Array) -> None:
    """JAX's checks: shapes BTNH / BSKH / BSKH (or without B), N a multiple of K,
    one floating dtype."""
    if query.ndim not in (3, 4):
        raise ValueError(f"query should have rank 3 or 4, but got {query.shape}")
    if key.ndim != query.ndim:
        expected = [1] * (key.ndim + 1 - query.ndim) + [-1] * (query.ndim - 2) + \
            [key.shape[-1]]
        raise ValueError(f"query shape should be {expected}: but got {query.shape}")
    if value.shape != key.shape:
        raise ValueError(f"value shape should be {list(key.shape)}: but got {value.shape}")
    if query.shape[-1] != key.shape[-1] or query.shape[:-3] != key.shape[:-3]:
        raise ValueError(f"query shape should be {list(key.shape[:-3]) + [-1, -1, key.shape[-1]]}"
                         f": but got {query.shape}")
    if query.shape[-2] % key.shape[-2]:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {query.shape[-2]} vs {key.shape[-2]}")
    if not query.jdtype.is_float:
        raise ValueError(f"query dtype should be float32, but got {query.jdtype}")
    for name, x in (("key", key), ("value", value)):
        if x.jdtype != query.jdtype:
            raise ValueError(f"{name} dtype should be {query.jdtype}, but got {x.jdtype}")


def _keep(t: int, s: int, mask: Any, is_causal: bool, q_lengths: Any, kv_lengths: Any,
          window: tuple[int, int] | None) -> Array | None:
    """Which logits (broadcastable to B N T S) take part; None: all of them."""
    query_pos = jnp.arange(t)[:, None]
    key_pos = jnp.arange(s)[None, :]
    keep = None

    def both(a: Any, b: Array) -> Array:
        return b if a is None else jnp.logical_and(a, b)
    if mask is not None:
        keep = asarray_(mask)
        if keep.jdtype != DType.bool:
            raise ValueError(f"mask dtype should be bool, but got {keep.jdtype}")
    if is_causal:
        keep = both(keep, key_pos <= query_pos)
    if window is not None:
        left, right = window
        keep = both(keep, (query_pos - left <= key_pos) & (key_pos <= query_pos + right))
    if q_lengths is not None:
        keep = both(keep, query_pos[None, None] < asarray_(q_lengths)[:, None, None, None])
    if kv_lengths is not None:
        keep = both(keep, key_pos[None, None] < asarray_(kv_lengths)[:, None, None, None])
    return keep


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Array | tuple[Array, Array]:
    """softmax(Q K^T * scale + bias, masked) V for each head; query BTNH (or TNH), key
    and value BSKH, with N a multiple of K (grouped-query attention)."""
    if implementation == "cudnn":
        raise NotImplementedError("dot_product_attention(implementation='cudnn'): jaxlab has "
                                  "only the 'xla' implementation")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    query, key, value = asarray_(query), asarray_(key), asarray_(value)
    _check_operands(query, key, value)
    unbatched = query.ndim == 3
    if unbatched:
        query, key, value = query[None], key[None], value[None]
    b, t, n, h = query.shape
    s, k = key.shape[1], key.shape[2]
    g = n // k
    scale = 1.0 / math.sqrt(h) if scale is None else scale
    grouped = query.reshape(b, t, k, g, h)
    logits = jnp.einsum("btkgh,bskh->bkgts", grouped, key).reshape(b, n, t, s)
    logits = (logits * jnp.asarray(scale, logits.dtype)).astype(DType.float32)
    if bias is not None:
        logits = logits + asarray_(bias).astype(DType.float32)
    window = (local_window_size, local_window_size) if isinstance(local_window_size, int) \
        else local_window_size
    keep = _keep(t, s, mask, is_causal, query_seq_lengths, key_value_seq_lengths, window)
    if keep is not None:
        # a finite stand-in for -inf: a row with no key left averages the values
        large_negative = -0.7 * min(float(jnp.finfo(query.jdtype).max),
                                    float(jnp.finfo(DType.float32).max))
        logits = jnp.where(keep, logits, large_negative)
    top = jnp.max(logits, -1, keepdims=True)
    weights = jnp.exp(logits - top)
    total = jnp.sum(weights, -1, keepdims=True)
    probs = (weights / total).astype(query.jdtype)
    residual = (jnp.log(total) + top)[..., 0]
    out = jnp.einsum("bkgts,bskh->btkgh", probs.reshape(b, k, g, t, s), value).reshape(b, t, n, h)
    if query_seq_lengths is not None:   # padded query rows give zeros
        rows = jnp.arange(t)[None, :, None, None] < asarray_(query_seq_lengths)[:, None, None, None]
        out = jnp.where(rows, out, jnp.zeros((), out.jdtype))
    residual = jnp.moveaxis(residual, 1, 2)   # B N T -> B T N
    if unbatched:
        out, residual = out[0], residual[0]
    return (out, residual) if return_residual else out
