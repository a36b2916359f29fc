"""Devices, device_put, capture() events, the kernel cache, buffer lifetime, Array basics."""
from __future__ import annotations

import weakref

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine.buffer import Buffer
from tests.conftest import assert_close


# --- devices ---------------------------------------------------------------------

def test_devices_include_cpu() -> None:
    devices = jaxlab.devices()
    assert all(isinstance(d, jaxlab.Device) for d in devices)
    cpu = [d for d in devices if d.platform == "cpu"]
    assert len(cpu) == 1 and repr(cpu[0]) == "CpuDevice(id=0)"
    assert jaxlab.devices("cpu") == cpu


@pytest.mark.parametrize("by", ["name", "device"])
def test_default_device_by_name_or_object(by: str) -> None:
    cpu = jaxlab.devices("cpu")[0]
    with jaxlab.default_device("cpu" if by == "name" else cpu) as chosen:
        x = jnp.ones(3)
    assert chosen is cpu and x.device is cpu and x.devices() == {cpu}


def test_device_put(backend: str) -> None:
    device = jaxlab.devices(backend)[0]
    x = jaxlab.device_put(np.arange(4, dtype=np.float32))
    assert x.device is device
    assert jaxlab.device_put(x, backend) is x          # already there: no copy
    cpu = jaxlab.device_put(x, jaxlab.devices("cpu")[0])
    assert cpu.device.platform == "cpu"
    assert_close(cpu * 2, np.arange(4) * 2.0)


@pytest.mark.parametrize("bad, exc", [("nope", ValueError), (3, TypeError)])
def test_bad_device_raises(bad, exc: type) -> None:
    with pytest.raises(exc, match="nope|int"):
        with jaxlab.default_device(bad):
            pass
    with pytest.raises(exc):
        jaxlab.device_put(np.ones(2), bad)


def _elsewhere(backend: str) -> jaxlab.Device:
    """A device other than `backend`'s (cpu always exists)."""
    return next(d for d in jaxlab.devices() if d.platform != backend)


MIXED_OPS = {
    "add": lambda a, b: a + b,
    "dot": lambda a, b: jnp.dot(a, b),
    "where": lambda a, b: jnp.where(a > 0, a, b),
    "jit": lambda a, b: jaxlab.jit(lambda x, y: x * y)(a, b),
}


@pytest.mark.parametrize("op", MIXED_OPS)
def test_mixing_devices_names_both_operands(backend: str, op: str) -> None:
    here, there = jaxlab.devices(backend)[0], _elsewhere(backend)
    a = jaxlab.device_put(np.arange(1, 4, dtype=np.float32), here)
    b = jaxlab.device_put(np.ones(3, np.int32), there)
    with pytest.raises(ValueError, match="Received incompatible devices") as info:
        MIXED_OPS[op](a, b)
    message = str(info.value)
    assert str(here) in message and str(there) in message and "device_put" in message
    assert "[3]" in message
    # raised near the user's call: only the dispatch frames lie between it and this test
    # (jaxlab's frames told by module name: a checkout may itself sit in a folder named jaxlab)
    modules = [tb.tb_frame.f_globals.get("__name__", "") for tb in _walk(info.value.__traceback__)]
    assert len([m for m in modules if m == "jaxlab" or m.startswith("jaxlab.")]) <= 4, modules
    # the fix the message names works, and the engine is still usable
    moved = MIXED_OPS[op](a, jaxlab.device_put(b, here))
    expected = {"add": [2, 3, 4], "dot": 6, "where": [1, 2, 3], "jit": [1, 2, 3]}[op]
    assert_close(moved, np.asarray(expected, np.float32))


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_python_scalars_follow_the_data(backend: str) -> None:
    a = jaxlab.device_put(np.ones(3, np.float32), backend)
    out = 2.0 * a + jnp.float32(1)
    assert out.device is a.device
    assert_close(out, np.full(3, 3, np.float32))


# --- capture() and the kernel cache ---------------------------------------------

def _row_sum(x: np.ndarray):
    return (jnp.asarray(x) * 2.0 + 1.0).sum(axis=1).block_until_ready()


def test_capture_records_kernel_events(backend: str) -> None:
    x = np.ones((3, 37), np.float32)     # a shape no other test uses: a cache miss first
    with jaxlab.capture() as log:
        out = _row_sum(x)
        again = _row_sum(x)
    first, second = log.kernels()
    assert first.name == "r_3_37" and first.backend == backend and first.kind == "kernel"
    # the Python scalars 2.0 and 1.0 are kernel arguments (one-element inputs)
    assert first.input_shapes == [(111,), (1,), (1,)] and first.output_shapes == [(3,)]
    assert first.input_dtypes == ["float32"] * 3 and first.output_dtypes == ["float32"]
    assert first.ir.startswith("kernel r_3_37(in0: f32[111], in1: f32[1], in2: f32[1]) -> f32[3]")
    assert "acc = add over ridx < 37" in first.ir
    assert first.flops == 3 * 37 * 3       # mul, add, accumulate per element
    assert first.bytes == (111 + 2 + 3) * 4
    assert not first.cache_hit and second.cache_hit and first.key == second.key
    assert "r_3_37" in first.summary() and "(cached)" in second.summary()
    assert_close(out, x.sum(axis=1) * 2 + 37)
    assert_close(again, out)


def test_capture_blocks_nest_and_end() -> None:
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    with jaxlab.capture() as outer:
        (x + 1).block_until_ready()
        with jaxlab.capture() as inner:
            (x * 3).block_until_ready()
    (x - 1).block_until_ready()           # after both blocks: nobody records it
    assert len(outer) == 2 and len(inner) == 1 and inner[0] is outer[1]
    assert outer.summary().count("\n") == 1


def test_movement_only_records_nothing() -> None:
    x = jnp.asarray(np.ones((4, 6), np.float32))
    with jaxlab.capture() as log:
        y = jnp.transpose(jnp.reshape(x, (6, 4)))
    assert len(log) == 0 and y.shape == (4, 6)


# --- buffers live exactly as long as something refers to them --------------------

def _buffer(x) -> Buffer:
    buf = x._lazy.buffer
    assert isinstance(buf, Buffer)
    return buf


def test_input_buffer_freed_with_its_array(backend: str) -> None:
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    ref = weakref.ref(_buffer(x))
    del x
    assert ref() is None


def test_lazy_result_keeps_its_inputs_until_realized(backend: str) -> None:
    x = jnp.asarray(np.arange(6, dtype=np.float32))
    ref = weakref.ref(_buffer(x))
    y = x * 2.0
    del x
    assert ref() is not None               # y still has to read it
    y.block_until_ready()
    assert ref() is None                   # y now owns its own buffer
    out_ref = weakref.ref(_buffer(y))
    del y
    assert out_ref() is None


# --- Array basics ------------------------------------------------------------------

@pytest.mark.parametrize("data, text", [
    ([1.0, 2.0], "Array([1., 2.], dtype=float32)"),
    ([1, 2], "Array([1, 2], dtype=int32)"),
    (2.5, "Array(2.5, dtype=float32)"),
    ([True, False], "Array([ True, False], dtype=bool)"),
    ([[1.0, 2.0], [3.0, 4.0]], "Array([[1., 2.],\n       [3., 4.]], dtype=float32)"),
])
def test_repr_looks_like_jax(data, text: str) -> None:
    assert repr(jnp.asarray(data)) == text


def test_reading_values(backend: str) -> None:
    x = jnp.asarray([[1.0, 2.0], [3.0, 4.0]]) * 2.0
    assert x.block_until_ready() is x and x.is_realized
    assert x.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    arr = np.asarray(x)
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    assert np.asarray(x, dtype=np.int32).tolist() == [[2, 4], [6, 8]]
    total = jnp.sum(x)
    assert total.item() == 20.0 and isinstance(total.item(), float)
    assert float(total) == 20.0 and int(total) == 20 and bool(total)
    assert len(x) == 2


def test_item_of_a_larger_array_names_the_shape() -> None:
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        jnp.ones((2, 2)).item()
