"""cond, switch, fori_loop, while_loop, scan, map: JAX's control flow.

Each traces its functions once into closed jaxprs (their closed-over values
become operands) and binds one primitive from jaxlab/core/control_flow.py,
checking types as JAX does: a carry keeps its structure, shapes and dtypes,
and branches return the same types. fori_loop with Python int bounds is a
scan (reverse-differentiable), otherwise a while_loop, as in JAX.
"""
from __future__ import annotations

import inspect
import operator
from typing import Any, Callable, Sequence

import numpy as np

from jaxlab.core.avals import ShapedArray
from jaxlab.core.control_flow import cond_p, scan_p, while_p
from jaxlab.core.jaxpr import ClosedJaxpr
from jaxlab.core.jaxpr_transforms import trace_hoisted, unify_consts
from jaxlab.core.trace import get_aval
from jaxlab.numpy._util import asarray_
from jaxlab.tree_util import PyTreeDef, tree_flatten, tree_unflatten

import jaxlab.core.control_flow_rules  # noqa: F401,E402  (registers the rules)


# --- tracing a user function into a jaxpr ------------------------------------------

def _trace(fun: Callable, in_tree: PyTreeDef, avals: Sequence[ShapedArray]) \
        -> tuple[ClosedJaxpr, list, PyTreeDef]:
    """fun over the pytree `in_tree` of `avals` as a jaxpr of flat values, its
    constants (hoisted into leading inputs) and its output tree."""
    out_tree: list = []

    def flat(*leaves: Any) -> list:
        out = fun(*tree_unflatten(in_tree, leaves))
        out_flat, tree = tree_flatten(out)
        out_tree.append(tree)
        return [asarray_(x) for x in out_flat]
    jaxpr, consts = trace_hoisted(flat, avals)
    return jaxpr, consts, out_tree[0]


def _flat(tree: Any) -> tuple[list, PyTreeDef]:
    leaves, treedef = tree_flatten(tree)
    return [asarray_(x) for x in leaves], treedef


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in xs]


def _type_str(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _first_param(fun: Callable, default: str) -> str:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return default
    return params[0] if params else default


def _check_carry(what: str, name: str, in_tree: PyTreeDef, out_tree: PyTreeDef,
                 in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]) -> None:
    """JAX's messages for a loop body whose carry changes structure or type."""
    if in_tree != out_tree:
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe input carry {name} is {in_tree} but the "
            f"carry output is {out_tree}.\n\nRevise the function so that the carry output "
            f"has the same pytree structure as the carry input.")
    single = len(in_avals) == 1
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a == b:
            continue
        label = f"carry {name}" if single else f"carry component {name}[{k}]"
        why = "the shapes do not match" if a.shape != b.shape else "the dtypes do not match"
        raise TypeError(
            f"{what} function carry input and carry output must have equal types, but they "
            f"differ:\n\nThe input {label} has type {_type_str(a)} but the corresponding "
            f"output carry component has type {_type_str(b)}, so {why}.\n\nRevise the "
            f"function so that all output types match the corresponding input types.")


def _promote_weak(init: list, in_avals: Sequence[ShapedArray],
                  out_avals: Sequence[ShapedArray]) -> tuple[list, bool]:
    """JAX's rule for a weakly typed initial carry whose body returns another dtype
    (`fori_loop(0, n, lambda i, c: c + 1.0, 0)`): the initial value is converted to the
    promoted dtype (a strong type) and the body traced again."""
    from jaxlab.numpy import result_type
    from jaxlab.numpy._util import astype_
    if len(in_avals) != len(out_avals):
        return init, False   # _check_carry names the mismatch
    changed = False
    init = list(init)
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and a.dtype != b.dtype:
            target = result_type(init[k], _like(b))
            init[k], changed = astype_(init[k], target), True
    return init, changed


def _like(aval: ShapedArray) -> Any:
    """What result_type takes for an aval: its dtype, or a Python scalar when weak."""
    if not aval.weak_type:
        return aval.dtype.np
    return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[np.dtype(aval.dtype.np).kind]


# --- cond / switch ----------------------------------------------------------------------

def _branch_name(fun: Callable) -> str:
    code = getattr(fun, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
    return f"{getattr(fun, '__name__', 'fun')}{where}"


def _bind_branches(index: Any, funs: Sequence[Callable], labels: Sequence[str],
                   operands: tuple) -> Any:
    ops, in_tree = _flat(operands)
    traced = [_trace(f, in_tree, _avals(ops)) for f in funs]
    _, _, tree0 = traced[0]
    for (j, _, tree), f, label in zip(traced[1:], funs[1:], labels[1:]):
        head = (f"{labels[0]} is {_branch_name(funs[0])}\n{label} is {_branch_name(f)}\n\n")
        if tree != tree0:
            raise TypeError(
                f"cond branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{head}{labels[0]} output is {tree0} but {label} output is {tree}.\n\n"
                f"Revise {labels[0]} and/or {label} so that they have the same pytree "
                f"structure.")
        for a, b in zip(traced[0][0].out_avals, j.out_avals):
            if a != b:
                why = "the shapes do not match" if a.shape != b.shape else \
                    "the dtypes do not match"
                raise TypeError(
                    f"cond branches must have equal output types but they differ.\n\n{head}"
                    f"The output of {labels[0]} has type {_type_str(a)} but the corresponding "
                    f"output of {label} has type {_type_str(b)}, so {why}.\n\nRevise "
                    f"{labels[0]} and/or {label} so that all output types match.")
    branches, consts = unify_consts([j for j, _, _ in traced], [c for _, c, _ in traced])
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(branches))
    return tree_unflatten(tree0, list(outs))


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands); only one runs."""
    from jaxlab.lax.ops import convert_element_type
    from jaxlab.numpy.ufuncs import not_equal
    p = asarray_(pred)
    if p.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {p.shape}.")
    if not p.jdtype.is_bool:
        if not p.jdtype.is_int:
            raise TypeError(f"Pred type must be either boolean or number, got {p.jdtype}.")
        p = not_equal(p, asarray_(0, p.jdtype))
    index = convert_element_type(p, np.int32)
    return _bind_branches(index, [false_fun, true_fun], ["false_fun", "true_fun"], operands)


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """branches[clamp(index, 0, len(branches) - 1)](*operands)."""
    from jaxlab.lax.ops import clamp, convert_element_type
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    i = asarray_(index)
    if i.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {i.shape}.")
    if not i.jdtype.is_int:
        raise TypeError(f"Index type must be an integer, got {index} as {i.jdtype}")
    if len(branches) == 1:
        return branches[0](*operands)
    i = convert_element_type(i, np.int32)
    i = clamp(asarray_(0, i.jdtype), i, asarray_(len(branches) - 1, i.jdtype))
    labels = [f"branches[{k}]" for k in range(len(branches))]
    return _bind_branches(i, branches, labels, operands)


# --- loops ---------------------------------------------------------------------------

def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """while cond_fun(val): val = body_fun(val)."""
    init, tree = _flat(init_val)
    avals = _avals(init)
    args_tree = tree_structure_of((init_val,))
    cond_j, cond_consts, _ = _trace(cond_fun, args_tree, avals)
    outs = cond_j.out_avals
    if len(outs) != 1 or outs[0].shape != () or not outs[0].dtype.is_bool:
        got = ", ".join(f"ShapedArray({_type_str(a)})" for a in outs)
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{got}].")
    body_j, body_consts, out_tree = _trace(body_fun, args_tree, avals)
    init, promoted = _promote_weak(init, avals, body_j.out_avals)
    if promoted:
        avals = _avals(init)
        cond_j, cond_consts, _ = _trace(cond_fun, args_tree, avals)
        body_j, body_consts, out_tree = _trace(body_fun, args_tree, avals)
    _check_carry("while_loop body", _first_param(body_fun, "carry"), tree, out_tree, avals,
                 body_j.out_avals)
    res = while_p.bind(*cond_consts, *body_consts, *init, cond_jaxpr=cond_j, body_jaxpr=body_j,
                       cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_unflatten(tree, list(res))


def _static_int(v: Any) -> int | None:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """for i in range(lower, upper): val = body_fun(i, val). A scan when both bounds
    are Python ints (so reverse-mode works; `unroll` steps per compiled iteration), a
    while_loop otherwise (where `unroll` has nothing to unroll, as in JAX)."""
    lo, hi = _static_int(lower), _static_int(upper)
    if lo is not None and hi is not None:
        def step(carry: tuple, _: Any) -> tuple:
            i, x = carry
            return (i + asarray_(1, _i32()), body_fun(i, x)), None
        step.__name__ = "loop_carry"
        (_, result), _ = _scan(step, (asarray_(lo, _i32()), init_val), None,
                               max(hi - lo, 0), False, "loop_carry",
                               1 if unroll is None else unroll)
        return result
    from jaxlab.ir.dtypes import result_type
    lo_a, hi_a = asarray_(lower), asarray_(upper)
    for b, what in ((lo_a, "lower"), (hi_a, "upper")):
        if b.shape != () or not b.jdtype.is_int:
            raise TypeError(f"fori_loop {what} bound must be an integer scalar, got "
                            f"{_type_str(get_aval(b))}")
    dt = result_type(lo_a.jdtype, hi_a.jdtype)
    _, _, result = while_loop(lambda c: c[0] < c[1],
                              lambda c: (c[0] + asarray_(1, c[0].jdtype), c[1],
                                         body_fun(c[0], c[2])),
                              (lo_a.astype(dt), hi_a.astype(dt), init_val))
    return result


def _i32() -> Any:
    from jaxlab.ir.dtypes import DType
    return DType.int32


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """carry, y = f(carry, x) over the leading axis of xs; returns (carry, stacked ys).
    Compiled, `unroll` steps of f run per loop iteration (True: all of them)."""
    return _scan(f, init, xs, length, reverse, _first_param(f, "carry"), unroll)


def _unroll_steps(unroll: Any, length: int) -> int:
    """JAX's `unroll` parameter: a bool (all steps, or one) or a non-negative int."""
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    steps = operator.index(unroll)
    if steps < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return steps


def _scan(f: Callable, init: Any, xs: Any, length: int | None, reverse: bool,
          carry_name: str, unroll: Any = 1) -> tuple[Any, Any]:
    x_leaves, x_tree = _flat(xs)
    for x in x_leaves:
        if x.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: "
                             f"{_type_str(get_aval(x))}.")
    sizes = list(dict.fromkeys(x.shape[0] for x in x_leaves))
    if len(sizes) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: "
                         f"{', '.join(str(x.shape[0]) for x in x_leaves)}.")
    if length is not None:
        length = int(length)
        if sizes and sizes[0] != length:
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sizes}.")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    n = length if length is not None else sizes[0]
    unroll = _unroll_steps(unroll, n)
    carry, c_tree = _flat(init)
    c_avals = _avals(carry)
    x_avals = [ShapedArray(x.shape[1:], x.jdtype) for x in x_leaves]
    body_tree = tree_structure_of((init, xs))

    def body(c: Any, x: Any) -> Any:
        out = f(c, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair, got {type(out).__name__}.")
        return tuple(out)
    jaxpr, consts, out_tree = _trace(body, body_tree, c_avals + x_avals)
    c_out_tree, y_tree = out_tree.children
    n_carry = len(carry)
    carry, promoted = _promote_weak(carry, c_avals, jaxpr.out_avals[:n_carry])
    if promoted:
        c_avals = _avals(carry)
        jaxpr, consts, out_tree = _trace(body, body_tree, c_avals + x_avals)
        c_out_tree, y_tree = out_tree.children
    _check_carry("scan body", carry_name, c_tree, c_out_tree, c_avals,
                 jaxpr.out_avals[:n_carry])
    outs = scan_p.bind(*consts, *carry, *x_leaves, jaxpr=jaxpr, length=n, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=n_carry, unroll=unroll)
    return tree_unflatten(c_tree, outs[:n_carry]), tree_unflatten(y_tree, outs[n_carry:])


def tree_structure_of(tree: Any) -> PyTreeDef:
    return tree_flatten(tree)[1]


def map(f: Callable, xs: Any) -> Any:  # noqa: A001  (jax.lax.map)
    """[f(x) for x in xs] stacked, as a scan with no carry."""
    return scan(lambda _, x: ((), f(x)), (), xs)[1]
