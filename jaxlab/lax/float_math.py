"""lax's float functions beyond its primitives table (expm1, sinh, acos, cbrt, ...):
jax.numpy's, after lax's dtype check (no integer operands: lax never promotes)."""
from __future__ import annotations

from typing import Any, Callable

from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.lax.dtype_rules import FLOAT, INEXACT, Kind, accepted

# lax name -> (the jax.numpy function, the dtype kinds lax accepts)
_UNARY: dict[str, tuple[Callable[[Any], Array], tuple[Kind, ...]]] = {
    "expm1": (jnp.expm1, INEXACT), "log1p": (jnp.log1p, INEXACT),
    "exp2": (jnp.exp2, INEXACT), "sinh": (jnp.sinh, INEXACT), "cosh": (jnp.cosh, INEXACT),
    "asinh": (jnp.arcsinh, INEXACT), "acos": (jnp.arccos, INEXACT),
    "acosh": (jnp.arccosh, INEXACT), "atanh": (jnp.arctanh, INEXACT),
    "cbrt": (jnp.cbrt, FLOAT),
}


def _unary(name: str, fn: Callable[[Any], Array], kinds: tuple[Kind, ...]):
    def op(x: Any) -> Array:
        (x,) = accepted(name, [x], kinds)
        return fn(x)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"lax.{name}: elementwise on {' or '.join(k.value for k in kinds)} operands."
    return op


globals().update({name: _unary(name, fn, kinds) for name, (fn, kinds) in _UNARY.items()})
__all__ = sorted(_UNARY)
