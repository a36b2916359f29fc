"""custom_gradient, linear_transpose and closure_convert: JAX's helpers for writing
derivatives, built on custom_vjp, vjp and jaxpr staging."""
from __future__ import annotations

import functools
from typing import Any, Callable

from jaxlab.api import _as_array, flatten_fun, vjp
from jaxlab.core.custom_derivatives import custom_vjp
from jaxlab.core.jaxpr import eval_jaxpr, trace_to_jaxpr
from jaxlab.core.trace import Tracer, get_aval
from jaxlab.tree_util import tree_flatten, tree_map


def custom_gradient(fun: Callable[..., tuple[Any, Callable]]) -> Callable[..., Any]:
    """fun(*args) -> (value, vjp) where vjp(cotangent) gives the cotangents of args (a
    tuple, or one value for a one-argument fun) as a function with that gradient."""
    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def forward(*args: Any) -> tuple[Any, tuple]:
        value, rule = fun(*args)
        return value, (rule, len(args))

    def backward(saved: tuple, cotangent: Any) -> tuple:
        rule, n_args = saved
        grads = rule(cotangent)
        if n_args == 1 and not isinstance(grads, (tuple, list)):
            grads = (grads,)
        return tuple(grads)
    wrapped.defvjp(forward, backward)
    return functools.wraps(fun)(lambda *args: wrapped(*args))


def _example(x: Any) -> Any:
    """An argument standing in for x's shape and dtype (a ShapeDtypeStruct's zeros)."""
    from jaxlab.numpy.creation import zeros
    from jaxlab.shapes import ShapeDtypeStruct
    if isinstance(x, ShapeDtypeStruct):
        return zeros(x.shape, x.dtype)
    return _as_array(x)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: tuple = ()) \
        -> Callable[[Any], tuple]:
    """The transpose of the linear function fun at the shapes and dtypes of `primals`:
    a function from an output cotangent to the tuple of input cotangents."""
    examples = tree_map(_example, primals)
    _, pullback = vjp(fun, *examples)

    def transposed(out_cotangent: Any) -> tuple:
        return tuple(pullback(out_cotangent))
    return transposed


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable, list]:
    """(converted, consts): the traced values fun closes over (an enclosing jit's or
    grad's) hoisted out as `consts`, so that converted(*args, *consts) == fun(*args)."""
    leaves, in_tree = tree_flatten(example_args)
    leaves = [_as_array(x) for x in leaves]
    flat, out_tree = flatten_fun(fun, in_tree)
    closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
    hoisted = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    consts = [closed.consts[i] for i in hoisted]

    def converted(*args_and_consts: Any) -> Any:
        n_args = len(args_and_consts) - len(consts)
        args, given = args_and_consts[:n_args], args_and_consts[n_args:]
        values = list(closed.consts)
        for i, c in zip(hoisted, given):
            values[i] = c
        arg_leaves = [_as_array(x) for x in tree_flatten(tuple(args))[0]]
        return out_tree[0].unflatten(eval_jaxpr(closed.jaxpr, values + arg_leaves))
    return converted, consts
