"""Forward-mode differentiation: tracers carrying (primal, tangent) pairs."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.array import Array
from jaxlab.core.avals import ShapedArray
from jaxlab.core.primitives import Primitive, jvp_rules
from jaxlab.core.trace import Trace, Tracer, bind, full_raise, get_aval, new_main


class ZeroTangent(Array):
    """A tangent known to be zero (an input not being differentiated): rules are
    skipped when every input tangent is one, so no dead work is traced."""
    __slots__ = ()


def zeros_like_aval(aval: ShapedArray) -> Any:
    from jaxlab.engine import lazy as lz
    from jaxlab.engine.devices import current_device
    return ZeroTangent(lz.full(aval.shape, 0, aval.dtype, current_device()))


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def concrete_value(self) -> Any:
        primal = self.primal
        return primal.concrete_value() if isinstance(primal, Tracer) else primal


class JVPTrace(Trace):
    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, zeros_like_aval(get_aval(val)))

    lift = pure

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        if prim not in jvp_rules:
            raise NotImplementedError(f"differentiation of {prim.name} is not supported")
        primals_in = [t.primal for t in tracers]
        tangents_in = [t.tangent for t in tracers]
        if all(isinstance(t, ZeroTangent) for t in tangents_in):
            out = bind(prim, *primals_in, **params)
            primals_out = list(out) if prim.multiple_results else [out]
            tangents_out = [zeros_like_aval(get_aval(p)) for p in primals_out]
        else:
            primals_out, tangents_out = jvp_rules[prim](primals_in, tangents_in, **params)
        return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]


def jvp_flat(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        tracers_in = [JVPTracer(trace, x, t) for x, t in zip(primals, tangents)]
        outs = f(*tracers_in)
        tracers_out = [full_raise(trace, o) for o in outs]
        return [t.primal for t in tracers_out], [t.tangent for t in tracers_out]
