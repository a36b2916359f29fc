"""Elementwise primitives and their lowerings to lazy ALU expressions.

Operands of a lax-level primitive already share shape and dtype (jaxlab.numpy
broadcasts and promotes before binding), as in jax.lax.
"""
from __future__ import annotations

import math
from typing import Any

from jaxlab.core.primitives import lowerings, primitive, weak_preserving
from jaxlab.engine import complex as cx
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp, Divisor
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
    return _op(AluOp.Sub, _const(x, 0), x) if x.dtype.is_int and not x.dtype.is_signed else \
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
    out = _op(AluOp.Where, _op(AluOp.Cmplt, x, _const(x, 0)), _neg(x), x)
    if x.dtype.is_float:   # |-0.0| is +0.0
        out = _op(AluOp.Where, _eq(x, _const(x, 0)), _const(x, 0.0), out)
    return out


def _sign(x: Lazy) -> Lazy:
    zero = _const(x, 0)
    pos = lz.cast(_op(AluOp.Cmplt, zero, x), x.dtype)
    if x.dtype is DType.uint32 or x.dtype.is_bool:
        return pos
    out = _op(AluOp.Sub, pos, lz.cast(_op(AluOp.Cmplt, x, zero), x.dtype))
    if x.dtype.is_float:  # sign(nan) is nan, sign(-0.0) is -0.0: x itself
        out = _op(AluOp.Where, _op(AluOp.Or, _op(AluOp.Cmpne, x, x), _eq(x, zero)), x, out)
    return out


def _select_n(pred: Lazy, on_false: Lazy, on_true: Lazy) -> Lazy:
    if pred.dtype is not DType.bool:
        raise TypeError(f"select_n needs a bool predicate, got {pred.dtype}")
    return _op(AluOp.Where, pred, on_true, on_false)


def _convert(x: Lazy, *, new_dtype: DType, weak_type: bool = False) -> Lazy:
    if new_dtype.is_complex:   # a real value is the real part
        re = lz.cast(x, new_dtype.real_dtype)
        return cx.from_parts(re, _const(re, 0.0))
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
    # the sign bit, -0.0 included (1 / -0.0 is -inf): (-0.0) ** 3 is -0.0
    sign_bit = _op(AluOp.Or, _op(AluOp.Cmplt, x, zero),
                   _op(AluOp.And, _eq(x, zero), _op(AluOp.Cmplt, _op(AluOp.Div, one, x), zero)))
    out = _op(AluOp.Where, _op(AluOp.And, sign_bit, y_odd), _neg(mag), mag)
    finite_negative = _op(AluOp.And, _op(AluOp.Cmplt, x, zero),
                          _op(AluOp.Cmplt, _const(x, float("-inf")), x))
    out = _op(AluOp.Where, _op(AluOp.And, finite_negative, _not(y_int)),
              _const(x, float("nan")), out)
    # 1 ** y and (-1) ** +-inf are 1 (exp(inf * log 1) would be NaN); x ** 0 is 1
    unit = _op(AluOp.Or, _eq(x, one),
               _op(AluOp.And, _eq(ax, one), _eq(_abs(y), _const(y, float("inf")))))
    return _op(AluOp.Where, _op(AluOp.Or, unit, _eq(y, zero)), one, out)


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


SCALE_EDGE = 2.0 ** 64


def power_of_two_scale(big: Lazy) -> Lazy:
    """s = 2^-64, 1 or 2^64 with big * s within [2^-64, 2^64] (from 2^-85 for a subnormal
    big >= 0; inf stays inf). Scaling by it is exact, and dividing by a value scaled so
    needs no guard: a device that divides as a * (1 / b) and flushes subnormals (NVIDIA's;
    WGSL allows both) loses 1 / b for |b| past 2^126, and results below 2^-126."""
    return _op(AluOp.Where, _op(AluOp.Cmplt, _const(big, SCALE_EDGE), big),
               _const(big, 1.0 / SCALE_EDGE),
               _op(AluOp.Where, _op(AluOp.Cmplt, big, _const(big, 1.0 / SCALE_EDGE)),
                   _const(big, SCALE_EDGE), _const(big, 1.0)))


def _ratio(y: Lazy, x: Lazy) -> Lazy:
    """y / x with both scaled alike first, into max(|x|, |y|) <= 2^64: what is lost to
    the scaling (a part below 2^-149 of the other) is lost to the quotient anyway."""
    ay, ax = _abs(y), _abs(x)
    scale = power_of_two_scale(_op(AluOp.Where, _op(AluOp.Cmplt, ay, ax), ax, ay))
    return lz.elementwise(AluOp.Div, [_op(AluOp.Mul, y, scale), _op(AluOp.Mul, x, scale)],
                          arg=Divisor.BOUNDED)


def _atan2(y: Lazy, x: Lazy) -> Lazy:
    """atan2 from atan with quadrant fixes; signs of zeros as NumPy."""
    zero = _const(x, 0.0)
    pi = _const(x, 3.141592653589793)
    base = _op(AluOp.Atan, _ratio(y, x))
    # y < 0, -0.0 included (1/-0 is -inf; 1/-inf is -0, hence both tests)
    y_neg = _op(AluOp.Or, _op(AluOp.Cmplt, y, zero),
                _op(AluOp.Cmplt, _op(AluOp.Div, _const(y, 1.0), y), zero))
    shift = _op(AluOp.Where, y_neg, _neg(pi), pi)
    out = _op(AluOp.Where, _op(AluOp.Cmplt, x, zero), _op(AluOp.Add, base, shift), base)
    x_neg_or_negzero = _op(AluOp.Cmplt, _op(AluOp.Div, _const(x, 1.0), x), zero)
    at_x_zero = _op(AluOp.Where, _eq(y, zero),
                    _op(AluOp.Where, x_neg_or_negzero,
                        _op(AluOp.Where, y_neg, _neg(pi), pi),
                        _op(AluOp.Mul, y, zero)),
                    _op(AluOp.Mul, _const(x, 1.5707963267948966),
                        _op(AluOp.Where, y_neg, _const(x, -1.0), _const(x, 1.0))))
    out = _op(AluOp.Where, _eq(x, zero), at_x_zero, out)
    # both infinite: a quarter (x = +inf) or three quarters (x = -inf) of pi, y's sign
    inf = _const(x, math.inf)
    both_inf = _op(AluOp.And, _eq(_abs(y), inf), _eq(_abs(x), inf))
    corner = _op(AluOp.Where, _op(AluOp.Cmplt, x, zero), _const(x, 2.356194490192345),
                 _const(x, 0.7853981633974483))
    out = _op(AluOp.Where, both_inf, _op(AluOp.Where, y_neg, _neg(corner), corner), out)
    nan_in = _op(AluOp.Or, _op(AluOp.Cmpne, y, y), _op(AluOp.Cmpne, x, x))
    return _op(AluOp.Where, nan_in, _op(AluOp.Add, y, x), out)


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



# --- differentiation and batching rules --------------------------------------
from jaxlab.core import rule_ops, values  # noqa: E402  (rule_ops binds the primitives above)
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import (batch_at_front, bilinear_tangent, is_undef,  # noqa: E402
                                      jvp_linear, jvp_zero, zeros_like as _zero)


def jvp_unary(prim, derivative):
    """Rules of the form d f(x) = f'(x, f(x)) * dx."""
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = prim.bind(x, **params)
        return [y], [binary_prims["mul"].bind(t, derivative(x, y))]
    return rule


_UNARY_DERIVATIVES = {
    "sin": lambda x, y: unary_prims["cos"].bind(x),
    "cos": lambda x, y: -unary_prims["sin"].bind(x),
    "asin": lambda x, y: unary_prims["reciprocal"].bind(unary_prims["sqrt"].bind(1.0 - x * x)),
    "atan": lambda x, y: unary_prims["reciprocal"].bind(1.0 + x * x),
    "exp": lambda x, y: y,
    "log": lambda x, y: unary_prims["reciprocal"].bind(x),
    "sqrt": lambda x, y: 0.5 / y,
    "erf": lambda x, y: 1.1283791670955126 * unary_prims["exp"].bind(-x * x),
    "erfc": lambda x, y: -1.1283791670955126 * unary_prims["exp"].bind(-x * x),
    "tanh": lambda x, y: 1.0 - y * y,
    "reciprocal": lambda x, y: -y * y,
}
for _name, _d in _UNARY_DERIVATIVES.items():
    jvp_rules[unary_prims[_name]] = jvp_unary(unary_prims[_name], _d)


_ZERO_TANGENT = [unary_prims["floor"], unary_prims["ceil"], sign_p, round_p, is_finite_p,
                 not_p, eq_p, le_p, bitcast_convert_type_p, threefry2x32_p] + \
    [binary_prims[n] for n in ("and", "or", "xor", "shift_left", "shift_right", "lt", "ne")]
for _p in _ZERO_TANGENT:
    jvp_rules[_p] = jvp_zero(_p)


def _float_or_zero(prim, rule):
    """Integer-valued ops have zero tangents (JAX's float0), whatever the rule."""
    zero_rule = jvp_zero(prim)

    def wrapped(primals, tangents, **params):
        if not primals[0].jdtype.is_inexact:
            return zero_rule(primals, tangents, **params)
        return rule(primals, tangents, **params)
    return wrapped


def _jvp_mul(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = binary_prims["mul"].bind(x, y)
    return [out], [bilinear_tangent(binary_prims["mul"].bind, x, y, tx, ty, out)]


def _jvp_div(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = div_p.bind(x, y)
    return [out], [div_p.bind(tx - out * ty, y)]


def _jvp_rem(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    q = div_p.bind(x, y)
    trunc = sign_p.bind(q) * unary_prims["floor"].bind(abs_p.bind(q))
    return [binary_prims["rem"].bind(x, y)], [tx - ty * trunc]


def _jvp_minmax(prim, pick_first):
    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        first, tie = pick_first(x, y), rule_ops.equal(x, y)
        t = rule_ops.where(tie, (tx + ty) * 0.5, rule_ops.where(first, tx, ty))
        return [prim.bind(x, y)], [t]
    return rule


def _jvp_abs(primals, tangents):
    (x,), (t,) = primals, tangents
    return [abs_p.bind(x)], [rule_ops.where(rule_ops.less(x, 0), -t, t)]


def _jvp_select(primals, tangents):
    (p, f, t), (_, tf, tt) = primals, tangents
    return [select_n_p.bind(p, f, t)], [select_n_p.bind(p, tf, tt)]


def _jvp_convert(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not (new_dtype.is_inexact and x.jdtype.is_inexact):
        return [out], [_zero(out)]
    return [out], [convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)]


def _jvp_integer_pow(primals, tangents, *, y):
    (x,), (t,) = primals, tangents
    out = integer_pow_p.bind(x, y=y)
    if y == 0:
        return [out], [_zero(out)]
    if y == 1:
        lower = values.ones_like(x)
    else:   # x**1 is x: no equation for it
        lower = x if y == 2 else integer_pow_p.bind(x, y=y - 1)
    d = y * lower
    return [out], [t * d]


def _jvp_pow(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = pow_p.bind(x, y)
    dx = y * pow_p.bind(x, y - 1.0)
    at_zero = rule_ops.equal(x, 0.0)
    safe_log = unary_prims["log"].bind(rule_ops.where(at_zero, 1.0, x))
    dy = rule_ops.where(at_zero, 0.0, safe_log * out)
    return [out], [tx * dx + ty * dy]


def _jvp_atan2(primals, tangents):
    (y, x), (ty, tx) = primals, tangents
    return [atan2_p.bind(y, x)], [(x * ty - y * tx) / (x * x + y * y)]


for _p, _r in {binary_prims["mul"]: _jvp_mul, div_p: _jvp_div, binary_prims["rem"]: _jvp_rem,
               binary_prims["max"]: _jvp_minmax(binary_prims["max"],
                                                rule_ops.greater),
               binary_prims["min"]: _jvp_minmax(binary_prims["min"],
                                                rule_ops.less),
               abs_p: _jvp_abs, pow_p: _jvp_pow, atan2_p: _jvp_atan2}.items():
    jvp_rules[_p] = _float_or_zero(_p, _r)
for _p in (binary_prims["add"], binary_prims["sub"], neg_p):
    jvp_rules[_p] = jvp_linear(_p)
jvp_rules.update({select_n_p: _jvp_select, convert_element_type_p: _jvp_convert,
                  integer_pow_p: _jvp_integer_pow})


# transposes of the linear ones: cts is the list of output cotangents
def _t_mul(cts, x, y):
    (ct,) = cts
    return [ct * y, None] if is_undef(x) else [None, x * ct]


def _t_div(cts, x, y):
    (ct,) = cts
    return [div_p.bind(ct, y), None]


def _t_select(cts, p, f, t):
    (ct,) = cts
    zero = _zero(ct)
    return [None, select_n_p.bind(p, ct, zero) if is_undef(f) else None,
            select_n_p.bind(p, zero, ct) if is_undef(t) else None]


def _t_convert(cts, x, *, new_dtype, weak_type=False):
    return [convert_element_type_p.bind(cts[0], new_dtype=x.aval.dtype,
                                        weak_type=x.aval.weak_type)]


transpose_rules.update({
    binary_prims["add"]: lambda cts, x, y: [cts[0], cts[0]],
    binary_prims["sub"]: lambda cts, x, y: [cts[0], neg_p.bind(cts[0])],
    neg_p: lambda cts, x: [neg_p.bind(cts[0])],
    binary_prims["mul"]: _t_mul, div_p: _t_div, select_n_p: _t_select,
    convert_element_type_p: _t_convert,
})


ELEMENTWISE_PRIMS = list(unary_prims.values()) + list(binary_prims.values()) + [
    div_p, neg_p, not_p, eq_p, le_p, abs_p, sign_p, select_n_p, convert_element_type_p,
    bitcast_convert_type_p, integer_pow_p, pow_p, atan2_p, round_p, is_finite_p,
    threefry2x32_p]
for _p in ELEMENTWISE_PRIMS:
    batch_rules[_p] = batch_at_front(_p)
weak_preserving.update(p for p in ELEMENTWISE_PRIMS if p not in (
    convert_element_type_p, bitcast_convert_type_p, threefry2x32_p))

stop_gradient_p = primitive("stop_gradient")
lowerings[stop_gradient_p] = lambda x: x
jvp_rules[stop_gradient_p] = jvp_zero(stop_gradient_p)
batch_rules[stop_gradient_p] = batch_at_front(stop_gradient_p)
