"""Primitives of the complex functions that have no real primitive here: tan, sinh,
cosh, acos, acosh, asinh, atanh, expm1 and log1p (JAX's names). jnp binds them for
complex operands only (it composes the real functions from the real primitives), so
their real lowering refuses; the complex one is core/complex_math.py's.
Derivatives are holomorphic, as JAX's: d f(z) = f'(z) dz, no conjugation.
"""
from __future__ import annotations

from typing import Any, Callable

from jaxlab.core import complex_math as cm
from jaxlab.core import elementwise as ew
from jaxlab.core.primitives import (batch_rules, complex_lowerings, jvp_rules, lowerings,
                                    primitive, weak_preserving)
from jaxlab.core.rule_helpers import batch_at_front
from jaxlab.engine.lazy import Lazy

COMPLEX_FUNCTIONS = {"tan": cm.c_tan, "sinh": cm.c_sinh, "cosh": cm.c_cosh,
                     "acos": cm.c_acos, "acosh": cm.c_acosh, "asinh": cm.c_asinh,
                     "atanh": cm.c_atanh, "expm1": cm.c_expm1, "log1p": cm.c_log1p}
complex_prims = {name: primitive(name) for name in COMPLEX_FUNCTIONS}


def _refuse_real(name: str) -> Callable[[Lazy], Any]:
    def rule(x: Lazy) -> Any:
        raise TypeError(f"{name} is bound for complex operands only, got {x.dtype} "
                        f"(jnp.{name} computes real ones)")
    return rule


for _name, _fn in COMPLEX_FUNCTIONS.items():
    _p = complex_prims[_name]
    lowerings[_p] = _refuse_real(_name)
    complex_lowerings[_p] = cm.on_parts(_fn)
    batch_rules[_p] = batch_at_front(_p)
    weak_preserving.add(_p)


def _sqrt(x: Any) -> Any:
    return ew.unary_prims["sqrt"].bind(x)


def _recip(x: Any) -> Any:
    return ew.unary_prims["reciprocal"].bind(x)


# name -> f'(z, f(z)), in primitives that take complex operands
_DERIVATIVES = {
    "tan": lambda x, y: 1.0 + y * y,
    "sinh": lambda x, y: complex_prims["cosh"].bind(x),
    "cosh": lambda x, y: complex_prims["sinh"].bind(x),
    "acos": lambda x, y: -_recip(_sqrt(1.0 - x * x)),
    # 1 / (sqrt(z - 1) sqrt(z + 1)), the principal branch's (JAX: rsqrt(z^2 - 1), whose
    # sign differs where Re z < 0)
    "acosh": lambda x, y: _recip(_sqrt(x - 1.0) * _sqrt(x + 1.0)),
    "asinh": lambda x, y: _recip(_sqrt(x * x + 1.0)),
    "atanh": lambda x, y: _recip((1.0 - x) * (1.0 + x)),
    "expm1": lambda x, y: y + 1.0,
    "log1p": lambda x, y: _recip(x + 1.0),
}
for _name, _d in _DERIVATIVES.items():
    jvp_rules[complex_prims[_name]] = ew.jvp_unary(complex_prims[_name], _d)
