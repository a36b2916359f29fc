"""Waiting for the webgpu device: jit calls return after their submit (JAX's async
dispatch), reads and block_until_ready wait, and the spinning wait (fastpass.waiter with
spin_s) returns only once everything submitted is done."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu import WebGpuBackend, fastpass
from jaxlab.engine.devices import Device, unavailable
from tests.conftest import assert_close

pytestmark = pytest.mark.skipif(not jaxlab.devices("webgpu"),
                                reason=f"no WebGPU adapter: {unavailable()}")


@pytest.fixture(scope="module")
def spinning():
    """A device whose waits spin for up to 50 ms before sleeping."""
    return Device("webgpu", WebGpuBackend(spin_us=50_000))


def _queue_is_done(device) -> bool:
    """Whether everything submitted to `device` has finished: a work-done callback
    registered now fires in one poll that does not wait only if so."""
    from wgpu.backends.wgpu_native._ffi import ffi, lib
    from wgpu.backends.wgpu_native._api import new_struct
    fired = []

    @ffi.callback("void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)")
    def done(status, message, user1, user2):
        fired.append(status)
    info = new_struct("WGPUQueueWorkDoneCallbackInfo",
                      mode=lib.WGPUCallbackMode_AllowProcessEvents, callback=done)
    lib.wgpuQueueOnSubmittedWorkDone(device.queue._internal, info)
    lib.wgpuDevicePoll(device._internal, False, ffi.NULL)
    seen = bool(fired)
    device._poll_wait()   # let the callback fire before it is released
    return seen


_square = jaxlab.jit(lambda x: x @ x / 256.0)


@pytest.mark.parametrize("spin_s", [0.5, 1e-7])   # done while spinning; gave up and slept
def test_spinning_wait_returns_once_the_queue_is_done(spinning, spin_s):
    backend = spinning.backend
    wait = fastpass.waiter(backend.device, spin_s)
    with jaxlab.default_device(spinning):
        x = jnp.asarray(np.random.default_rng(0).standard_normal((256, 256), np.float32))
        _square(x).block_until_ready()   # compiled before the wait is watched
        outs = [_square(x) for _ in range(4)]
        backend._flush()
        wait()
        assert _queue_is_done(backend.device)
        assert np.isfinite(np.asarray(outs[-1])).all()


def test_queued_jit_calls_reuse_buffers_in_order(spinning):
    """Thirty calls queued with no wait between them, each freeing the previous result
    while the GPU may still read it: the pool hands it out again only in queue order."""
    step = jaxlab.jit(lambda a, b: (a * 0.5 + b, a - b))
    a0 = np.linspace(-1, 1, 300, dtype=np.float32)
    b0 = np.cos(a0)
    a, b = a0.copy(), b0.copy()
    for _ in range(30):
        a, b = a * np.float32(0.5) + b, a - b
    with jaxlab.default_device(spinning):
        x, y = jnp.asarray(a0), jnp.asarray(b0)
        for _ in range(30):
            x, y = step(x, y)
        assert_close(x, a, rtol=1e-5, atol=1e-5)
        assert_close(y, b, rtol=1e-5, atol=1e-5)


def test_an_error_between_queued_calls_leaves_them_right(spinning):
    step = jaxlab.jit(lambda a: a * 2.0 + 1.0)
    with jaxlab.default_device(spinning):
        x = jnp.asarray(np.arange(6, dtype=np.float32))
        outs = [step(x)]
        with pytest.raises(TypeError):
            step(x, x)   # wrong number of arguments, as JAX raises it
        outs.append(step(outs[0]))
        assert_close(outs[1], (np.arange(6) * 2.0 + 1.0) * 2.0 + 1.0)


def test_a_replayed_program_submitted_in_parts_is_right(spinning, monkeypatch):
    """JAXLAB_WEBGPU_SUBMIT_EVERY=2: a jit program's launches go to the GPU two at a time
    (it starts on the first while the host records the rest)."""
    from jaxlab.backends.webgpu import runtime
    monkeypatch.setattr(runtime, "SUBMIT_EVERY", 2)

    def chain(a, b):
        c = (a @ b).sum(axis=0)
        d = jnp.exp(a - a.max()) @ b
        return c * 2.0, d.T @ d, jnp.sqrt(jnp.abs(d)).sum()
    a = np.random.default_rng(1).standard_normal((8, 5)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    f = jaxlab.jit(chain)
    with jaxlab.default_device(spinning):
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        for _ in range(3):   # the first call records launch by launch, later ones replay
            outs = f(ja, jb)
    d = np.exp(a - a.max()) @ b
    for got, want in zip(outs, ((a @ b).sum(axis=0) * 2.0, d.T @ d, np.sqrt(np.abs(d)).sum())):
        assert_close(got, want, rtol=1e-4, atol=1e-5)
