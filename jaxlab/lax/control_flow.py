"""cond, switch, fori_loop, while_loop, scan.

jaxlab stages control flow by tracing: a branch on a concrete predicate runs
just that branch; a branch on a traced predicate (under jit, vmap, grad of a
data-dependent choice) runs every branch and selects, which is what JAX's
vmap of cond does too. Loops with static trip counts unroll into the traced
program, so they differentiate and batch like straight-line code.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from jaxlab.core.trace import Tracer
from jaxlab.numpy._util import asarray_
from jaxlab.tree_util import tree_flatten, tree_map, tree_unflatten


def _concrete(x: Any) -> bool:
    return not isinstance(x, Tracer)


def _select_trees(pred: Any, on_true: Any, on_false: Any) -> Any:
    from jaxlab.numpy.ufuncs import where
    t_leaves, t_tree = tree_flatten(on_true)
    f_leaves, f_tree = tree_flatten(on_false)
    if t_tree != f_tree:
        raise TypeError(f"cond branches must return the same structure: {t_tree} vs {f_tree}")
    for a, b in zip(t_leaves, f_leaves):
        a, b = asarray_(a), asarray_(b)
        if a.shape != b.shape or a.jdtype is not b.jdtype:
            raise TypeError(f"cond branches return different types: "
                            f"{a.jdtype}{list(a.shape)} vs {b.jdtype}{list(b.shape)}")
    return tree_unflatten(t_tree, [where(pred, a, b) for a, b in zip(t_leaves, f_leaves)])


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands)."""
    p = asarray_(pred)
    if p.shape != ():
        raise TypeError(f"cond predicate must be a scalar, got shape {p.shape}")
    if _concrete(p):
        return true_fun(*operands) if bool(p) else false_fun(*operands)
    return _select_trees(p.astype(bool), true_fun(*operands), false_fun(*operands))


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """branches[clamp(index, 0, len-1)](*operands)."""
    if not branches:
        raise ValueError("switch needs at least one branch")
    i = asarray_(index)
    if i.shape != () or i.jdtype.is_float:
        raise TypeError(f"switch index must be an integer scalar, got {i.jdtype}{list(i.shape)}")
    n = len(branches)
    if _concrete(i):
        return branches[min(max(int(i), 0), n - 1)](*operands)
    from jaxlab.numpy.ufuncs import clip, equal
    i = clip(i, 0, n - 1)
    out = branches[-1](*operands)
    for k in range(n - 2, -1, -1):
        out = _select_trees(equal(i, k), branches[k](*operands), out)
    return out


def fori_loop(lower: int, upper: int, body_fun: Callable, init_val: Any) -> Any:
    """for i in range(lower, upper): val = body_fun(i, val)."""
    lo, hi = _static_int(lower, "lower"), _static_int(upper, "upper")
    val = init_val
    for i in range(lo, hi):
        val = body_fun(asarray_(i), val)
    return val


def _static_int(v: Any, what: str) -> int:
    if isinstance(v, Tracer):
        raise TypeError(f"fori_loop {what} bound must be concrete (a Python int or an "
                        f"array outside jit), got a traced value")
    return int(v)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """while cond_fun(val): val = body_fun(val). The condition is read on the host
    each iteration, so it must not depend on traced values."""
    val = init_val
    while True:
        c = asarray_(cond_fun(val))
        if isinstance(c, Tracer):
            raise TypeError("while_loop with a condition that depends on traced values "
                            "(inside jit/vmap/grad) is not supported by jaxlab yet: use "
                            "fori_loop or scan with a static trip count")
        if not bool(c):
            return val
        val = body_fun(val)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int = 1) -> tuple[Any, Any]:
    """carry, y = f(carry, x) over the leading axis of xs; returns (carry, stacked ys)."""
    from jaxlab.numpy.shape_ops import stack
    leaves, tree = tree_flatten(xs)
    leaves = [asarray_(x) for x in leaves]
    lengths = {x.shape[0] for x in leaves if x.ndim}
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError(f"scan got inconsistent lengths: {sorted(lengths)} "
                         f"(pass length= when xs is None)")
    (n,) = lengths
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, []
    for i in order:
        x = tree_unflatten(tree, [leaf[i] for leaf in leaves]) if leaves else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or tree_flatten(ys[0])[0] == []:
        return carry, ys[0] if ys else None
    stacked = tree_map(lambda *ys_: stack([asarray_(y) for y in ys_]), ys[0], *ys[1:])
    return carry, stacked

