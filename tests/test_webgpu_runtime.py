"""The webgpu runtime on a real adapter (lavapipe in CI): errors, memory, timing."""
import dataclasses
import gc
import os
import stat

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu import (DeviceLostError, WebGpuError, WebGpuMemoryError,
                                    WgslCompileError, adapter)
from jaxlab.backends.webgpu.codegen import Program
from jaxlab.backends.webgpu.plan import single
from jaxlab.backends.base import Executable
from jaxlab.engine.devices import Device
from jaxlab.ir.dtypes import DType
from tests.conftest import assert_close

from jaxlab.backends.webgpu import WebGpuBackend
from jaxlab.engine.devices import unavailable

AVAILABLE = bool(jaxlab.devices("webgpu"))
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"no WebGPU adapter: {unavailable()}")


@pytest.fixture(scope="module")
def backend():
    return jaxlab.devices("webgpu")[0].backend


@pytest.fixture
def device(backend):
    dev = Device("webgpu", backend)
    with jaxlab.default_device(dev):
        yield dev


BROKEN = """@group(0) @binding(0) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  out[i] = undefined_name * 2.0;
}
"""


def test_broken_shader_shows_message_and_source_lines(backend):
    with pytest.raises(WgslCompileError) as info:
        backend.compile_wgsl(BROKEN, "broken_kernel")
    err = info.value
    text = str(err)
    assert err.line == 6 and "undefined_name" in err.compiler_message
    assert "broken_kernel" in text and "Generated WGSL around line 6" in text
    assert "> 6 |   out[i] = undefined_name * 2.0;" in text and "  5 |   let i = id.x;" in text


def test_compile_error_from_codegen_then_work_continues(backend, device, monkeypatch):
    from jaxlab.backends.webgpu import plan
    real = plan.generate

    def broken(*args):
        program = real(*args)
        return dataclasses.replace(program, source=program.source.replace("let gidx", "let 1gidx"))
    monkeypatch.setattr(plan, "generate", broken)
    with pytest.raises(WgslCompileError, match="1gidx"):
        np.asarray(jnp.asarray(np.arange(5, dtype=np.float32)) * 7.0)
    monkeypatch.setattr(plan, "generate", real)
    assert_close(jnp.asarray(np.arange(5, dtype=np.float32)) * 3.0, np.arange(5) * 3.0)


def test_too_large_allocation_is_a_clear_error(backend, device):
    with pytest.raises(WebGpuMemoryError, match="cannot allocate .* at most"):
        backend.allocate(backend.max_binding + 4)
    with pytest.raises(MemoryError):
        jnp.zeros((backend.max_binding // 4 + 1,), np.float32).block_until_ready()
    assert_close(jnp.ones(3) + 1, np.full(3, 2.0, np.float32))


def test_validation_error_is_an_exception_then_work_continues(backend, device):
    program = Program("@compute @workgroup_size(1)\nfn main() {}\n",
                      (backend.limits.max_groups_per_dim + 1, 1, 1), 1, "too_many_groups")
    exe = Executable(single(program, 0))
    out = backend.allocate(4)
    with pytest.raises(WebGpuError, match="65535|dispatch"):
        backend.dispatch(exe, [], [out])
    assert_close(jnp.arange(4) * 2, np.arange(4) * 2)


def test_lost_device_raises_then_a_fresh_one_works():
    be = WebGpuBackend()
    dev = Device("webgpu", be)
    with jaxlab.default_device(dev):
        x = jnp.asarray(np.arange(4, dtype=np.float32))
        x.block_until_ready()
        be.device.destroy()
        with pytest.raises(DeviceLostError):
            np.asarray(x + 1)
        with pytest.raises(DeviceLostError, match="lost"):
            np.asarray(x)     # its buffer went with the old device
        assert_close(jnp.asarray(np.arange(4, dtype=np.float32)) + 1, np.arange(4) + 1.0)


def test_timestamps_give_device_time(backend, device):
    x = jnp.asarray(np.ones(1000, np.float32))
    x.block_until_ready()
    with jaxlab.capture() as log:
        (x * 2 + 1).block_until_ready()
    (event,) = log.kernels()
    if backend.timestamps:
        assert isinstance(event.device_ms, float) and event.device_ms >= 0.0
    else:
        assert event.device_ms is None


def test_dispatch_does_not_wait(backend, device):
    x = jnp.asarray(np.arange(100, dtype=np.float32))
    x.block_until_ready()
    kernel, inputs = _kernel_of(x * 2.0)   # x and the scalar 2.0
    exe = backend.prepare_kernel(kernel)
    outs = [backend.allocate(400) for _ in range(40)]   # more than one submit batch
    for out in outs:
        assert backend.dispatch(exe, [b.handle for b in inputs], [out]) is None
    for out in outs[::13]:
        np.testing.assert_array_equal(backend.read(out, DType.float32, 100),
                                      np.arange(100) * 2.0)


def _kernel_of(array):
    from jaxlab.engine.lower import lower
    return lower(array._lazy)


def test_buffers_are_pooled(backend):
    a = backend.allocate(1000)
    raw = a.buffer
    backend.synchronize()
    backend.free(a)
    b = backend.allocate(1000)
    assert b.buffer is raw
    backend.free(b)


def test_buffers_in_collected_cycles_stay_valid(device):
    # an Array collected inside a reference cycle is finalized with its wgpu
    # buffer: the pool must not hand that buffer out again (one collection for all
    # the cycles: a full collection in a long test process takes seconds)
    for i in range(30):
        x = jnp.asarray(np.full(64, i, np.float32)) + 1
        x.block_until_ready()
        cycle = [x]
        cycle.append(cycle)
        del x, cycle
    gc.collect()
    for i in range(30):
        assert float((jnp.asarray(np.full(64, i, np.float32)) + 1).sum()) == 64.0 * (i + 1)


def test_two_dimensional_grid_on_the_device(backend, device):
    small = dataclasses.replace(backend.limits, max_groups_per_dim=7)
    be = WebGpuBackend()
    be.limits = small
    dev = Device("webgpu", be)
    with jaxlab.default_device(dev), jaxlab.capture() as log:
        x = np.arange(10000, dtype=np.float32)
        assert_close(jnp.asarray(x) * 2 - 1, x * 2 - 1)
        assert_close(jnp.asarray(x.reshape(100, 100)).sum(axis=1), x.reshape(100, 100).sum(1),
                     rtol=1e-6)
    assert any(e.source.count("wid.y *") for e in log.kernels())


def test_tiled_matmul_and_conv_match_numpy(device, rng):
    a, b = rng.standard_normal((70, 45), np.float32), rng.standard_normal((45, 66), np.float32)
    with jaxlab.capture() as log:
        out = jnp.asarray(a) @ jnp.asarray(b) * 2.0
        assert_close(out, a @ b * 2.0, rtol=1e-5, atol=1e-5)
    assert log.kernels()[0].tuning.value("strategy") == "tiled"
    x = rng.standard_normal((2, 3, 12, 12), np.float32)
    w = rng.standard_normal((20, 3, 3, 3), np.float32)
    with jaxlab.capture() as log:
        y = jaxlab.lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 1), "SAME")
        y = np.asarray(y)
    with jaxlab.default_device("cpu"):
        expected = np.asarray(jaxlab.lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w),
                                                              (1, 1), "SAME"))
    assert_close(y, expected, rtol=1e-4, atol=1e-5)
    assert "tiled" in [e.tuning.value("strategy") for e in log.kernels()]


def _run_with(backend, array, tuning):
    """array's kernel compiled with `tuning` overrides, run, read back."""
    kernel, inputs = _kernel_of(array)
    exe = backend.prepare_kernel(kernel, tuning)
    out = backend.allocate(max(4, kernel.size * kernel.dtype.itemsize))
    backend.dispatch(exe, [b.handle for b in inputs], [out])
    result = backend.read(out, kernel.dtype, kernel.size).reshape(kernel.shape)
    backend.free(out)
    return result, exe.tuning


@pytest.mark.parametrize("strategy", ["reduce", "group_reduce", "tiled"])
def test_every_strategy_agrees_with_numpy(backend, device, rng, strategy):
    x = rng.standard_normal((24, 300), np.float32)
    y = rng.standard_normal((300, 20), np.float32)
    cases = [(lambda a: a @ jnp.asarray(y), x @ y),
             (lambda a: a.max(axis=1), x.max(axis=1)),
             (lambda a: (a > 1.0).any(axis=1), (x > 1.0).any(axis=1)),
             (lambda a: a.astype(np.float16).sum(axis=1),
              x.astype(np.float16).astype(np.float32).sum(axis=1).astype(np.float16))]
    ran = 0
    for build, expected in cases:
        try:
            got, tuning = _run_with(backend, build(jnp.asarray(x)), {"strategy": strategy})
        except ValueError:
            continue   # not a contraction: no tiled layout for it
        assert tuning.value("strategy") == strategy
        assert_close(got.reshape(expected.shape), expected, rtol=2e-3, atol=1e-4)
        ran += 1
    assert ran >= 1


def test_vec4_elementwise_agrees_with_numpy(backend, device, rng):
    x = rng.standard_normal((16, 12), np.float32)
    bias = rng.standard_normal(12).astype(np.float32)
    ints = rng.integers(-9, 9, (16, 12)).astype(np.int32)
    cases = [(lambda a: jnp.tanh(a * 1.5 + 0.3) * jnp.exp(-a * a) + jnp.sin(a) + bias,
              np.tanh(x * 1.5 + 0.3) * np.exp(-x * x) + np.sin(x) + bias),
             (lambda a: a.T * 2.0 + a[0, 0], x.T * 2.0 + x[0, 0]),   # no operand at gidx
             (lambda a: a + jnp.asarray(ints).astype(np.float32), x + ints)]
    for build, expected in cases:
        got, tuning = _run_with(backend, build(jnp.asarray(x)), {"upcast": 4})
        assert tuning.value("upcast") == 4
        assert_close(got.reshape(expected.shape), expected, rtol=2e-6, atol=1e-6)
    odd, _ = _run_with(backend, jnp.asarray(x[:, :5]) + 1.0, {"upcast": 4})   # 80 % 4 == 0
    assert_close(odd, x[:, :5] + 1.0)
    shaded = backend.prepare_kernel(_kernel_of(jnp.asarray(x) * 2.0)[0], {"upcast": 4}).source
    assert "array<vec4<f32>>" in shaded and "out[thread] = vec4<f32>(" in shaded


@pytest.mark.parametrize("subgroups", [None, False])
def test_workgroup_folds_with_and_without_subgroups(rng, subgroups):
    dev = Device("webgpu", WebGpuBackend(subgroups=subgroups))
    assert dev.backend.lang.subgroups == (subgroups is None and "subgroup" in
                                          dev.backend._adapter.features)
    x = rng.standard_normal(3000).astype(np.float32)
    ints = rng.integers(-1000, 1000, 3000).astype(np.int32)
    with jaxlab.default_device(dev), jaxlab.capture() as log:
        assert_close(jnp.asarray(x).sum(), x.astype(np.float64).sum(), rtol=1e-5)
        assert_close(jnp.asarray(ints).min(), ints.min())
        assert_close(jnp.asarray(np.abs(x)).max(), np.abs(x).max())
    assert all(e.tuning.value("strategy") == "group_reduce" for e in log.kernels())
    assert any("subgroupAdd" in e.source for e in log.kernels()) == dev.backend.lang.subgroups


def test_float16_without_shader_f16(rng):
    dev = Device("webgpu", WebGpuBackend(f16=False))
    assert not dev.backend.lang.f16
    x = rng.standard_normal((5, 7)).astype(np.float16)
    with jaxlab.default_device(dev):
        jx = jnp.asarray(x)
        assert_close(jx * 2 + 1, x * 2 + 1, rtol=1e-3)
        assert_close(jx.sum(axis=1), x.astype(np.float32).sum(axis=1).astype(np.float16),
                     rtol=1e-3, atol=1e-3)
        assert_close(jx > 0, x > 0)
        assert_close(jnp.sort(jx, axis=1), np.sort(x, axis=1))
        assert_close(jx.astype(np.float32), x.astype(np.float32))


def test_runtime_dir_is_made_private(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    adapter.ensure_runtime_dir()
    made = os.environ["XDG_RUNTIME_DIR"]
    assert os.path.isdir(made) and stat.S_IMODE(os.stat(made).st_mode) == 0o700
    good = tmp_path / "mine"
    good.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(good))
    adapter.ensure_runtime_dir()
    assert os.environ["XDG_RUNTIME_DIR"] == str(good)


def test_adapter_choice(monkeypatch):
    monkeypatch.setenv(adapter.ENV_CHOICE, "software")
    try:
        assert adapter.select_adapter().info["adapter_type"] == "CPU"
    except RuntimeError as exc:   # a GPU machine without Mesa's lavapipe
        assert "mesa-vulkan-drivers" in str(exc)
    monkeypatch.setenv(adapter.ENV_CHOICE, "fastest")
    with pytest.raises(ValueError, match="hardware"):
        adapter.select_adapter()


def test_info_reports_adapter_and_limits(backend):
    info = backend.info()
    assert info["backend"] == "webgpu" and info["max_kernel_inputs"] >= 7
    assert backend.max_kernel_inputs == \
        backend.device.limits["max-storage-buffers-per-shader-stage"] - 1


def test_autotune_times_every_candidate_and_remembers(device, rng, monkeypatch, tmp_path):
    from jaxlab import autotune
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    be = WebGpuBackend()
    dev = Device("webgpu", be)
    a, b = rng.standard_normal((40, 24), np.float32), rng.standard_normal((24, 36), np.float32)
    with jaxlab.default_device(dev), autotune(), jaxlab.capture() as log:
        assert_close(jnp.asarray(a) @ jnp.asarray(b), a @ b, rtol=1e-5, atol=1e-5)
    tuning = log.kernels()[0].tuning
    assert not tuning.autotuned.from_cache and tuning.autotuned.tuning_ms > 0
    found = tuning.autotuned.candidates
    assert len(found) >= 3 and sum(c.winner for c in found) == 1
    assert all(c.run_ms > 0 and c.compile_ms > 0 for c in found)
    winner = next(c for c in found if c.winner)
    assert winner.run_ms == min(c.run_ms for c in found)
    assert tuning.value("strategy") == dict(winner.settings)["strategy"]
    assert (tmp_path / "jaxlab" / "webgpu-autotune.json").exists()
    again = Device("webgpu", be)   # a fresh kernel cache: the disk answers, nothing is timed
    monkeypatch.setattr(be, "_measure", lambda kernel: pytest.fail("timed again"))
    with jaxlab.default_device(again), autotune(), jaxlab.capture() as log:
        assert_close(jnp.asarray(a) @ jnp.asarray(b), a @ b, rtol=1e-5, atol=1e-5)
    cached = log.kernels()[0].tuning.autotuned
    assert cached.from_cache and cached.candidates == found
    assert cached.measured_at == tuning.autotuned.measured_at


@pytest.mark.parametrize("tile", [(128, 128, 8, 8, 8), (64, 64, 16, 4, 4), (32, 64, 16, 2, 4),
                                  (128, 64, 16, 8, 8, 1, False), (64, 16, 16, 4, 2, 3, True)])
def test_tile_shapes_agree_with_numpy(backend, device, rng, tile):
    a = rng.standard_normal((130, 70), np.float32)   # edges: partial tiles in M, N and K
    b = rng.standard_normal((70, 129), np.float32)
    got, tuning = _run_with(backend, jnp.asarray(a) @ jnp.asarray(b),
                            {"strategy": "tiled", "tile": tile})
    assert tuning.value("tile") == f"{tile[0]}x{tile[1]}x{tile[2]}"
    assert_close(got, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tile", [(64, 64, 16, 4, 4, 1, True), (32, 32, 16, 2, 2, 2, False),
                                  (16, 64, 8, 2, 4, 2, True)])
def test_tiled_odd_shapes_agree_with_numpy(backend, device, rng, tile):
    """Transposed operands, a batch, K of 17 and 127, sides of 1 to 3 past a multiple of 4,
    and fused epilogues, through every tile path (vector rows, prefetch, split-K)."""
    x, y = rng.standard_normal((3, 17, 127), np.float32), rng.standard_normal((3, 127, 9),
                                                                               np.float32)
    p, q = rng.standard_normal((17, 33), np.float32), rng.standard_normal((21, 17), np.float32)
    bias = rng.standard_normal(21).astype(np.float32)
    w = rng.standard_normal((24, 32), np.float32)
    cases = [(lambda: jnp.asarray(x) @ jnp.asarray(y), x @ y),
             (lambda: jnp.tanh(jnp.asarray(p).T @ jnp.asarray(q).T + jnp.asarray(bias)),
              np.tanh(p.T @ q.T + bias)),
             (lambda: jnp.maximum(jnp.asarray(q) @ jnp.asarray(p), 0) * 2,
              np.maximum(q @ p, 0) * 2),
             # stored transposed: neighbouring threads take neighbouring rows of M
             (lambda: (jnp.asarray(q) @ jnp.asarray(p)).T - 1, (q @ p).T - 1),
             # aligned rows: vec4 loads, and the epilogue reads the same input element-wise
             (lambda: jnp.asarray(w) @ jnp.asarray(w.T[:, :20]) + jnp.asarray(w)[:, :1],
              w @ w.T[:, :20] + w[:, :1])]
    for build, expected in cases:
        got, tuning = _run_with(backend, build(), {"strategy": "tiled", "tile": tile})
        assert tuning.value("split_k") == tile[5]
        assert_close(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("columns", [8, 32])
def test_column_groups_agree_with_numpy(backend, device, rng, columns):
    x = rng.standard_normal((300, 45), np.float32)   # 45 outputs: the last group overhangs
    for build, expected in [(lambda a: a.sum(axis=0), x.sum(axis=0)),
                            (lambda a: jnp.exp(a).max(axis=0) * 2, np.exp(x).max(axis=0) * 2),
                            (lambda a: a.astype(np.float16).sum(axis=0),
                             x.astype(np.float16).astype(np.float32).sum(axis=0)
                             .astype(np.float16))]:
        got, tuning = _run_with(backend, build(jnp.asarray(x)),
                                {"strategy": "group_reduce", "group_outputs": columns})
        assert tuning.value("group_outputs") == columns
        assert_close(got, expected, rtol=2e-3, atol=1e-3)


def _f16_edge_values(rng):
    halves = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    grid = halves[np.isfinite(halves)].astype(np.float32)
    ties = (grid[:-1] + grid[1:]) / 2     # exactly between neighbours (in f32)
    noise = rng.standard_normal(4000).astype(np.float32) * np.float32(10.0) ** \
        rng.integers(-9, 6, 4000).astype(np.float32)
    return np.concatenate([grid, ties, np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf),
                           noise, [65519.0, 65520.0, 1e6, -1e6, np.inf, -np.inf, 3e-8, 2.9e-8,
                                   2.98023224e-08, 1e-30]]).astype(np.float32)


@pytest.mark.parametrize("native", [True, False])
def test_narrowing_to_float16_rounds_to_nearest_even(rng, native):
    dev = Device("webgpu", WebGpuBackend(f16=native))
    x = _f16_edge_values(rng)
    with jaxlab.default_device(dev):
        got = np.asarray(jnp.asarray(x).astype(np.float16))
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
