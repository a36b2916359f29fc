"""ShapeTracker: chains of movement ops index exactly like NumPy does them."""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from jaxlab.ir.alu import AluExp
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.printer import render
from jaxlab.ir.shape import ShapeTracker

MAX_SIZE = 3000
Move = tuple[str, tuple]   # (ShapeTracker method, its argument; window's four arguments)


# --- the movement ops, on NumPy --------------------------------------------------

def numpy_move(x: np.ndarray, method: str, arg: tuple) -> np.ndarray:
    if method == "reshape":
        return x.reshape(arg)
    if method == "permute":
        return x.transpose(arg)
    if method == "expand":
        return np.broadcast_to(x, arg)
    if method == "pad":
        return np.pad(x, arg)
    if method == "shrink":
        return x[tuple(slice(lo, hi) for lo, hi in arg)]
    if method == "flip":
        return np.flip(x, arg)
    if method == "step":
        return x[tuple(slice(None, None, k) for k in arg)]
    if method == "window":   # axis a becomes (window position, offset in the window)
        for a, k, s, d in sorted(zip(*arg), reverse=True):
            positions = (x.shape[a] - (k - 1) * d - 1) // s + 1
            x = np.take(x, np.arange(positions)[:, None] * s + np.arange(k) * d, axis=a)
        return x
    raise AssertionError(method)


def tracker_move(tracker: ShapeTracker, method: str, arg: tuple) -> ShapeTracker:
    fn = getattr(tracker, method)
    return fn(*arg) if method == "window" else fn(arg)


def apply(shape: tuple[int, ...], chain: list[Move]) -> tuple[np.ndarray, ShapeTracker]:
    """The chain on NumPy (from distinct non-zero values) and on a contiguous tracker."""
    x = np.arange(1, math.prod(shape) + 1).reshape(shape)
    tracker = ShapeTracker.contiguous(shape)
    for method, arg in chain:
        x, tracker = numpy_move(x, method, arg), tracker_move(tracker, method, arg)
    return x, tracker


# --- strategies: one random move valid for a shape -------------------------------

def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshapes(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Any shape of the same size: its prime factors grouped, with some 1s put in."""
    factors = draw(st.permutations(_factors(math.prod(shape))))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(factors) - 1)), max_size=3)))
    dims = [math.prod(factors[a:b]) for a, b in zip([0] + cuts, cuts + [len(factors)])]
    dims = [d for d in dims if d > 1]
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


def _bounds(n: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.integers(0, n - 1).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo + 1, n)))


@st.composite
def windows(draw: st.DrawFn, shape: tuple[int, ...]) -> Move:
    """Windows that fit: (size - 1) * dilation + 1 <= the axis length."""
    axes = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    dilation = [draw(st.integers(1, 2)) for _ in axes]
    sizes = [draw(st.integers(1, (shape[a] - 1) // d + 1)) for a, d in zip(axes, dilation)]
    strides = [draw(st.integers(1, 2)) for _ in axes]
    return "window", (tuple(axes), tuple(sizes), tuple(strides), tuple(dilation))


@functools.cache   # building strategies is slow; shapes repeat
def moves(shape: tuple[int, ...]) -> st.SearchStrategy[Move]:
    nd = len(shape)
    ones = [d for d, n in enumerate(shape) if n == 1]
    reshape = reshapes(shape).map(lambda s: ("reshape", s))
    if nd == 0:
        return reshape
    others = [
        st.permutations(range(nd)).map(lambda p: ("permute", tuple(p))),
        st.tuples(*(st.tuples(st.integers(0, 2), st.integers(0, 2)) for _ in shape))
        .map(lambda p: ("pad", p)),
        st.tuples(*(_bounds(n) for n in shape)).map(lambda b: ("shrink", b)),
        st.sets(st.integers(0, nd - 1)).map(lambda a: ("flip", tuple(sorted(a)))),
        st.tuples(*(st.integers(1, 3) for _ in shape)).map(lambda k: ("step", k)),
        windows(shape),
    ]
    if ones:
        others.append(st.tuples(*(st.integers(1, 3) if d in ones else st.just(n)
                                  for d, n in enumerate(shape))).map(lambda s: ("expand", s)))
    # reshapes half the time: after the other moves they often need a second view
    return st.one_of(reshape, st.one_of(*others))


@st.composite
def chains(draw: st.DrawFn) -> tuple[tuple[int, ...], list[Move]]:
    start = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    tracker, chain = ShapeTracker.contiguous(start), []
    for _ in range(draw(st.integers(1, 8))):
        method, arg = draw(moves(tracker.shape))
        try:
            moved = tracker_move(tracker, method, arg)
        except ValueError:   # window() refuses padded axes
            continue
        if moved.size <= MAX_SIZE:
            chain.append((method, arg))
            tracker = moved
    return start, chain


# --- evaluating a tracker ------------------------------------------------------

def gather(st_: ShapeTracker, base: np.ndarray, split: int,
           transform: Callable[[AluExp], AluExp]) -> np.ndarray:
    """Read `base` through the tracker, 0 where invalid, indexing as a kernel does:
    a flat gidx over the first `split` dims and a flat ridx over the rest."""
    shape = st_.shape
    outer, inner = math.prod(shape[:split]), math.prod(shape[split:])
    gidx, ridx = AluExp.special("gidx", outer), AluExp.special("ridx", inner)
    index, valid = (transform(e) for e in st_.to_index([(gidx, split), (ridx, len(shape) - split)]))
    env = {"gidx": np.arange(outer)[:, None], "ridx": np.arange(inner)[None, :]}
    index = np.broadcast_to(evaluate(index, env), (outer, inner))
    valid = np.broadcast_to(evaluate(valid, env), (outer, inner))
    assert ((0 <= index) & (index < base.size) | ~valid).all(), "valid index out of bounds"
    return np.where(valid, base.reshape(-1)[np.where(valid, index, 0)], 0).reshape(shape)


@settings(max_examples=250, deadline=None)
@given(case=chains(), data=st.data())
def test_movement_chain_matches_numpy(case: tuple, data: st.DataObject) -> None:
    start, chain = case
    base = np.arange(1, math.prod(start) + 1)   # 0 only where invalid
    expected, tracker = apply(start, chain)
    assert tracker.shape == expected.shape
    split = data.draw(st.integers(0, len(expected.shape)), label="split")
    for transform in (lambda e: e, lambda e: e.simplify()):
        np.testing.assert_array_equal(gather(tracker, base, split, transform), expected,
                                      err_msg=f"{chain}\n{tracker}")


# --- merging views ---------------------------------------------------------------

VIEW_COUNTS = {
    "reshape-contiguous": ((2, 3, 4), [("reshape", (6, 4)), ("reshape", (24,)),
                                       ("reshape", (4, 3, 2))], 1),
    "transpose-reshape-transpose-back": ((4, 6), [("permute", (1, 0)), ("reshape", (3, 2, 4)),
                                                  ("permute", (2, 0, 1))], 1),
    "split-a-strided-dim": ((4, 6), [("permute", (1, 0)), ("reshape", (2, 3, 2, 2))], 1),
    "merge-broadcast-dims": ((1, 3), [("expand", (4, 3)), ("reshape", (12,))], 2),
    "expand-add-ones": ((1, 3), [("expand", (4, 3)), ("reshape", (4, 1, 3, 1))], 1),
    "transposed-flatten": ((2, 3), [("permute", (1, 0)), ("reshape", (6,))], 2),
    "flatten-and-back": ((2, 3), [("permute", (1, 0)), ("reshape", (6,)),
                                  ("reshape", (3, 2))], 1),
    "padded-flatten": ((2, 3), [("pad", ((1, 0), (0, 0))), ("reshape", (9,))], 2),
    "padded-split-of-unpadded-dim": ((2, 6), [("pad", ((1, 1), (0, 0))),
                                              ("reshape", (4, 2, 3))], 1),
    "two-impossible-reshapes": ((2, 3, 4), [("permute", (2, 1, 0)), ("reshape", (6, 4)),
                                            ("permute", (1, 0)), ("reshape", (2, 12))], 3),
    "three-views-widest-in-the-middle": ((6, 4), [("permute", (1, 0)), ("reshape", (24,)),
                                                  ("reshape", (2, 3, 4)), ("permute", (2, 1, 0)),
                                                  ("reshape", (24,))], 3),
}


@pytest.mark.parametrize("name", list(VIEW_COUNTS))
def test_view_count(name: str) -> None:
    shape, chain, n_views = VIEW_COUNTS[name]
    expected, tracker = apply(shape, chain)
    assert len(tracker.views) == n_views, tracker
    base = np.arange(1, math.prod(shape) + 1)
    np.testing.assert_array_equal(gather(tracker, base, min(1, len(tracker.shape)), lambda e: e),
                                  expected)


def test_merged_views_index_without_division() -> None:
    """A transpose and its inverse around a reshape leave a plain contiguous index."""
    _, tracker = apply(*VIEW_COUNTS["transpose-reshape-transpose-back"][:2])
    assert tracker.is_contiguous
    gidx = AluExp.special("gidx", tracker.size)
    index, valid = (e.simplify() for e in tracker.to_index([(gidx, len(tracker.shape))]))
    assert index is gidx and valid.is_const and valid.arg, render(index)


def test_reshape_to_a_wrong_size_names_both_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        ShapeTracker.contiguous((2, 3)).reshape((4, 2))
