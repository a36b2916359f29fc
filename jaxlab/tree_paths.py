"""Key paths: where each leaf of a pytree sits (jax.tree_util's *_with_path functions).

A path is a tuple of key entries, one per node from the root: SequenceKey for tuple
and list items, DictKey for dict values, GetAttrKey for namedtuple and dataclass
fields, FlattenedIndexKey for the children of a type registered without keys.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Iterable, Sequence, TypeVar, Union

from jaxlab import tree_util
from jaxlab.tree_util import PyTreeDef, register_pytree_node


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple[KeyEntry, ...]
# what a key's `simple` form shows (keystr(..., simple=True))
_SIMPLE = {SequenceKey: lambda k: str(k.idx), DictKey: lambda k: str(k.key),
           GetAttrKey: lambda k: k.name, FlattenedIndexKey: lambda k: str(k.key)}

# type -> flatten_with_keys: x -> ([(key, child)...], aux), for types registered with keys
_KEYED: dict[type, Callable[[Any], tuple[Iterable, Hashable]]] = {}


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """The path as text: `['a'][0].x`; with simple=True the bare keys, joined by
    `separator` (`a/0/x` with separator='/')."""
    if simple:
        return separator.join(_SIMPLE[type(k)](k) if type(k) in _SIMPLE else str(k)
                              for k in keys)
    return separator.join(str(k) for k in keys)


def flatten_one_level_with_keys(tree: Any) -> tuple[list[tuple[Any, Any]], Hashable]:
    """([(key, child)...], aux data) of the tree's root node; a leaf raises ValueError."""
    keyed = _KEYED.get(type(tree))
    if keyed is not None:
        pairs, aux = keyed(tree)
        return list(pairs), aux
    children, aux = tree_util.flatten_one_level(tree)
    return list(zip(_default_keys(tree, len(children)), children)), aux


def _default_keys(node: Any, n: int) -> list[Any]:
    if isinstance(node, dict):
        return [DictKey(k) for k in sorted(node)]
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return [GetAttrKey(f) for f in node._fields]
    if isinstance(node, (tuple, list)):
        return [SequenceKey(i) for i in range(n)]
    return [FlattenedIndexKey(i) for i in range(n)]


LeafTest = Union[Callable[[Any], bool], Callable[[KeyPath, Any], bool], None]


def tree_flatten_with_path(tree: Any, is_leaf: LeafTest = None,
                           is_leaf_takes_path: bool = False) \
        -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """([(path, leaf)...], treedef): tree_flatten's leaves, each with its path."""
    def leaf_test(path: tuple, x: Any) -> bool:
        if is_leaf is None:
            return False
        return is_leaf(path, x) if is_leaf_takes_path else is_leaf(x)

    pairs: list = []

    def walk(path: tuple, x: Any) -> PyTreeDef:
        if leaf_test(path, x) or tree_util._node_kind(x) is None:
            pairs.append((path, x))
            return tree_util.LEAF
        keyed, aux = flatten_one_level_with_keys(x)
        return PyTreeDef(type(x), aux, tuple(walk(path + (key,), child)
                                             for key, child in keyed))
    treedef = walk((), tree)
    return pairs, treedef


def tree_leaves_with_path(tree: Any, is_leaf: LeafTest = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: LeafTest = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """tree_map where f also gets each leaf's path first: f(path, x, *xs)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(path, x, *xs) for (path, x), *xs in zip(pairs, *others)])


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """A node type whose flatten_with_keys(x) gives ([(key, child)...], aux)."""
    def plain(x: Any) -> tuple[list, Hashable]:
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func or plain, unflatten_func)
    _KEYED[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """A class decorator: `cls.tree_flatten_with_keys(self)`, `cls.tree_unflatten(aux,
    children)` and optionally `cls.tree_flatten(self)`."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              getattr(cls, "tree_flatten", None) and
                              (lambda x: x.tree_flatten()))
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """A dataclass as a node: data fields are children, meta fields static structure.
    Without the lists, a field is meta when its metadata says static=True."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            f"specified when either is specified. Got data_fields="
                            f"{data_fields} meta_fields={meta_fields}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got nodetype={nodetype!r}")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x: Any) -> tuple[list, tuple]:
        return ([(GetAttrKey(n), getattr(x, n)) for n in data],
                tuple(getattr(x, n) for n in meta))

    def unflatten(aux: tuple, children: Iterable) -> Any:
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))
    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


def static(**kwargs: Any) -> Any:
    """dataclasses.field(**kwargs) marked static=True, for register_dataclass."""
    return dataclasses.field(metadata={**kwargs.pop("metadata", {}), "static": True}, **kwargs)
