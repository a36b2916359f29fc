"""jvp, vmap, partial evaluation and transpose rules of cond, while and scan.

Each rule rewrites the bodies with core/jaxpr_transforms.py and binds the same
primitive again, as JAX does: a scan's jvp is a scan over (primal, tangent)
carries; its transpose is a scan the other way; vmap of a while whose
predicate varies per lane runs until every lane is done, masking finished
lanes; vmap of a cond whose index varies per lane computes every branch and
selects.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlab.core.control_flow import cond_p, scan_p, split_scan, split_while, while_p
from jaxlab.core.jaxpr import ClosedJaxpr, eval_closed
from jaxlab.core.jaxpr_transforms import (batch_jaxpr, jvp_jaxpr, materialize,
                                          partial_eval_jaxpr, permute, trace_hoisted,
                                          unify_consts)
from jaxlab.core.primitives import (batch_rules, jvp_rules, partial_eval_rules,
                                    transpose_rules)
from jaxlab.core.trace import bind, get_aval


def _nonzero(tangents: Sequence[Any]) -> list[bool]:
    from jaxlab.core.jvp import ZeroTangent
    return [not isinstance(t, ZeroTangent) for t in tangents]


def _fixed_point(step, start: list[bool]) -> list[bool]:
    """Grow a per-carry flag (nonzero tangent, batched, unknown) until the body
    maps it to itself: `step(flags)` gives the flags of the carry outputs."""
    flags = list(start)
    while True:
        out = step(flags)
        grown = [a or b for a, b in zip(flags, out)]
        if grown == flags:
            return flags
        flags = grown


# --- scan ----------------------------------------------------------------------------

def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nz = _nonzero(tangents)
    c_nz, carry_nz, x_nz = split_scan(nz, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    carry_nz = _fixed_point(
        lambda f: jvp_jaxpr(jaxpr, c_nz + f + x_nz, f + [False] * n_ys)[2][:num_carry], carry_nz)
    body, consts, out_nz = jvp_jaxpr(jaxpr, c_nz + carry_nz + x_nz, carry_nz + [False] * n_ys)
    ys_nz = out_nz[num_carry:]
    # inputs: [hoisted consts] primals (c, carry, x), tangents (c, carry, x) -> scan layout
    groups = [num_consts, num_carry, len(x_nz)]
    t_groups = [sum(c_nz), sum(carry_nz), sum(x_nz)]
    order = _jvp_in_order(len(consts), groups, t_groups)
    out_order = _jvp_out_order(num_carry, n_ys, sum(carry_nz), sum(ys_nz))
    body = permute(body, order, out_order)
    pc, pcarry, px = split_scan(primals, num_consts, num_carry)
    tc, tcarry, tx = (_pick(ts, f) for ts, f in zip(split_scan(tangents, num_consts, num_carry),
                                                    (c_nz, carry_nz, x_nz)))
    tcarry = [materialize(t) for t in tcarry]   # a zero carry tangent the body makes nonzero
    outs = bind(scan_p, *consts, *pc, *tc, *pcarry, *tcarry, *px, *tx, jaxpr=body,
                length=length, reverse=reverse, num_consts=len(consts) + len(pc) + len(tc),
                num_carry=len(pcarry) + len(tcarry), unroll=unroll)
    n_tc = len(tcarry)
    p_carry, t_carry = outs[:num_carry], outs[num_carry:num_carry + n_tc]
    p_ys = outs[num_carry + n_tc:num_carry + n_tc + n_ys]
    t_ys = outs[num_carry + n_tc + n_ys:]
    return (list(p_carry) + list(p_ys),
            _spread(t_carry, carry_nz, p_carry) + _spread(t_ys, ys_nz, p_ys))


def _jvp_in_order(n_hoisted: int, groups: list[int], t_groups: list[int]) -> list[int]:
    """jvp_jaxpr's inputs are hoisted consts, primals, nonzero tangents; the
    primitive wants consts (hoisted, primal, tangent), carry (primal, tangent), xs."""
    order = list(range(n_hoisted))
    p0, t0 = n_hoisted, n_hoisted + sum(groups)
    for g, tg in zip(groups, t_groups):
        order += range(p0, p0 + g)
        order += range(t0, t0 + tg)
        p0, t0 = p0 + g, t0 + tg
    return order


def _jvp_out_order(n_carry: int, n_ys: int, t_carry: int, t_ys: int) -> list[int]:
    """jvp outputs are primal (carry, ys), tangent (carry, ys); scan wants carry
    (primal, tangent) then ys (primal, tangent)."""
    base = n_carry + n_ys
    return (list(range(n_carry)) + list(range(base, base + t_carry)) +
            list(range(n_carry, base)) + list(range(base + t_carry, base + t_carry + t_ys)))


def _pick(xs: Sequence[Any], flags: Sequence[bool]) -> list:
    return [x for x, f in zip(xs, flags) if f]


def _spread(values: Sequence[Any], flags: Sequence[bool], like: Sequence[Any]) -> list:
    """Tangents for every output: the given ones where flagged, zeros elsewhere."""
    from jaxlab.core.jvp import zeros_like_aval
    it = iter(values)
    return [next(it) if f else zeros_like_aval(get_aval(p)) for f, p in zip(flags, like)]


def _scan_batch(size, vals, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    from jaxlab.core.batching import move_to
    b = [d is not None for d in dims]
    c_b, carry_b, x_b = split_scan(b, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    carry_b = _fixed_point(
        lambda f: batch_jaxpr(jaxpr, size, c_b + f + x_b, f + [False] * n_ys)[2][:num_carry],
        carry_b)
    body, consts, out_b = batch_jaxpr(jaxpr, size, c_b + carry_b + x_b,
                                      carry_b + [False] * n_ys)
    cs, carry, xs = split_scan(list(zip(vals, dims)), num_consts, num_carry)
    cs = [move_to(v, d, 0, size) if d is not None else v for v, d in cs]
    carry = [move_to(v, d, 0, size) if f else v for (v, d), f in zip(carry, carry_b)]
    xs = [move_to(v, d, 1, size) if d is not None else v for v, d in xs]
    outs = bind(scan_p, *consts, *cs, *carry, *xs, jaxpr=body, length=length, reverse=reverse,
                num_consts=len(consts) + num_consts, num_carry=num_carry, unroll=unroll)
    out_dims = [0 if f else None for f in carry_b] + \
        [1 if f else None for f in out_b[num_carry:]]
    return list(outs), out_dims


def _scan_partial_eval(trace, tracers, *, jaxpr, length, reverse, num_consts, num_carry,
                       unroll):
    """Known work runs now as a scan that also stacks the residuals each step
    saves; the unknown (linear) work is staged as a scan reading them as xs."""
    uk = [not t.pval.is_known for t in tracers]
    c_uk, carry_uk, x_uk = split_scan(uk, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    carry_uk = _fixed_point(
        lambda f: partial_eval_jaxpr(jaxpr, c_uk + f + x_uk, f + [False] * n_ys)[3][:num_carry],
        carry_uk)
    known, k_consts, unknown, out_uk, n_res = partial_eval_jaxpr(
        jaxpr, c_uk + carry_uk + x_uk, carry_uk + [False] * n_ys)
    uk = c_uk + carry_uk + x_uk
    cs, carry, xs = split_scan([t.pval.const for t in tracers], num_consts, num_carry)
    flags = split_scan(uk, num_consts, num_carry)
    kc, kcarry, kx = (_pick(v, [not f for f in fl]) for v, fl in zip((cs, carry, xs), flags))
    n_kcarry = len(kcarry)
    # a residual that is a loop invariant (a weight the body reads) is passed to the
    # linear scan as a constant: stacking it would store it once per step
    invariant = k_consts + kc
    n_kout = len(known.out_avals) - n_res
    where = {id(v): i for i, v in enumerate(known.jaxpr.in_binders[:len(invariant)])}
    res_vars = known.jaxpr.outs[n_kout:]
    inv = [j for j, v in enumerate(res_vars) if id(v) in where]
    stacked = [j for j in range(n_res) if j not in inv]
    known = permute(known, out_order=list(range(n_kout)) + [n_kout + j for j in stacked])
    k_outs = bind(scan_p, *k_consts, *kc, *kcarry, *kx, jaxpr=known, length=length,
                  reverse=reverse, num_consts=len(invariant), num_carry=n_kcarry,
                  unroll=unroll)
    k_outs = list(k_outs)
    stacked_vals = k_outs[n_kout:]
    k_outs = k_outs[:n_kout]
    inv_vals = [invariant[where[id(res_vars[j])]] for j in inv]
    # unknown body inputs: residuals + unknown consts, carry, xs -> scan layout:
    # consts (unknown, invariant residuals), carry, xs (stacked residuals, unknown)
    n_uc, n_ucarry, n_ux = sum(flags[0]), sum(flags[1]), sum(flags[2])
    base = n_res + n_uc + n_ucarry
    order = (list(range(n_res, n_res + n_uc)) + inv + list(range(n_res + n_uc, base)) +
             stacked + list(range(base, base + n_ux)))
    unknown = permute(unknown, order)
    tc, tcarry, tx = (_pick(v, fl) for v, fl in
                      zip(split_scan(list(tracers), num_consts, num_carry), flags))
    known_in = lambda vals: [trace.instantiate_const(trace.lift(r)) for r in vals]  # noqa: E731
    ins = [trace.instantiate_const(t) for t in tc] + known_in(inv_vals) + \
        [trace.instantiate_const(t) for t in tcarry] + known_in(stacked_vals) + \
        [trace.instantiate_const(t) for t in tx]
    params = dict(jaxpr=unknown, length=length, reverse=reverse, num_consts=n_uc + len(inv),
                  num_carry=n_ucarry, unroll=unroll)
    u_outs = trace.stage(scan_p, ins, params)
    return _merge(out_uk, k_outs, u_outs, trace)


def _merge(out_uk: Sequence[bool], known: Sequence[Any], unknown: Sequence[Any], trace) -> list:
    k, u = iter(known), iter(unknown)
    return [next(u) if f else trace.lift(next(k)) for f in out_uk]


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    from jaxlab.core.partial_eval import UndefPrimal, backward_pass
    from jaxlab.core.jvp import zeros_like_aval
    cs, carry, xs = split_scan(args, num_consts, num_carry)
    lin_c = [isinstance(c, UndefPrimal) for c in cs]
    lin_x = [isinstance(x, UndefPrimal) for x in xs]
    nl_c = [c for c, f in zip(cs, lin_c) if not f]
    res_x = [x for x, f in zip(xs, lin_x) if not f]
    body_avals = jaxpr.in_avals
    c_avals, carry_avals, x_avals = split_scan(body_avals, num_consts, num_carry)
    ct_carry = [materialize(c) for c in cts[:num_carry]]
    ct_ys = [materialize(c) for c in cts[num_carry:]]
    lin_c_avals = _pick(c_avals, lin_c)
    n_nl, n_lc, n_res = len(nl_c), len(lin_c_avals), len(res_x)

    def body(*a: Any) -> list:
        nl, acc = a[:n_nl], a[n_nl:n_nl + n_lc]
        ct_c = a[n_nl + n_lc:n_nl + n_lc + num_carry]
        ct_y = a[n_nl + n_lc + num_carry:len(a) - n_res]
        rx = iter(a[len(a) - n_res:])
        nl_it = iter(nl)
        primal_args = [next(nl_it) if not f else UndefPrimal(av) for f, av in zip(lin_c, c_avals)]
        primal_args += [UndefPrimal(av) for av in carry_avals]
        primal_args += [UndefPrimal(av) if f else next(rx) for f, av in zip(lin_x, x_avals)]
        got = backward_pass(jaxpr.jaxpr, primal_args, list(ct_c) + list(ct_y))
        g_c, g_carry, g_x = got[:n_lc], got[n_lc:n_lc + num_carry], got[n_lc + num_carry:]
        from jaxlab.core.rule_ops import add
        return [add(x, g) for x, g in zip(acc, g_c)] + list(g_carry) + list(g_x)
    ys_avals = jaxpr.out_avals[num_carry:]
    in_avals = ([get_aval(c) for c in nl_c] + lin_c_avals + list(carry_avals) + list(ys_avals) +
                _pick(x_avals, [not f for f in lin_x]))
    t_body, t_consts = trace_hoisted(body, in_avals)
    acc0 = [materialize(zeros_like_aval(av)) for av in lin_c_avals]
    outs = bind(scan_p, *t_consts, *nl_c, *acc0, *ct_carry, *ct_ys, *res_x, jaxpr=t_body,
                length=length, reverse=not reverse, num_consts=len(t_consts) + n_nl,
                num_carry=n_lc + num_carry, unroll=unroll)
    g_c, g_carry, g_x = outs[:n_lc], outs[n_lc:n_lc + num_carry], outs[n_lc + num_carry:]
    gc_it, gx_it = iter(g_c), iter(g_x)
    return ([next(gc_it) if f else None for f in lin_c] + list(g_carry) +
            [next(gx_it) if f else None for f in lin_x])


# --- while ------------------------------------------------------------------------------

def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nz = _nonzero(tangents)
    _, bc_nz, carry_nz = split_while(nz, cond_nconsts, body_nconsts)
    carry_nz = _fixed_point(lambda f: jvp_jaxpr(body_jaxpr, bc_nz + f, f)[2], carry_nz)
    body, consts, _ = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    n_carry = len(carry_nz)
    order = _jvp_in_order(len(consts), [body_nconsts, n_carry], [sum(bc_nz), sum(carry_nz)])
    body = permute(body, order)
    cc, bc, carry = split_while(primals, cond_nconsts, body_nconsts)
    _, t_bc, t_carry = split_while(tangents, cond_nconsts, body_nconsts)
    t_bc = _pick(t_bc, bc_nz)
    t_carry = [materialize(t) for t in _pick(t_carry, carry_nz)]
    n_t = len(t_carry)
    cond = _ignore_extra(cond_jaxpr, [get_aval(t) for t in t_carry])
    outs = bind(while_p, *cc, *consts, *bc, *t_bc, *carry, *t_carry, cond_jaxpr=cond,
                body_jaxpr=body, cond_nconsts=cond_nconsts,
                body_nconsts=len(consts) + body_nconsts + len(t_bc))
    return list(outs[:n_carry]), _spread(outs[n_carry:n_carry + n_t], carry_nz, outs[:n_carry])


def _ignore_extra(closed: ClosedJaxpr, extra_avals: list) -> ClosedJaxpr:
    """The jaxpr taking extra trailing inputs it does not read."""
    from jaxlab.core.jaxpr import Jaxpr, Var
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(list(j.in_binders) + [Var(a) for a in extra_avals], j.eqns, j.outs),
                       list(closed.consts), closed.n_consts)


def _while_batch(size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    from jaxlab.core.batching import move_to
    b = [d is not None for d in dims]
    cc_b, bc_b, carry_b = split_while(b, cond_nconsts, body_nconsts)
    carry_b = _fixed_point(lambda f: batch_jaxpr(body_jaxpr, size, bc_b + f, f)[2], carry_b)
    pred_b = batch_jaxpr(cond_jaxpr, size, cc_b + carry_b, [False])[2][0]
    if pred_b:   # lanes finish at different steps: every carry varies per lane
        carry_b = [True] * len(carry_b)
    body, b_consts, _ = batch_jaxpr(body_jaxpr, size, bc_b + carry_b, carry_b)
    cond, c_consts, _ = batch_jaxpr(cond_jaxpr, size, cc_b + carry_b, [False])
    cc, bc, carry = split_while([move_to(v, d, 0, size) if d is not None else v
                                 for v, d in zip(vals, dims)], cond_nconsts, body_nconsts)
    carry = [move_to(v, None, 0, size) if f and d is None else v
             for v, f, d in zip(carry, carry_b, split_while(dims, cond_nconsts, body_nconsts)[2])]
    if not pred_b:
        outs = bind(while_p, *c_consts, *cc, *b_consts, *bc, *carry, cond_jaxpr=cond,
                    body_jaxpr=body, cond_nconsts=len(c_consts) + cond_nconsts,
                    body_nconsts=len(b_consts) + body_nconsts)
        return list(outs), [0 if f else None for f in carry_b]
    return _while_batched_pred(size, cond, c_consts + cc, body, b_consts + bc, carry)


def _while_batched_pred(size, cond, cc, body, bc, carry):
    """Run while any lane's predicate holds; a lane whose predicate is false keeps
    its carry (the body's result is masked out)."""
    from jaxlab.core.elementwise import select_n_p
    from jaxlab.core.movement import broadcast_in_dim_p
    from jaxlab.core.reductions import reduce_prims
    n_cc, n_bc = len(cc), len(bc)

    def any_lane(*a: Any) -> list:
        (p,) = eval_closed(cond, a)
        return [reduce_prims["reduce_max"].bind(p, axes=(0,))]

    def masked_body(*a: Any) -> list:
        c_consts, b_consts, vals = a[:n_cc], a[n_cc:n_cc + n_bc], a[n_cc + n_bc:]
        (p,) = eval_closed(cond, list(c_consts) + list(vals))
        new = eval_closed(body, list(b_consts) + list(vals))
        return [select_n_p.bind(broadcast_in_dim_p.bind(p, shape=tuple(v.shape),
                                                        broadcast_dimensions=(0,)), v, n)
                for v, n in zip(vals, new)]
    carry_avals = [get_aval(v) for v in carry]
    new_cond, k1 = trace_hoisted(any_lane, [get_aval(v) for v in cc] + carry_avals)
    new_body, k2 = trace_hoisted(masked_body, [get_aval(v) for v in cc + bc] + carry_avals)
    outs = bind(while_p, *k1, *cc, *k2, *cc, *bc, *carry, cond_jaxpr=new_cond,
                body_jaxpr=new_body, cond_nconsts=len(k1) + n_cc,
                body_nconsts=len(k2) + n_cc + n_bc)
    return list(outs), [0] * len(outs)


def _while_partial_eval(trace, tracers, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Known carries (when the predicate reads only those) come from a while over
    the known part of the body, run now; the unknown outputs from the whole loop
    staged, known parts recomputed (JAX's approach: while has no reverse mode, so
    nothing is saved for a transpose)."""
    uk = [not t.pval.is_known for t in tracers]
    cc_uk, bc_uk, carry_uk = split_while(uk, cond_nconsts, body_nconsts)
    if any(cc_uk):
        return None
    carry_uk = _fixed_point(lambda f: partial_eval_jaxpr(body_jaxpr, bc_uk + f, f)[3], carry_uk)
    if all(carry_uk) or partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk, [False])[3][0]:
        return None
    n_known = carry_uk.count(False)
    body, b_consts = _known_part(body_jaxpr, bc_uk + carry_uk, carry_uk, n_known)
    cond, c_consts = _known_part(cond_jaxpr, cc_uk + carry_uk, [False], 1)
    cc, bc, carry = split_while([t.pval.const for t in tracers], cond_nconsts, body_nconsts)
    known_carry = [c for c, f in zip(carry, carry_uk) if not f]
    k_outs = bind(while_p, *c_consts, *cc, *b_consts, *_pick(bc, [not f for f in bc_uk]),
                  *known_carry, cond_jaxpr=cond, body_jaxpr=body,
                  cond_nconsts=len(c_consts) + len(cc),
                  body_nconsts=len(b_consts) + bc_uk.count(False))
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    u_outs = trace.stage(while_p, [trace.instantiate_const(t) for t in tracers], params)
    _, _, u_carry = split_while(u_outs, cond_nconsts, 0)
    return _merge(carry_uk, list(k_outs), _pick(u_carry, carry_uk), trace)


def _known_part(closed: ClosedJaxpr, unknowns: list, instantiate: list, n_out: int):
    """The jaxpr of the known inputs computing its first n_out (known) outputs."""
    known, consts, _, _, _ = partial_eval_jaxpr(closed, unknowns, instantiate)
    return permute(known, out_order=range(n_out)), consts


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                     "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                     "using fori_loop with static start/stop.")


# --- cond --------------------------------------------------------------------------------

def _bind_cond(index: Any, per_branch: Sequence[tuple[ClosedJaxpr, list]],
               operands: Sequence[Any]) -> list:
    branches, consts = unify_consts([j for j, _ in per_branch], [c for _, c in per_branch])
    return list(bind(cond_p, index, *consts, *operands, branches=tuple(branches)))


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = _nonzero(tangents[1:])
    out_nz = [any(f) for f in zip(*(jvp_jaxpr(b, nz, [False] * len(b.out_avals))[2]
                                    for b in branches))]
    jvps = [jvp_jaxpr(b, nz, out_nz) for b in branches]
    t_ops = _pick(tangents[1:], nz)
    outs = _bind_cond(index, [(j, c) for j, c, _ in jvps], list(ops) + t_ops)
    n = len(branches[0].out_avals)
    return outs[:n], _spread(outs[n:], out_nz, outs[:n])


def _cond_batch(size, vals, dims, *, branches):
    from jaxlab.core.batching import move_to
    index, idim = vals[0], dims[0]
    ops = [move_to(v, d, 0, size) if d is not None else v for v, d in zip(vals[1:], dims[1:])]
    b = [d is not None for d in dims[1:]]
    if idim is not None:
        return _cond_as_select(size, move_to(index, idim, 0, size), ops, b, branches)
    out_b = [any(f) for f in zip(*(batch_jaxpr(br, size, b, [False] * len(br.out_avals))[2]
                                   for br in branches))]
    batched = [batch_jaxpr(br, size, b, out_b) for br in branches]
    outs = _bind_cond(index, [(j, c) for j, c, _ in batched], ops)
    return outs, [0 if f else None for f in out_b]


def _cond_as_select(size, index, ops, b, branches):
    """A per-lane index: every branch runs on every lane, each lane takes its own."""
    from jaxlab.core.elementwise import eq_p, select_n_p
    from jaxlab.core.movement import broadcast_in_dim_p
    from jaxlab.core.values import ones_like, scalar
    results = []
    for br in branches:
        j, c, _ = batch_jaxpr(br, size, b, [True] * len(br.out_avals))
        results.append(eval_closed(j, list(c) + list(ops)))
    n = len(branches)
    clamped = _clamp_index(index, n)
    outs = list(results[-1])
    for k in range(n - 2, -1, -1):
        k_like = scalar(k, get_aval(clamped).dtype, weak=False) * ones_like(clamped)
        hit = eq_p.bind(clamped, k_like)
        outs = [select_n_p.bind(broadcast_in_dim_p.bind(hit, shape=tuple(o.shape),
                                                        broadcast_dimensions=(0,)), o, r)
                for o, r in zip(outs, results[k])]
    return outs, [0] * len(outs)


def _clamp_index(index: Any, n: int) -> Any:
    from jaxlab.core.rule_ops import clip
    return clip(index, 0, n - 1)


def _cond_partial_eval(trace, tracers, *, branches):
    """The index is known (a primal): each branch splits into known work (run now
    by a cond that also returns every branch's residuals, zeros for the branches
    not taken) and a staged linear cond reading them."""
    if not tracers[0].pval.is_known:
        return None
    ops_uk = [not t.pval.is_known for t in tracers[1:]]
    n_out = len(branches[0].out_avals)
    out_uk = [any(f) for f in zip(*(partial_eval_jaxpr(b, ops_uk, [False] * n_out)[3]
                                    for b in branches))]
    splits = [partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    res_avals = [[v.aval for v in unknown.jaxpr.in_binders[:n_res]]
                 for _, _, unknown, _, n_res in splits]
    known_ops = [t.pval.const for t, f in zip(tracers[1:], ops_uk) if not f]
    per_branch = []
    for k, (known, consts, _, _, n_res) in enumerate(splits):
        per_branch.append(trace_hoisted(_padded_known(known, consts, k, res_avals),
                                        [get_aval(x) for x in known_ops]))
    k_outs = _bind_cond(tracers[0].pval.const, per_branch, known_ops)
    n_known = n_out - sum(out_uk)
    residuals = k_outs[n_known:]
    all_res = [a for r in res_avals for a in r]
    u_avals = [t.aval for t, f in zip(tracers[1:], ops_uk) if f]
    unknown_branches = [trace_hoisted(_slice_residuals(unknown, k, res_avals),
                                      all_res + u_avals)
                        for k, (_, _, unknown, _, _) in enumerate(splits)]
    branches_u, consts_u = unify_consts([j for j, _ in unknown_branches],
                                        [c for _, c in unknown_branches])
    ins = [trace.instantiate_const(trace.lift(tracers[0].pval.const))]
    ins += [trace.instantiate_const(trace.lift(c)) for c in consts_u + residuals]
    ins += [trace.instantiate_const(t) for t, f in zip(tracers[1:], ops_uk) if f]
    u_outs = trace.stage(cond_p, ins, dict(branches=tuple(branches_u)))
    return _merge(out_uk, k_outs[:n_known], u_outs, trace)


def _padded_known(known: ClosedJaxpr, consts: list, k: int, res_avals: list):
    from jaxlab.core.jvp import zeros_like_aval
    n_res = len(res_avals[k])

    def fn(*ops: Any) -> list:
        outs = eval_closed(known, list(consts) + list(ops))
        kept, res = outs[:len(outs) - n_res], outs[len(outs) - n_res:]
        pad = [[materialize(zeros_like_aval(a)) for a in r] for r in res_avals]
        pad[k] = list(res)
        return list(kept) + [x for r in pad for x in r]
    return fn


def _slice_residuals(unknown: ClosedJaxpr, k: int, res_avals: list):
    start = sum(len(r) for r in res_avals[:k])
    total = sum(len(r) for r in res_avals)

    def fn(*a: Any) -> list:
        return eval_closed(unknown, list(a[start:start + len(res_avals[k])]) + list(a[total:]))
    return fn


def _cond_transpose(cts, index, *ops, branches):
    from jaxlab.core.partial_eval import UndefPrimal, backward_pass
    lin = [isinstance(x, UndefPrimal) for x in ops]
    res = [x for x, f in zip(ops, lin) if not f]
    in_avals = branches[0].in_avals
    cts = [materialize(c) for c in cts]

    def transposed(branch: ClosedJaxpr):
        def fn(*a: Any) -> list:
            it = iter(a[:len(res)])
            args = [UndefPrimal(av) if f else next(it) for f, av in zip(lin, in_avals)]
            got = backward_pass(branch.jaxpr, args, list(a[len(res):]))
            return [materialize(g) for g in got]
        return fn
    avals = [get_aval(r) for r in res] + [get_aval(c) for c in cts]
    per_branch = [trace_hoisted(transposed(b), avals) for b in branches]
    outs = iter(_bind_cond(index, per_branch, res + cts))
    return [None] + [next(outs) if f else None for f in lin]


jvp_rules.update({scan_p: _scan_jvp, while_p: _while_jvp, cond_p: _cond_jvp})
batch_rules.update({scan_p: _scan_batch, while_p: _while_batch, cond_p: _cond_batch})
transpose_rules.update({scan_p: _scan_transpose, while_p: _while_transpose,
                        cond_p: _cond_transpose})
partial_eval_rules.update({scan_p: _scan_partial_eval, while_p: _while_partial_eval,
                           cond_p: _cond_partial_eval})
