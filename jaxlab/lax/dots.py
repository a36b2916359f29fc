"""Precision (accepted by dot, dot_general and the convolutions: jaxlab computes
float32 in full float32 at every setting), the DotDimensionNumbers type and
batch_matmul."""
from __future__ import annotations

import enum
from typing import Any, Sequence, Union

from jaxlab.array import Array
from jaxlab.lax import ops
from jaxlab.numpy._util import asarray_

__all__ = ["Precision", "PrecisionLike", "DotDimensionNumbers", "batch_matmul"]


class Precision(enum.Enum):
    """A matmul's pass count on accelerators (DEFAULT: one bfloat16 pass, HIGH: three,
    HIGHEST: float32); jaxlab computes float32 at each, so all three agree."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> "Precision | None":
        return _BY_NAME.get(value) if isinstance(value, str) else None

    def __str__(self) -> str:
        return self.name


_BY_NAME = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
            "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
            "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
            "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}

PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision]]
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


def batch_matmul(lhs: Any, rhs: Any, precision: PrecisionLike = None) -> Array:
    """lhs @ rhs over matching leading batch dims (both at least 2-D, same rank)."""
    x, y = asarray_(lhs), asarray_(rhs)
    if x.ndim != y.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {x.ndim}, "
                         f"{y.ndim}")
    if x.ndim < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {x.ndim}, "
                         f"{y.ndim}")
    if x.shape[:-2] != y.shape[:-2]:
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {x.shape[:-2]} and {y.shape[:-2]}.")
    batch = tuple(range(x.ndim - 2))
    return ops.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 2,)), (batch, batch)),
                           precision=precision)
