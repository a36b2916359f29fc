"""A warm jit call's fast path: the pytree key and leaves found in one walk
(api._call_signature), outputs taken in one call, and on webgpu the whole call
recorded and submitted through wgpu-native's C API (fastpass.Recorder.submit).
Results against NumPy and JAX, retracing when the structure changes, aliased
inputs, errors, threads."""
from __future__ import annotations

import threading
from collections import namedtuple

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.api import _call_signature
from jaxlab.engine.devices import Device
from jaxlab.tree_util import tree_flatten, tree_map
from tests.conftest import assert_close

WEBGPU = bool(jaxlab.devices("webgpu"))


def _loss(m, params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = m.maximum(h, 0.0)
    return m.mean((h - y) ** 2)


def _step(lib):
    def step(params, x, y, lr):
        val, grads = lib.value_and_grad(lambda p: _loss(lib.numpy, p, x, y))(params)
        return [(w - lr * gw, b - lr * gb) for (w, b), (gw, gb) in zip(params, grads)], val
    return lib.jit(step)


def _mlp(seed: int = 0) -> tuple[list, np.ndarray, np.ndarray]:
    r = np.random.default_rng(seed)
    sizes = (6, 5, 3)
    params = [(r.standard_normal((i, o)).astype(np.float32) / np.sqrt(i),
               r.standard_normal(o).astype(np.float32) * 0.1)
              for i, o in zip(sizes[:-1], sizes[1:])]
    return params, r.standard_normal((4, 6)).astype(np.float32), \
        r.standard_normal((4, 3)).astype(np.float32)


def test_queued_training_steps_match_jax(backend):
    """Eight steps queued with no read in between, each fed the last one's parameters."""
    params, x, y = _mlp()
    step, ref = _step(jaxlab), _step(jax)
    p, q = tree_map(jnp.asarray, params), tree_map(jjnp.asarray, params)
    vals = []
    for _ in range(8):
        p, val = step(p, jnp.asarray(x), jnp.asarray(y), 0.1)
        q, want = ref(q, x, y, 0.1)
        vals.append((val, want))
    for (w, b), (jw, jb) in zip(p, q):
        assert_close(w, np.asarray(jw), rtol=1e-4, atol=1e-5)
        assert_close(b, np.asarray(jb), rtol=1e-4, atol=1e-5)
    for val, want in vals:
        assert_close(val, np.asarray(want), rtol=1e-4, atol=1e-5)


def test_a_new_structure_retraces_and_the_old_one_hits(backend):
    traces = []

    def double(tree, s):
        traces.append(1)
        return tree_map(lambda v: v * s, tree)
    f = jaxlab.jit(double)
    a, b = np.arange(3, dtype=np.float32), np.ones((2, 2), np.float32)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    calls = [([ja, (jb, None)], 2.0, [a * 2, (b * 2, None)]),
             ((ja, (jb, None)), 2.0, (a * 2, (b * 2, None))),
             ([ja, (None, jb)], 2.0, [a * 2, (None, b * 2)]),
             ({"x": ja, "y": jb}, 2.0, {"x": a * 2, "y": b * 2}),
             ({"x": ja, "z": jb}, 3.0, {"x": a * 3, "z": b * 3}),
             ([ja, [jb]], 2.0, [a * 2, [b * 2]]),
             ([ja, (jb, None)], 3, [a * 3, (b * 3, None)]),   # an int scalar: weak int
             ([jb, (ja, None)], 2.0, [b * 2, (a * 2, None)])]  # shapes swapped
    for tree, s, want in calls:
        got = f(tree, s)
        assert type(got) is type(want)
        got_leaves, got_def = tree_flatten(got)
        want_leaves, want_def = tree_flatten(want)
        assert got_def == want_def
        for g, w in zip(got_leaves, want_leaves):
            assert_close(g, w)
    assert len(traces) == len(calls)
    for tree, s, want in calls[:3]:   # each seen before: no trace, the same answers
        assert_close(tree_flatten(f(tree, s))[0][0], tree_flatten(want)[0][0])
    assert len(traces) == len(calls)


def test_aliased_and_returned_inputs(backend):
    f = jaxlab.jit(lambda t, z: (t[0] + t[1] * z, t))
    x = jnp.asarray(np.linspace(-1, 1, 5, dtype=np.float32))
    for _ in range(3):
        total, same = f([x, x], x)
        assert_close(total, np.asarray(x) + np.asarray(x) ** 2)
        assert_close(same[0], np.asarray(x))
        assert_close(same[1], np.asarray(x))
    # outputs fed back as the next call's inputs, the same array in both places
    y = x
    want = np.asarray(x)
    for _ in range(4):
        y, _ = f([y, y], y)
        want = want + want * want
    assert_close(y, want, rtol=1e-5)


def test_errors_raise_as_before_and_calls_go_on(backend):
    f = jaxlab.jit(lambda t: t["a"] @ t["b"])
    a = jnp.asarray(np.ones((2, 3), np.float32))
    good = {"a": a, "b": jnp.asarray(np.ones((3, 4), np.float32))}
    assert_close(f(good), np.full((2, 4), 3.0, np.float32))
    with pytest.raises(TypeError):   # dot_general's shapes, raised when tracing
        f({"a": a, "b": jnp.asarray(np.ones((2, 4), np.float32))})
    with pytest.raises(TypeError):
        f(good, good)   # one argument too many, as JAX raises it
    assert_close(f(good), np.full((2, 4), 3.0, np.float32))


def test_threads_share_one_jitted_step(backend):
    step = _step(jaxlab)
    wrong, errors = [], []

    def work(t: int) -> None:
        params, x, y = _mlp(seed=t)
        with jaxlab.default_device(backend):
            p = tree_map(jnp.asarray, params)
            q = params
            for _ in range(5):
                p, _ = step(p, jnp.asarray(x), jnp.asarray(y), 0.05)
                q = _numpy_step(q, x, y, 0.05)
            for (w, b), (qw, qb) in zip(p, q):
                if not (np.allclose(np.asarray(w), qw, rtol=1e-4, atol=1e-5) and
                        np.allclose(np.asarray(b), qb, rtol=1e-4, atol=1e-5)):
                    wrong.append(t)

    def guarded(t: int) -> None:
        try:
            work(t)
        except Exception as exc:   # every exception here is a failure to report
            errors.append(repr(exc))
    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and not wrong, (errors, wrong)


def _numpy_step(params, x, y, lr):
    """The SGD step of `_step` in NumPy (float64), by hand-written backpropagation."""
    hs, h = [x.astype(np.float64)], x.astype(np.float64)
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0.0)
        hs.append(h)
    g = 2 * (h - y) / h.size
    new = []
    for i in reversed(range(len(params))):
        w, b = params[i]
        if i < len(params) - 1:
            g = g * (hs[i + 1] > 0)
        new.append((w - lr * hs[i].T @ g, b - lr * g.sum(axis=0)))
        g = g @ w.T
    return new[::-1]


def test_call_signature_walks_like_tree_flatten():
    x = jnp.asarray(np.zeros(2, np.float32))
    y = jnp.asarray(np.zeros((2, 1), np.int32))
    args = ([x, (y, None)], {"b": 1.0, "a": [x, 2]}, None)
    key, leaves = _call_signature(args)
    flat, _ = tree_flatten(args)
    assert len(leaves) == len(flat) and all(p is q for p, q in zip(leaves, flat))
    assert key[0]   # it holds Python scalars
    others = [([x, [y, None]], {"b": 1.0, "a": [x, 2]}, None),     # tuple -> list
              ([x, (y, None)], {"c": 1.0, "a": [x, 2]}, None),     # a key renamed
              ([x, (None, y)], {"b": 1.0, "a": [x, 2]}, None),     # None moved
              ([x, (y, None)], {"b": 1, "a": [x, 2]}, None),       # float -> int
              ([y, (x, None)], {"b": 1.0, "a": [x, 2]}, None),     # leaves swapped
              ([x, (y, None)], {"b": 1.0, "a": [x, 2]})]           # one argument fewer
    keys = {key} | {_call_signature(o)[0] for o in others}
    assert len(keys) == 1 + len(others)
    assert _call_signature(([x, (y, None)], {"b": 1.0, "a": [x, 2]}, None))[0] == key


def test_call_signature_leaves_other_trees_to_the_slow_path():
    x = jnp.asarray(np.zeros(2, np.float32))
    Pair = namedtuple("Pair", "a b")
    assert _call_signature((Pair(x, x),)) is None       # a registered node type
    assert _call_signature((np.zeros(2),)) is None      # host data: converted there
    assert _call_signature((1.0, 2)) is None            # no Array: the device is unknown
    assert _call_signature(({1: x, "a": x},)) is None   # keys that do not sort
    f = jaxlab.jit(lambda p: p.a + p.b)
    assert_close(f(Pair(x, x + 1)), np.ones(2, np.float32))


@pytest.fixture
def own_webgpu():
    """A webgpu device of its own: a test here destroys buffers its pool would hand out."""
    if not WEBGPU:
        pytest.skip("no WebGPU adapter")
    from jaxlab.backends.webgpu import WebGpuBackend
    dev = Device("webgpu", WebGpuBackend())
    with jaxlab.default_device(dev):
        yield dev


def _count_commands(backend, monkeypatch) -> dict:
    """Counts of the command buffers the C calls record and submit from now on."""
    recorder = backend._recorder
    if recorder is None or recorder.commands is None:
        pytest.skip("no wgpu-native C API here: jit calls record through wgpu-py's objects")
    commands, seen = recorder.commands, {"record": 0, "submit": 0}

    def record(launches):
        seen["record"] += 1
        return commands.record(launches)

    def submit(buffer):
        seen["submit"] += 1
        return commands.submit(buffer)
    monkeypatch.setattr(backend, "_recorder", recorder._replace(
        commands=commands._replace(record=record, submit=submit)))
    return seen


def test_warm_calls_go_through_the_c_submit_and_match_the_public_path(own_webgpu,
                                                                       monkeypatch):
    params, x, y = _mlp()
    step = _step(jaxlab)
    p = tree_map(jnp.asarray, params)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    p1, _ = step(p, jx, jy, 0.1)   # compiles and binds: recorded through the open pass
    seen = _count_commands(own_webgpu.backend, monkeypatch)
    c_path = [step(p, jx, jy, 0.1) for _ in range(3)]
    assert seen["submit"] == 3
    monkeypatch.setattr(own_webgpu.backend, "_recorder",
                        own_webgpu.backend._recorder._replace(commands=None))
    public = step(p, jx, jy, 0.1)
    assert seen["submit"] == 3
    for got in c_path + [public]:
        for (w, b), (w1, b1) in zip(got[0], p1):
            assert_close(w, np.asarray(w1))
            assert_close(b, np.asarray(b1))


def test_calls_recorded_ahead_are_right(own_webgpu, monkeypatch):
    """A call's command buffer recorded during the one before, for the buffers it guessed:
    outputs freed before each next call (the same buffers), results fed back (two
    alternating sets), eager work and other arrays taking the freed buffers in between,
    and every output kept (every guess wrong)."""
    step = jaxlab.jit(lambda a, b: (a * 0.5 + b, a - b))
    a0 = np.linspace(-1, 1, 64, dtype=np.float32)
    b0 = np.cos(a0)
    x, y = jnp.asarray(a0), jnp.asarray(b0)
    step(x, y)
    seen = _count_commands(own_webgpu.backend, monkeypatch)
    for i in range(5):
        out = step(x, y)
        assert_close(out[1], a0 - b0)
        del out
        if i == 2:   # eager work queued before the next call, on the freed buffers
            taken = jnp.asarray(b0) * 3.0
            assert_close(taken, b0 * 3)
    a, b = a0.copy(), b0.copy()
    for _ in range(6):
        x, y = step(x, y)
        a, b = a * np.float32(0.5) + b, a - b
    assert_close(x, a, rtol=1e-5, atol=1e-5)
    assert_close(y, b, rtol=1e-5, atol=1e-5)
    kept = [step(x, y) for _ in range(4)]
    for got in kept:
        assert_close(got[0], a * np.float32(0.5) + b, rtol=1e-5, atol=1e-5)
    assert seen["submit"] == 15
    # recorded once per call when its guess was right, twice when it was wrong
    assert seen["submit"] < seen["record"] < 2 * seen["submit"]


def test_a_bad_command_raises_before_the_submit_and_the_device_goes_on(own_webgpu,
                                                                        monkeypatch):
    """A launch WebGPU refuses (more workgroups than a dimension allows) fails the
    encoder's finish: raised as WebGpuError, nothing submitted, the next call right."""
    from jaxlab.backends.webgpu import WebGpuError
    from jaxlab.backends.webgpu.codegen import Program
    from jaxlab.backends.webgpu.plan import single
    backend = own_webgpu.backend
    f = jaxlab.jit(lambda t: [v * 2.0 + 1.0 for v in t])
    a = np.arange(4, dtype=np.float32)
    good = [jnp.asarray(a), jnp.asarray(a + 1)]
    f(good)
    seen = _count_commands(backend, monkeypatch)
    program = Program("@compute @workgroup_size(1)\nfn main() {}\n",
                      (backend.limits.max_groups_per_dim + 1, 1, 1), 1, "too_many_groups")
    launch = single(program, 0).passes[0]
    out = backend.allocate(4)
    pipeline, layout = backend._pipeline(launch)
    group = backend._bind_group(layout, launch, [out])
    packed = backend._pack([(pipeline, group, program.grid)])
    with pytest.raises(WebGpuError, match="submitting work"):
        backend._replay(packed, [(pipeline, group)])
    assert seen == {"record": 1, "submit": 0}
    backend.free(out)
    for _ in range(2):
        got = f(good)
        assert_close(got[0], a * 2 + 1)
        assert_close(got[1], (a + 1) * 2 + 1)
    assert seen["submit"] == 2


def test_buffer_pool_takes_many_and_trims_the_least_recently_freed():
    from jaxlab.backends.webgpu.buffers import BufferPool, buckets
    destroyed = []
    pool = BufferPool(destroyed.append, limit=1024)
    for name, size in [("a", 256), ("b", 512), ("c", 256)]:
        pool.give(size, name)
    assert pool.take_many([256, 768, 512, 256, 256]) == ["c", None, "b", "a", None]
    assert pool.bytes == 0
    pool.give(512, "b")          # the emptied lists stay, and take them back
    pool.give(256, "a")
    pool.give(256, "c")
    pool.give(512, "d")          # 1536 > 1024: the size freed least recently goes first
    assert destroyed == ["a", "c"] and pool.bytes == 1024
    assert pool.take_many([512, 512, 512]) == ["d", "b", None]
    assert pool.take(256) is None
    assert buckets((4, 300, 70000), 1 << 20) == (256, 512, 73728)
    assert buckets((4, 2 << 20), 1 << 20) is None
