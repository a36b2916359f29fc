"""jaxlab.flatten_util: ravel_pytree, one flat vector for a pytree of arrays and back."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from jaxlab import numpy as jnp
from jaxlab.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The leaves raveled and concatenated in tree order (in their promoted dtype), and
    the function that splits such a vector back into the pytree, each leaf in its own
    shape and dtype. Works under jit, grad and vmap (of the unravel)."""
    leaves, treedef = tree_flatten(pytree)
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    shapes = [leaf.shape for leaf in leaves]
    dtypes = [leaf.dtype for leaf in leaves]
    flat_dtype = jnp.result_type(*dtypes) if leaves else np.dtype(np.float32)
    flat = (jnp.concatenate([jnp.ravel(leaf).astype(flat_dtype) for leaf in leaves])
            if leaves else jnp.zeros((0,), flat_dtype))
    sizes = [math.prod(s) for s in shapes]
    ends = np.cumsum(sizes).tolist()

    def unravel(vector: Any) -> Any:
        vector = jnp.asarray(vector)
        if vector.shape != (sum(sizes),):
            raise ValueError(f"unravel expects a vector of shape ({sum(sizes)},), "
                             f"as ravel_pytree made, got shape {vector.shape}")
        if vector.dtype != flat_dtype:
            raise TypeError(f"unravel function given array of dtype {vector.dtype}, "
                            f"but expected dtype {flat_dtype}")
        pieces = [vector[end - size:end].reshape(shape).astype(dtype)
                  for end, size, shape, dtype in zip(ends, sizes, shapes, dtypes)]
        return tree_unflatten(treedef, pieces)

    return flat, unravel


__all__ = ["ravel_pytree"]
