"""lax.real / imag / conj / complex: the complex primitives with lax's dtype rules
(real and imag take complex operands only; complex builds from float32 or float64)."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core import complex_rules as cr
from jaxlab.core.elementwise import convert_element_type_p
from jaxlab.ir.dtypes import complex_dtype
from jaxlab.lax import ops
from jaxlab.lax.dtype_rules import Kind, accepted

__all__ = ["real", "imag", "conj", "complex"]

_PARTS = (Kind.float32, Kind.float64)


def real(x: Any) -> Array:
    (x,) = accepted("real", [x], (Kind.complexfloating,))
    return cr.real_p.bind(x)


def imag(x: Any) -> Array:
    (x,) = accepted("imag", [x], (Kind.complexfloating,))
    return cr.imag_p.bind(x)


def conj(x: Any) -> Array:
    """The complex conjugate; a float operand becomes complex (as lax.conj does)."""
    (x,) = accepted("conj", [x], (Kind.float32, Kind.complexfloating, Kind.float64))
    if not x.jdtype.is_complex:
        x = convert_element_type_p.bind(x, new_dtype=complex_dtype(x.jdtype),
                                        weak_type=x.weak_type)
    return cr.conj_p.bind(x)


def complex(x: Any, y: Any) -> Array:  # noqa: A001  (lax's name)
    """x + 1j * y from float32 or float64 parts of one dtype."""
    accepted("complex", [x, y], _PARTS)
    x, y = ops._lax_args("complex", x, y)
    return cr.complex_p.bind(x, y)
