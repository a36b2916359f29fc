"""Primitives of the elementwise functions that are no single ALU op: tan, sinh, cosh,
acos, acosh, asinh, atanh, expm1 and log1p (JAX's names). Their complex lowering is
core/complex_math.py's. expm1, log1p, sinh, cosh and asinh lower real operands with
complex_math's real functions too (the complex formulas need them accurate), so jnp
binds them for every float dtype; jnp composes the real tan, acos, acosh and atanh from
other primitives and binds theirs for complex operands only (the real lowering refuses).
Derivatives are holomorphic, as JAX's: d f(z) = f'(z) dz, no conjugation.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from jaxlab.core import complex_math as cm
from jaxlab.core import elementwise as ew
from jaxlab.core.primitives import (batch_rules, complex_lowerings, jvp_rules, lowerings,
                                    primitive, weak_preserving)
from jaxlab.core.rule_helpers import batch_at_front
from jaxlab.engine.lazy import Lazy

# name -> (complex function of the parts, real function or None for complex only)
FUNCTIONS: dict[str, tuple[Callable, Optional[Callable[[cm.Real], cm.Real]]]] = {
    "tan": (cm.c_tan, None), "acos": (cm.c_acos, None), "acosh": (cm.c_acosh, None),
    "atanh": (cm.c_atanh, None), "sinh": (cm.c_sinh, cm.sinh), "cosh": (cm.c_cosh, cm.cosh),
    "asinh": (cm.c_asinh, cm.asinh), "expm1": (cm.c_expm1, cm.expm1),
    "log1p": (cm.c_log1p, cm.log1p)}
prims = {name: primitive(name) for name in FUNCTIONS}


def _real_rule(name: str, fn: Optional[Callable[[cm.Real], cm.Real]]) -> Callable[[Lazy], Any]:
    def rule(x: Lazy) -> Any:
        if fn is None:
            raise TypeError(f"{name} is bound for complex operands only, got {x.dtype} "
                            f"(jnp composes real ones from other primitives)")
        if not x.dtype.is_float:
            raise TypeError(f"{name} does not accept {x.dtype} operands (floating point only)")
        return fn(cm.Real(x)).lazy
    return rule


for _name, (_complex_fn, _real_fn) in FUNCTIONS.items():
    _p = prims[_name]
    lowerings[_p] = _real_rule(_name, _real_fn)
    complex_lowerings[_p] = cm.on_parts(_complex_fn)
    batch_rules[_p] = batch_at_front(_p)
    weak_preserving.add(_p)


def _sqrt(x: Any) -> Any:
    return ew.unary_prims["sqrt"].bind(x)


def _recip(x: Any) -> Any:
    return ew.unary_prims["reciprocal"].bind(x)


# name -> f'(x, f(x)), in primitives that take real and complex operands
_DERIVATIVES = {
    "tan": lambda x, y: 1.0 + y * y,
    "sinh": lambda x, y: prims["cosh"].bind(x),
    "cosh": lambda x, y: prims["sinh"].bind(x),
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
    jvp_rules[prims[_name]] = ew.jvp_unary(prims[_name], _d)
