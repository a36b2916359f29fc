"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered types."""
from __future__ import annotations

import functools
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


# --- JAX's further pytree helpers -------------------------------------------------------

def register_pytree_node_class(cls: type) -> type:
    """A class decorator: `cls.tree_flatten(self)` and `cls.tree_unflatten(aux, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_static(cls: type) -> type:
    """A class decorator: its instances are nodes with no children, kept whole in the
    tree's structure (so they must be hashable)."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def is_tree_node(typ: type) -> bool:
    """Whether instances of `typ` are pytree nodes (not leaves)."""
    return typ in _REGISTRY or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item of `iterable` is a leaf."""
    return all(tree_structure(x, is_leaf).node_type is None for x in iterable)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return list(treedef.children)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the tree is one node: a leaf, or a node without children (None, ())."""
    return not treedef.children


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose items have these structures."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def flatten_one_level(tree: Any) -> tuple[list, Hashable]:
    """(children, aux data) of the tree's root node; a leaf raises ValueError."""
    kind = _node_kind(tree)
    if kind is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = kind[0](tree)
    return list(children), aux


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`prefix_tree` with each leaf repeated over the leaves of the matching subtree of
    `full_tree`."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = treedef_flatten_up_to(treedef, full_tree)
    return tree_unflatten(treedef, [tree_map(lambda _, v=leaf: v, sub, is_leaf=is_leaf)
                                    for leaf, sub in zip(leaves, subtrees)])


_NO_IDENTITY = object()


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _NO_IDENTITY,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The leaves combined pairwise in a balanced tree (operation must be associative)."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _halves(operation, leaves)


def _halves(operation: Callable[[Any, Any], Any], items: list) -> Any:
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return operation(_halves(operation, items[:mid]), _halves(operation, items[mid:]))


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are its leaves, the function
    its static structure (so a Partial can be passed to and returned from jit)."""

    def __new__(cls, func: Callable, *args: Any, **kw: Any) -> "Partial":
        # a Partial of a Partial keeps the inner one as its function (functools.partial
        # would merge their arguments)
        self = super().__new__(cls, _Opaque(func) if isinstance(func, functools.partial)
                               else func, *args, **kw)
        return self


class _Opaque:
    """A callable that hides a partial from functools.partial's merging."""

    def __init__(self, func: Callable) -> None:
        self.func = func

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.func(*args, **kw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Opaque) and other.func is self.func

    def __hash__(self) -> int:
        return id(self.func)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))

from jaxlab.tree_paths import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry,  # noqa: E402,F401
                               KeyPath, SequenceKey, flatten_one_level_with_keys, keystr,
                               register_dataclass, register_pytree_with_keys,
                               register_pytree_with_keys_class, tree_flatten_with_path,
                               tree_leaves_with_path, tree_map_with_path)
