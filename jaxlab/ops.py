"""jaxlab.ops: segment reductions (jax.ops), data summed (or maxed, ...) by segment id.

An id outside [0, num_segments) drops its row, negative ones too (JAX's default mode,
FILL_OR_DROP); a segment no row falls into holds the reduction's identity."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from jaxlab import numpy as jnp

# reduction -> (the Array.at[] update that folds rows in, its identity for a dtype)
_REDUCTIONS = {
    "sum": ("add", lambda dt: 0),
    "prod": ("multiply", lambda dt: 1),
    "max": ("max", lambda dt: -np.inf if jnp.issubdtype(dt, jnp.inexact)
            else (False if dt == np.bool_ else jnp.iinfo(dt).min)),
    "min": ("min", lambda dt: np.inf if jnp.issubdtype(dt, jnp.inexact)
            else (True if dt == np.bool_ else jnp.iinfo(dt).max)),
}
_MODES = {None: "drop", "drop": "drop", "fill": "drop", "promise_in_bounds": "drop",
          "clip": "clip"}


def _segment(kind: str, data: Any, segment_ids: Any, num_segments: Optional[int],
             mode: Any) -> Any:
    data, ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise TypeError(f"segment_{kind}: segment_ids must be integers, got {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or data.shape[0] != ids.shape[0]:
        raise ValueError(f"segment_{kind}: segment_ids of shape {ids.shape} must be a vector "
                         f"as long as data's first axis (data shape {data.shape})")
    mode_name = getattr(mode, "name", mode)
    mode_name = mode_name.lower() if isinstance(mode_name, str) else mode_name
    if mode_name not in _MODES:
        raise ValueError(f"segment_{kind}: unsupported mode {mode!r}")
    if num_segments is None:   # the data decide: a concrete value (under jit, it raises)
        num_segments = int(jnp.max(ids)) + 1 if ids.size else 0
    num_segments = int(num_segments)
    update, identity = _REDUCTIONS[kind]
    if _MODES[mode_name] == "drop":   # negative ids drop too, rather than wrap around
        ids = jnp.where(ids < 0, num_segments, ids)
    out = jnp.full((num_segments,) + data.shape[1:], identity(data.dtype), data.dtype)
    return getattr(out.at[ids], update)(data, mode=_MODES[mode_name])


def _segment_function(kind: str, what: str) -> Callable[..., Any]:
    def segment(data: Any, segment_ids: Any, num_segments: Optional[int] = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Optional[int] = None, mode: Any = None) -> Any:
        # the sortedness and uniqueness hints and bucket_size change nothing here
        return _segment(kind, data, segment_ids, num_segments, mode)
    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = f"The {what} of data's rows in each segment (jax.ops.segment_{kind})."
    return segment


segment_sum = _segment_function("sum", "sum")
segment_prod = _segment_function("prod", "product")
segment_max = _segment_function("max", "maximum")
segment_min = _segment_function("min", "minimum")

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
