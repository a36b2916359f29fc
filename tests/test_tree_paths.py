"""jaxlab.tree_util's key paths, registration helpers and structural helpers against
jax.tree_util (pure Python: no device runs)."""
from __future__ import annotations

import collections
import dataclasses

import jax
import jax.tree_util as jtu
import pytest

import jaxlab
import jaxlab.tree_util as tu

Point = collections.namedtuple("Point", "x y")
SAMPLE = {"b": [1, (2, None)], "a": Point(3, {"c": 4}), "d": ()}


def _paths(pairs, keystr):
    return [(keystr(p), x) for p, x in pairs]


@pytest.mark.parametrize("tree", [SAMPLE, [1, [2, 3]], 5, None, {"z": {"y": [7]}}])
def test_flatten_with_path_and_keystr_match_jax(tree):
    ours, theirs = tu.tree_flatten_with_path(tree), jtu.tree_flatten_with_path(tree)
    assert _paths(ours[0], tu.keystr) == _paths(theirs[0], jtu.keystr)
    assert ours[1].unflatten([x for _, x in ours[0]]) == tree
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in tu.tree_leaves_with_path(tree)] \
        == [jtu.keystr(p, simple=True, separator="/") for p, _ in jtu.tree_leaves_with_path(tree)]
    f = lambda p, x, y: (len(p), x + y)   # noqa: E731
    assert tu.tree_map_with_path(f, tree, tree) == jtu.tree_map_with_path(f, tree, tree)
    assert jaxlab.tree.map_with_path(f, tree, tree) == jax.tree.map_with_path(f, tree, tree)


def test_key_entries_match_jax():
    for ours, theirs in [(tu.SequenceKey(0), jtu.SequenceKey(0)), (tu.DictKey("a"), jtu.DictKey("a")),
                         (tu.GetAttrKey("x"), jtu.GetAttrKey("x")),
                         (tu.FlattenedIndexKey(3), jtu.FlattenedIndexKey(3))]:
        assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
        assert tu.keystr((ours,), simple=True) == jtu.keystr((theirs,), simple=True)


def test_is_leaf_with_and_without_path():
    pair = lambda x: isinstance(x, tuple) and len(x) == 2   # noqa: E731
    assert _paths(tu.tree_flatten_with_path(SAMPLE, pair)[0], tu.keystr) == \
        _paths(jtu.tree_flatten_with_path(SAMPLE, pair)[0], jtu.keystr)
    deep = lambda p, x: len(p) == 2   # noqa: E731
    ours = tu.tree_leaves_with_path(SAMPLE, deep, is_leaf_takes_path=True)
    theirs = jtu.tree_leaves_with_path(SAMPLE, deep, is_leaf_takes_path=True)
    assert _paths(ours, tu.keystr) == _paths(theirs, jtu.keystr)


def _register(api, name):
    """A class of each registration kind, registered with `api`'s tree_util."""
    @dataclasses.dataclass
    class Layer:
        w: int
        act: str = dataclasses.field(default="relu", metadata=dict(static=True))
    api.tree_util.register_dataclass(Layer)

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((api.tree_util.GetAttrKey("a"), self.a),
                    (api.tree_util.GetAttrKey("b"), self.b)), None

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def __eq__(self, other):
            return (self.a, self.b) == (other.a, other.b)
    api.tree_util.register_pytree_with_keys_class(Pair)

    class Box(Pair):
        pass
    api.tree_util.register_pytree_node_class(Box)

    class Tag:
        def __init__(self, name):
            self.name = name

        def __eq__(self, other):
            return self.name == other.name

        def __hash__(self):
            return hash(self.name)
    api.tree_util.register_static(Tag)
    return [Layer(5), Pair(1, [2]), Box(3, 4), [Tag(name), 6]]


def test_registration_helpers_match_jax():
    ours, theirs = _register(jaxlab, "t"), _register(jax, "t")
    assert _paths(tu.tree_flatten_with_path(ours)[0], tu.keystr) == \
        _paths(jtu.tree_flatten_with_path(theirs)[0], jtu.keystr)
    leaves, treedef = tu.tree_flatten(ours)
    assert treedef.unflatten(leaves) == ours and leaves == jtu.tree_leaves(theirs)
    assert treedef.unflatten([0] * len(leaves))[0].act == "relu"


def test_structural_helpers_match_jax():
    td, jtd = tu.tree_structure(SAMPLE), jtu.tree_structure(SAMPLE)
    assert [c.num_leaves for c in tu.treedef_children(td)] == \
        [c.num_leaves for c in jtu.treedef_children(jtd)]
    for x in (None, (), 1, [1]):
        assert tu.treedef_is_leaf(tu.tree_structure(x)) == jtu.treedef_is_leaf(jtu.tree_structure(x))
    both = tu.treedef_tuple([tu.tree_structure(1), td])
    assert both.unflatten(range(1 + td.num_leaves)) == \
        jtu.treedef_tuple([jtu.tree_structure(1), jtd]).unflatten(range(1 + td.num_leaves))
    assert tu.all_leaves([1, 2]) and not tu.all_leaves([1, [2]])
    assert tu.flatten_one_level({"b": 1, "a": (2, 3)}) == \
        tuple(map(list, jtu.flatten_one_level({"b": 1, "a": (2, 3)})))[:1] + (("a", "b"),)
    pairs, aux = tu.flatten_one_level_with_keys([7, 8])
    assert [(str(k), v) for k, v in pairs] == \
        [(str(k), v) for k, v in jtu.flatten_one_level_with_keys([7, 8])[0]]
    with pytest.raises(ValueError, match="can't tree-flatten"):
        tu.flatten_one_level(1)
    assert (tu.is_tree_node(list), tu.is_tree_node(int)) == (True, False)
    prefix, full = [1, {"a": 2}], [(3, 4), {"a": [5, 6]}]
    assert tu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full) == \
        jaxlab.tree.broadcast(prefix, full)
    pair = lambda a, b: (a, b)   # noqa: E731
    for n in (1, 2, 5):
        assert jaxlab.tree.reduce_associative(pair, list(range(n))) == \
            jax.tree.reduce_associative(pair, list(range(n)))
    assert tu.tree_reduce_associative(pair, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(pair, [])


def test_partial_is_a_pytree_through_jit():
    add = lambda a, b, c=0: a + b + c   # noqa: E731
    ours, theirs = tu.Partial(add, 1, c=3), jtu.Partial(add, 1, c=3)
    assert ours(2) == theirs(2) == 6
    assert tu.tree_leaves(ours) == jtu.tree_leaves(theirs)
    assert tu.Partial(ours, 5)() == jtu.Partial(theirs, 5)()
    doubled = tu.tree_map(lambda x: 2 * x, ours)
    assert isinstance(doubled, tu.Partial) and doubled(0) == 8
    run = jaxlab.jit(lambda f, x: f(x))
    assert float(run(tu.Partial(lambda s, x: s * x, jaxlab.numpy.float32(3.0)), 2.0)) == 6.0


def test_static_field_marks_dataclass_metadata():
    @dataclasses.dataclass
    class Op:
        x: int
        kind: str = jaxlab.tree.static(default="add")
    jaxlab.tree_util.register_dataclass(Op)
    assert jaxlab.tree.leaves(Op(1)) == [1]
    with pytest.raises(TypeError, match="both"):
        jaxlab.tree_util.register_dataclass(Op, data_fields=["x"])
