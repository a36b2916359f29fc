"""Abstract values: what tracing knows about an array (shape and dtype)."""
from __future__ import annotations

from dataclasses import dataclass, field

from jaxlab.ir.dtypes import DType


@dataclass(frozen=True)
class ShapedArray:
    shape: tuple[int, ...]
    dtype: DType
    # JAX's weak type (a Python scalar's): promotes like the scalar, not like its dtype.
    # Not part of equality, as in JAX's type matching of branches and carries.
    weak_type: bool = field(default=False, compare=False)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def str_short(self) -> str:
        return f"{self.dtype.short}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return f"ShapedArray({self.str_short()})"
