"""jit programs with loops and branches run prepared: bodies bound once per call, carries
alternating between two buffer sets, scan rows written in place; results as JAX's."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax as jlax

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax
from jaxlab.engine.devices import get_device
from tests.conftest import assert_close

X = np.array([0.5, -1.0, 2.0], np.float32)


def _rotate(m, a, b, c, xs):
    """Three carries that trade places each step (a carry moved to another's place)."""
    return m[1].scan(lambda cs, x: ((cs[1], cs[2] + x, cs[0]), cs[0] * x), (a, b, c), xs)


def _fixed_and_moved(m, a, b, xs):
    """One carry passes through unchanged, one is replaced by a constant each step."""
    np_ = m[0]
    return m[1].scan(lambda c, x: ((c[0], np_.ones(3) * 2, c[2] + c[0] * x), c[1] + x),
                     (a, b, a), xs)


def _while_bool_carry(m, a):
    """The predicate is a carry itself (the cond program returns its input)."""
    return m[1].while_loop(lambda c: c[0], lambda c: (c[1].sum() < 20, c[1] * 1.5 + 1), (True, a))


def _nested(m, p, a, xs):
    np_, lax_ = m[0], m[1]

    def inner(v):
        v = lax_.fori_loop(0, 3, lambda i, u: np_.sin(u) + i, v)
        return lax_.while_loop(lambda u: u.sum() < 30, lambda u: u * 2 + 1, v)
    return lax_.cond(p, lambda v: lax_.scan(lambda c, x: (inner(c + x), c), v, xs),
                     lambda v: (v, np_.zeros((len(xs), 3)) + v), a)


def _switch_passthrough(m, i, a, b):
    return m[1].switch(i, [lambda u, v: (u, v), lambda u, v: (v, u * 2), lambda u, v: (u, u)],
                       a, b)


CASES = {
    "rotate": (_rotate, lambda n: (X, -X, X * 3, np.linspace(-1, 1, n * 3, dtype=np.float32)
                                   .reshape(n, 3))),
    "fixed and moved": (_fixed_and_moved, lambda n: (X, -X, np.arange(n * 3, dtype=np.float32)
                                                      .reshape(n, 3))),
}


@pytest.mark.parametrize("length", [0, 1, 2, 3, 6])
@pytest.mark.parametrize("case", sorted(CASES))
def test_prepared_scans_match_jax(backend, case, length):
    fn, make = CASES[case]
    args = make(length)
    f = jaxlab.jit(lambda *a: fn((jnp, lax), *a))
    want = jax.tree_util.tree_leaves(jax.jit(lambda *a: fn((jax.numpy, jlax), *a))(*args))
    first = f(*[jnp.asarray(a) for a in args])
    again = f(*[jnp.asarray(a) for a in args])   # the runner and its bound sets reused
    for result in (first, again):   # the second call left the first one's results alone
        for g, w in zip(jaxlab.tree_util.tree_leaves(result), want):
            assert_close(g, np.asarray(w), rtol=1e-5)


def test_prepared_while_cond_and_nesting_match_jax(backend):
    xs = np.linspace(0.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    for fn, args in [(_while_bool_carry, (X,)), (_nested, (True, X, xs)), (_nested, (False, X, xs)),
                     (_switch_passthrough, (0, X, -X)), (_switch_passthrough, (1, X, -X)),
                     (_switch_passthrough, (2, X, -X))]:
        f = jaxlab.jit(lambda *a, fn=fn: fn((jnp, lax), *a))
        want = jax.jit(lambda *a, fn=fn: fn((jax.numpy, jlax), *a))(*args)
        for _ in range(2):
            got = f(*[jnp.asarray(a) for a in args])
            for g, w in zip(jaxlab.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                assert_close(g, np.asarray(w), rtol=1e-5)


def _allocations(backend_obj, fn, *args) -> int:
    count = [0]
    allocate = backend_obj.allocate

    def counting(nbytes):
        count[0] += 1
        return allocate(nbytes)
    backend_obj.allocate = counting
    try:
        jax.tree_util.tree_map(np.asarray, fn(*args))
    finally:
        del backend_obj.allocate
    return count[0]


def test_warm_loop_allocates_the_same_for_any_trip_count(backend):
    dev = get_device(backend)
    x = jnp.asarray(X)

    def scan(n):
        xs = jnp.ones((n, 3))
        f = jaxlab.jit(lambda c, xs: lax.scan(lambda c, r: (c * 0.5 + r, c.sum()), c, xs))
        f(x, xs)   # compile, and prepare a runner
        return _allocations(dev.backend, f, x, xs)

    def while_loop(n):
        f = jaxlab.jit(lambda c: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2),
                                                (0, c)))
        f(x)
        return _allocations(dev.backend, f, x)
    assert scan(5) == scan(60)
    assert while_loop(5) == while_loop(60)


def test_scan_rows_are_written_in_place(backend):
    n = 40
    xs = np.linspace(-1, 1, n * 3, dtype=np.float32).reshape(n, 3)
    body = lambda c, r: (c * 0.9 + r, jnp.sin(c) * r)   # noqa: E731
    f = jaxlab.jit(lambda c, xs: lax.scan(body, c, xs))
    want = jax.jit(lambda c, xs: jlax.scan(lambda c, r: (c * 0.9 + r, jax.numpy.sin(c) * r),
                                          c, xs))(X, xs)
    for run in (lambda: f(jnp.asarray(X), jnp.asarray(xs)),
                lambda: lax.scan(body, jnp.asarray(X), jnp.asarray(xs))):   # jit, eager
        with jaxlab.capture() as log:
            got = run()
        for g, w in zip(got, want):
            assert_close(g, np.asarray(w), rtol=1e-5, atol=1e-6)
        stacked = [e.name for e in log.kernels() if e.output_shapes[0][:1] == (n,)]
        assert not stacked, f"kernels rewrote the stacked output: {stacked}"


@pytest.mark.skipif(not jaxlab.devices("webgpu"), reason="no WebGPU adapter")
def test_webgpu_static_loop_is_one_submission():
    dev = jaxlab.devices("webgpu")[0]
    be = dev.backend
    with jaxlab.default_device(dev):
        x, xs = jnp.asarray(X), jnp.asarray(np.ones((30, 3), np.float32))
        f = jaxlab.jit(lambda c, xs: lax.scan(lambda c, r: (jnp.sin(c) + r, c * 2), c, xs))
        f(x, xs)[1].block_until_ready()
        be.synchronize()
        submits = [0]
        submit = be.device.queue.submit

        def counting(buffers):
            submits[0] += 1
            return submit(buffers)
        queue = be.device.queue
        try:
            queue.submit = counting
        except AttributeError:
            pytest.fail("wgpu's queue no longer takes an attribute to count submissions")
        try:
            c, ys = f(x, xs)   # 30 iterations and their row copies: one command buffer
            assert submits[0] == 1
        finally:
            del queue.submit
        want_c, want_ys = jax.jit(lambda c, xs: jlax.scan(
            lambda c, r: (jax.numpy.sin(c) + r, c * 2), c, xs))(X, np.ones((30, 3), np.float32))
        assert_close(c, np.asarray(want_c), rtol=1e-5)
        assert_close(ys, np.asarray(want_ys), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["bool", "float16", "int32"])
def test_scan_rows_of_every_width_are_written_in_place(backend, dtype):
    # 3 bools or float16s are rows of 3 or 6 bytes: not whole 4-byte words
    xs = np.linspace(-1, 1, 5 * 3, dtype=np.float32).reshape(5, 3)

    def fn(m):
        return lambda c, xs: m[1].scan(lambda c, r: (c + r, (c * r > 0).astype(dtype)
                                                     if dtype == "bool" else
                                                     (c * r).astype(dtype)), c, xs)
    want = jax.jit(fn((jax.numpy, jlax)))(X, xs)
    for got in (jaxlab.jit(fn((jnp, lax)))(jnp.asarray(X), jnp.asarray(xs)),
                fn((jnp, lax))(jnp.asarray(X), jnp.asarray(xs))):
        for g, w in zip(got, want):
            assert_close(g, np.asarray(w), rtol=1e-3, atol=1e-3)


def _reallocation_binds_the_same(backend_obj) -> bool:
    """Whether a freed allocation comes back with the same binding key (wasm addresses,
    webgpu's pooled buffers; cpu arrays are new each time)."""
    h = backend_obj.allocate(64)
    key = backend_obj.binding_key([h])
    backend_obj.free(h)
    h2 = backend_obj.allocate(64)
    same = backend_obj.binding_key([h2]) == key
    backend_obj.free(h2)
    return same


def test_cond_branches_are_bound_once_per_set_of_buffers(backend, monkeypatch):
    """A cond step keeps its branches' bindings: calls on the same operands (results
    freed in between) bind each branch once; other operands still get their own."""
    from jaxlab.engine import prepared
    binds = []
    original = prepared.BodyRunner.bind
    monkeypatch.setattr(prepared.BodyRunner, "bind",
                        lambda self, *a: binds.append(1) or original(self, *a))

    def f(p, x, y):
        return lax.cond(p, lambda a, b: a * b + 1.0, lambda a, b: a - b, x, y)

    def jf(p, x, y):
        return jlax.cond(p, lambda a, b: a * b + 1.0, lambda a, b: a - b, x, y)
    step = jaxlab.jit(f)
    xs = [np.array([1.0, 2.0, -3.0], np.float32) * (k + 1) for k in range(2)]
    ys = [x[::-1].copy() for x in xs]
    operands = [(jnp.asarray(x), jnp.asarray(y)) for x, y in zip(xs, ys)]
    for i in range(8):
        k, p = i % 2, i % 3 == 0
        got = np.asarray(step(jnp.asarray(p), *operands[k]))
        assert_close(got, np.asarray(jf(p, xs[k], ys[k])), rtol=1e-6)
        del got
    assert binds, "the cond step did not run prepared"
    if _reallocation_binds_the_same(get_device(backend).backend):
        assert len(binds) < 8
