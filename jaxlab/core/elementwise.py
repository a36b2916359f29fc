"""Elementwise primitives and their lowerings to lazy ALU expressions.

Operands of a lax-level primitive already share shape and dtype (jaxlab.numpy
broadcasts and promotes before binding), as in jax.lax.
"""
from __future__ import annotations

from typing import Any

from jaxlab.core.primitives import lowerings, primitive
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType


def _const(x: Lazy, value: Any, dtype: DType | None = None) -> Lazy:
    return lz.full(x.shape, value, dtype or x.dtype, x.device)


def _op(op: AluOp, *xs: Lazy, dtype: DType | None = None) -> Lazy:
    return lz.elementwise(op, xs, dtype)


def _require(name: str, x: Lazy, ok: bool, what: str) -> None:
    if not ok:
        raise TypeError(f"{name} does not accept {x.dtype} operands ({what})")


# --- one-to-one ALU ops -------------------------------------------------------
UNARY_FLOAT_OPS = {"sin": AluOp.Sin, "cos": AluOp.Cos, "asin": AluOp.Asin,
                   "atan": AluOp.Atan, "exp": AluOp.Exp, "log": AluOp.Log,
                   "sqrt": AluOp.Sqrt, "floor": AluOp.Floor, "ceil": AluOp.Ceil,
                   "erf": AluOp.Erf, "erfc": AluOp.Erfc, "tanh": AluOp.Tanh,
                   "reciprocal": AluOp.Reciprocal}
BINARY_OPS = {"add": AluOp.Add, "sub": AluOp.Sub, "mul": AluOp.Mul, "rem": AluOp.Mod,
              "max": AluOp.Max, "min": AluOp.Min, "and": AluOp.And, "or": AluOp.Or,
              "xor": AluOp.Xor, "shift_left": AluOp.Shl, "shift_right": AluOp.Shr,
              "lt": AluOp.Cmplt, "ne": AluOp.Cmpne}
_BITWISE = {"and", "or", "xor", "shift_left", "shift_right"}

unary_prims = {name: primitive(name) for name in UNARY_FLOAT_OPS}
binary_prims = {name: primitive(name) for name in BINARY_OPS}


def _unary_rule(name: str, op: AluOp):
    def rule(x: Lazy) -> Lazy:
        _require(name, x, x.dtype.is_float, "floating point only")
        return _op(op, x)
    return rule


def _binary_rule(name: str, op: AluOp):
    def rule(x: Lazy, y: Lazy) -> Lazy:
        if name in _BITWISE:
            _require(name, x, not x.dtype.is_float, "integers and booleans only")
        if name.startswith("shift"):
            _require(name, x, x.dtype.is_int, "integers only")
        return _op(op, x, y)
    return rule


for _name, _alu in UNARY_FLOAT_OPS.items():
    lowerings[unary_prims[_name]] = _unary_rule(_name, _alu)
for _name, _alu in BINARY_OPS.items():
    lowerings[binary_prims[_name]] = _binary_rule(_name, _alu)


# --- ops with a small lowering of their own -----------------------------------
div_p = primitive("div")
neg_p = primitive("neg")
not_p = primitive("not")
eq_p = primitive("eq")
le_p = primitive("le")
abs_p = primitive("abs")
sign_p = primitive("sign")
select_n_p = primitive("select_n")
convert_element_type_p = primitive("convert_element_type")
bitcast_convert_type_p = primitive("bitcast_convert_type")
integer_pow_p = primitive("integer_pow")
pow_p = primitive("pow")
atan2_p = primitive("atan2")
round_p = primitive("round")
is_finite_p = primitive("is_finite")
threefry2x32_p = primitive("threefry2x32", multiple_results=True)


def _div(x: Lazy, y: Lazy) -> Lazy:
    return _op(AluOp.Div if x.dtype.is_float else AluOp.Idiv, x, y)


def _neg(x: Lazy) -> Lazy:
    _require("neg", x, not x.dtype.is_bool, "use logical_not")
    return _op(AluOp.Sub, _const(x, 0), x) if x.dtype is DType.uint32 else \
        _op(AluOp.Mul, x, _const(x, -1))


def _not(x: Lazy) -> Lazy:
    _require("not", x, not x.dtype.is_float, "integers and booleans only")
    return _op(AluOp.Xor, x, _const(x, True if x.dtype.is_bool else -1))


def _eq(x: Lazy, y: Lazy) -> Lazy:
    return _not(_op(AluOp.Cmpne, x, y))


def _le(x: Lazy, y: Lazy) -> Lazy:
    return _op(AluOp.Or, _op(AluOp.Cmplt, x, y), _eq(x, y))


def _abs(x: Lazy) -> Lazy:
    if x.dtype in (DType.uint32, DType.bool):
        return x
    return _op(AluOp.Where, _op(AluOp.Cmplt, x, _const(x, 0)), _neg(x), x)


def _sign(x: Lazy) -> Lazy:
    zero = _const(x, 0)
    pos = lz.cast(_op(AluOp.Cmplt, zero, x), x.dtype)
    if x.dtype is DType.uint32 or x.dtype.is_bool:
        return pos
    out = _op(AluOp.Sub, pos, lz.cast(_op(AluOp.Cmplt, x, zero), x.dtype))
    if x.dtype.is_float:  # sign(nan) is nan
        out = _op(AluOp.Where, _op(AluOp.Cmpne, x, x), x, out)
    return out


def _select_n(pred: Lazy, on_false: Lazy, on_true: Lazy) -> Lazy:
    if pred.dtype is not DType.bool:
        raise TypeError(f"select_n needs a bool predicate, got {pred.dtype}")
    return _op(AluOp.Where, pred, on_true, on_false)


def _convert(x: Lazy, *, new_dtype: DType) -> Lazy:
    return lz.cast(x, new_dtype)


def _bitcast(x: Lazy, *, new_dtype: DType) -> Lazy:
    if x.dtype.itemsize != new_dtype.itemsize:
        raise TypeError(f"bitcast from {x.dtype} to {new_dtype}: sizes differ")
    return x if x.dtype is new_dtype else lz.elementwise(AluOp.Bitcast, [x], new_dtype)


def _integer_pow(x: Lazy, *, y: int) -> Lazy:
    """x**y for a static integer y, by repeated squaring (exact for ints)."""
    if y == 0:
        return _const(x, 1)
    base, result, n = x, None, abs(y)
    while n:
        if n & 1:
            result = base if result is None else _op(AluOp.Mul, result, base)
        n >>= 1
        if n:
            base = _op(AluOp.Mul, base, base)
    if y < 0:
        _require("integer_pow", x, x.dtype.is_float, "negative powers need floats")
        result = _op(AluOp.Div, _const(x, 1.0), result)
    return result


def _pow(x: Lazy, y: Lazy) -> Lazy:
    if not x.dtype.is_float:
        return _int_pow(x, y)
    zero, one = _const(x, 0.0), _const(x, 1.0)
    ax = _abs(x)
    mag = _op(AluOp.Exp, _op(AluOp.Mul, y, _op(AluOp.Log, ax)))
    y_int = _eq(_op(AluOp.Floor, y), y)
    y_odd = _eq(_abs(_op(AluOp.Mod, y, _const(y, 2.0))), one)
    neg_base = _op(AluOp.Cmplt, x, zero)
    signed = _op(AluOp.Where, y_odd, _neg(mag), mag)
    out = _op(AluOp.Where, neg_base,
              _op(AluOp.Where, y_int, signed, _const(x, float("nan"))), mag)
    return _op(AluOp.Where, _eq(y, zero), one, out)   # x**0 == 1, even for nan


def _int_pow(x: Lazy, y: Lazy) -> Lazy:
    """Integer power by binary exponentiation over the 31 exponent bits."""
    result, base = _const(x, 1), x
    one = _const(y, 1)
    for bit in range(31):
        use = _op(AluOp.Cmpne, _op(AluOp.And, _op(AluOp.Shr, y, _const(y, bit)), one),
                  _const(y, 0))
        result = _op(AluOp.Where, use, _op(AluOp.Mul, result, base), result)
        if bit < 30:
            base = _op(AluOp.Mul, base, base)
    return _op(AluOp.Where, _op(AluOp.Cmplt, y, _const(y, 0)), _const(x, 0), result)


def _atan2(y: Lazy, x: Lazy) -> Lazy:
    """atan2 from atan with quadrant fixes; signs of zeros as NumPy."""
    zero = _const(x, 0.0)
    pi = _const(x, 3.141592653589793)
    base = _op(AluOp.Atan, _op(AluOp.Div, y, x))
    y_neg = _op(AluOp.Cmplt, _op(AluOp.Div, _const(y, 1.0), y), zero)  # true for -0.0 too
    shift = _op(AluOp.Where, y_neg, _neg(pi), pi)
    out = _op(AluOp.Where, _op(AluOp.Cmplt, x, zero), _op(AluOp.Add, base, shift), base)
    x_neg_or_negzero = _op(AluOp.Cmplt, _op(AluOp.Div, _const(x, 1.0), x), zero)
    at_x_zero = _op(AluOp.Where, _eq(y, zero),
                    _op(AluOp.Where, x_neg_or_negzero,
                        _op(AluOp.Where, y_neg, _neg(pi), pi),
                        _op(AluOp.Mul, y, zero)),
                    _op(AluOp.Mul, _const(x, 1.5707963267948966),
                        _op(AluOp.Where, y_neg, _const(x, -1.0), _const(x, 1.0))))
    return _op(AluOp.Where, _eq(x, zero), at_x_zero, out)


def _round(x: Lazy) -> Lazy:
    """Round half to even, as NumPy and jnp.round."""
    if not x.dtype.is_float:
        return x
    f = _op(AluOp.Floor, x)
    diff = _op(AluOp.Sub, x, f)
    half = _const(x, 0.5)
    f_even = _eq(_op(AluOp.Mod, f, _const(x, 2.0)), _const(x, 0.0))
    up = _op(AluOp.Or, _op(AluOp.Cmplt, half, diff),
             _op(AluOp.And, _eq(diff, half), _not(f_even)))
    return _op(AluOp.Where, up, _op(AluOp.Add, f, _const(x, 1.0)), f)


def _is_finite(x: Lazy) -> Lazy:
    # finite <=> x - x == 0 (inf - inf and nan - anything are nan)
    return _eq(_op(AluOp.Sub, x, x), _const(x, 0.0))


def _threefry(k0: Lazy, k1: Lazy, x0: Lazy, x1: Lazy) -> tuple[Lazy, Lazy]:
    return tuple(lz.elementwise(AluOp.Threefry2x32, [k0, k1, x0, x1], DType.uint32, arg=i)
                 for i in (0, 1))


lowerings.update({
    div_p: _div, neg_p: _neg, not_p: _not, eq_p: _eq, le_p: _le, abs_p: _abs,
    sign_p: _sign, select_n_p: _select_n, convert_element_type_p: _convert,
    bitcast_convert_type_p: _bitcast, integer_pow_p: _integer_pow, pow_p: _pow,
    atan2_p: _atan2, round_p: _round, is_finite_p: _is_finite, threefry2x32_p: _threefry,
})

