"""jax.lax's functions beyond its primitives (jaxlab/lax/{float_math, complex_parts,
bits, shaping, slicing, sorting}.py), differential against JAX on every device:
values, shapes, dtypes and weak types; jit, grad and vmap through them; and the
exception JAX raises for bad input."""
from __future__ import annotations

import jax
import jax.lax as jlax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.lax as lax
import jaxlab.numpy as jnp

F = np.array([[0.3, -0.7, 1.9], [-1.2, 0.05, 2.5]], np.float32)
UNIT = np.array([0.3, -0.7, 0.95, -0.05], np.float32)
ABOVE_ONE = np.array([1.0, 1.5, 3.0, 40.0], np.float32)
C = np.array([0.5 + 1j, -1.5 - 0.25j], np.complex64)
I = np.array([-8, 7, 0, 1, -1, 2**31 - 1, 255], np.int32)
U8 = np.array([0, 1, 7, 128, 255], np.uint8)
X = np.arange(12, dtype=np.float32).reshape(3, 4)
SPECIALS = np.array([1e10, 1e-10, np.nan, -np.inf, 65519.0, 65520.0, -0.0, 3.14159], np.float32)
KEYS = np.array([[3.0, 1.0, 3.0, np.nan, 2.0], [0.0, 0.0, 1.0, -1.0, 5.0]], np.float32)

# id -> (function of (lax, numpy) modules, its arguments as host data)
CASES = {
    **{f"{name}": (lambda m, n, name=name: getattr(m[0], name), (F * 0.5,))
       for name in ("expm1", "log1p", "exp2", "sinh", "cosh", "asinh", "cbrt")},
    "acos": (lambda m, n: m[0].acos, (UNIT,)),
    "atanh": (lambda m, n: m[0].atanh, (UNIT,)),
    "expm1_weak_scalar": (lambda m, n: lambda: m[0].expm1(1.0), ()),
    "log1p_complex": (lambda m, n: m[0].log1p, (C,)),
    "real": (lambda m, n: m[0].real, (C,)),
    "imag": (lambda m, n: m[0].imag, (C,)),
    "conj": (lambda m, n: m[0].conj, (C,)),
    "conj_of_float": (lambda m, n: m[0].conj, (F,)),
    "conj_weak_scalar": (lambda m, n: lambda: m[0].conj(2.0), ()),
    "complex": (lambda m, n: m[0].complex, (F, F[::-1].copy())),
    "complex_scalar_part": (lambda m, n: lambda x: m[0].complex(x, 2.0), (F,)),
    "population_count": (lambda m, n: m[0].population_count, (I,)),
    "population_count_weak": (lambda m, n: lambda: m[0].population_count(7), ()),
    "clz": (lambda m, n: m[0].clz, (I,)),
    "clz_uint8": (lambda m, n: m[0].clz, (U8,)),
    "shift_right_logical": (lambda m, n: m[0].shift_right_logical,
                            (I, np.array([1, 2, 0, 31, 32, -1, 4], np.int32))),
    "nextafter": (lambda m, n: m[0].nextafter, (F, F[::-1].copy())),
    "reduce_precision_f16": (lambda m, n: lambda x: m[0].reduce_precision(x, 5, 10), (SPECIALS,)),
    "reduce_precision_e3m0": (lambda m, n: lambda x: m[0].reduce_precision(x, 3, 0), (SPECIALS,)),
    "full_like": (lambda m, n: lambda x: m[0].full_like(x, 3), (F,)),
    "full_like_dtype_shape": (lambda m, n: lambda x: m[0].full_like(x, 3.7, np.int32, (2, 2)),
                              (F,)),
    "full_like_weak": (lambda m, n: lambda: m[0].full_like(2.0, 3), ()),
    "broadcasted_iota": (lambda m, n: lambda: m[0].broadcasted_iota(np.float32, (2, 3), 1), ()),
    "broadcast_to_rank": (lambda m, n: lambda x: m[0].broadcast_to_rank(x[0], 3), (F,)),
    "broadcast_like": (lambda m, n: lambda x: m[0].broadcast_like(x[0], x), (F,)),
    "collapse": (lambda m, n: lambda x: m[0].collapse(m[0].reshape(x, (3, 2, 2)), 1), (X,)),
    "tile": (lambda m, n: lambda x: m[0].tile(x, (2, 1)), (F,)),
    "stack": (lambda m, n: lambda x: m[0].stack([x, x * 2], axis=-1), (F,)),
    "unstack": (lambda m, n: lambda x: m[0].unstack(x, 1), (F,)),
    "optimization_barrier": (lambda m, n: lambda x: m[0].optimization_barrier((1.0, x)), (F,)),
    "index_in_dim": (lambda m, n: lambda x: m[0].index_in_dim(x, -1, 1), (X,)),
    "slice_in_dim": (lambda m, n: lambda x: m[0].slice_in_dim(x, -3, None, 2, 1), (X,)),
    "dynamic_slice_static": (lambda m, n: lambda x: m[0].dynamic_slice(x, (-1, 5), (2, 2)), (X,)),
    "dynamic_slice_array": (lambda m, n: lambda x, i: m[0].dynamic_slice(x, i, (2, 3)),
                            (X, np.array([2, -3], np.int32))),
    "dynamic_update_slice": (lambda m, n: lambda x: m[0].dynamic_update_slice(
        x, m[1].ones((2, 2), np.float32), (2, 3)), (X,)),
    "dynamic_slice_in_dim": (lambda m, n: lambda x: m[0].dynamic_slice_in_dim(x, 3, 2, 1), (X,)),
    "dynamic_index_in_dim": (lambda m, n: lambda x, i: m[0].dynamic_index_in_dim(x, i, 1, False),
                             (X, np.int32(-1))),
    "dynamic_update_slice_in_dim": (lambda m, n: lambda x, i: m[0].dynamic_update_slice_in_dim(
        x, m[1].zeros((3, 2), np.float32), i, 1), (X, np.int32(3))),
    "dynamic_update_index_in_dim": (lambda m, n: lambda x: m[0].dynamic_update_index_in_dim(
        x, m[1].ones(4, np.float32), 1, 0), (X,)),
    "top_k": (lambda m, n: lambda x: m[0].top_k(x, 3), (KEYS,)),
    "top_k_axis0": (lambda m, n: lambda x: m[0].top_k(x, 2, axis=0), (KEYS,)),
    "top_k_int_ties": (lambda m, n: lambda x: m[0].top_k(x, 2),
                       (np.array([1, 5, 5, 2], np.int32),)),
    "sort_key_val": (lambda m, n: m[0].sort_key_val, (KEYS[1], KEYS[0])),
}

JAX = (jlax, jjnp)
OURS = (lax, jnp)


_REFERENCES: dict = {}


def reference(key: tuple, compute):
    """JAX's result for a case, computed once for every device's run of it."""
    if key not in _REFERENCES:
        _REFERENCES[key] = compute()
    return _REFERENCES[key]


def match_jax(ours, theirs) -> None:
    """ours and theirs: the same pytree of arrays, values, dtypes and weak types."""
    our_leaves = jaxlab.tree_util.tree_leaves(ours)
    their_leaves = jax.tree.leaves(theirs)
    assert len(our_leaves) == len(their_leaves)
    for ours, theirs in zip(our_leaves, their_leaves):
        a, b, weak = np.asarray(ours), np.asarray(theirs), getattr(ours, "weak_type", False)
        assert a.dtype == b.dtype and a.shape == b.shape
        if b.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)
        assert weak == getattr(theirs, "weak_type", False)





@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    make, args = CASES[name]
    match_jax(make(OURS, None)(*args), reference(("eager", name), lambda: make(JAX, None)(*args)))


JITTED = ["dynamic_slice_array", "dynamic_update_slice_in_dim", "top_k"]


@pytest.mark.parametrize("name", JITTED)
def test_jit_matches_jax(backend, name):
    """Under jit the start indices are traced: clamping happens in the program."""
    make, args = CASES[name]
    match_jax(jaxlab.jit(make(OURS, None))(*args),
              reference(("jit", name), lambda: jax.jit(make(JAX, None))(*args)))


GRADS = {
    "expm1": lambda m: lambda x: m[0].expm1(x).sum(),
    "dynamic_slice": lambda m: lambda x: (m[0].dynamic_slice(x, (1, 1), (2, 2)) ** 2).sum(),
    "dynamic_update_slice": lambda m: lambda x: (m[0].dynamic_update_slice(
        x, x[:1, :2] * 3.0, (2, 1)) ** 2).sum(),
    "dynamic_index_in_dim": lambda m: lambda x: (m[0].dynamic_index_in_dim(
        x, m[1].int32(2), 1) * x[:, :1]).sum(),
    "top_k": lambda m: lambda x: (m[0].top_k(x, 2)[0] ** 2).sum(),
    "sort_key_val": lambda m: lambda x: (m[0].sort_key_val(x[0], x[1])[1]
                                         * m[1].arange(4.0)).sum(),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_grad_matches_jax(backend, name):
    x = np.abs(X) / 7.0 + np.linspace(0, 0.1, 12, dtype=np.float32).reshape(3, 4)
    match_jax(jaxlab.grad(GRADS[name](OURS))(x),
              reference(("grad", name), lambda: jax.grad(GRADS[name](JAX))(x)))


def test_vmap_over_dynamic_starts_matches_jax(backend):
    starts = np.array([0, 2, -1, 7], np.int32)

    def rows(m):
        return lambda i: m[0].dynamic_slice_in_dim(X, i, 2, axis=1)
    match_jax(jaxlab.vmap(rows(OURS))(starts),
              reference(("vmap",), lambda: jax.vmap(rows(JAX))(starts)))


ERRORS = {
    "expm1_int": lambda m: m[0].expm1(np.arange(3, dtype=np.int32)),
    "cbrt_complex": lambda m: m[0].cbrt(C),
    "real_of_float": lambda m: m[0].real(F),
    "conj_of_int": lambda m: m[0].conj(np.arange(2, dtype=np.int32)),
    "complex_of_int": lambda m: m[0].complex(np.arange(2), np.arange(2)),
    "complex_shapes": lambda m: m[0].complex(F[0], F[:, 0]),
    "population_count_float": lambda m: m[0].population_count(F),
    "shift_right_logical_dtypes": lambda m: m[0].shift_right_logical(U8, I[:5]),
    "reduce_precision_int": lambda m: m[0].reduce_precision(I, 5, 10),
    "reduce_precision_exponent": lambda m: m[0].reduce_precision(F, 0, 3),
    "iota_dimension": lambda m: m[0].broadcasted_iota(np.float32, (2, 3), 2),
    "tile_reps": lambda m: m[0].tile(F, (2,)),
    "split_sum": lambda m: m[0].split(X, (2, 3), axis=1),
    "split_negative": lambda m: m[0].split(X, (-1, 5), axis=1),
    "stack_shapes": lambda m: m[0].stack([F, F[:, :2]]),
    "stack_dtypes": lambda m: m[0].stack([F, F.astype(np.int32)]),
    "index_in_dim_range": lambda m: m[0].index_in_dim(X, 4, 1),
    "dynamic_slice_rank": lambda m: m[0].dynamic_slice(X, (1,), (2, 2)),
    "dynamic_slice_too_big": lambda m: m[0].dynamic_slice(X, (1, 1), (4, 2)),
    "dynamic_slice_negative_size": lambda m: m[0].dynamic_slice(X, (1, 1), (-1, 2)),
    "dynamic_slice_float_start": lambda m: m[0].dynamic_slice(X, (1.0, 1), (1, 2)),
    "dynamic_slice_start_dtypes": lambda m: m[0].dynamic_slice(
        X, (np.int8(1), np.uint32(1)), (1, 2)),
    "dynamic_slice_negative_refused": lambda m: m[0].dynamic_slice(
        X, (-1, 0), (1, 2), allow_negative_indices=False),
    "dynamic_update_slice_dtype": lambda m: m[0].dynamic_update_slice(
        X, np.ones((2, 2), np.int32), (0, 0)),
    "dynamic_update_slice_rank": lambda m: m[0].dynamic_update_slice(X, F[0], (0, 0)),
    "dynamic_update_slice_too_big": lambda m: m[0].dynamic_update_slice(
        X, np.ones((4, 1), np.float32), (0, 0)),
    "top_k_negative": lambda m: m[0].top_k(KEYS, -1),
    "top_k_too_many": lambda m: m[0].top_k(KEYS, 6),
    "sort_key_val_shapes": lambda m: m[0].sort_key_val(KEYS[0], KEYS[0, :2]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_what_jax_raises(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](JAX)
    with pytest.raises(type(theirs.value)):
        ERRORS[name](OURS)
    assert lax.add(np.float32(1), np.float32(2)) == 3   # the engine still works


def test_broadcast_shapes_matches_jax():
    assert lax.broadcast_shapes((2, 1), (3,)) == jlax.broadcast_shapes((2, 1), (3,))
