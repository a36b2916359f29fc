"""jaxlab.tree (jax.tree's short names) against jax.tree."""
from __future__ import annotations

import collections

import jax
import numpy as np

import jaxlab
from jaxlab import tree

Point = collections.namedtuple("Point", "x y")
SAMPLE = {"b": [1, (2, None)], "a": Point(3, {"c": 4})}


def test_leaves_structure_flatten_unflatten_match_jax():
    assert tree.leaves(SAMPLE) == jax.tree.leaves(SAMPLE)
    leaves, treedef = tree.flatten(SAMPLE)
    assert leaves == jax.tree.flatten(SAMPLE)[0]
    assert tree.unflatten(treedef, [10 * v for v in leaves]) == \
        jax.tree.map(lambda v: 10 * v, SAMPLE)
    assert treedef.unflatten(leaves) == SAMPLE
    assert tree.structure(SAMPLE) == treedef
    assert tree.structure(SAMPLE).num_leaves == jax.tree.structure(SAMPLE).num_leaves


def test_map_reduce_all_and_is_leaf():
    doubled = tree.map(lambda a, b: a + b, SAMPLE, SAMPLE)
    assert doubled == jax.tree.map(lambda a, b: a + b, SAMPLE, SAMPLE)
    assert tree.reduce(lambda a, b: a + b, SAMPLE) == jax.tree.reduce(lambda a, b: a + b, SAMPLE)
    assert tree.reduce(max, SAMPLE, 100) == 100
    assert tree.all([True, (1, 2)]) and not tree.all([True, {"x": 0}])
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2
    assert tree.leaves(SAMPLE, is_leaf=is_pair) == jax.tree.leaves(SAMPLE, is_leaf=is_pair)


def test_transpose_matches_jax():
    batch = [{"w": 1, "b": 2}, {"w": 3, "b": 4}, {"w": 5, "b": 6}]
    outer, inner = tree.structure([0, 0, 0]), tree.structure({"w": 0, "b": 0})
    expected = jax.tree.transpose(jax.tree.structure([0, 0, 0]),
                                  jax.tree.structure({"w": 0, "b": 0}), batch)
    assert tree.transpose(outer, inner, batch) == expected
    assert tree.transpose(outer, None, batch) == expected


def test_tree_map_over_arrays_and_block_until_ready(backend):
    params = {"w": jaxlab.numpy.ones((2, 3)), "b": [jaxlab.numpy.zeros(3)]}
    out = jaxlab.block_until_ready(tree.map(lambda p: p * 2 + 1, params))
    assert all(leaf.is_realized for leaf in tree.leaves(out))
    np.testing.assert_array_equal(np.asarray(out["w"]), np.full((2, 3), 3.0, np.float32))
