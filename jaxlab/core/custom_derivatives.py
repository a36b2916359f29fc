"""custom_jvp and custom_vjp: user-written derivative rules.

Each wraps the user's function in a primitive whose parameters are Python
callables. Evaluating the primitive calls the function; its jvp rule calls
the user's rule. For custom_vjp, the jvp rule runs `fwd` and emits a linear
`custom_lin` equation whose transpose calls `bwd` with the saved residuals,
so reverse mode (which jaxlab builds as linearize + transpose) uses them.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

from jaxlab.array import wrap
from jaxlab.core.avals import ShapedArray
from jaxlab.core.batching import vmap_flat
from jaxlab.core.jaxpr import ClosedJaxpr, trace_to_jaxpr
from jaxlab.core.primitives import (abstract_evals, batch_rules, jvp_rules, lowerings,
                                    primitive, transpose_rules)
from jaxlab.core.trace import bind, get_aval
from jaxlab.core.values import asarray, zeros_like
from jaxlab.tree_util import tree_flatten, tree_map, tree_unflatten

custom_jvp_call_p = primitive("custom_jvp_call", multiple_results=True)
custom_vjp_call_p = primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = primitive("custom_lin", multiple_results=True)


def _flat(fun: Callable, in_tree: Any, out_store: list) -> Callable:
    """fun over pytrees as a function of flat arrays returning a flat list."""
    def flat(*leaves: Any) -> list:
        out = fun(*tree_unflatten(in_tree, leaves))
        out_flat, tree = tree_flatten(out)
        out_store[:] = [tree]
        return [asarray(x) for x in out_flat]
    flat.__name__ = getattr(fun, "__name__", "fun")
    return flat


class custom_jvp:
    """`f = custom_jvp(f); @f.defjvp def f_jvp(primals, tangents): return out, t_out`."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun, self.jvp = fun, None
        if nondiff_argnums:
            raise NotImplementedError("custom_jvp nondiff_argnums: close over the value instead")

    def defjvp(self, jvp: Callable) -> Callable:
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `rule(tangent, primal_out, *primals)`, the output's
        tangent being their sum (None: the output does not depend on that argument)."""
        fun = self.fun

        def jvp(primals: tuple, tangents: tuple) -> tuple:
            out = fun(*primals)
            parts = [rule(t, out, *primals) for rule, t in zip(jvps, tangents)
                     if rule is not None]
            if not parts:
                return out, tree_map(zeros_like, out)
            return out, tree_map(lambda *xs: functools.reduce(operator.add, xs), *parts)
        self.defjvp(jvp)

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise TypeError(f"custom_jvp {self.fun.__name__} has no rule: call defjvp first")
        leaves, in_tree, out_tree, flat_fun = _flatten_call(self.fun, args)
        jvp = self.jvp

        def flat_jvp(primals: list, tangents: list) -> tuple[list, list]:
            p = tree_unflatten(in_tree, primals)
            t = tree_unflatten(in_tree, tangents)
            out, t_out = jvp(tuple(p), tuple(t))
            out_flat, tree = tree_flatten(out)
            out_tree[:] = [tree]
            return [asarray(x) for x in out_flat], [asarray(x) for x in tree_flatten(t_out)[0]]
        outs = bind(custom_jvp_call_p, *leaves, fun=flat_fun, jvp=flat_jvp)
        return tree_unflatten(out_tree[0], outs)


def _flatten_call(fun: Callable, args: tuple) -> tuple[list, Any, list, Callable]:
    """The arguments as flat arrays, their tree, a box for the output tree, and fun
    as a function of the flat arrays."""
    leaves, in_tree = tree_flatten(args)
    out_tree: list = []
    return [asarray(x) for x in leaves], in_tree, out_tree, _flat(fun, in_tree, out_tree)


def _call_lowering(*lazies: Any, fun: Callable, **_: Any) -> list:
    return [o._lazy for o in fun(*(wrap(x) for x in lazies))]


def call_jaxpr(avals: Sequence[ShapedArray], fun: Callable) -> ClosedJaxpr:
    """The user's function staged out at these input types: staged (not run on
    phantoms) so that control flow inside it works under jit too. Kept from the
    abstract evaluation (while tracing), so compiling does not trace it again
    while kernels are being recorded."""
    return _staged(fun, tuple(ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals))


@functools.lru_cache(maxsize=256)
def _staged(fun: Callable, avals: tuple) -> ClosedJaxpr:
    return trace_to_jaxpr(fun, list(avals))


def clear_staged() -> None:
    """Forget the staged functions (jaxlab.clear_caches)."""
    _staged.cache_clear()


def _call_abstract(*avals: ShapedArray, fun: Callable, **_: Any) -> list[ShapedArray]:
    return call_jaxpr(avals, fun).out_avals


def _custom_jvp_rule(primals, tangents, *, fun, jvp):
    return jvp(list(primals), list(tangents))


def _batch_call(prim):
    def rule(size, vals, dims, **params):
        fun, n_out = params["fun"], []

        def counted(*xs: Any) -> list:
            outs = fun(*xs)
            n_out.append(len(outs))
            return outs
        outs = vmap_flat(counted, list(dims), lambda: [0] * n_out[0], list(vals))
        return list(outs), [0] * len(outs)
    return rule


lowerings[custom_jvp_call_p] = _call_lowering
abstract_evals[custom_jvp_call_p] = _call_abstract
jvp_rules[custom_jvp_call_p] = _custom_jvp_rule
batch_rules[custom_jvp_call_p] = _batch_call(custom_jvp_call_p)


class custom_vjp:
    """`f = custom_vjp(f); f.defvjp(fwd, bwd)` with fwd(*args) -> (out, residuals)
    and bwd(residuals, out_cotangent) -> a tuple of input cotangents."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun, self.fwd, self.bwd = fun, None, None
        if nondiff_argnums:
            raise NotImplementedError("custom_vjp nondiff_argnums: close over the value instead")

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise TypeError(f"custom_vjp {self.fun.__name__} has no rule: call defvjp first")
        leaves, in_tree, out_tree, flat_fun = _flatten_call(self.fun, args)
        fwd, bwd = self.fwd, self.bwd

        def flat_fwd(*primals: Any) -> tuple[list, Any]:
            out, res = fwd(*tree_unflatten(in_tree, primals))
            out_flat, tree = tree_flatten(out)
            out_tree[:] = [tree]
            return [asarray(x) for x in out_flat], res

        def flat_bwd(res: Any, cts: list) -> list:
            grads = bwd(res, tree_unflatten(out_tree[0], cts))
            flat, tree = tree_flatten(tuple(grads))
            if tree != in_tree:
                raise TypeError(f"custom_vjp bwd returned {tree}, expected the structure of "
                                f"the arguments {in_tree}")
            return [asarray(x) for x in flat]
        outs = bind(custom_vjp_call_p, *leaves, fun=flat_fun, fwd=flat_fwd, bwd=flat_bwd)
        return tree_unflatten(out_tree[0], outs)


def _custom_vjp_jvp(primals, tangents, *, fun, fwd, bwd):
    outs, res = fwd(*primals)
    avals = tuple(get_aval(o) for o in outs)
    t_out = bind(custom_lin_p, *tangents, res=res, bwd=bwd, out_avals=avals)
    return outs, list(t_out)


def _lin_lowering(*_: Any, **__: Any) -> list:
    raise TypeError("forward-mode differentiation (jvp) of a custom_vjp function is not "
                    "supported: it only defines reverse mode")


def _lin_abstract(*avals, res, bwd, out_avals):
    return list(out_avals)


def _lin_transpose(cts, *tangents, res, bwd, out_avals):
    return bwd(res, list(cts))


lowerings[custom_vjp_call_p] = _call_lowering
abstract_evals[custom_vjp_call_p] = _call_abstract
jvp_rules[custom_vjp_call_p] = _custom_vjp_jvp
batch_rules[custom_vjp_call_p] = _batch_call(custom_vjp_call_p)
lowerings[custom_lin_p] = _lin_lowering
abstract_evals[custom_lin_p] = _lin_abstract
transpose_rules[custom_lin_p] = _lin_transpose
