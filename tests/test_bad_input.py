"""A corpus of bad input drawn from the whole API, run through jaxlab on every device
and through JAX: each case raises the exception type JAX raises (or returns JAX's
value where JAX returns one), and the device works afterwards.

A case is a function of a library namespace `L` (jaxlab's or JAX's: L.np, L.lax,
L.random, L.nn, L.jit, L.grad, L.vmap, L.jvp, L.vjp), so one line states the input
for both. Its declared outcome is checked against JAX in the same test, so the
corpus cannot drift from what JAX does.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Union

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.test_errors import assert_engine_works

nan = np.nan


class Value:
    """The outcome of a case where JAX returns a value (compared leaf by leaf)."""


Outcome = Union[type, type[Value]]


@dataclass(frozen=True)
class Case:
    call: Callable[[SimpleNamespace], Any]
    expect: Outcome                 # the builtin exception class JAX's error derives from
    against_jax: bool = True        # False: JAX would allocate terabytes to answer


def _library(np_: Any, lax: Any, random: Any, nn: Any, top: Any) -> SimpleNamespace:
    return SimpleNamespace(np=np_, lax=lax, random=random, nn=nn, jit=top.jit, grad=top.grad,
                           vmap=top.vmap, jvp=top.jvp, vjp=top.vjp)


JAXLAB = _library(jnp, jaxlab.lax, jaxlab.random, jaxlab.nn, jaxlab)
JAX = _library(jjnp, jax.lax, jax.random, jax.nn, jax)


def arr(L: SimpleNamespace, shape: tuple = (2, 3), dtype: str = "float32") -> Any:
    """0, 1, 2, ... in `shape` (counting from 1 for floats, so logs stay finite)."""
    data = np.arange(math.prod(shape)).reshape(shape) + (dtype == "float32")
    return L.np.asarray(data.astype(dtype))


def mat(L: SimpleNamespace, rows: list) -> Any:
    return L.np.asarray(np.array(rows, np.float32))


def key(L: SimpleNamespace) -> Any:
    return L.random.PRNGKey(0)


# name: (call, expected outcome)
CASES: dict[str, Case] = {name: Case(*spec) for name, spec in {
    # --- elementwise, broadcasting, conversion ---
    "add-shapes": (lambda L: L.np.add(arr(L), arr(L, (4,))), ValueError),
    "multiply-3d": (lambda L: arr(L, (2, 3, 4)) * arr(L, (3, 2)), ValueError),
    "where-shapes": (lambda L: L.np.where(arr(L, (3,)) > 1, arr(L, (2,)), arr(L, (4,))),
                     ValueError),
    "maximum-shapes": (lambda L: L.np.maximum(arr(L, (2, 2)), arr(L, (3,))), ValueError),
    "arctan2-shapes": (lambda L: L.np.arctan2(arr(L, (5,)), arr(L, (2,))), TypeError),
    "logical-and-shapes": (lambda L: L.np.logical_and(arr(L, (2,)), arr(L, (3,))), TypeError),
    "clip-shapes": (lambda L: L.np.clip(arr(L), arr(L, (4,))), ValueError),
    "add-string": (lambda L: L.np.add(arr(L), "x"), TypeError),
    "add-none": (lambda L: L.np.add(arr(L), None), TypeError),
    "asarray-object": (lambda L: L.np.asarray([object()]), TypeError),
    "asarray-dict": (lambda L: L.np.asarray({"a": 1}), TypeError),
    "asarray-ragged": (lambda L: L.np.asarray([[1, 2], [3]]), ValueError),
    "bitwise-and-float": (lambda L: L.np.bitwise_and(arr(L), arr(L)), TypeError),
    "left-shift-float": (lambda L: L.np.left_shift(arr(L), 1), TypeError),
    "invert-float": (lambda L: L.np.invert(arr(L)), TypeError),
    "astype-string": (lambda L: arr(L).astype("not-a-dtype"), TypeError),
    "zeros-bad-dtype": (lambda L: L.np.zeros(3, dtype="not-a-dtype"), TypeError),
    "divide-by-zero": (lambda L: L.np.divide(arr(L), 0.0), Value),
    "int-floor-divide-by-zero": (lambda L: arr(L, (4,), "int32") // 0, Value),
    "int-mod-by-zero": (lambda L: L.np.mod(arr(L, (4,), "int32"), 0), Value),
    "sqrt-negative": (lambda L: L.np.sqrt(-arr(L)), Value),
    "log-zero": (lambda L: L.np.log(arr(L) - 1), Value),
    "float-to-int-nan": (lambda L: L.np.asarray([nan, np.inf, -np.inf]).astype("int32"),
                         Value),
    # --- reductions ---
    "sum-axis": (lambda L: L.np.sum(arr(L), axis=2), ValueError),
    "sum-negative-axis": (lambda L: L.np.sum(arr(L), axis=-3), ValueError),
    "sum-float-axis": (lambda L: L.np.sum(arr(L), axis=1.5), TypeError),
    "sum-repeated-axis": (lambda L: L.np.sum(arr(L), axis=(1, 1)), ValueError),
    "mean-axis": (lambda L: L.np.mean(arr(L), axis=4), IndexError),
    "max-empty": (lambda L: L.np.max(L.np.zeros(0)), ValueError),
    "argmax-empty": (lambda L: L.np.argmax(L.np.zeros(0)), ValueError),
    "argmax-axis": (lambda L: L.np.argmax(arr(L), axis=2), IndexError),
    "prod-axis": (lambda L: L.np.prod(arr(L), axis=(0, 3)), ValueError),
    "var-axis": (lambda L: L.np.var(arr(L), axis=5), IndexError),
    "std-axis": (lambda L: L.np.std(arr(L), axis=-5), IndexError),
    "cumsum-axis": (lambda L: L.np.cumsum(arr(L), axis=2), ValueError),
    "any-axis": (lambda L: L.np.any(arr(L), axis=3), ValueError),
    "min-empty-axis": (lambda L: L.np.min(L.np.zeros((0, 3)), axis=0), ValueError),
    "sum-empty": (lambda L: L.np.sum(L.np.zeros((0, 3)), axis=0), Value),
    "mean-empty": (lambda L: L.np.mean(L.np.zeros(0)), Value),
    "max-nan": (lambda L: L.np.max(L.np.asarray([1.0, nan, 3.0])), Value),
    "argmax-nan": (lambda L: L.np.argmax(L.np.asarray([1.0, nan, 3.0])), Value),
    # --- shapes ---
    "reshape-size": (lambda L: L.np.reshape(arr(L), (4, 2)), TypeError),
    "reshape-method-size": (lambda L: arr(L).reshape(5), TypeError),
    "reshape-two-unknowns": (lambda L: L.np.reshape(arr(L), (-1, -1)), TypeError),
    "reshape-unknown-not-dividing": (lambda L: L.np.reshape(arr(L), (-1, 4)), TypeError),
    "reshape-negative": (lambda L: L.np.reshape(arr(L), (-2, -3)), TypeError),
    "reshape-float": (lambda L: L.np.reshape(arr(L), (2.0, 3)), TypeError),
    "transpose-repeated": (lambda L: L.np.transpose(arr(L), (0, 0)), TypeError),
    "transpose-length": (lambda L: L.np.transpose(arr(L), (1,)), TypeError),
    "transpose-axis": (lambda L: L.np.transpose(arr(L), (0, 2)), ValueError),
    "swapaxes-axis": (lambda L: L.np.swapaxes(arr(L), 0, 2), IndexError),
    "moveaxis-axis": (lambda L: L.np.moveaxis(arr(L), 0, 3), ValueError),
    "expand-dims-axis": (lambda L: L.np.expand_dims(arr(L), 5), ValueError),
    "squeeze-not-one": (lambda L: L.np.squeeze(arr(L), 0), ValueError),
    "squeeze-axis": (lambda L: L.np.squeeze(arr(L, (1, 3)), 2), ValueError),
    "concatenate-rank": (lambda L: L.np.concatenate([arr(L), arr(L, (3,))]), TypeError),
    "concatenate-shapes": (lambda L: L.np.concatenate([arr(L), arr(L, (2, 4))]), TypeError),
    "concatenate-empty": (lambda L: L.np.concatenate([]), ValueError),
    "concatenate-axis": (lambda L: L.np.concatenate([arr(L), arr(L)], axis=2), ValueError),
    "stack-shapes": (lambda L: L.np.stack([arr(L), arr(L, (3, 2))]), ValueError),
    "stack-empty": (lambda L: L.np.stack([]), ValueError),
    "stack-axis": (lambda L: L.np.stack([arr(L), arr(L)], axis=4), ValueError),
    "split-uneven": (lambda L: L.np.split(arr(L, (5,)), 2), ValueError),
    "split-axis": (lambda L: L.np.split(arr(L), 2, axis=2), IndexError),
    "repeat-negative": (lambda L: L.np.repeat(arr(L), -1), TypeError),
    "pad-negative": (lambda L: L.np.pad(arr(L), -1), ValueError),
    "pad-pairs": (lambda L: L.np.pad(arr(L), ((1, 1), (1, 1), (1, 1))), ValueError),
    "pad-mode": (lambda L: L.np.pad(arr(L), 1, mode="no-such-mode"), NotImplementedError),
    "flip-axis": (lambda L: L.np.flip(arr(L), 2), ValueError),
    "roll-axis": (lambda L: L.np.roll(arr(L), 1, axis=3), ValueError),
    "broadcast-to": (lambda L: L.np.broadcast_to(arr(L), (3, 3)), ValueError),
    "broadcast-to-fewer": (lambda L: L.np.broadcast_to(arr(L), (3,)), ValueError),
    "broadcast-arrays": (lambda L: L.np.broadcast_arrays(arr(L), arr(L, (4,))), ValueError),
    "zeros-negative": (lambda L: L.np.zeros((2, -1)), TypeError),
    "ones-float-shape": (lambda L: L.np.ones(2.5), TypeError),
    "ones-string-shape": (lambda L: L.np.ones("3"), TypeError),
    "full-fill-shape": (lambda L: L.np.full((2,), arr(L, (3,))), ValueError),
    "linspace-negative": (lambda L: L.np.linspace(0, 1, -2), ValueError),
    "tril-1d": (lambda L: L.np.tril(arr(L, (3,))), ValueError),
    "atleast-and-empty": (lambda L: L.np.atleast_2d(L.np.zeros(0)), Value),
    # --- indexing ---
    "index-past-end": (lambda L: arr(L, (3,))[5], Value),
    "index-before-start": (lambda L: arr(L, (3,))[-4], Value),
    "index-second-axis": (lambda L: arr(L)[0, 3], Value),
    "too-many-indices": (lambda L: arr(L)[0, 0, 0], IndexError),
    "index-float": (lambda L: arr(L, (3,))[1.5], TypeError),
    "index-string": (lambda L: arr(L, (3,))["a"], TypeError),
    "index-float-array": (lambda L: arr(L, (3,))[L.np.ones(2)], TypeError),
    "two-ellipses": (lambda L: arr(L)[..., ...], IndexError),
    "slice-step-zero": (lambda L: arr(L, (3,))[::0], ValueError),
    "mask-shape": (lambda L: arr(L, (3,))[L.np.asarray([True, False])], IndexError),
    "gather-past-end": (lambda L: arr(L, (3,))[L.np.asarray([0, 5])], Value),
    "gather-before-start": (lambda L: arr(L, (3,))[L.np.asarray([-1, -10])], Value),
    "index-arrays-broadcast": (lambda L: arr(L, (3, 3))[L.np.asarray([0, 1]),
                                                        L.np.asarray([0, 1, 2])], ValueError),
    "index-array-and-int-past-end": (lambda L: arr(L, (4, 5))[L.np.asarray([0]), 7], Value),
    "at-set-int-and-array-past-end": (lambda L: arr(L, (4, 5)).at[L.np.asarray([1]), 7]
                                      .set(0.0), Value),
    "at-get-fill-past-end": (lambda L: arr(L, (3,)).at[5].get(mode="fill"), Value),
    "take-past-end": (lambda L: L.np.take(arr(L, (3,)), L.np.asarray([1, 7])), Value),
    "take-axis": (lambda L: L.np.take(arr(L), L.np.asarray([0]), axis=2), ValueError),
    "take-along-axis-rank": (lambda L: L.np.take_along_axis(
        arr(L), L.np.zeros(2, dtype="int32"), axis=1), ValueError),
    "at-set-past-end": (lambda L: arr(L, (3,)).at[5].set(9.0), Value),
    "at-add-past-end": (lambda L: arr(L, (3,)).at[L.np.asarray([0, 4])].add(1.0), Value),
    "jit-index-past-end": (lambda L: L.jit(lambda x, i: x[i])(arr(L, (3,)),
                                                              L.np.asarray(7)), Value),
    # --- products ---
    "matmul-contracting": (lambda L: L.np.matmul(arr(L), arr(L)), TypeError),
    "matmul-vector": (lambda L: arr(L) @ arr(L, (4,)), TypeError),
    "matmul-batch": (lambda L: L.np.matmul(arr(L, (2, 2, 3)), arr(L, (3, 3, 2))), ValueError),
    "matmul-scalar": (lambda L: L.np.matmul(arr(L), 2.0), ValueError),
    "dot-shapes": (lambda L: L.np.dot(arr(L, (3,)), arr(L, (4,))), TypeError),
    "tensordot-axes": (lambda L: L.np.tensordot(arr(L), arr(L), axes=([0], [1])), TypeError),
    "einsum-operands": (lambda L: L.np.einsum("ij,jk->ik", arr(L)), ValueError),
    "einsum-sizes": (lambda L: L.np.einsum("ij,jk->ik", arr(L), arr(L)), ValueError),
    "einsum-output": (lambda L: L.np.einsum("ij->k", arr(L)), ValueError),
    "inner-shapes": (lambda L: L.np.inner(arr(L, (3,)), arr(L, (2,))), TypeError),
    "vdot-sizes": (lambda L: L.np.vdot(arr(L, (3,)), arr(L, (2,))), TypeError),
    # --- linear algebra ---
    "inv-not-square": (lambda L: L.np.linalg.inv(arr(L)), ValueError),
    "inv-1d": (lambda L: L.np.linalg.inv(arr(L, (3,))), ValueError),
    "det-not-square": (lambda L: L.np.linalg.det(arr(L, (2, 3))), ValueError),
    "solve-shapes": (lambda L: L.np.linalg.solve(arr(L, (2, 2)), arr(L, (3,))), ValueError),
    "cholesky-not-square": (lambda L: L.np.linalg.cholesky(arr(L)), TypeError),
    "norm-ord": (lambda L: L.np.linalg.norm(arr(L, (3,)), ord="fro"), ValueError),
    "norm-axis": (lambda L: L.np.linalg.norm(arr(L), axis=3), ValueError),
    "solve-singular": (lambda L: L.np.linalg.solve(mat(L, [[1, 2], [2, 4]]), arr(L, (2,))),
                       Value),
    "inv-singular": (lambda L: L.np.linalg.inv(mat(L, [[1, 2], [2, 4]])), Value),
    "inv-zeros": (lambda L: L.np.linalg.inv(L.np.zeros((2, 2))), Value),
    "inv-nan": (lambda L: L.np.linalg.inv(mat(L, [[nan, 1], [1, 1]])), Value),
    "inv-int": (lambda L: L.np.linalg.inv(arr(L, (2, 2), "int32") + 1), Value),
    "solve-batch-singular": (lambda L: L.np.linalg.solve(
        L.np.stack([mat(L, [[2, 0], [0, 2]]), mat(L, [[1, 1], [1, 1]])]),
        L.np.ones((2, 2, 1))), Value),
    "det-singular": (lambda L: L.np.linalg.det(mat(L, [[1, 2, 3], [2, 4, 6], [0, 1, 1]])),
                     Value),
    "slogdet-singular": (lambda L: L.np.linalg.slogdet(mat(L, [[1, 2], [2, 4]])), Value),
    "cholesky-not-pd": (lambda L: L.np.linalg.cholesky(mat(L, [[1, 2], [2, 1]])), Value),
    "cholesky-not-pd-3": (lambda L: L.np.linalg.cholesky(
        mat(L, [[4, 1, 0], [1, -5, 1], [0, 1, 3]])), Value),
    "cholesky-nan": (lambda L: L.np.linalg.cholesky(mat(L, [[4, nan], [nan, 4]])), Value),
    "cholesky-nan-corner": (lambda L: L.np.linalg.cholesky(mat(L, [[4, 1], [1, nan]])),
                            Value),
    "cholesky-batch-one-bad": (lambda L: L.np.linalg.cholesky(
        L.np.stack([mat(L, [[4, 2], [2, 3]]), mat(L, [[1, 3], [3, 1]])])), Value),
    "triangular-solve-zero-diagonal": (lambda L: L.lax.linalg.triangular_solve(
        mat(L, [[0, 0], [1, 0]]), mat(L, [[1, 1]]), left_side=False, lower=True), Value),
    # --- sorting ---
    "sort-axis": (lambda L: L.np.sort(arr(L), axis=2), ValueError),
    "argsort-axis": (lambda L: L.np.argsort(arr(L), axis=-3), ValueError),
    "sort-nan": (lambda L: L.np.sort(L.np.asarray([3.0, nan, 1.0, -np.inf])), Value),
    # --- lax ---
    "lax-add-dtypes": (lambda L: L.lax.add(arr(L), arr(L, dtype="int32")), TypeError),
    "lax-add-shapes": (lambda L: L.lax.add(arr(L), arr(L, (3, 2))), TypeError),
    "lax-transpose-perm": (lambda L: L.lax.transpose(arr(L), (0, 0)), TypeError),
    "lax-broadcast-in-dim": (lambda L: L.lax.broadcast_in_dim(arr(L, (3,)), (2, 4), (1,)),
                             TypeError),
    "lax-slice-bounds": (lambda L: L.lax.slice(arr(L), (0, 0), (3, 3)), TypeError),
    "lax-pad-config": (lambda L: L.lax.pad(arr(L), 0.0, [(1, 1, 0)]), ValueError),
    "lax-convert-dtype": (lambda L: L.lax.convert_element_type(arr(L), "not-a-dtype"),
                          TypeError),
    "lax-dot-general": (lambda L: L.lax.dot_general(arr(L), arr(L), (((1,), (1,)), ((), ())))
                        .sum() + L.lax.dot_general(arr(L), arr(L), (((0,), (1,)), ((), ()))),
                        TypeError),
    "lax-reduce-axes": (lambda L: L.lax.reduce_sum(arr(L), (2,)), ValueError),
    "lax-select-pred": (lambda L: L.lax.select(arr(L), arr(L), arr(L)), TypeError),
    "lax-integer-pow-float": (lambda L: L.lax.integer_pow(arr(L), 1.5), TypeError),
    "lax-shift-float": (lambda L: L.lax.shift_left(arr(L), arr(L)), TypeError),
    "lax-squeeze": (lambda L: L.lax.squeeze(arr(L), (0,)), ValueError),
    "lax-concatenate-dim": (lambda L: L.lax.concatenate([arr(L), arr(L)], 2), TypeError),
    "lax-conv-features": (lambda L: L.lax.conv_general_dilated(
        arr(L, (1, 2, 5, 5)), arr(L, (3, 4, 2, 2)), (1, 1), "VALID"), ValueError),
    "lax-rem-int-zero": (lambda L: L.lax.rem(arr(L, (3,), "int32"),
                                             L.np.zeros(3, dtype="int32")), Value),
    # --- transformations ---
    "grad-not-scalar": (lambda L: L.grad(lambda x: x * 2)(arr(L, (3,))), TypeError),
    "grad-int-input": (lambda L: L.grad(lambda x: x.sum())(arr(L, (3,), "int32")), TypeError),
    "grad-argnums": (lambda L: L.grad(lambda x: x.sum(), argnums=1)(arr(L, (3,))), TypeError),
    "grad-tuple-output": (lambda L: L.grad(lambda x: (x.sum(), x.sum()))(arr(L, (3,))),
                          TypeError),
    "vmap-sizes": (lambda L: L.vmap(lambda a, b: a + b)(arr(L, (2,)), arr(L, (3,))),
                   ValueError),
    "vmap-in-axes-range": (lambda L: L.vmap(lambda a: a, in_axes=2)(arr(L)), ValueError),
    "vmap-in-axes-dict": (lambda L: L.vmap(lambda d: d["b"] * 2, in_axes=({"a": 0},))(
        {"b": arr(L, (3,))}), ValueError),
    "vmap-in-axes-length": (lambda L: L.vmap(lambda a: a, in_axes=(0, 0))(arr(L)),
                            ValueError),
    "vmap-out-axes": (lambda L: L.vmap(lambda a: a * 2, out_axes=3)(arr(L)), ValueError),
    "vmap-out-axes-negative": (lambda L: L.vmap(lambda a: a * 2, out_axes=-3)(arr(L)),
                               ValueError),
    "vmap-all-none": (lambda L: L.vmap(lambda a: a, in_axes=None)(arr(L)), ValueError),
    "vmap-scalar": (lambda L: L.vmap(lambda a: a)(L.np.asarray(1.0)), ValueError),
    "jit-bool": (lambda L: L.jit(lambda x: x if x > 0 else -x)(L.np.asarray(1.0)), TypeError),
    "jit-int": (lambda L: L.jit(lambda x: int(x))(L.np.asarray(1)), TypeError),
    "jit-float": (lambda L: L.jit(lambda x: float(x))(L.np.asarray(1.0)), TypeError),
    "jit-numpy": (lambda L: L.jit(lambda x: np.asarray(x))(arr(L)), TypeError),
    "jit-shape-from-argument": (lambda L: L.jit(lambda n: L.np.ones(n))(L.np.int32(3)),
                                TypeError),
    "jit-unhashable-static": (lambda L: L.jit(lambda x, s: x, static_argnums=1)(
        arr(L), [1, 2]), ValueError),
    "grad-bool": (lambda L: L.grad(lambda x: L.np.where(x > 0 if bool(x.sum()) else x, 1., 0.)
                                   .sum())(arr(L)), Value),
    "jvp-shapes": (lambda L: L.jvp(lambda x: x * 2, (arr(L, (3,)),), (arr(L, (2,)),)),
                   ValueError),
    "jvp-structure": (lambda L: L.jvp(lambda x, y: x * y, (arr(L, (3,)), arr(L, (3,))),
                                      (arr(L, (3,)),)), TypeError),
    "vjp-cotangent-shape": (lambda L: L.vjp(lambda x: x * 2, arr(L, (3,)))[1](arr(L, (2,))),
                            ValueError),
    # --- random ---
    "random-key-shape": (lambda L: L.random.normal(L.np.zeros(3, dtype="uint32"), (2,)),
                         TypeError),
    "random-shape-float": (lambda L: L.random.uniform(key(L), (2.5,)), TypeError),
    "random-split-key-shape": (lambda L: L.random.split(L.np.zeros(3, dtype="uint32")),
                               TypeError),
    "random-categorical-axis": (lambda L: L.random.categorical(key(L), arr(L), axis=3),
                                IndexError),
    "random-bernoulli-shape": (lambda L: L.random.bernoulli(key(L), L.np.full((3,), 0.5),
                                                            (2,)), ValueError),
    "random-randint-shape": (lambda L: L.random.randint(key(L), (-1,), 0, 5), TypeError),
    "random-permutation-axis": (lambda L: L.random.permutation(key(L), arr(L), axis=2),
                                ValueError),
    # --- nn ---
    "softmax-axis": (lambda L: L.nn.softmax(arr(L), axis=2), ValueError),
    "logsumexp-axis": (lambda L: L.nn.logsumexp(arr(L), axis=-3), ValueError),
    "one-hot-float-classes": (lambda L: L.nn.one_hot(arr(L, (3,), "int32"), 2.5), TypeError),
    "log-softmax-empty": (lambda L: L.nn.log_softmax(L.np.zeros((0, 3)), axis=1), Value),
    # --- control flow ---
    "cond-branch-shapes": (lambda L: L.lax.cond(True, lambda x: x, lambda x: x[:1],
                                                arr(L, (3,))), TypeError),
    "cond-branch-dtypes": (lambda L: L.lax.cond(True, lambda x: x, lambda x: x.astype("int32"),
                                                arr(L, (3,))), TypeError),
    "cond-pred-shape": (lambda L: L.lax.cond(L.np.asarray([True, False]), lambda x: x,
                                             lambda x: x, arr(L, (3,))), TypeError),
    "switch-float-index": (lambda L: L.lax.switch(1.5, [lambda x: x, lambda x: -x],
                                                  arr(L, (3,))), TypeError),
    "while-body-shape": (lambda L: L.lax.while_loop(lambda x: x.sum() < 10,
                                                    lambda x: L.np.concatenate([x, x]),
                                                    arr(L, (2,))), TypeError),
    "while-cond-not-scalar": (lambda L: L.lax.while_loop(lambda x: x > 0, lambda x: x - 1,
                                                         arr(L, (3,))), TypeError),
    "fori-loop-float-bounds": (lambda L: L.lax.fori_loop(0, 2.5, lambda i, x: x, arr(L)),
                               TypeError),
    "scan-carry-shape": (lambda L: L.lax.scan(lambda c, _: (L.np.concatenate([c, c]), None),
                                              arr(L, (3,)), None, length=2), TypeError),
    "scan-length-mismatch": (lambda L: L.lax.scan(lambda c, y: (c, y), arr(L, (3,)),
                                                  L.np.ones((3, 2)), length=5), ValueError),
    # --- sizes no device can hold (JAX would try to allocate them: not run there) ---
    "huge-sum": (lambda L: L.np.ones((10**6, 10**6)).sum(), MemoryError, False),
    "huge-arange": (lambda L: L.np.arange(2**31 + 5), MemoryError, False),
    "huge-broadcast": (lambda L: L.np.zeros((2**16, 1)) + L.np.zeros((1, 2**16)),
                       MemoryError, False),
}.items()}


def _run(case: Case, L: SimpleNamespace) -> tuple[Outcome, Any]:
    """(the outcome class, the exception or the value as NumPy leaves)."""
    try:
        out = case.call(L)
        leaves = jax.tree_util.tree_leaves(out) if L is JAX else \
            jaxlab.tree_util.tree_leaves(out)
        return Value, [np.asarray(x) for x in leaves]
    except Exception as exc:  # noqa: BLE001  (every exception is an outcome to compare)
        return type(exc), exc


@functools.lru_cache(maxsize=None)
def jax_outcome(name: str) -> tuple[Outcome, Any]:
    with jax.default_device(jax.devices("cpu")[0]):
        return _run(CASES[name], JAX)


def test_corpus_is_large():
    assert len(CASES) >= 100


def test_declared_outcomes_are_jax_outcomes():
    """Every declaration holds in JAX itself: the corpus states what JAX does."""
    wrong = {}
    for name, case in CASES.items():
        if case.against_jax:
            kind, detail = jax_outcome(name)
            if not issubclass(kind, case.expect):
                wrong[name] = f"declared {case.expect.__name__}, JAX: {kind.__name__} {detail}"
    assert not wrong, wrong


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_as_jax(backend: str, name: str) -> None:
    case = CASES[name]
    kind, ours = _run(case, JAXLAB)
    if case.expect is Value:
        assert kind is Value, f"raised {kind.__name__}: {ours}"
        _, theirs = jax_outcome(name)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    else:
        assert issubclass(kind, case.expect), \
            f"expected {case.expect.__name__}, got {kind.__name__}: {ours}"
    assert_engine_works()
