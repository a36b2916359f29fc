"""jit programs run prepared: planned buffers (freed slots reused), launchers made once,
one batch per call; compile caches are bounded and eviction releases backend objects."""
from __future__ import annotations

import gc
import hashlib

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine import cache as cache_mod
from jaxlab.engine.devices import get_device
from tests.conftest import assert_close, sample_data


def _layers(x, w):
    """Several kernels whose intermediates die early: a chain of normalised layers."""
    for _ in range(3):
        h = jnp.tanh(x @ w)
        m = h.max(axis=1, keepdims=True)
        e = jnp.exp(h - m)
        x = e / e.sum(axis=1, keepdims=True)
    return x, x.sum()


def test_multi_kernel_program_equals_eager_and_reuses_freed_buffers(backend: str) -> None:
    x, w = sample_data((4, 6), np.float32), sample_data((6, 6), np.float32, seed=1)
    xs, ws = jnp.asarray(x), jnp.asarray(w)
    f = jaxlab.jit(_layers)
    got, want = f(xs, ws), _layers(xs, ws)
    for g, e in zip(got, want):
        assert_close(g, np.asarray(e), rtol=1e-5)
    program = f.lower(xs, ws)
    intermediates = {s for st in program.steps for s in st.outputs} - \
        {v for k, v in program.outputs if k == "slot"}
    assert len(program.steps) >= 6
    assert len(program.plan.arena) < len(intermediates), "no freed buffer was reused"


def test_repeated_calls_with_different_inputs_keep_earlier_results(backend: str) -> None:
    f = jaxlab.jit(_layers)
    w = jnp.asarray(sample_data((6, 6), np.float32, seed=1))
    inputs = [sample_data((4, 6), np.float32, seed=s) for s in range(3)]
    results = [f(jnp.asarray(x), w) for x in inputs]   # earlier outputs stay alive
    for x, (out, total) in zip(inputs, results):
        want_out, want_total = _layers(jnp.asarray(x), w)
        assert_close(out, np.asarray(want_out), rtol=1e-5)
        assert_close(total, np.asarray(want_total), rtol=1e-5)


def test_program_events_match_the_kernels_when_listening(backend: str) -> None:
    f = jaxlab.jit(_layers)
    x, w = jnp.asarray(sample_data((4, 6), np.float32)), jnp.asarray(np.eye(6, dtype=np.float32))
    f(x, w)
    with jaxlab.capture() as log:
        out, _ = f(x, w)
        out.block_until_ready()
    program = f.lower(x, w)
    assert [e.name for e in log.kernels()] == [st.program.name for st in program.steps]
    assert all(e.cache_hit for e in log.kernels())
    assert_close(out, np.asarray(_layers(x, w)[0]), rtol=1e-5)


def test_cache_size_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(cache_mod.ENV_VAR, "7")
    assert cache_mod.CompileCache(lambda exe: None).maxsize == 7
    monkeypatch.setenv(cache_mod.ENV_VAR, "many")
    with pytest.raises(ValueError, match="JAXLAB_CACHE_SIZE"):
        cache_mod.size_from_env()


def _compiled_key(device, exe):
    """What the backend keeps for this exe alone (a wasm module, webgpu pipelines)."""
    if device.platform == "wasm":
        return hashlib.sha1(exe.source.encode()).hexdigest()
    if device.platform == "webgpu":
        from jaxlab.backends.webgpu.runtime import _pipeline_key
        return tuple(_pipeline_key(p) for p in exe.program.passes)
    return None   # cpu compiles nothing


def _backend_holds(device, key) -> bool:
    backend = device.backend
    if device.platform == "wasm":
        return key in backend.wasm.modules
    return any(k in backend._pipelines for k in key)


def test_bounded_cache_evicts_least_recent_and_releases(backend: str, monkeypatch) -> None:
    device = get_device(backend)
    monkeypatch.setenv(cache_mod.ENV_VAR, "3")
    small = cache_mod.CompileCache(device.backend.release)
    monkeypatch.setattr(device, "cache", small)
    released = []   # what each evicted executable had compiled (not the exe: no reference)
    real_release = small._release
    small._release = lambda exe: (released.append(_compiled_key(device, exe)), real_release(exe))
    x = jnp.asarray(np.arange(8, dtype=np.float32))
    kept = jaxlab.jit(lambda v: jnp.sin(v) * jnp.cos(v))
    kept(x).block_until_ready()   # a program holding its executable
    distinct = [jnp.sin, jnp.cos, jnp.tanh, jnp.exp, jnp.log1p, jnp.sqrt]
    for fn in distinct:
        fn(x + 1.5).block_until_ready()
    assert len(small) == 3 and small.evictions == len(released) >= len(distinct) - 2
    gc.collect()
    if backend != "cpu":   # eager kernels nobody holds: their module/pipelines are gone
        assert not any(_backend_holds(device, key) for key in released[1:])
    # the program still runs with its evicted executable, and evicted kernels recompile
    assert_close(kept(x), np.sin(np.arange(8.0)) * np.cos(np.arange(8.0)), rtol=1e-5)
    assert_close(jnp.sin(x + 1.5), np.sin(np.arange(8.0) + 1.5), rtol=1e-5)


def test_device_span_times_a_whole_call_where_the_device_has_a_clock(backend: str) -> None:
    """backend.device_span(): one device time for everything a jit call records (None
    where the device has no clock); results stay right, and kernels timed inside it
    (someone listening) keep their own times."""
    x, w = sample_data((4, 6), np.float32), sample_data((6, 6), np.float32, seed=1)
    xs, ws = jnp.asarray(x), jnp.asarray(w)
    f = jaxlab.jit(_layers)
    want = _layers(xs, ws)
    dev = get_device(backend).backend
    with jaxlab.capture() as log:
        with dev.device_span() as span:
            got = f(xs, ws)
    for g, e in zip(got, want):
        assert_close(g, np.asarray(e), rtol=1e-5)
    if getattr(dev, "timestamps", False):
        assert span.ms is not None and span.ms > 0
        assert log.kernels()
        assert all(e.device_ms is not None and e.device_ms > 0 for e in log if e.kind == "kernel")
    else:
        assert span.ms is None
    with dev.device_span() as span:   # nobody listening: the call stays one batch
        got = f(xs, ws)
    assert_close(got[1], np.asarray(want[1]), rtol=1e-5)
    assert (span.ms is not None) == bool(getattr(dev, "timestamps", False))


def _sgd_step(w, b, x):
    """A training step's shape: several kernels, the results fed back as the inputs."""
    def loss(w, b):
        return jnp.mean(jnp.maximum(x @ w + b, 0.0) ** 2)
    gw, gb = jaxlab.grad(loss, argnums=(0, 1))(w, b)
    return w - 0.1 * gw, b - 0.1 * gb


def test_a_loop_feeding_results_back_replays_correctly(backend: str) -> None:
    """Call after call the inputs are the last results and the outputs come back from
    the buffer pool: a backend that binds a program once per set of buffers
    (webgpu's replay) must rebind or reuse exactly, never mix sets up."""
    x = sample_data((5, 4), np.float32)
    w0, b0 = sample_data((4, 3), np.float32, seed=1), sample_data((3,), np.float32, seed=2)
    step = jaxlab.jit(_sgd_step)
    w, b = jnp.asarray(w0), jnp.asarray(b0)
    ew, eb, xs = jnp.asarray(w0), jnp.asarray(b0), jnp.asarray(x)
    kept = []
    for i in range(7):
        w, b = step(w, b, xs)
        ew, eb = _sgd_step(ew, eb, xs)   # eager: no program
        if i % 3 == 0:
            kept.append((np.asarray(w), np.asarray(ew)))   # reads between calls too
    assert_close(w, np.asarray(ew), rtol=1e-5)
    assert_close(b, np.asarray(eb), rtol=1e-5)
    for got, want in kept:
        assert_close(got, want, rtol=1e-5)
