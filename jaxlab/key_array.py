"""Typed PRNG keys (jax.random.key): an array of keys whose element is a whole
threefry key. The data is a uint32 array of shape `shape + (2,)`; the key array
is a pytree node over it, so jit, vmap and grad carry keys as their raw words."""
from __future__ import annotations

from typing import Any

from jaxlab.shaped import Shaped
from jaxlab.tree_util import register_pytree_node


class KeyDType:
    """The dtype of a typed key array, printed as JAX prints it."""

    name = "key<fry>"
    impl = "threefry2x32"

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyDType)

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


class KeyArray(Shaped):
    """Keys of shape `shape`; `key_data(k)` is the uint32 data of shape `shape + (2,)`."""

    __slots__ = ("data",)
    dtype = KEY_DTYPE
    _unsized = "a single key"

    def __init__(self, data: Any) -> None:
        self.data = data

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape[:-1])


    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a single key (a 0-d key array)")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> "KeyArray":
        index = index if isinstance(index, tuple) else (index,)
        if Ellipsis not in index:
            index = index + (Ellipsis,)
        return KeyArray(self.data[index + (slice(None),)])

    def reshape(self, *shape: Any) -> "KeyArray":
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return KeyArray(self.data.reshape(tuple(shape) + (2,)))

    @property
    def T(self) -> "KeyArray":
        from jaxlab import numpy as jnp
        axes = tuple(reversed(range(self.ndim))) + (self.ndim,)
        return KeyArray(jnp.transpose(self.data, axes))

    def block_until_ready(self) -> "KeyArray":
        self.data.block_until_ready()
        return self

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self.data}"

    __hash__ = None  # type: ignore[assignment]


register_pytree_node(KeyArray, lambda k: ([k.data], None), lambda _, c: KeyArray(c[0]))
