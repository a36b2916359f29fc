"""Shaped: ndim, size and len() from a `shape`, for every array-like class of jaxlab
(Array and tracers, key arrays, ShapeDtypeStruct)."""
from __future__ import annotations

import math


class Shaped:
    __slots__ = ()
    shape: tuple[int, ...]
    _unsized = "a 0-d array"     # what len() of a shape () names

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError(f"len() of unsized object ({self._unsized})")
        return self.shape[0]
