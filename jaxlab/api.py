"""The transformations: jit grad value_and_grad vjp jvp linearize jacfwd jacrev
hessian vmap make_jaxpr. Each flattens pytrees, runs a flat core transform
(jaxlab/core) and rebuilds the output tree."""
from __future__ import annotations

import functools
import inspect
import weakref
from typing import Any, Callable, Optional, Sequence

from jaxlab import state
from jaxlab.configuration import config
from jaxlab.array import Array, ArrayBase
from jaxlab.core.batching import vmap_flat
from jaxlab.core.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from jaxlab.core.jaxpr import ClosedJaxpr, DebugInfo, eval_jaxpr, trace_to_jaxpr
from jaxlab.core.jvp import jvp_flat
from jaxlab.core.partial_eval import linearize_flat, vjp_flat
from jaxlab.core.trace import get_aval
from jaxlab.tree_util import (LEAF, PyTreeDef, tree_flatten, tree_map, tree_unflatten,
                              treedef_flatten_up_to)


def _as_array(x: Any) -> Any:
    from jaxlab.numpy._util import asarray_
    return x if isinstance(x, ArrayBase) else asarray_(x)


def flatten_fun(f: Callable, in_tree: PyTreeDef) -> tuple[Callable, list]:
    """f over a pytree of args as a function of the flat leaves; out_tree[0] is
    filled in when it runs."""
    out_tree: list = []

    def flat_fun(*leaves: Any) -> list:
        args = tree_unflatten(in_tree, leaves)
        out = f(*args)
        flat, tree = tree_flatten(out)
        out_tree.append(tree)
        return [_as_array(x) for x in flat]
    return flat_fun, out_tree


def _flat_args(args: Sequence[Any]) -> tuple[list, PyTreeDef]:
    leaves, tree = tree_flatten(tuple(args))
    return [_as_array(x) for x in leaves], tree


# --- forward and reverse mode ----------------------------------------------------

def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """(fun(*primals), the directional derivative along tangents)."""
    p_flat, in_tree = _flat_args(primals)
    t_flat, t_tree = _flat_args(tangents)
    if t_tree != in_tree:
        raise TypeError(f"jvp: primals {in_tree} and tangents {t_tree} differ in structure")
    for p, t in zip(p_flat, t_flat):
        if p.shape != t.shape:
            raise ValueError(f"jvp: primal shape {p.shape} and tangent shape {t.shape} differ")
    f, out_tree = flatten_fun(fun, in_tree)
    outs, touts = jvp_flat(f, p_flat, t_flat)
    return tree_unflatten(out_tree[0], outs), tree_unflatten(out_tree[0], touts)


def linearize(fun: Callable, *primals: Any) -> tuple[Any, Callable]:
    p_flat, in_tree = _flat_args(primals)
    f, out_tree = flatten_fun(fun, in_tree)
    outs, jaxpr, consts, _ = linearize_flat(f, p_flat)

    def f_jvp(*tangents: Any) -> Any:
        t_flat, _ = _flat_args(tangents)
        return tree_unflatten(out_tree[0], eval_jaxpr(jaxpr, list(consts) + t_flat))
    return tree_unflatten(out_tree[0], outs), f_jvp


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(fun(*primals), a function from output cotangents to input cotangents)."""
    p_flat, in_tree = _flat_args(primals)
    # aux values ride along as extra outputs: primal outputs come out known
    # (concrete) from linearization, and their cotangents are zero.
    f, out_tree = flatten_fun(fun if has_aux else lambda *a: (fun(*a), None), in_tree)
    outs, f_vjp_flat = vjp_flat(f, p_flat)
    main_tree, aux_tree = out_tree[0].children
    n_main = main_tree.num_leaves

    def f_vjp(cotangent: Any) -> tuple:
        from jaxlab.numpy.creation import zeros_like
        ct_flat = [_as_array(c) for c in treedef_flatten_up_to(main_tree, cotangent)]
        for ct, o in zip(ct_flat, outs):
            if ct.shape != o.shape or ct.jdtype != o.jdtype:
                raise ValueError(
                    f"unexpected JAX type (e.g. shape/dtype) for argument to vjp function: "
                    f"got {ct.jdtype}{list(ct.shape)}, but expected {o.jdtype}{list(o.shape)} "
                    f"because the corresponding output of the function had that type")
        ct_flat += [zeros_like(o) for o in outs[n_main:]]
        return tree_unflatten(in_tree, f_vjp_flat(*ct_flat))
    out = tree_unflatten(main_tree, outs[:n_main])
    if has_aux:
        return out, f_vjp, tree_unflatten(aux_tree, outs[n_main:])
    return out, f_vjp


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _diff_call(fun: Callable, args: tuple, argnums: int | Sequence[int],
               kwargs: dict | None = None) -> tuple:
    """(fun as a function of the differentiated arguments only, those arguments)."""
    nums = _argnums_tuple(argnums)
    for n in nums:
        if n >= len(args):
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {n + 1} positional arguments to be passed by the "
                            f"caller, but got only {len(args)}")

    def partial_fun(*diff: Any) -> Any:
        full = list(args)
        for n, a in zip(nums, diff):
            full[n] = a
        return fun(*full, **(kwargs or {}))
    return partial_fun, tuple(args[n] for n in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """f -> (f(x), df/dx) for scalar-output f, differentiating w.r.t. argnums.
    Complex inputs follow JAX: the gradient of a real output is the cotangent 1.0
    pulled back (the conjugate of df/dz* convention); a complex output needs
    holomorphic=True (complex inputs too), which gives df/dz."""
    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        partial_fun, diff = _diff_call(fun, args, argnums, kwargs)
        if holomorphic:
            for d in tree_flatten(diff)[0]:
                dt = _as_array(d).jdtype
                if not dt.is_complex:
                    raise TypeError(f"grad with holomorphic=True requires inputs with complex "
                                    f"dtype, but got {dt}.")
        res = vjp(partial_fun, *diff, has_aux=has_aux)
        out, f_vjp = res[0], res[1]
        out_arr = _as_array(out) if not isinstance(out, (tuple, list, dict)) else None
        _check_grad_output(out, out_arr, holomorphic)
        from jaxlab.numpy.creation import ones_like
        grads = f_vjp(ones_like(out_arr))
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((out, res[2]), grads) if has_aux else (out, grads)
    return wrapped


def _check_grad_output(out: Any, out_arr: Any, holomorphic: bool) -> None:
    """JAX's checks and messages for what grad can differentiate."""
    if out_arr is None or out_arr.shape != ():
        what = type(out).__name__ if out_arr is None else f"{out_arr.jdtype}{list(out_arr.shape)}"
        raise TypeError(f"grad requires a real scalar output (float, shape ()), got {what}")
    dt = out_arr.jdtype
    if holomorphic and not dt.is_complex:
        raise TypeError(f"grad with holomorphic=True requires outputs with complex dtype, "
                        f"but got {dt}.")
    if not holomorphic and dt.is_complex:
        raise TypeError(f"grad requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {dt}. For holomorphic differentiation, "
                        f"pass holomorphic=True. For differentiation of non-holomorphic "
                        f"functions involving complex outputs, use jax.vjp directly.")
    if not dt.is_inexact:
        raise TypeError(f"grad requires a real scalar output (float, shape ()), got "
                        f"{dt}{list(out_arr.shape)}")


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable:
    vg = value_and_grad(fun, argnums, has_aux, holomorphic)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapped


# --- vmap ----------------------------------------------------------------------------

def _axes_for_leaves(axes: Any, tree: Any, what: str) -> list:
    """Broadcast an axis spec (int/None or a prefix tree of them) to the leaves of tree."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_flatten(tree)[0])
    if isinstance(axes, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(axes) != len(tree):
            raise ValueError(f"vmap {what} has {len(axes)} entries for {len(tree)} values")
        return [a for sub_axes, sub in zip(axes, tree)
                for a in _axes_for_leaves(sub_axes, sub, what)]
    if isinstance(axes, dict) and isinstance(tree, dict) and sorted(axes) == sorted(tree):
        return [a for k in sorted(tree) for a in _axes_for_leaves(axes[k], tree[k], what)]
    raise ValueError(f"vmap {what} specification must be a tree prefix of the corresponding "
                     f"value: {what} {axes!r} does not match {_structure(tree)}")


def _structure(tree: Any) -> str:
    """The value's structure with `*` for each leaf, as the error shows it."""
    return str(tree_map(lambda _: "*", tree)).replace("'*'", "*")


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0) -> Callable:
    """Map fun over an axis of its inputs, vectorised (no Python loop)."""
    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        leaves, in_tree = _flat_args(args)
        axes = _axes_for_leaves(in_axes if not isinstance(in_axes, list) else tuple(in_axes),
                                tuple(args), "in_axes")
        axes = [None if a is None else _norm_axis(a, x.ndim, "in_axes")
                for a, x in zip(axes, leaves)]
        if all(a is None for a in axes):
            raise ValueError("vmap needs at least one mapped input (in_axes all None)")
        f, out_tree = flatten_fun(fun, in_tree)
        out_axes_box: list = []

        def f_counted(*xs: Any) -> list:
            outs = f(*xs)
            out_axes_box.append(_axes_for_leaves(out_axes, tree_unflatten(out_tree[0], outs),
                                                 "out_axes"))
            return outs
        outs = vmap_flat(f_counted, axes, lambda: out_axes_box[0], leaves)
        return tree_unflatten(out_tree[0], outs)
    return wrapped


def _norm_axis(a: int, ndim: int, what: str) -> int:
    if not -ndim <= a < max(ndim, 1) or ndim == 0:
        raise ValueError(f"vmap {what} {a} is out of range for an input of rank {ndim}")
    return a % ndim


# --- Jacobians ---------------------------------------------------------------------------

def _standard_basis(leaves: Sequence[Array]) -> list[Array]:
    """Rows of the identity over all leaves' elements together, cut per leaf: leaf j's
    part has shape (total,) + leaf_j.shape."""
    from jaxlab.numpy.creation import eye
    total = sum(x.size for x in leaves)
    out, offset = [], 0
    for x in leaves:
        rows = eye(total, dtype=x.jdtype)[:, offset:offset + x.size]
        out.append(rows.reshape((total,) + x.shape))
        offset += x.size
    return out


def _cut_axis(a: Array, axis: int, leaves: Sequence[Array]) -> list[Array]:
    """a's `axis` (of length sum of the leaves' sizes) cut per leaf, each piece's axis
    unraveled in place into that leaf's shape."""
    axis %= a.ndim
    out, offset = [], 0
    for x in leaves:
        piece = a[(slice(None),) * axis + (slice(offset, offset + x.size),)]
        out.append(piece.reshape(a.shape[:axis] + x.shape + a.shape[axis + 1:]))
        offset += x.size
    return out


def _jacobian_tree(out_leaves: Sequence, out_tree: PyTreeDef, in_leaves: Sequence,
                   in_tree: PyTreeDef, blocks: Callable[[int, int], Array],
                   argnums: int | Sequence[int]) -> Any:
    """An out-tree of in-trees (of a tuple of in-trees when argnums is a sequence)."""
    per_out = []
    for i in range(len(out_leaves)):
        in_side = tree_unflatten(in_tree, [blocks(i, j) for j in range(len(in_leaves))])
        per_out.append(in_side if not isinstance(argnums, int) else in_side[0])
    return tree_unflatten(out_tree, per_out)


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Jacobian by forward mode: one vmapped jvp per input element."""
    def jac(*args: Any) -> Any:
        partial_fun, diff = _diff_call(fun, args, argnums)
        in_leaves, in_tree = _flat_args(diff)

        out_tree: list = []

        def push(*tangents: Any) -> list:
            flat, tree = tree_flatten(jvp(partial_fun, tree_unflatten(in_tree, in_leaves),
                                          tree_unflatten(in_tree, tangents))[1])
            out_tree.append(tree)
            return flat
        columns = vmap(push, out_axes=-1)(*_standard_basis(in_leaves))
        cut = [_cut_axis(_as_array(c), -1, in_leaves) for c in columns]
        return _jacobian_tree(columns, out_tree[0], in_leaves, in_tree,
                              lambda i, j: cut[i][j], argnums)
    return jac


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Jacobian by reverse mode: one vmapped vjp per output element."""
    def jac(*args: Any) -> Any:
        partial_fun, diff = _diff_call(fun, args, argnums)
        in_leaves, in_tree = _flat_args(diff)
        out, f_vjp = vjp(partial_fun, *diff)
        out_leaves, out_tree = tree_flatten(out)
        out_leaves = [_as_array(o) for o in out_leaves]

        def pull(*cotangents: Any) -> list:
            return tree_flatten(f_vjp(tree_unflatten(out_tree, cotangents)))[0]
        rows = [_cut_axis(r, 0, out_leaves) for r in vmap(pull)(*_standard_basis(out_leaves))]
        return _jacobian_tree(out_leaves, out_tree, in_leaves, in_tree,
                              lambda i, j: rows[j][i], argnums)
    return jac


jacobian = jacrev


def hessian(fun: Callable, argnums: int = 0) -> Callable:
    return jacfwd(jacrev(fun, argnums), argnums)


# --- staging -----------------------------------------------------------------------------

def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = ()) -> Callable:
    """fun -> a function returning the ClosedJaxpr of fun at these arguments."""
    statics = _argnums_tuple(static_argnums)

    def make(*args: Any) -> ClosedJaxpr:
        dyn = [a for i, a in enumerate(args) if i not in statics]
        leaves, in_tree = _flat_args(dyn)

        def with_statics(*dyn_args: Any) -> Any:
            it = iter(dyn_args)
            return fun(*(a if i in statics else next(it) for i, a in enumerate(args)))
        f, _ = flatten_fun(with_statics, in_tree)
        return trace_to_jaxpr(f, [get_aval(x) for x in leaves])
    return make


# --- jit ------------------------------------------------------------------------------------

def _hashable_static(v: Any, where: str) -> Any:
    try:
        hash(v)
    except TypeError as exc:
        raise ValueError(f"jit: static argument {where} must be hashable, got "
                         f"{type(v).__name__}") from exc
    return v


def _call_signature(args: tuple) -> Optional[tuple[tuple, list]]:
    """(key, leaves) of a call whose arguments are Arrays and Python float/int scalars
    nested in tuples, lists, dicts and None (a training step's parameters), with at
    least one Array; else None. One walk makes both: the leaves in tree_flatten's
    order, and a key of each Array's shape, dtype, device and weak type, each scalar's
    kind (traced as a weak value: its value never enters the key) and each container's
    type and length (a dict's keys), so that another structure is another key. The
    key's first item says whether any leaf is a scalar (to convert before the call)."""
    sig: list = []
    leaves: list = []
    if not _sign(args, sig, leaves):
        return None
    arrays = sum(1 for x in leaves if type(x) is Array)
    if not arrays:
        return None
    return (arrays < len(leaves), tuple(sig)), leaves


def _sign(items: Any, sig: list, leaves: list) -> bool:
    """`_call_signature`'s walk over a container's items; False at anything else."""
    for x in items:
        kind = type(x)
        if kind is Array:   # DType and Device hash in C (identity hashes)
            lazy = x._lazy
            sig.append((lazy.shape, lazy.dtype, lazy.device, x._weak))
            leaves.append(x)
        elif kind is float or kind is int:
            sig.append(kind)
            leaves.append(x)
        elif kind is tuple or kind is list:
            sig.append((kind, len(x)))
            if not _sign(x, sig, leaves):
                return False
        elif kind is dict:
            try:
                keys = sorted(x)
            except TypeError:   # tree_flatten's error, raised by the slow path
                return False
            sig.append((dict, tuple(keys)))
            if not _sign([x[k] for k in keys], sig, leaves):
                return False
        elif x is not None:
            return False
        else:
            sig.append(None)
    return True


def _infer_statics(fun: Callable, argnums: tuple[int, ...],
                   argnames: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Each static argument by position and by name, as JAX infers them from fun's
    signature: static_argnames also covers that parameter passed positionally."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):   # builtins without a signature: take them as given
        return argnums, argnames
    by_position = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                    p.KEYWORD_ONLY)}
    nums = set(argnums) | {by_position.index(n) for n in argnames if n in by_position}
    names = set(argnames) | {by_position[i] for i in argnums
                             if -len(by_position) <= i < len(by_position)
                             and by_position[i] in keywords}
    return tuple(sorted(nums)), tuple(sorted(names))


# every jit function alive, for clear_caches
_LIVE_JITS: "weakref.WeakSet[JittedFunction]" = weakref.WeakSet()


def clear_caches() -> None:
    """Forget every jit function's compiled programs (each compiles again on its next
    call) and the staged custom_jvp/custom_vjp functions."""
    from jaxlab.core.custom_derivatives import clear_staged
    for fun in list(_LIVE_JITS):
        fun.cache.clear()
    clear_staged()


class JittedFunction:
    """A function compiled per input signature (pytree structure, shapes, dtypes,
    static values, device) into a kernel program; later calls replay it."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int],
                 static_argnames: Sequence[str]) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums, self.static_argnames = _infer_statics(
            fun, tuple(static_argnums), tuple(static_argnames))
        self.cache: dict[Any, Any] = {}
        _LIVE_JITS.add(self)

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, dict, tuple]:
        n = len(args)
        statics = tuple((i, _hashable_static(args[i], f"#{i}"))
                        for i in sorted(i % n for i in self.static_argnums if -n <= i < n))
        static_idx = {i for i, _ in statics}
        static_kw = tuple(sorted((k, _hashable_static(v, repr(k))) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_args = [a for i, a in enumerate(args) if i not in static_idx]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return dyn_args, dyn_kwargs, (statics, static_kw)

    def _rebuild(self, dyn_args: Sequence, dyn_kwargs: dict, statics: tuple) -> tuple:
        positions, static_kw = statics
        args = list(dyn_args)
        for i, v in positions:
            args.insert(i, v)
        return tuple(args), {**dyn_kwargs, **dict(static_kw)}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if state.recorder.get() is not None or config.read("jax_disable_jit"):
            # called while another program is lowered (from a lowering that runs user code,
            # such as custom_jvp's): its operations join that program; or jit is off
            # (jaxlab.disable_jit): op by op
            return self.fun(*args, **kwargs)
        if not kwargs and not self.static_argnums:
            found = _call_signature(args)
            hit = self.cache.get(found[0]) if found is not None else None
            if hit is not None:   # the common warm call: arrays and scalars, nothing static
                program, out_tree = hit
                leaves = found[1]
                outs = program([a if type(a) is Array else _as_array(a) for a in leaves]
                               if found[0][0] else leaves)
                return outs[0] if out_tree is LEAF else tree_unflatten(out_tree, outs)
        return self._call_slow(args, kwargs)

    def _call_slow(self, args: tuple, kwargs: dict) -> Any:
        from jaxlab.core.trace import Tracer
        flat = tree_flatten((args, kwargs))
        if any(isinstance(x, Tracer) for x in flat[0]):
            return self.fun(*args, **kwargs)   # inside another transformation: inline
        # nothing static: the arguments flattened above are the dynamic ones (a pytree
        # of arrays, a training step's parameters, is flattened once per call)
        program, out_tree, leaves = self._entry(
            args, kwargs, None if self.static_argnums or self.static_argnames else flat)
        return tree_unflatten(out_tree, program(leaves))

    def _entry(self, args: tuple, kwargs: dict, flat: Optional[tuple] = None) \
            -> tuple[Any, PyTreeDef, list]:
        """The compiled program for these arguments (compiled now if new); `flat`:
        (leaves, treedef) of (args, kwargs) where none is static."""
        from jaxlab.core.jit import compile_program
        from jaxlab.engine.devices import current_device
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = flat if flat is not None else \
            tree_flatten((tuple(dyn_args), dyn_kwargs))
        # Python scalars go wherever the arrays are
        devices = {x.device for x in leaves if isinstance(x, ArrayBase)}
        leaves = [_as_array(x) for x in leaves]
        device = devices.pop() if len(devices) == 1 else current_device()
        key = (in_tree, tuple((x.shape, x.jdtype, x.weak_type) for x in leaves), statics,
               device)
        entry = self.cache.get(key)
        if entry is None:
            entry = self._compile(in_tree, leaves, statics, device, compile_program)
            self.cache[key] = entry
            found = _call_signature(args) if not kwargs and not self.static_argnums else None
            if found is not None and \
                    all(a.device is device for a in found[1] if type(a) is Array):
                self.cache[found[0]] = entry
        program, out_tree = entry
        return program, out_tree, leaves

    def _debug_info(self, in_tree: PyTreeDef, leaves: list, statics: tuple) -> DebugInfo:
        """`jit` of this function, its arguments named as the signature names them."""
        dyn_args, dyn_kwargs = tree_unflatten(in_tree, leaves)
        static_positions = {i for i, _ in statics[0]}
        positions = [i for i in range(len(dyn_args) + len(static_positions))
                     if i not in static_positions]
        names = _positional_names(self.fun)
        labels = [names[i] if i < len(names) else f"args[{i}]" for i in positions]
        flat = [n for label, a in zip(labels, dyn_args) for n in _leaf_names(label, a)]
        flat += [n for k in sorted(dyn_kwargs) for n in _leaf_names(k, dyn_kwargs[k])]
        code = getattr(self.fun, "__code__", None)
        where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
        return DebugInfo("jit", f"{getattr(self.fun, '__qualname__', repr(self.fun))}{where}",
                         tuple(flat))

    def _compile(self, in_tree, leaves, statics, device, compile_program):
        def flat_fun(*flat: Any) -> list:
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, flat)
            a, kw = self._rebuild(dyn_args, dyn_kwargs, statics)
            out_flat, tree = tree_flatten(self.fun(*a, **kw))
            out_tree.append(tree)
            return [_as_array(x) for x in out_flat]
        out_tree: list = []
        from jaxlab.engine.devices import default_device
        with default_device(device):
            closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves],
                                    self._debug_info(in_tree, leaves, statics))
            program = compile_program(closed, device)
        return program, out_tree[0]

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """Trace and compile for these arguments without running: the Program."""
        return self._entry(args, kwargs)[0]


def _positional_names(fun: Callable) -> list[str]:
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):   # a builtin or C function: no names to give
        return []
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _leaf_names(label: str, arg: Any) -> list[str]:
    """`x` for an array argument, `x[0]`, `x[1]`... for the leaves of a pytree one."""
    leaves = tree_flatten(arg)[0]
    if len(leaves) == 1 and leaves[0] is arg:
        return [label]
    return [f"{label}[{i}]" for i in range(len(leaves))]


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Any:
    """Compile fun into a fused kernel program, retraced only when the shapes,
    dtypes, pytree structure or static arguments change."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    return JittedFunction(fun, _argnums_tuple(static_argnums), names)
