"""Transformations of whole closed jaxprs, for the rules of primitives that hold
them (cond, while, scan): jvp, vmap and partial evaluation of a body, each
returning a new jaxpr traced from the old one.

A traced jaxpr may close over arrays (the zeros of an instantiated tangent, a
residual): `hoist` turns those constants into leading inputs, so every body a
control-flow primitive holds takes all its values as operands.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.core.avals import ShapedArray
from jaxlab.core.jaxpr import ClosedJaxpr, Jaxpr, eval_closed, trace_to_jaxpr
from jaxlab.core.trace import full_raise, new_main


def hoist(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """(the jaxpr taking its constants as leading inputs, the constants)."""
    return ClosedJaxpr(closed.jaxpr, [], 0), list(closed.consts)


def trace_hoisted(fn: Callable, avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list]:
    return hoist(trace_to_jaxpr(fn, list(avals)))


def permute(closed: ClosedJaxpr, in_order: Sequence[int] | None = None,
            out_order: Sequence[int] | None = None) -> ClosedJaxpr:
    """The same jaxpr with its inputs (and outputs) listed in another order."""
    j = closed.jaxpr
    ins = [j.in_binders[i] for i in in_order] if in_order is not None else list(j.in_binders)
    outs = [j.outs[i] for i in out_order] if out_order is not None else list(j.outs)
    return ClosedJaxpr(Jaxpr(ins, j.eqns, outs), list(closed.consts), closed.n_consts)


def _avals(closed: ClosedJaxpr) -> list[ShapedArray]:
    return list(closed.in_avals)


# --- jvp ---------------------------------------------------------------------------

def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: Sequence[bool]) \
        -> tuple[ClosedJaxpr, list, list[bool]]:
    """A jaxpr from (primals, nonzero tangents) to (primal outs, tangent outs that are
    nonzero or instantiated); its constants; which tangent outputs it has."""
    from jaxlab.core.jvp import ZeroTangent, jvp_flat, zeros_like_aval
    avals = _avals(closed)
    n = len(avals)
    out_nz: list[bool] = []

    def fn(*args: Any) -> list:
        primals, it = list(args[:n]), iter(args[n:])
        tangents = [next(it) if nz else zeros_like_aval(a) for nz, a in zip(nonzeros, avals)]
        outs, touts = jvp_flat(lambda *xs: eval_closed(closed, xs), primals, tangents)
        out_nz[:] = [not isinstance(t, ZeroTangent) or inst
                     for t, inst in zip(touts, instantiate)]
        return list(outs) + [materialize(t) for t, keep in zip(touts, out_nz) if keep]
    t_avals = [a for a, nz in zip(avals, nonzeros) if nz]
    jaxpr, consts = trace_hoisted(fn, avals + t_avals)
    return jaxpr, consts, out_nz


def materialize(t: Any) -> Any:
    """A ZeroTangent as an ordinary zeros array (it becomes a value in the jaxpr)."""
    from jaxlab.core.jvp import ZeroTangent
    if isinstance(t, ZeroTangent):
        from jaxlab.core.values import full
        return full(t.shape, 0, t.jdtype)
    return t


# --- vmap -------------------------------------------------------------------------

def batch_jaxpr(closed: ClosedJaxpr, size: int, batched: Sequence[bool],
                instantiate: Sequence[bool]) -> tuple[ClosedJaxpr, list, list[bool]]:
    """The jaxpr over inputs batched at axis 0 where `batched`; outputs batched at 0
    where the result varies or `instantiate` asks; which outputs are batched."""
    from jaxlab.core.batching import BatchTrace, BatchTracer, move_to
    avals = _avals(closed)
    out_b: list[bool] = []

    def fn(*args: Any) -> list:
        with new_main(BatchTrace, size) as main:
            trace = BatchTrace(main)
            ins = [BatchTracer(trace, x, 0) if b else x for x, b in zip(args, batched)]
            outs = [full_raise(trace, o) for o in eval_closed(closed, ins)]
            out_b[:] = [o.batch_dim is not None or inst for o, inst in zip(outs, instantiate)]
            return [move_to(o.val, o.batch_dim, 0, size) if b else o.val
                    for o, b in zip(outs, out_b)]
    in_avals = [ShapedArray((size,) + a.shape, a.dtype) if b else a
                for a, b in zip(avals, batched)]
    jaxpr, consts = trace_hoisted(fn, in_avals)
    return jaxpr, consts, out_b


# --- partial evaluation ------------------------------------------------------------

def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: Sequence[bool],
                       instantiate: Sequence[bool]) \
        -> tuple[ClosedJaxpr, list, ClosedJaxpr, list[bool], int]:
    """Split a jaxpr by which inputs are known.

    Returns (known jaxpr: known inputs -> known outputs + residuals, its constants,
    unknown jaxpr: residuals + unknown inputs -> unknown outputs, which outputs are
    unknown, the number of residuals). Known work is traced into the known jaxpr by
    running partial evaluation on its tracers."""
    from jaxlab.core.partial_eval import PartialVal, partial_eval_flat
    avals = _avals(closed)
    box: dict[str, Any] = {}

    def known_fn(*known: Any) -> list:
        it = iter(known)
        pvals = [PartialVal.unknown(a) if uk else PartialVal.known(next(it))
                 for a, uk in zip(avals, unknowns)]
        unknown, pvals_out, residuals = partial_eval_flat(
            lambda *xs: eval_closed(closed, xs), pvals, lambda n_out: list(instantiate))
        box["unknown"], box["out_uk"] = unknown, [not p.is_known for p in pvals_out]
        box["n_res"] = len(residuals)
        return [p.const for p in pvals_out if p.is_known] + list(residuals)
    known, consts = trace_hoisted(known_fn, [a for a, uk in zip(avals, unknowns) if not uk])
    return known, consts, ClosedJaxpr(box["unknown"], [], 0), box["out_uk"], box["n_res"]


def unify_consts(jaxprs: Sequence[ClosedJaxpr], consts: Sequence[list]) \
        -> tuple[list[ClosedJaxpr], list]:
    """Branches that each take their own constants first, rewritten so that every
    one takes all of them (the others' as unused inputs): one operand list."""
    from jaxlab.core.jaxpr import Var
    out = []
    for k, (j, c) in enumerate(zip(jaxprs, consts)):
        before = [Var(_aval_of(x)) for cs in consts[:k] for x in cs]
        after = [Var(_aval_of(x)) for cs in consts[k + 1:] for x in cs]
        binders = j.jaxpr.in_binders
        out.append(ClosedJaxpr(Jaxpr(before + binders[:len(c)] + after + binders[len(c):],
                                     j.jaxpr.eqns, j.jaxpr.outs), [], 0))
    return out, [x for cs in consts for x in cs]


def _aval_of(x: Any) -> ShapedArray:
    from jaxlab.core.trace import get_aval
    return get_aval(x)
