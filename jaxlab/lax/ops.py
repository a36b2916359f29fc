"""jax.lax's operations: strict about dtypes (no promotion, Python scalars included)."""
from __future__ import annotations

import builtins  # this module defines lax.max/min/abs/round, shadowing the builtins
from typing import Any, Sequence

import numpy as np

from jaxlab.array import ArrayBase
from jaxlab.core import elementwise as ew
from jaxlab.core.math_functions import prims as math_prims
from jaxlab.core import linalg as la
from jaxlab.core import movement as mv
from jaxlab.core import reductions as red
from jaxlab.core.primitives import Primitive
from jaxlab.ir.dtypes import DType, to_dtype
from jaxlab.numpy._util import asarray_, broadcast_to_


# the jax.numpy function that promotes, named in the error's tip as JAX does
_JNP_TWIN = {"sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
             "max": "maximum", "min": "minimum", "pow": "power", "atan2": "arctan2",
             "lt": "less", "le": "less_equal", "eq": "equal", "ne": "not_equal",
             "shift_left": "left_shift", "shift_right_arithmetic": "right_shift"}


def _same_dtypes(name: str, xs: Sequence[Any]) -> list:
    """Arrays of one dtype: lax never promotes, and a Python scalar has its default
    dtype (int32, float32, bool), so lax.add(x_f32, 1) fails as in JAX."""
    arrays = [asarray_(x) for x in xs]
    if len({a.jdtype for a in arrays}) > 1:
        got = ", ".join(str(a.jdtype) for a in arrays)
        twin = _JNP_TWIN.get(name, name)
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}. "
                        f"(Tip: jnp.{twin} is a similar function that does automatic type "
                        f"promotion on inputs).")
    return arrays


def _lax_args(name: str, *xs: Any) -> list:
    """Arrays of one dtype and one shape (0-d operands broadcast)."""
    out = _same_dtypes(name, xs)
    shapes = {x.shape for x in out if x.ndim}
    if len(shapes) > 1:
        raise TypeError(f"lax.{name} requires arguments to have the same shapes, got "
                        f"{sorted(shapes)}")
    shape = shapes.pop() if shapes else ()
    return [broadcast_to_(x, shape) for x in out]


def _nary(prim: Primitive, name: str):
    def op(*xs: Any) -> Any:
        return prim.bind(*_lax_args(name, *xs))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"lax.{name}: elementwise, operands of one dtype and shape."
    return op


_NARY = {
    "add": ew.binary_prims["add"], "sub": ew.binary_prims["sub"],
    "mul": ew.binary_prims["mul"], "div": ew.div_p, "rem": ew.binary_prims["rem"],
    "max": ew.binary_prims["max"], "min": ew.binary_prims["min"],
    "lt": ew.binary_prims["lt"], "ne": ew.binary_prims["ne"], "eq": ew.eq_p, "le": ew.le_p,
    "bitwise_and": ew.binary_prims["and"], "bitwise_or": ew.binary_prims["or"],
    "bitwise_xor": ew.binary_prims["xor"], "shift_left": ew.binary_prims["shift_left"],
    "shift_right_arithmetic": ew.binary_prims["shift_right"],
    "pow": ew.pow_p, "atan2": ew.atan2_p, "neg": ew.neg_p, "abs": ew.abs_p, "sign": ew.sign_p,
    "bitwise_not": ew.not_p, "round": ew.round_p, "is_finite": ew.is_finite_p,
    "stop_gradient": ew.stop_gradient_p,
    **{name: ew.unary_prims[key] for name, key in (
        ("sin", "sin"), ("cos", "cos"), ("asin", "asin"), ("atan", "atan"), ("exp", "exp"),
        ("log", "log"), ("sqrt", "sqrt"), ("floor", "floor"), ("ceil", "ceil"), ("erf", "erf"),
        ("erfc", "erfc"), ("tanh", "tanh"), ("reciprocal", "reciprocal"))},
}
globals().update({name: _nary(prim, name) for name, prim in _NARY.items()})


def gt(x: Any, y: Any) -> Any:
    return lt(y, x)  # noqa: F821  (defined through the table above)


def ge(x: Any, y: Any) -> Any:
    return le(y, x)  # noqa: F821


def rsqrt(x: Any) -> Any:
    return reciprocal(sqrt(x))  # noqa: F821


def tan(x: Any) -> Any:
    x = asarray_(x)
    if x.jdtype.is_complex:   # sin / cos would overflow for large imaginary parts
        return math_prims["tan"].bind(x)
    return div(sin(x), cos(x))  # noqa: F821


def logistic(x: Any) -> Any:
    (x,) = _lax_args("logistic", x)
    return reciprocal(add(exp(neg(x)), 1.0))  # noqa: F821


def square(x: Any) -> Any:
    return integer_pow(x, 2)


def integer_pow(x: Any, y: int) -> Any:
    if not isinstance(y, (int, np.integer)):
        raise TypeError(f"integer_pow: the exponent must be a Python int, got {y!r}")
    return ew.integer_pow_p.bind(asarray_(x), y=int(y))


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    return min(max(x, lo), hi)  # noqa: F821


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    a, b = _lax_args("select", on_true, on_false)
    return ew.select_n_p.bind(broadcast_to_(asarray_(pred), a.shape), b, a)


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which]; which is bool (two cases) or an int index."""
    cases = _lax_args("select_n", *cases)
    which = asarray_(which)
    out = cases[0]
    for i, c in enumerate(cases[1:], start=1):
        pick = which if which.jdtype is DType.bool else eq(which, i)  # noqa: F821
        out = ew.select_n_p.bind(broadcast_to_(pick, c.shape), out, c)
    return out


def convert_element_type(x: Any, new_dtype: Any) -> Any:
    return ew.convert_element_type_p.bind(asarray_(x), new_dtype=to_dtype(new_dtype),
                                          weak_type=False)


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    return ew.bitcast_convert_type_p.bind(asarray_(x), new_dtype=to_dtype(new_dtype))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    x = asarray_(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    return mv.reshape_p.bind(x, new_sizes=tuple(new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    return mv.transpose_p.bind(asarray_(operand), permutation=tuple(permutation))


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    return mv.broadcast_in_dim_p.bind(asarray_(operand), shape=tuple(shape),
                                      broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    x = asarray_(operand)
    shape = tuple(sizes) + x.shape
    return broadcast_in_dim(x, shape, tuple(range(len(sizes), len(shape))))


def pad(operand: Any, padding_value: Any, padding_config: Sequence) -> Any:
    x = asarray_(operand)
    return mv.pad_p.bind(x, asarray_(padding_value, x.jdtype),
                         padding_config=tuple(tuple(c) for c in padding_config))


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    return mv.slice_p.bind(asarray_(operand), start_indices=tuple(start_indices),
                           limit_indices=tuple(limit_indices),
                           strides=None if strides is None else tuple(strides))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    return mv.rev_p.bind(asarray_(operand), dimensions=tuple(dimensions))


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    xs = _same_dtypes("concatenate", operands)
    return mv.concatenate_p.bind(*xs, dimension=dimension)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                precision: Any = None, preferred_element_type: Any = None) -> Any:
    x, y = _same_dtypes("dot_general", [lhs, rhs])
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    pet = None if preferred_element_type is None else to_dtype(preferred_element_type)
    return la.dot_general_p.bind(x, y, dimension_numbers=dn, preferred_element_type=pet)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    x, y = asarray_(lhs), asarray_(rhs)
    return dot_general(x, y, (((x.ndim - 1,), (0,)), ((), ())),
                       preferred_element_type=preferred_element_type)


def _reduce(prim_name: str):
    def op(operand: Any, axes: Sequence[int]) -> Any:
        return red.reduce_prims[prim_name].bind(asarray_(operand), axes=tuple(axes))
    op.__name__ = op.__qualname__ = prim_name
    return op


reduce_sum = _reduce("reduce_sum")
reduce_max = _reduce("reduce_max")
reduce_min = _reduce("reduce_min")
reduce_prod = _reduce("reduce_prod")


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    return red.argmax_p.bind(asarray_(operand), axes=(axis,), index_dtype=to_dtype(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    return red.argmin_p.bind(asarray_(operand), axes=(axis,), index_dtype=to_dtype(index_dtype))


def _cumulative(name: str):
    def op(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        x = asarray_(operand)
        return red.cumulative_prims[name].bind(x, axis=axis % builtins.max(x.ndim, 1),
                                               reverse=reverse)
    op.__name__ = op.__qualname__ = name
    return op


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")
cummax = _cumulative("cummax")
cummin = _cumulative("cummin")


def sort(operand: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    return la.sort_p.bind(asarray_(operand), dimension=dimension)


def iota(dtype: Any, size: int) -> Any:
    from jaxlab.numpy.creation import arange
    return arange(size, dtype=dtype)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    from jaxlab.numpy.creation import full as jfull
    return jfull(shape, fill_value, dtype)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    from jaxlab.numpy.shape_ops import expand_dims as ed
    return ed(array, tuple(dimensions))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    from jaxlab.numpy.shape_ops import squeeze as sq
    return sq(array, tuple(dimensions))


__all__ = sorted(list(_NARY) + [
    "gt", "ge", "rsqrt", "tan", "logistic", "square", "integer_pow", "clamp", "select",
    "select_n", "convert_element_type", "bitcast_convert_type", "reshape", "transpose",
    "broadcast_in_dim", "broadcast", "pad", "slice", "rev", "concatenate", "dot_general", "dot",
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin", "cumsum",
    "cumprod", "cummax", "cummin", "sort", "iota", "full", "expand_dims", "squeeze"])
