"""Elementwise functions of jaxlab.numpy: promote, broadcast, bind one primitive."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core import elementwise as ew
from jaxlab.core.primitives import Primitive
from jaxlab.ir.dtypes import DType
from jaxlab.numpy._util import asarray_, astype_, broadcast_all, promote_args, promote_dtypes


def _float_args(*xs: Any) -> list[Array]:
    dt = promote_dtypes(*xs)
    return promote_args(*xs, dtype=dt if dt.is_float else DType.float32)


def _unary_float(prim: Primitive, name: str):
    def fn(x: Any) -> Array:
        (x,) = _float_args(x)
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (integers are promoted to float32), as jax.numpy.{name}."
    return fn


def _binary(prim: Primitive, name: str):
    def fn(x: Any, y: Any) -> Array:
        return prim.bind(*promote_args(x, y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting and JAX's dtype promotion."
    return fn


sin = _unary_float(ew.unary_prims["sin"], "sin")
cos = _unary_float(ew.unary_prims["cos"], "cos")
arcsin = _unary_float(ew.unary_prims["asin"], "arcsin")
arctan = _unary_float(ew.unary_prims["atan"], "arctan")
exp = _unary_float(ew.unary_prims["exp"], "exp")
log = _unary_float(ew.unary_prims["log"], "log")
sqrt = _unary_float(ew.unary_prims["sqrt"], "sqrt")
tanh = _unary_float(ew.unary_prims["tanh"], "tanh")
reciprocal = _unary_float(ew.unary_prims["reciprocal"], "reciprocal")

add = _binary(ew.binary_prims["add"], "add")
subtract = _binary(ew.binary_prims["sub"], "subtract")
multiply = _binary(ew.binary_prims["mul"], "multiply")
maximum = _binary(ew.binary_prims["max"], "maximum")
minimum = _binary(ew.binary_prims["min"], "minimum")
less = _binary(ew.binary_prims["lt"], "less")
not_equal = _binary(ew.binary_prims["ne"], "not_equal")
equal = _binary(ew.eq_p, "equal")
less_equal = _binary(ew.le_p, "less_equal")
bitwise_and = _binary(ew.binary_prims["and"], "bitwise_and")
bitwise_or = _binary(ew.binary_prims["or"], "bitwise_or")
bitwise_xor = _binary(ew.binary_prims["xor"], "bitwise_xor")
left_shift = _binary(ew.binary_prims["shift_left"], "left_shift")
right_shift = _binary(ew.binary_prims["shift_right"], "right_shift")


def greater(x: Any, y: Any) -> Array:
    return less(y, x)


def greater_equal(x: Any, y: Any) -> Array:
    return less_equal(y, x)


def true_divide(x: Any, y: Any) -> Array:
    return ew.div_p.bind(*_float_args(x, y))


divide = true_divide


def negative(x: Any) -> Array:
    return ew.neg_p.bind(asarray_(x))


def positive(x: Any) -> Array:
    return asarray_(x)


def square(x: Any) -> Array:
    x = asarray_(x)
    return multiply(x, x)


def abs(x: Any) -> Array:  # noqa: A001  (numpy's name)
    return ew.abs_p.bind(asarray_(x))


absolute = abs


def sign(x: Any) -> Array:
    return ew.sign_p.bind(asarray_(x))


def invert(x: Any) -> Array:
    x = asarray_(x)
    if x.jdtype.is_float:
        raise TypeError(f"invert/bitwise_not needs integers or booleans, got {x.jdtype}")
    return ew.not_p.bind(x)


bitwise_not = invert


def logical_not(x: Any) -> Array:
    return ew.not_p.bind(astype_(asarray_(x), DType.bool))


def _logical(name: str, fn):
    def logical(x: Any, y: Any) -> Array:
        return fn(astype_(asarray_(x), DType.bool), astype_(asarray_(y), DType.bool))
    logical.__name__ = logical.__qualname__ = name
    return logical


logical_and = _logical("logical_and", bitwise_and)
logical_or = _logical("logical_or", bitwise_or)
logical_xor = _logical("logical_xor", bitwise_xor)


def floor(x: Any) -> Array:
    x = asarray_(x)
    return ew.unary_prims["floor"].bind(x) if x.jdtype.is_float else x


def ceil(x: Any) -> Array:
    x = asarray_(x)
    return ew.unary_prims["ceil"].bind(x) if x.jdtype.is_float else x


def round(x: Any, decimals: int = 0) -> Array:  # noqa: A001
    x = asarray_(x)
    if decimals == 0 or not x.jdtype.is_float:
        return ew.round_p.bind(x)
    scale = 10.0 ** decimals
    return true_divide(ew.round_p.bind(multiply(x, scale)), scale)


around = round


def where(condition: Any, x: Any = None, y: Any = None) -> Array:
    if x is None or y is None:
        raise ValueError("jaxlab.numpy.where needs x and y (the one-argument form has a "
                         "data-dependent shape)")
    cond = astype_(asarray_(condition), DType.bool)
    dt = promote_dtypes(x, y)
    c, a, b = broadcast_all(cond, asarray_(x, dt), asarray_(y, dt))
    return ew.select_n_p.bind(c, b, a)
