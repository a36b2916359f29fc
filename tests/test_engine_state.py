"""jaxlab/state.py: per-context state stays in its thread, shared state is safe from
several threads, and `import jaxlab` starts no device and probes no GPU."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import events, state
from jaxlab.engine import devices

THREADS = 8
ROOT = Path(__file__).resolve().parent.parent


def _run_threads(target, n: int = THREADS) -> None:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def test_import_starts_no_device_and_probes_no_gpu() -> None:
    code = ("import sys, jaxlab; from jaxlab import state; "
            "print(sorted(m for m in ('wgpu', 'wasmtime', 'jaxlab.backends.webgpu', "
            "'jaxlab.backends.wasm', 'jaxlab.backends.cpu') if m in sys.modules), "
            "len(state.platforms.devices), "
            "[n for n, p in state.platforms.priorities.items() if not isinstance(p, int)])")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == ["[]", "0", "['webgpu']"]


def test_a_priority_function_is_asked_once_by_threads_listing_devices(monkeypatch) -> None:
    from jaxlab.backends.cpu import CpuBackend
    monkeypatch.delenv(devices.PLATFORMS_VARIABLE, raising=False)   # list by priority
    asked = []

    def priority() -> int:
        asked.append(threading.get_ident())
        threading.Event().wait(0.02)        # a probe that takes a while
        return -100
    devices.register_backend("statetest", CpuBackend, priority)
    try:
        _run_threads(lambda: devices.devices("statetest"))
        assert len(asked) == 1
        assert state.platforms.priorities["statetest"] == -100
    finally:
        devices.unregister_backend("statetest")
    assert "statetest" not in state.platforms.factories


def test_captures_and_default_device_belong_to_their_thread() -> None:
    seen: list[tuple] = []

    def work() -> None:
        with jaxlab.default_device("cpu"), jaxlab.capture() as log:
            (jnp.arange(3) * 2).block_until_ready()
            seen.append((len(log.kernels()), len(state.captures.get()),
                         state.default_device.get().platform))
    with jaxlab.capture() as outer:
        _run_threads(work)
    assert outer.kernels() == []        # the threads' events went to their own logs
    assert seen == [(1, 1, "cpu")] * THREADS
    assert state.captures.get() == ()


def test_subscribers_added_and_removed_while_threads_emit() -> None:
    got: list = []
    stop = threading.Event()

    def emit_until_stopped() -> None:
        with jaxlab.default_device("cpu"):
            while not stop.is_set():
                np.asarray(jnp.arange(4) + 1)

    emitters = [threading.Thread(target=emit_until_stopped) for _ in range(2)]
    for th in emitters:
        th.start()
    try:
        for _ in range(50):
            callback = got.append
            events.subscribe(callback)
            events.unsubscribe(callback)
        events.subscribe(got.append)
        while not got:
            threading.Event().wait(0.001)
        events.unsubscribe(got.append)
    finally:
        stop.set()
        for th in emitters:
            th.join()
    assert not state.subscribers
    assert all(isinstance(e, events.KernelEvent) for e in got)
