"""matmul, dot, vdot, inner, outer, tensordot and einsum against NumPy."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from tests.conftest import assert_close

RTOL, ATOL = 1e-4, 1e-4


def _data(rng, shape, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-5, 6, shape).astype(dtype)


def _kernels(fn):
    with jaxlab.capture() as log:
        out = fn()
        out.block_until_ready()
    return out, len(log.kernels())


BINARY_CASES = [   # (name, shape of a, shape of b, extra kwargs)
    ("matmul", (3, 4), (4, 5), {}),
    ("matmul", (4,), (4, 5), {}),
    ("matmul", (3, 4), (4,), {}),
    ("matmul", (4,), (4,), {}),
    ("matmul", (2, 3, 4), (4, 5), {}),
    ("matmul", (2, 1, 3, 4), (5, 4, 2), {}),
    ("matmul", (0, 4), (4, 3), {}),
    ("matmul", (3, 0), (0, 2), {}),
    ("dot", (4,), (4,), {}),
    ("dot", (3, 4), (4,), {}),
    ("dot", (4,), (4, 5), {}),
    ("dot", (3, 4), (4, 5), {}),
    ("dot", (2, 3, 4), (4, 5), {}),
    ("dot", (2, 3, 4), (6, 4, 5), {}),
    ("dot", (), (3, 4), {}),
    ("dot", (3, 4), (), {}),
    ("dot", (3, 0), (0, 2), {}),
    ("vdot", (3, 4), (12,), {}),
    ("vdot", (2, 3), (3, 2), {}),
    ("inner", (4,), (4,), {}),
    ("inner", (3, 4), (5, 4), {}),
    ("inner", (2, 3, 4), (4,), {}),
    ("inner", (), (2, 3), {}),
    ("outer", (3,), (4,), {}),
    ("outer", (2, 3), (2, 2), {}),
    ("outer", (0,), (3,), {}),
    ("tensordot", (3, 4, 5), (4, 5, 6), {}),
    ("tensordot", (3, 4), (4, 5), {"axes": 1}),
    ("tensordot", (3, 4), (5, 6), {"axes": 0}),
    ("tensordot", (3, 4, 5), (5, 3, 2), {"axes": ([0, 2], [1, 0])}),
    ("tensordot", (3, 4, 5), (4, 2), {"axes": (1, 0)}),
    ("tensordot", (2, 3), (3, 2), {"axes": ((-1,), (-2,))}),
]


@pytest.mark.parametrize("name,sa,sb,kw", BINARY_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_binary_products(backend, rng, name, sa, sb, kw, dtype):
    a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
    out = getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b), **kw)
    expected = getattr(np, name)(a, b, **kw)
    assert out.dtype == expected.dtype
    assert_close(out, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name,sa,sb,kw", [BINARY_CASES[i] for i in (0, 4, 13, 20, 26, 29)])
def test_transposed_inputs(backend, rng, name, sa, sb, kw):
    """Non-contiguous operands: stored reversed, read through a transpose view."""
    a, b = _data(rng, sa[::-1]).T, _data(rng, sb[::-1]).T
    out = getattr(jnp, name)(jnp.asarray(a.T).T, jnp.asarray(b.T).T, **kw)
    assert_close(out, getattr(np, name)(a, b, **kw), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("da,db,expected", [
    (np.int32, np.float32, np.float32),
    (np.float16, np.float32, np.float32),
    (np.bool_, np.int32, np.int32),
])
def test_dot_promotes(backend, rng, da, db, expected):
    a, b = _data(rng, (3, 4)).astype(da), _data(rng, (4, 2)).astype(db)
    out = jnp.dot(jnp.asarray(a), jnp.asarray(b))
    assert out.dtype == expected
    assert_close(out, np.dot(a.astype(expected), b.astype(expected)), rtol=1e-3, atol=1e-3)


def test_python_scalars_and_lists(backend):
    assert_close(jnp.dot(2, [1.0, 2.0]), np.array([2.0, 4.0], np.float32))
    assert_close(jnp.outer([1, 2], [3, 4]), np.outer([1, 2], [3, 4]).astype(np.int32))


EINSUM_CASES = [   # (subscripts, operand shapes)
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->ibk", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,jk->i", [(3, 4), (4, 5)]),
    ("ij,kl->", [(2, 3), (4, 5)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (6, 4, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("i...->...", [(3, 2, 4)]),
    ("...,...", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk,kl", [(2, 8), (8, 8), (8, 3)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    ("bi,bj,bk->bijk", [(2, 3), (2, 4), (2, 2)]),
    ("ij,jk->ik", [(3, 0), (0, 2)]),
    ("ij,jk->ik", [(1, 4), (4, 5)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
def test_einsum(backend, rng, subscripts, shapes):
    ops = [_data(rng, s) for s in shapes]
    out = jnp.einsum(subscripts, *map(jnp.asarray, ops))
    assert_close(out, np.einsum(subscripts, *ops), rtol=RTOL, atol=ATOL)


def test_einsum_int_and_transposed(backend, rng):
    a, b = _data(rng, (4, 3), np.int32), _data(rng, (5, 4), np.int32)
    out = jnp.einsum("ji,kj->ik", jnp.asarray(a), jnp.asarray(b))
    assert out.dtype == np.int32
    assert_close(out, np.einsum("ji,kj->ik", a, b))
    assert_close(jnp.einsum("ij,jk->ik", jnp.asarray(a).T, jnp.asarray(b).T),
                 a.T @ b.T)


def test_einsum_broadcasts_size_one_labels(backend, rng):
    """Like JAX: a size-1 axis broadcasts against its label's size elsewhere."""
    a, b = _data(rng, (2, 1)), _data(rng, (3, 4))
    out = jnp.einsum("ij,jk->ik", jnp.asarray(a), jnp.asarray(b))
    assert_close(out, a[:, :1] * b.sum(axis=0), rtol=RTOL, atol=ATOL)


ONE_KERNEL = [   # each of these must be a single fused multiply-sum kernel
    lambda a, b, c: jnp.dot(a, b),
    lambda a, b, c: jnp.einsum("ij,jk->ik", a, b),
    lambda a, b, c: jnp.einsum("ij,jk->ki", a, b),
    lambda a, b, c: jnp.einsum("ij,kj->ik", a, c),
    lambda a, b, c: jnp.einsum("ij,jk->i", a, b),
    lambda a, b, c: jnp.dot(a.T.T, b) * 2 + 1,
    lambda a, b, c: jnp.tensordot(a, b, axes=1),
    lambda a, b, c: jnp.inner(a, c),
    lambda a, b, c: jnp.vdot(a, a),
]


@pytest.mark.parametrize("fn", ONE_KERNEL)
def test_products_are_one_kernel(backend, rng, fn):
    arrays = [jnp.asarray(_data(rng, s)) for s in [(3, 4), (4, 5), (6, 4)]]
    for x in arrays:
        x.block_until_ready()
    _, n = _kernels(lambda: fn(*arrays))
    assert n == 1


def test_einsum_chain_is_one_kernel_per_pair(backend, rng):
    a, b, c = (jnp.asarray(_data(rng, s)) for s in [(3, 4), (4, 5), (5, 2)])
    for x in (a, b, c):
        x.block_until_ready()
    _, n = _kernels(lambda: jnp.einsum("ij,jk,kl->il", a, b, c))
    assert n == 2


def test_einsum_contracts_the_small_pair_first(backend, rng):
    """(a b) c makes a 2x2 intermediate; a (b c) a 16x16 one: greedy picks the first."""
    a, b, c = (_data(rng, s) for s in [(2, 16), (16, 2), (2, 16)])
    with jaxlab.capture() as log:
        out = jnp.einsum("ij,jk,kl->il", *map(jnp.asarray, (a, b, c)))
        out.block_until_ready()
    assert [int(np.prod(k.output_shapes[0])) for k in log.kernels()] == [4, 32]
    assert_close(out, a @ b @ c, rtol=RTOL, atol=ATOL)


MISMATCHES = [   # (call, JAX's exception, the shapes the message must name)
    (lambda a, b: jnp.matmul(a, b), TypeError, ["(3, 4)", "(5, 2)"]),
    (lambda a, b: a @ b, TypeError, ["(3, 4)", "(5, 2)"]),
    (lambda a, b: jnp.dot(a, b), TypeError, ["(3, 4)", "(5, 2)"]),
    (lambda a, b: jnp.inner(a, b), TypeError, ["(3, 4)", "(5, 2)"]),
    (lambda a, b: jnp.vdot(a, b), TypeError, ["(12,)", "(10,)"]),
    (lambda a, b: jnp.tensordot(a, b, axes=1), TypeError, ["(3, 4)", "(5, 2)"]),
    (lambda a, b: jnp.einsum("ij,jk->ik", a, b), ValueError, ["(3, 4)", "(5, 2)"]),
]


@pytest.mark.parametrize("call,error,names", MISMATCHES)
def test_shape_mismatch_names_both_shapes(backend, rng, call, error, names):
    a, b = jnp.asarray(_data(rng, (3, 4))), jnp.asarray(_data(rng, (5, 2)))
    with pytest.raises(error) as info:
        call(a, b)
    for name in names:
        assert name in str(info.value)
    assert_close(jnp.dot(a, a.T), np.asarray(a) @ np.asarray(a).T, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("call", [
    lambda x: jnp.matmul(x, 2.0),
    lambda x: jnp.einsum("ij,jk", x),
    lambda x: jnp.einsum("ijk->i", x),
    lambda x: jnp.einsum("ij->k", x),
    lambda x: jnp.einsum("ij->ii", x),
    lambda x: jnp.einsum("i.j->i", x),
    lambda x: jnp.einsum("ii", x),
    lambda x: jnp.tensordot(x, x, axes=3),
    lambda x: jnp.tensordot(x, x, axes=([0], [0, 1])),
])
def test_invalid_arguments(backend, rng, call):
    with pytest.raises(ValueError):
        call(jnp.asarray(_data(rng, (3, 4))))


TRANSFORMED = [   # (function, operand shapes, NumPy reference)
    (lambda a, b: jnp.einsum("ij,jk,kl->il", a, b, b.T), [(3, 4), (4, 5)],
     lambda a, b: a @ b @ b.T),
    (lambda a, b: jnp.tensordot(a, b, axes=([1], [0])), [(3, 4), (4, 5)], np.dot),
    (lambda a, b: jnp.inner(a, b), [(3, 4), (2, 4)], np.inner),
]


@pytest.mark.parametrize("fn,shapes,reference", TRANSFORMED)
def test_under_jit_and_vmap(backend, rng, fn, shapes, reference):
    a, b = (_data(rng, s) for s in shapes)
    assert_close(jaxlab.jit(fn)(a, b), reference(a, b), rtol=RTOL, atol=ATOL)
    stacked = np.stack([a, 2 * a])
    assert_close(jaxlab.vmap(fn, in_axes=(0, None))(stacked, b),
                 np.stack([reference(x, b) for x in stacked]), rtol=RTOL, atol=ATOL)
