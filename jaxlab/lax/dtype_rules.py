"""The dtype check every lax function makes: which kinds an operand accepts, and
JAX's TypeError naming the dtype (and the position, for several operands)."""
from __future__ import annotations

import enum
from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_


class Kind(enum.Enum):
    """The dtype families JAX names in its message (subtypes of NumPy's classes)."""
    floating = "floating"
    complexfloating = "complexfloating"
    integer = "integer"
    float32 = "float32"     # lax.complex / lax.conj take exactly float32 or float64
    float64 = "float64"


_MEMBER = {
    Kind.floating: lambda d: d.is_float,
    Kind.complexfloating: lambda d: d.is_complex,
    Kind.integer: lambda d: d.is_int,
    Kind.float32: lambda d: d is DType.float32,
    Kind.float64: lambda d: d is DType.float64,
}

FLOAT = (Kind.floating,)
INEXACT = (Kind.floating, Kind.complexfloating)
INTEGER = (Kind.integer,)


def accepted(name: str, operands: Sequence[Any], kinds: Sequence[Kind]) -> list[Array]:
    """operands as Arrays, each of a dtype in `kinds`, else JAX's TypeError."""
    arrays = [asarray_(x) for x in operands]
    names = ", ".join(k.value for k in kinds)
    for position, a in enumerate(arrays):
        if not any(_MEMBER[k](a.jdtype) for k in kinds):
            at = "" if len(arrays) == 1 else f" at position {position}"
            raise TypeError(f"{name} does not accept dtype {a.jdtype}{at}. Accepted dtypes"
                            f"{at} are subtypes of {names}.")
    return arrays
