"""Partial evaluation and transposition: how vjp is built from jvp.

linearize: run the jvp with the primals known and the tangents unknown;
known work runs now (as lazy arrays), unknown work is staged into a linear
jaxpr. vjp: run that jaxpr backwards with each primitive's transpose rule.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Sequence
from weakref import ref

from jaxlab.core.abstract import abstract_eval
from jaxlab.graph import toposort
from jaxlab.core.avals import ShapedArray
from jaxlab.core.jaxpr import Jaxpr, JaxprEqn, Lit, Var
from jaxlab.core.jvp import jvp_flat, zeros_like_aval
from jaxlab.core.primitives import Primitive, partial_eval_rules, transpose_rules
from jaxlab.core.trace import (Trace, Tracer, bind, full_lower, full_raise, get_aval, new_main,
                               source_info)
from jaxlab.ir.provenance import SourceInfo


class PartialVal(NamedTuple):
    aval: ShapedArray
    const: Optional[Any]

    @classmethod
    def known(cls, val: Any) -> "PartialVal":
        return cls(get_aval(val), val)

    @classmethod
    def unknown(cls, aval: ShapedArray) -> "PartialVal":
        return cls(aval, None)

    @property
    def is_known(self) -> bool:
        return self.const is not None


class LambdaBindingRecipe(NamedTuple):
    pass


class ConstRecipe(NamedTuple):
    val: Any


class JaxprEqnRecipe(NamedTuple):
    prim: Primitive
    tracers_in: list
    params: dict
    avals_out: list
    tracer_refs_out: list
    source_info: Optional[SourceInfo]


class PartialEvalTracer(Tracer):
    __slots__ = ("pval", "recipe", "__weakref__")

    def __init__(self, trace: Trace, pval: PartialVal, recipe: Any) -> None:
        self._trace, self.pval, self.recipe = trace, pval, recipe

    @property
    def aval(self) -> ShapedArray:
        return self.pval.aval

    def full_lower(self) -> Any:
        return self.pval.const if self.pval.is_known else self

    def concrete_value(self) -> Any:
        const = self.pval.const
        return const.concrete_value() if isinstance(const, Tracer) else const


class PartialEvalTrace(Trace):
    def new_arg(self, pval: PartialVal) -> PartialEvalTracer:
        return PartialEvalTracer(self, pval, LambdaBindingRecipe())

    def lift(self, val: Any) -> PartialEvalTracer:
        return PartialEvalTracer(self, PartialVal.known(val), None)

    pure = lift

    def instantiate_const(self, t: PartialEvalTracer) -> PartialEvalTracer:
        if not t.pval.is_known:
            return t
        return PartialEvalTracer(self, PartialVal.unknown(t.aval), ConstRecipe(t.pval.const))

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        if all(t.pval.is_known for t in tracers):
            out = bind(prim, *(full_lower(t) for t in tracers), **params)
            return list(out) if prim.multiple_results else [out]
        rule = partial_eval_rules.get(prim)
        outs = rule(self, tracers, **params) if rule is not None else None
        if outs is not None:
            return outs
        return self.stage(prim, [self.instantiate_const(t) for t in tracers], params)

    def stage(self, prim: Primitive, ins: list, params: dict) -> list:
        """Record prim applied to unknown tracers; its outputs are unknown."""
        avals_out = abstract_eval(prim, [t.aval for t in ins], params)
        outs = [PartialEvalTracer(self, PartialVal.unknown(a), None) for a in avals_out]
        recipe = JaxprEqnRecipe(prim, ins, params, avals_out, [ref(t) for t in outs],
                                source_info())
        for t in outs:
            t.recipe = recipe
        return outs


def partial_eval_flat(f: Callable, pvals_in: Sequence[PartialVal],
                      instantiate: Callable[[int], Sequence[bool]]) -> tuple[Jaxpr, list, list]:
    """Run f with some inputs known; stage the rest. `instantiate(n_outputs)` says
    which outputs must be staged even when known."""
    with new_main(PartialEvalTrace) as main:
        trace = PartialEvalTrace(main)
        tracers_in = [trace.new_arg(p) for p in pvals_in]
        outs = f(*tracers_in)
        tracers_out = [full_raise(trace, o) for o in outs]
        tracers_out = [trace.instantiate_const(t) if inst else t
                       for t, inst in zip(tracers_out, instantiate(len(tracers_out)))]
        pvals_out = [t.pval for t in tracers_out]
        unknown_in = [t for t in tracers_in if not t.pval.is_known]
        unknown_out = [t for t in tracers_out if not t.pval.is_known]
        jaxpr, consts = _tracers_to_jaxpr(unknown_in, unknown_out)
    return jaxpr, pvals_out, consts


def _recipe_inputs(t: PartialEvalTracer) -> list:
    return t.recipe.tracers_in if isinstance(t.recipe, JaxprEqnRecipe) else []


def _tracers_to_jaxpr(tracers_in: list, tracers_out: list) -> tuple[Jaxpr, list]:
    tracer_to_var = {id(t): Var(t.aval) for t in tracers_in}
    const_vars: dict[int, Var] = {}
    const_vals: list = []
    done_eqns: set[int] = set()
    eqns: list[JaxprEqn] = []
    for t in toposort(tracers_out, _recipe_inputs):
        recipe = t.recipe
        if isinstance(recipe, ConstRecipe):
            if id(recipe.val) not in const_vars:
                const_vars[id(recipe.val)] = Var(get_aval(recipe.val))
                const_vals.append(recipe.val)
            tracer_to_var[id(t)] = const_vars[id(recipe.val)]
        elif isinstance(recipe, JaxprEqnRecipe) and id(recipe) not in done_eqns:
            done_eqns.add(id(recipe))
            outs = [Var(a) for a in recipe.avals_out]
            for r, v in zip(recipe.tracer_refs_out, outs):
                if r() is not None:
                    tracer_to_var[id(r())] = v
            eqns.append(JaxprEqn(recipe.prim, [tracer_to_var[id(x)] for x in recipe.tracers_in],
                                 recipe.params, outs, recipe.source_info))
    in_binders = list(const_vars.values()) + [tracer_to_var[id(t)] for t in tracers_in]
    return Jaxpr(in_binders, eqns, [tracer_to_var[id(t)] for t in tracers_out]), const_vals


def linearize_flat(f: Callable, primals: Sequence[Any]) -> tuple[list, Jaxpr, list, list]:
    """Primal outputs, the linear jaxpr (consts first, then tangents), its consts,
    and the tangent avals."""
    avals = [get_aval(x) for x in primals]
    pvals_in = [PartialVal.known(x) for x in primals] + [PartialVal.unknown(a) for a in avals]
    n = len(primals)

    def f_jvp(*primals_tangents: Any) -> list:
        outs, tangents = jvp_flat(f, primals_tangents[:n], primals_tangents[n:])
        return list(outs) + list(tangents)

    # the linear jaxpr must produce every tangent output, even a known zero one
    jaxpr, pvals_out, consts = partial_eval_flat(
        f_jvp, pvals_in, lambda n_out: [False] * (n_out // 2) + [True] * (n_out // 2))
    primals_out = [p.const for p in pvals_out[:len(pvals_out) // 2]]
    return primals_out, jaxpr, consts, avals


class UndefPrimal(NamedTuple):
    """A linear input of a transposed equation: its value is what we solve for."""
    aval: ShapedArray


def backward_pass(jaxpr: Jaxpr, args: Sequence[Any], cotangents: Sequence[Any]) -> list:
    primal_env: dict[int, Any] = {}
    ct_env: dict[int, Any] = {}

    def read_primal(x: Any) -> Any:
        if isinstance(x, Lit):
            from jaxlab.core.values import asarray
            return asarray(x.val, x.aval.dtype)
        return primal_env.get(id(x), UndefPrimal(x.aval))

    def read_cotangent(v: Var) -> Any:
        ct = ct_env.pop(id(v), None)
        return zeros_like_aval(v.aval) if ct is None else ct

    def write_cotangent(x: Any, ct: Any) -> None:
        if isinstance(x, Var) and ct is not None:
            from jaxlab.core.rule_ops import add
            ct_env[id(x)] = add(ct_env[id(x)], ct) if id(x) in ct_env else ct

    for v, x in zip(jaxpr.in_binders, args):
        if not isinstance(x, UndefPrimal):
            primal_env[id(v)] = x
    for v, ct in zip(jaxpr.outs, cotangents):
        write_cotangent(v, ct)
    for eqn in reversed(jaxpr.eqns):
        primals_in = [read_primal(x) for x in eqn.inputs]
        cts_in = [read_cotangent(v) for v in eqn.out_binders]
        if eqn.primitive not in transpose_rules:
            raise NotImplementedError(f"transpose of {eqn.primitive.name} (reverse-mode "
                                      f"differentiation through it) is not supported")
        cts_out = transpose_rules[eqn.primitive](cts_in, *primals_in, **eqn.params)
        for x, ct in zip(eqn.inputs, cts_out):
            write_cotangent(x, ct)
    return [read_cotangent(v) for v, x in zip(jaxpr.in_binders, args)
            if isinstance(x, UndefPrimal)]


def vjp_flat(f: Callable, primals: Sequence[Any]) -> tuple[list, Callable]:
    primals_out, jaxpr, consts, avals = linearize_flat(f, primals)
    transpose_inputs = list(consts) + [UndefPrimal(a) for a in avals]

    def f_vjp(*cotangents: Any) -> list:
        return backward_pass(jaxpr, transpose_inputs, cotangents)
    return primals_out, f_vjp
