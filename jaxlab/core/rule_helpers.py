"""Rule shapes that many primitives share (linear jvp, zero tangent, ...)."""
from __future__ import annotations

from typing import Any, Callable

from jaxlab.core.batching import move_to
from jaxlab.core.primitives import Primitive


def is_undef(x: Any) -> bool:
    """True for the linear (unknown) inputs of an equation being transposed."""
    from jaxlab.core.partial_eval import UndefPrimal
    return isinstance(x, UndefPrimal)


def zeros_like(x: Any) -> Any:
    from jaxlab.core.values import zeros_like as zl
    return zl(x)


def jvp_zero(prim: Primitive) -> Callable:
    """Piecewise-constant or non-float outputs: the tangent is zero."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [zeros_like(o) for o in outs]
    return rule


def jvp_linear(prim: Primitive) -> Callable:
    """Linear primitives: applying the op to the tangents gives the tangent."""
    def rule(primals, tangents, **params):
        return [prim.bind(*primals, **params)], [prim.bind(*tangents, **params)]
    return rule


def batch_at_front(prim: Primitive,
                   adjust: Callable[[dict, int], dict] | None = None) -> Callable:
    """Move every batch axis to 0 (broadcasting unbatched operands), rewrite the
    params for the extra leading axis of `size`, bind; outputs are batched at 0."""
    def rule(size, vals, dims, **params):
        vals = [move_to(v, d, 0, size) for v, d in zip(vals, dims)]
        out = prim.bind(*vals, **(adjust(params, size) if adjust else params))
        outs = list(out) if prim.multiple_results else [out]
        return outs, [0] * len(outs)
    return rule


def bilinear_tangent(f: Callable, x: Any, y: Any, tx: Any, ty: Any, out: Any) -> Any:
    """d f(x, y) for f linear in each argument, skipping known-zero tangents."""
    from jaxlab.core.jvp import ZeroTangent, zeros_like_aval
    from jaxlab.core.trace import get_aval
    terms = [f(tx, y)] if not isinstance(tx, ZeroTangent) else []
    if not isinstance(ty, ZeroTangent):
        terms.append(f(x, ty))
    if not terms:
        return zeros_like_aval(get_aval(out))
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]
