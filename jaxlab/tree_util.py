"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered types."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Iterator

# type -> (flatten: x -> (children, aux), unflatten: (aux, children) -> x)
_REGISTRY: dict[type, tuple[Callable, Callable]] = {
    tuple: (lambda t: (list(t), None), lambda _, c: tuple(c)),
    list: (lambda t: (list(t), None), lambda _, c: list(c)),
    dict: (lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
           lambda keys, c: dict(zip(keys, c))),
    type(None): (lambda _: ([], None), lambda _, c: None),
}


def register_pytree_node(nodetype: type, flatten_func: Callable,
                         unflatten_func: Callable) -> None:
    """flatten_func(x) -> (children, aux_data); unflatten_func(aux_data, children) -> x."""
    _REGISTRY[nodetype] = (flatten_func, unflatten_func)


def _node_kind(x: Any):
    kind = _REGISTRY.get(type(x))
    if kind is None and isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
        t = type(x)
        kind = (lambda n: (list(n), None), lambda _, c, t=t: t(*c))
    return kind


@dataclass(frozen=True)
class PyTreeDef:
    node_type: Any          # None for a leaf
    aux: Hashable
    children: tuple["PyTreeDef", ...]

    @property
    def num_leaves(self) -> int:
        return 1 if self.node_type is None else sum(c.num_leaves for c in self.children)

    def unflatten(self, leaves: Iterable) -> Any:
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        return treedef_flatten_up_to(self, tree)

    def __repr__(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        return f"PyTreeDef({self.node_type.__name__}[{inner}])"


LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) \
        -> tuple[list, PyTreeDef]:
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


def _flatten(x: Any, is_leaf: Callable[[Any], bool] | None, leaves: list) -> PyTreeDef:
    kind = None if is_leaf is not None and is_leaf(x) else _node_kind(x)
    if kind is None:
        leaves.append(x)
        return LEAF
    children, aux = kind[0](x)
    return PyTreeDef(type(x), aux, tuple(_flatten(c, is_leaf, leaves) for c in children))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    if treedef.node_type is None:   # a single leaf (a jit call's one output)
        return next(iter(leaves))
    return _build(treedef, iter(leaves))


def _build(td: PyTreeDef, leaves: Iterator) -> Any:
    # a module-level function: a nested recursive closure would form a reference
    # cycle that keeps every rebuilt output alive until the garbage collector runs
    if td.node_type is None:
        return next(leaves)
    unflatten = _REGISTRY[td.node_type][1] if td.node_type in _REGISTRY else \
        (lambda _, c, t=td.node_type: t(*c))
    return unflatten(td.aux, [_build(c, leaves) for c in td.children])


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef_flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(x, *xs) for x, *xs in zip(leaves, *others)])


def treedef_flatten_up_to(treedef: PyTreeDef, tree: Any) -> list:
    """The subtrees of `tree` at the leaf positions of `treedef` (structure must match)."""
    out: list = []

    def rec(td: PyTreeDef, x: Any) -> None:
        if td.node_type is None:
            out.append(x)
            return
        kind = _node_kind(x)
        if kind is None or type(x) is not td.node_type:
            raise ValueError(f"tree structure mismatch: expected {td}, got {type(x).__name__}")
        children, aux = kind[0](x)
        if aux != td.aux or len(children) != len(td.children):
            raise ValueError(f"tree structure mismatch: expected {td}")
        for c_td, c in zip(td.children, children):
            rec(c_td, c)
    rec(treedef, tree)
    return out


def tree_reduce(f: Callable, tree: Any, initializer: Any = None) -> Any:
    import functools
    leaves = tree_leaves(tree)
    return functools.reduce(f, leaves) if initializer is None else \
        functools.reduce(f, leaves, initializer)


def tree_all(tree: Any) -> bool:
    return all(tree_leaves(tree))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees turned into an inner tree of outer trees."""
    inners = treedef_flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(inners[0]) if inners else LEAF
    rows = [treedef_flatten_up_to(inner_treedef, t) for t in inners]
    columns = [tree_unflatten(outer_treedef, [row[j] for row in rows])
               for j in range(inner_treedef.num_leaves)]
    return tree_unflatten(inner_treedef, columns)
