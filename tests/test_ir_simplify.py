"""The simplifier: random expression trees keep their values; the index folds hold."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.printer import render
from jaxlab.ir.simplify import simplify

I32, U32, F32, BOOL = DType.int32, DType.uint32, DType.float32, DType.bool
SPECIALS = (("i", 16), ("j", 6), ("k", 3))   # name, size: one axis each
FULL_SHAPE = tuple(n for _, n in SPECIALS)


def special_env(specials: tuple[tuple[str, int], ...] = SPECIALS) -> dict[str, np.ndarray]:
    """Each special index as np.arange on its own axis, so results cover every combination."""
    nd = len(specials)
    return {name: np.arange(n, dtype=np.int32).reshape([n if d == a else 1 for d in range(nd)])
            for a, (name, n) in enumerate(specials)}


def values(e: AluExp) -> np.ndarray:
    return np.broadcast_to(evaluate(e, special_env()), FULL_SHAPE)


# --- strategies: typed trees, one strategy per (dtype, depth), built once ------

_INT_CONSTS = st.one_of(st.integers(-9, 40),
                        st.sampled_from([2**31 - 1, -2**31, 1 << 16, -(1 << 20)]))
# 2**32 - 1 is divisible by 3, 5 and 17: uint32 sums that wrap meet index folds
_U32_CONSTS = st.one_of(st.integers(0, 40), st.sampled_from([2**32 - 1, 2**32 - 16, 1 << 31]))
_FLOAT_CONSTS = st.one_of(st.floats(-8, 8, width=32),
                          st.sampled_from([0.0, -0.0, 0.5, math.inf, -math.inf, math.nan]))
_SMALL_POSITIVE = st.integers(1, 20)


def _leaves(dtype: DType) -> st.SearchStrategy[AluExp]:
    consts = {I32: _INT_CONSTS, U32: _U32_CONSTS, F32: _FLOAT_CONSTS, BOOL: st.booleans()}
    leaf = consts[dtype].map(lambda v: AluExp.const(v, dtype))
    if dtype.is_int:
        indices = [AluExp.special(n, s).cast(dtype) for n, s in SPECIALS]
        return st.one_of(st.sampled_from(indices), leaf)
    return leaf


def _binary(ops: tuple[AluOp, ...], a: st.SearchStrategy, b: st.SearchStrategy) \
        -> st.SearchStrategy[AluExp]:
    return st.builds(lambda op, x, y: x.binary(op, y), st.sampled_from(ops), a, b)


_INT_OPS = (AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Idiv, AluOp.Mod, AluOp.Min, AluOp.Max,
            AluOp.And, AluOp.Or)
_INDEX_OPS = (AluOp.Mul, AluOp.Idiv, AluOp.Mod)   # by small positive constants
_FLOAT_OPS = (AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Div, AluOp.Min, AluOp.Max)
_CAST_FROM = {I32: (U32, F32, BOOL), U32: (I32,), F32: (I32, BOOL), BOOL: (I32, F32)}


@functools.cache
def exps(dtype: DType, depth: int = 4) -> st.SearchStrategy[AluExp]:
    """Expression trees of `dtype` at most `depth` operations deep."""
    if depth == 0:
        return _leaves(dtype)
    sub = functools.partial(exps, depth=depth - 1)
    same = sub(dtype)
    options = [_leaves(dtype),
               st.builds(lambda c, a, b: c.where(a, b), sub(BOOL), same, same),
               st.one_of(*(sub(src).map(lambda x: x.cast(dtype)) for src in _CAST_FROM[dtype]))]
    if dtype.is_int:
        small = _SMALL_POSITIVE.map(lambda c: AluExp.const(c, dtype))
        options += [_binary(_INT_OPS, same, same), _binary(_INDEX_OPS, same, small)]
    elif dtype is F32:
        options += [_binary(_FLOAT_OPS, same, same)]
    else:
        compare = (AluOp.Cmplt, AluOp.Cmpne)
        options += [_binary(compare, sub(I32), sub(I32)), _binary(compare, sub(F32), sub(F32)),
                    _binary((AluOp.And, AluOp.Or), same, same)]
    return st.one_of(*options)


@functools.cache
def index_exps(dtype: DType, depth: int = 4) -> st.SearchStrategy[AluExp]:
    """What lowering builds: scaled sums of indices, divided and wrapped by constants."""
    if depth == 0:
        return _leaves(dtype)
    sub = index_exps(dtype, depth - 1)
    small = _SMALL_POSITIVE.map(lambda c: AluExp.const(c, dtype))
    return st.one_of(_leaves(dtype), _binary((AluOp.Add,), sub, sub),
                     _binary(_INDEX_OPS, sub, small),
                     _binary((AluOp.Min, AluOp.Max), sub, _leaves(dtype)))


def assert_same_values(e: AluExp, s: AluExp) -> None:
    assert s.dtype is e.dtype
    expected, actual = values(e), values(s)
    np.testing.assert_array_equal(actual, expected,
                                  err_msg=f"\noriginal:\n{render(e)}\nsimplified:\n{render(s)}")


STRATEGIES = {"i32": exps(I32), "u32": exps(U32), "f32": exps(F32), "bool": exps(BOOL),
              "index-i32": index_exps(I32), "index-u32": index_exps(U32)}


@pytest.mark.parametrize("kind", list(STRATEGIES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_simplify_keeps_values(kind: str, data: st.DataObject) -> None:
    e = data.draw(STRATEGIES[kind])
    assert_same_values(e, simplify(e))


@settings(max_examples=300, deadline=None)
@given(e=exps(I32, depth=5))
def test_simplify_is_idempotent(e: AluExp) -> None:
    s = simplify(e)
    assert simplify(s) is s


# --- the folds index arithmetic relies on ------------------------------------

def sp(name: str, n: int) -> AluExp:
    return AluExp.special(name, n)


def _unravel_ravel(flat: AluExp, shape: tuple[int, ...]) -> AluExp:
    """Split a flat index into row-major dims, then compute the flat index again."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    dims = [(flat // s) % n for n, s in zip(shape, strides)]
    return functools.reduce(lambda acc, t: acc + t,
                            [i * s for i, s in zip(dims, strides)])


def _ravel_of_padded_view(flat: AluExp) -> AluExp:
    """A masked (3, 5) view keeps its dims apart: (g // 5) * 5 + g % 5 plus an offset."""
    from jaxlab.ir.shape import ShapeTracker
    st_ = ShapeTracker.contiguous((2, 5)).pad(((0, 1), (0, 0)))
    return st_.to_index([(flat, 2)])[0]


G16, G30, G, R = sp("gidx", 16), sp("gidx", 30), sp("g", 5), sp("r", 8)
FOLDS = {
    "div-then-mod-in-range": ((G16 // 4) % 4, G16 // 4),
    "mod-below-divisor": (R % 8, R),
    "div-of-scaled-sum": ((G * 8 + R) // 8, G),
    "mod-of-scaled-sum": ((G * 8 + R) % 8, R),
    "nested-div": ((G16 // 2) // 4, G16 // 8),
    "nested-mod": ((G16 % 8) % 4, G16 % 4),
    "unravel-ravel-3d": (_unravel_ravel(G30, (2, 3, 5)), G30),
    "unravel-ravel-2d": (_unravel_ravel(G30, (6, 5)), G30),
    "ravel-of-padded-view": (_ravel_of_padded_view(sp("gidx", 15)), sp("gidx", 15)),
    "mul-by-one": (G * 1, G),
    "add-zero": (G + 0, G),
    "sub-self": (G - G, AluExp.const(0, I32)),
    "constants-gather": ((G + 3) + 4, G + 7),
    "min-by-range": (G.min(AluExp.const(9, I32)), G),
    "max-by-range": (G.max(R + 5), R + 5),
    "compare-by-range": (G.lt(5), AluExp.const(True, BOOL)),
}


@pytest.mark.parametrize("name", list(FOLDS))
def test_fold(name: str) -> None:
    e, expected = FOLDS[name]
    assert simplify(e) is expected, render(simplify(e))


def c(value, dtype: DType = I32) -> AluExp:
    return AluExp.const(value, dtype)


CONSTANT_FOLDS = [
    (c(6) * 7 + 1, c(43)),
    (c(-7) // 2, c(-3)),          # truncating division
    (c(-7) % 2, c(-1)),           # remainder takes the dividend's sign
    (c(5) // 0, c(-1)),
    (c(5) % 0, c(5)),
    (c(2**31 - 1) + 1, c(-2**31)),  # int32 wraps
    (c(1.5, F32) * 2.0, c(3.0, F32)),
    (c(3, I32).cast(F32), c(3.0, F32)),
    (c(math.nan, F32).cast(I32), c(0)),
    (c(3).lt(4), c(True, BOOL)),
    (c(math.nan, F32).ne(c(math.nan, F32)), c(True, BOOL)),
]


@pytest.mark.parametrize("e, expected", CONSTANT_FOLDS, ids=lambda v: render(v))
def test_constant_folding(e: AluExp, expected: AluExp) -> None:
    assert simplify(e) is expected


X = AluExp.variable("x", F32)
Y = AluExp.variable("y", F32)
WHERES = [
    (c(True, BOOL).where(X, Y), X),
    (c(False, BOOL).where(X, Y), Y),
    (G.lt(R).where(X, X), X),
    (G.lt(99).where(X, Y), X),    # a condition that is constant by range
    (G.lt(R).where(c(True, BOOL), False), G.lt(R)),
]


@pytest.mark.parametrize("e, expected", WHERES, ids=lambda v: render(v))
def test_where_folds(e: AluExp, expected: AluExp) -> None:
    assert simplify(e) is expected


# --- hash-consing --------------------------------------------------------------

def test_equal_expressions_are_the_same_object() -> None:
    def build() -> AluExp:
        return ((sp("gidx", 16) * 4 + sp("ridx", 4)) % 3).lt(2).where(X, 1.0)
    assert build() is build()


@pytest.mark.parametrize("a, b, same", [
    (0.0, -0.0, False),
    (math.nan, math.nan, True),
    (1.0, 1.0, True),
    (math.inf, -math.inf, False),
])
def test_float_constants_intern_by_value(a: float, b: float, same: bool) -> None:
    assert (c(a, F32) is c(b, F32)) is same


def test_constants_of_different_dtypes_differ() -> None:
    assert c(1, I32) is not c(1, U32) and c(1, I32) is not c(1.0, F32)
    assert c(1, BOOL) is c(True, BOOL)


# --- printer -------------------------------------------------------------------

def test_printer_names_shared_subexpressions() -> None:
    shared = (sp("gidx", 16) // 4).cast(F32) * X
    text = render(shared + shared * shared)
    first, *rest = text.splitlines()
    assert first.startswith("t0 = ") and "gidx // 4" in first
    assert "t0" in rest[-1] and "gidx" not in rest[-1]


@pytest.mark.parametrize("e, text", [
    (sp("gidx", 16) + -3, "gidx - 3"),
    (G.lt(R), "g < r"),
    (G.lt(R).ne(True), "!(g < r)"),
    (G.max(R), "max(g, r)"),
    (X.cast(I32), "cast<i32>(x)"),
    (AluExp.load(0, G * 2, F32), "in0[g * 2]"),
    (c(True, BOOL), "true"),
])
def test_printer_is_readable(e: AluExp, text: str) -> None:
    assert render(e) == text
    assert repr(e) == text


@given(e=exps(I32))
@settings(max_examples=100, deadline=None)
def test_printer_never_crashes(e: AluExp) -> None:
    assert render(e) and render(simplify(e))
