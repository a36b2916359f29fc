"""Complex numbers: the real/imag/conj/complex primitives, and the complex lowering
of every primitive that accepts complex operands.

Each rule is real arithmetic on the parts of `engine.complex.ComplexLazy`
operands, so it fuses like any elementwise work and no renderer sees a complex
type. Linear maps that act on whole arrays (sums, matmuls, gathers) run on the
interleaved storage (`pair`) instead: one kernel folds both parts at once.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.core import control_flow, custom_derivatives, indexing, linalg, movement
from jaxlab.core import complex_math as cm
from jaxlab.core import elementwise as ew
from jaxlab.core import reductions as red
from jaxlab.core.primitives import complex_lowerings, lowerings, primitive, weak_preserving
from jaxlab.engine import complex as cx
from jaxlab.engine import lazy as lz
from jaxlab.engine.complex import ComplexLazy
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType

real_p = primitive("real")
imag_p = primitive("imag")
conj_p = primitive("conj")
complex_p = primitive("complex")
weak_preserving.update({real_p, imag_p, conj_p, complex_p})


# --- real arithmetic on parts --------------------------------------------------------

def _add(a: Lazy, b: Lazy) -> Lazy:
    return lz.elementwise(AluOp.Add, [a, b])


def _sub(a: Lazy, b: Lazy) -> Lazy:
    return lz.elementwise(AluOp.Sub, [a, b])


def _mul(a: Lazy, b: Lazy) -> Lazy:
    return lz.elementwise(AluOp.Mul, [a, b])


def _div(a: Lazy, b: Lazy) -> Lazy:
    return lz.elementwise(AluOp.Div, [a, b])


def negate(a: Lazy) -> Lazy:
    return _mul(a, _const(a, -1.0))


def _const(like: Lazy, value: float) -> Lazy:
    return lz.full(like.shape, value, like.dtype, like.device)


def _parts(z: Any) -> tuple[Lazy, Lazy]:
    """(re, im) of a complex operand; a real one has a zero imaginary part."""
    if isinstance(z, ComplexLazy):
        return z.re, z.im
    return z, _const(z, 0.0)


def _cmul(ar: Lazy, ai: Lazy, br: Lazy, bi: Lazy) -> tuple[Lazy, Lazy]:
    return _sub(_mul(ar, br), _mul(ai, bi)), _add(_mul(ar, bi), _mul(ai, br))


# --- elementwise rules ---------------------------------------------------------------

def multiply(x: Any, y: Any) -> ComplexLazy:
    """Complex multiplication of two lazy values (either may be real)."""
    return cx.from_parts(*_cmul(*_parts(x), *_parts(y)))


def _complex_div(x: Any, y: Any) -> ComplexLazy:
    """(a+bi)/(c+di): cm.c_div, Smith's algorithm on scaled parts."""
    parts = (cm.Real(p) for p in (*_parts(x), *_parts(y)))
    re, im = cm.c_div(*parts)
    return cx.from_parts(re.lazy, im.lazy)


_exp, _log = cm.on_parts(cm.c_exp), cm.on_parts(cm.c_log)


def _partwise(op: AluOp) -> Callable[[Any, Any], ComplexLazy]:
    def rule(x: Any, y: Any) -> ComplexLazy:
        (a, b), (c, d) = _parts(x), _parts(y)
        return cx.from_parts(lz.elementwise(op, [a, c]), lz.elementwise(op, [b, d]))
    return rule


def _complex_ne(x: Any, y: Any) -> Lazy:
    (a, b), (c, d) = _parts(x), _parts(y)
    return lz.elementwise(AluOp.Or, [lz.elementwise(AluOp.Cmpne, [a, c]),
                                     lz.elementwise(AluOp.Cmpne, [b, d])])


def _complex_eq(x: Any, y: Any) -> Lazy:
    ne = _complex_ne(x, y)
    return lz.elementwise(AluOp.Xor, [ne, lz.full(ne.shape, True, DType.bool, ne.device)])


def _complex_abs(z: ComplexLazy) -> Lazy:
    return cm.hypot(cm.Real(z.re), cm.Real(z.im)).lazy


def _complex_integer_pow(z: ComplexLazy, *, y: int) -> ComplexLazy:
    """z**y by repeated squaring, as the real rule."""
    result, base, n = (_const(z.re, 1.0), _const(z.re, 0.0)), (z.re, z.im), abs(y)
    while n:
        if n & 1:
            result = _cmul(*result, *base)
        n >>= 1
        if n:
            base = _cmul(*base, *base)
    out = cx.from_parts(*result)
    return _complex_div(cx.full(z.shape, 1.0, z.dtype, z.device), out) if y < 0 else out


def _complex_pow(x: Any, y: Any) -> ComplexLazy:
    """x**y = exp(y log x); 0**y is 0 (1 where y is 0), as NumPy."""
    if not isinstance(x, ComplexLazy):
        x = cx.from_parts(*_parts(x))
    out = _exp(multiply(y, _log(x)))
    x_zero = _complex_eq(x, cx.full(x.shape, 0.0, x.dtype, x.device))
    y_re, y_im = _parts(y)
    y_zero = lz.elementwise(AluOp.And, [lz.elementwise(AluOp.Xor, [lz.elementwise(
        AluOp.Cmpne, [y_re, _const(y_re, 0.0)]), lz.full(x.shape, True, DType.bool, x.device)]),
        lz.elementwise(AluOp.Xor, [lz.elementwise(AluOp.Cmpne, [y_im, _const(y_im, 0.0)]),
                                   lz.full(x.shape, True, DType.bool, x.device)])])
    at_zero = lz.elementwise(AluOp.Where, [y_zero, _const(out.re, 1.0), _const(out.re, 0.0)])
    return cx.from_parts(lz.elementwise(AluOp.Where, [x_zero, at_zero, out.re]),
                         lz.elementwise(AluOp.Where, [x_zero, _const(out.im, 0.0), out.im]))


def _complex_convert(z: ComplexLazy, *, new_dtype: DType, weak_type: bool = False) -> Any:
    """To another complex dtype: both parts; to a real one: the real part (NumPy's
    ComplexWarning is jnp's to give); to bool: z != 0."""
    if new_dtype.is_complex:
        real = new_dtype.real_dtype
        return cx.from_parts(lz.cast(z.re, real), lz.cast(z.im, real))
    if new_dtype.is_bool:
        return _complex_ne(z, cx.full(z.shape, 0.0, z.dtype, z.device))
    return lz.cast(z.re, new_dtype)


def _complex_select(pred: Lazy, *cases: Any) -> ComplexLazy:
    parts = [_parts(c) for c in cases]
    rule = lowerings[ew.select_n_p]
    return cx.from_parts(rule(pred, *(p[0] for p in parts)), rule(pred, *(p[1] for p in parts)))


def _complex_is_finite(z: ComplexLazy) -> Lazy:
    rule = lowerings[ew.is_finite_p]
    return lz.elementwise(AluOp.And, [rule(z.re), rule(z.im)])


# --- the new primitives ----------------------------------------------------------

def _not_complex(name: str) -> Callable[..., Any]:
    def rule(x: Lazy, *args: Any) -> Any:
        raise TypeError(f"{name} needs a complex operand, got {x.dtype}")
    return rule


def _complex_parts_rule(re: Lazy, im: Lazy) -> ComplexLazy:
    if not re.dtype.is_float:
        raise TypeError(f"complex needs floating-point parts, got {re.dtype}")
    if re.dtype is not im.dtype or re.shape != im.shape:
        raise TypeError(f"complex parts differ: {re.dtype}{list(re.shape)} and "
                        f"{im.dtype}{list(im.shape)}")
    return cx.from_parts(re, im)


lowerings.update({real_p: _not_complex("real"), imag_p: _not_complex("imag"),
                  conj_p: _not_complex("conj"), complex_p: _complex_parts_rule})
complex_lowerings.update({
    real_p: lambda z: z.re, imag_p: lambda z: z.im,
    conj_p: lambda z: cx.from_parts(z.re, negate(z.im)),
})


# --- structural rules: the same real rule on both parts, or on the storage -----------

def _on_parts(rule: Callable[..., Any]) -> Callable[..., ComplexLazy]:
    """A rule that moves values (reshape, slice, pad...) applied to each part; real
    operands (indices, predicates) pass unchanged."""
    def complex_rule(*args: Any, **params: Any) -> ComplexLazy:
        pick = lambda lane: [_parts(a)[lane] if _is_value(a) else a  # noqa: E731
                             for a in args]
        return cx.from_parts(rule(*pick(0), **params), rule(*pick(1), **params))
    return complex_rule


def _is_value(a: Any) -> bool:
    """Operands that carry the array's values (every operand of a complex dtype, and
    real ones mixed into them, e.g. a real padding value)."""
    return isinstance(a, ComplexLazy) or a.dtype.is_float


def _on_storage(rule: Callable[..., Lazy]) -> Callable[..., ComplexLazy]:
    """A linear rule over whole arrays run once on the interleaved storage: the
    trailing (re, im) axis rides along as one more untouched axis."""
    def complex_rule(z: ComplexLazy, *rest: Lazy, **params: Any) -> ComplexLazy:
        out = rule(z.pair, *rest, **params)
        return cx.from_pair(out, z.dtype)
    return complex_rule


def _complex_reduce_prod(z: ComplexLazy, *, axes: Sequence[int]) -> ComplexLazy:
    """Products of halves, log2 n fused steps per axis (the empty product is 1)."""
    out = z
    for axis in sorted(axes, reverse=True):
        out = _prod_along(out, axis)
    return out


def _prod_along(z: ComplexLazy, axis: int) -> ComplexLazy:
    n = z.shape[axis]
    width = 1 << max(n - 1, 0).bit_length()   # padded with ones to a power of two
    pads = [(0, 0, 0)] * len(z.shape)
    pads[axis] = (0, width - n, 0)
    pad = lowerings[movement.pad_p]
    re, im = (pad(p, lz.full((), fill, p.dtype, p.device), padding_config=tuple(pads))
              for p, fill in ((z.re, 1.0), (z.im, 0.0)))
    while width > 1:
        width //= 2
        halves = [_take(p, axis, lo, lo + width) for lo in (0, width) for p in (re, im)]
        re, im = (lz.realize(p, "a step of a complex product") for p in _cmul(*halves))
    shape = z.shape[:axis] + z.shape[axis + 1:]
    return cx.from_parts(*(lz.movement(p, "reshape", shape) for p in (re, im)))


def _complex_cumprod(z: ComplexLazy, *, axis: int, reverse: bool = False) -> ComplexLazy:
    """The real cumulative product's scan with complex products of the parts."""
    combine = lambda ys, shifted: list(_cmul(*ys, *shifted))  # noqa: E731
    return cx.from_parts(*red.scan([z.re, z.im], combine, [1.0, 0.0], axis, reverse, "cumprod"))


def _take(x: Lazy, axis: int, lo: int, hi: int) -> Lazy:
    bounds = tuple((lo, hi) if d == axis else (0, n) for d, n in enumerate(x.shape))
    return lz.movement(x, "shrink", bounds)


def _complex_dot_general(x: Any, y: Any, *, dimension_numbers: Any,
                         preferred_element_type: DType | None = None) -> ComplexLazy:
    """One reduction kernel over the interleaved storage: each output lane sums its
    part of the complex products (re: ar*br - ai*bi, im: ar*bi + ai*br)."""
    layout = linalg.dot_layout(x.shape, y.shape, dimension_numbers)
    (ar, ai), (br, bi) = _parts(x), _parts(y)
    ar, ai = layout.lhs(ar), layout.lhs(ai)
    br, bi = layout.rhs(br), layout.rhs(bi)
    pair = cx.interleave(*_cmul(ar, ai, br, bi))
    dtype = next(v.dtype for v in (x, y) if isinstance(v, ComplexLazy))
    return cx.from_pair(lz.reduce(pair, AluOp.Add, layout.contract), dtype)


def _complex_gather(x: ComplexLazy, idx: Lazy, *, axis: int) -> ComplexLazy:
    return cx.from_pair(lowerings[indexing.gather_p](x.pair, idx, axis=axis), x.dtype)


_ELEMENTWISE = {
    ew.binary_prims["add"]: _partwise(AluOp.Add), ew.binary_prims["sub"]: _partwise(AluOp.Sub),
    ew.binary_prims["mul"]: multiply, ew.div_p: _complex_div,
    ew.neg_p: lambda z: cx.from_parts(negate(z.re), negate(z.im)),
    ew.eq_p: _complex_eq, ew.binary_prims["ne"]: _complex_ne,
    **{ew.unary_prims[name]: cm.on_parts(fn) for name, fn in (
        ("exp", cm.c_exp), ("log", cm.c_log), ("sqrt", cm.c_sqrt), ("sin", cm.c_sin),
        ("cos", cm.c_cos), ("tanh", cm.c_tanh), ("asin", cm.c_asin), ("atan", cm.c_atan))},
    ew.unary_prims["reciprocal"]: lambda z: _complex_div(
        cx.full(z.shape, 1.0, z.dtype, z.device), z),
    ew.abs_p: _complex_abs, ew.sign_p: cm.on_parts(cm.c_sign),
    ew.integer_pow_p: _complex_integer_pow, ew.pow_p: _complex_pow,
    ew.convert_element_type_p: _complex_convert, ew.select_n_p: _complex_select,
    ew.is_finite_p: _complex_is_finite, ew.stop_gradient_p: lambda z: z,
}
complex_lowerings.update(_ELEMENTWISE)
complex_lowerings.update({p: _on_parts(lowerings[p]) for p in (
    movement.reshape_p, movement.transpose_p, movement.broadcast_in_dim_p, movement.pad_p,
    movement.slice_p, movement.rev_p, movement.concatenate_p)})
complex_lowerings.update({
    red.reduce_prims["reduce_sum"]: _on_storage(lowerings[red.reduce_prims["reduce_sum"]]),
    red.cumulative_prims["cumsum"]: _on_storage(lowerings[red.cumulative_prims["cumsum"]]),
    red.reduce_prims["reduce_prod"]: _complex_reduce_prod,
    red.cumulative_prims["cumprod"]: _complex_cumprod,
    linalg.dot_general_p: _complex_dot_general, indexing.gather_p: _complex_gather,
})
# primitives holding jaxprs evaluate them with these same rules
complex_lowerings.update({p: lowerings[p] for p in (
    control_flow.cond_p, control_flow.while_p, control_flow.scan_p,
    custom_derivatives.custom_jvp_call_p,
    custom_derivatives.custom_vjp_call_p, custom_derivatives.custom_lin_p)})


# --- differentiation and batching rules (JAX's: linear maps transpose, no conjugation) --
from jaxlab.core import rule_ops  # noqa: E402
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import batch_at_front, jvp_linear, zeros_like  # noqa: E402


def _t_real(cts, z):
    return [complex_p.bind(cts[0], zeros_like(cts[0]))]


def _t_imag(cts, z):
    return [complex_p.bind(zeros_like(cts[0]), ew.neg_p.bind(cts[0]))]


def _t_complex(cts, re, im):
    (ct,) = cts
    return [real_p.bind(ct), ew.neg_p.bind(imag_p.bind(ct))]


_real_abs_jvp = jvp_rules[ew.abs_p]


def _jvp_abs(primals, tangents):
    """d|z| = Re(conj(z) dz) / |z|, 0 at z = 0 (as JAX); real operands as before."""
    (x,), (t,) = primals, tangents
    if not x.jdtype.is_complex:
        return _real_abs_jvp(primals, tangents)
    out = ew.abs_p.bind(x)
    at_zero = rule_ops.equal(out, 0.0)
    slope = real_p.bind(ew.binary_prims["mul"].bind(conj_p.bind(x), t))
    safe = rule_ops.where(at_zero, 1.0, out)
    return [out], [rule_ops.where(at_zero, 0.0, ew.div_p.bind(slope, safe))]


jvp_rules[ew.abs_p] = _jvp_abs
for _p in (real_p, imag_p, conj_p, complex_p):
    jvp_rules[_p] = jvp_linear(_p)
    batch_rules[_p] = batch_at_front(_p)
transpose_rules.update({real_p: _t_real, imag_p: _t_imag, complex_p: _t_complex,
                        conj_p: lambda cts, z: [conj_p.bind(cts[0])]})
