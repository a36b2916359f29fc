"""Several Python threads on one device: every result right, no exception, and
jit dispatches that do not grow the process."""
from __future__ import annotations

import gc
import os
import threading
from typing import Callable

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp

THREADS = 4
CALLS = {"cpu": 300, "wasm": 300, "webgpu": 300}   # per thread


def _cases() -> list[Callable[[np.ndarray, int], tuple[object, np.ndarray]]]:
    """Each case: (a jaxlab result, the NumPy expectation) for an input and a call number.
    The jitted functions are shared by the threads, as a notebook's would be."""
    f = jaxlab.jit(lambda x: x * 2. + 1.)
    g = jaxlab.grad(lambda x: (jnp.sin(x) * x).sum())
    h = jaxlab.jit(lambda x, y: (x @ y).sum(axis=0) - 1.)

    def eager(v, i):
        return jnp.exp(jnp.asarray(v) * .5).sum(), np.exp(v * .5).sum()

    def jitted(v, i):
        return f(jnp.asarray(v)), v * 2 + 1

    def grad(v, i):
        return g(jnp.asarray(v)), np.cos(v) * v + np.sin(v)

    def retrace(v, i):   # a new shape every few calls: compiles while others run
        n = 1 + i % 5
        a = v[:n * 2].reshape(n, 2)
        return h(jnp.asarray(a), jnp.asarray(a.T)), (a @ a.T).sum(axis=0) - 1
    return [eager, jitted, grad, retrace]


def _stress(backend: str) -> tuple[int, list, list]:
    cases = _cases()
    calls, wrong, errors = [0] * THREADS, [], []

    def work(t: int) -> None:
        with jaxlab.default_device(backend):
            rng = np.random.default_rng(t)
            for i in range(CALLS[backend]):
                v = rng.standard_normal(10).astype(np.float32)
                name = cases[i % len(cases)].__name__
                try:
                    got, want = cases[i % len(cases)](v, i)
                    if not np.allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5):
                        wrong.append((t, i, name))
                except Exception as exc:   # every exception here is a failure to report
                    errors.append((t, i, name, repr(exc)))
                calls[t] += 1
    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return sum(calls), wrong, errors


def test_threads_share_a_device_and_get_right_answers(backend: str) -> None:
    calls, wrong, errors = _stress(backend)
    assert (wrong, errors) == ([], []), f"{backend}: {len(wrong)} wrong, {len(errors)} errors"
    assert calls == THREADS * CALLS[backend]
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(jnp.asarray(x) * 3.), x * 3)   # still works


def test_a_trace_in_one_thread_does_not_capture_another_threads_ops(backend: str) -> None:
    inside, release = threading.Event(), threading.Event()

    def slow(x):
        inside.set()
        release.wait(10)
        return x + 1.

    results = {}
    th = threading.Thread(target=lambda: results.update(
        jit=np.asarray(jaxlab.jit(slow)(jnp.ones(3)))))
    with jaxlab.default_device(backend):
        th.start()
        assert inside.wait(10)
        eager = jnp.ones(3) * 5.          # while the other thread is tracing
        assert type(eager) is jaxlab.Array
        release.set()
        th.join()
        np.testing.assert_array_equal(np.asarray(eager), np.full(3, 5.))
    np.testing.assert_array_equal(results["jit"], np.full(3, 2.))


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads RSS from /proc")
def test_jit_dispatches_keep_memory_flat(backend: str) -> None:
    f = jaxlab.jit(lambda x: x * 2. + 1.)
    x = jnp.ones(4)

    def run(n: int) -> None:
        y = x
        for _ in range(n):
            y = f(x)
        np.testing.assert_array_equal(np.asarray(y), np.full(4, 3.))
        gc.collect()
    run(2000)   # warm: caches, pools and allocator arenas reach their size
    before = _rss()
    run(10_000)
    after = _rss()
    assert abs(after - before) <= 0.05 * before, f"RSS {before >> 20} -> {after >> 20} MiB"


def test_threads_asking_for_a_new_device_start_one_backend() -> None:
    from jaxlab.backends.cpu import CpuBackend
    from jaxlab.engine import devices

    started = []

    def slow_factory() -> CpuBackend:
        started.append(threading.get_ident())
        threading.Event().wait(0.05)          # a driver that takes a while to start
        return CpuBackend()
    devices.register_backend("threadtest", slow_factory, priority=-100)
    try:
        got = []
        threads = [threading.Thread(target=lambda: got.append(devices.get_device("threadtest")))
                   for _ in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(started) == 1 and len(got) == THREADS and all(d is got[0] for d in got)
    finally:
        devices.unregister_backend("threadtest")
