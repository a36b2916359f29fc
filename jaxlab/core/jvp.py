"""Forward-mode differentiation: tracers carrying (primal, tangent) pairs."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.core.avals import ShapedArray
from jaxlab.core.primitives import Primitive, jvp_rules
from jaxlab.core.trace import Trace, Tracer, full_raise, get_aval, new_main


def zeros_like_aval(aval: ShapedArray) -> Any:
    from jaxlab.numpy.creation import zeros
    return zeros(aval.shape, aval.dtype)


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any) -> None:
        self._trace, self.primal, self.tangent = trace, primal, tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)


class JVPTrace(Trace):
    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, zeros_like_aval(get_aval(val)))

    lift = pure

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        if prim not in jvp_rules:
            raise NotImplementedError(f"differentiation of {prim.name} is not supported")
        primals_in = [t.primal for t in tracers]
        tangents_in = [t.tangent for t in tracers]
        primals_out, tangents_out = jvp_rules[prim](primals_in, tangents_in, **params)
        return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]


def jvp_flat(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        tracers_in = [JVPTracer(trace, x, t) for x, t in zip(primals, tangents)]
        outs = f(*tracers_in)
        tracers_out = [full_raise(trace, o) for o in outs]
        return [t.primal for t in tracers_out], [t.tangent for t in tracers_out]
