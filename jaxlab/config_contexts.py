"""JAX's configuration context managers: each sets one config option inside its
`with` block, in this thread (or asyncio task) only."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from jaxlab.configuration import scoped


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside, jit functions run op by op as plain Python (print shows values)."""
    with scoped("jax_disable_jit", disable):
        yield


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """Inside, 64-bit dtypes are kept (float64, int64) instead of narrowed."""
    with scoped("jax_enable_x64", new_val):
        yield


@contextlib.contextmanager
def numpy_rank_promotion(new_val: str) -> Iterator[None]:
    """'allow', 'warn' or 'raise' for binary operations on arrays of different ranks."""
    with scoped("jax_numpy_rank_promotion", new_val):
        yield


@contextlib.contextmanager
def numpy_dtype_promotion(new_val: str) -> Iterator[None]:
    """'standard', or 'strict': implicit promotion between different dtypes raises
    jaxlab.dtypes.TypePromotionError."""
    with scoped("jax_numpy_dtype_promotion", new_val):
        yield


@contextlib.contextmanager
def default_matmul_precision(new_val: Any) -> Iterator[None]:
    """Accepted and checked as JAX checks it; jaxlab's float32 matmuls are always float32
    (JAX's 'highest')."""
    with scoped("jax_default_matmul_precision", new_val):
        yield
