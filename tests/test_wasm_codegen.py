"""The wasm backend's own tests: generated WAT, module cache, traps, memory, the math
library's accuracy, and hand-built kernels run on wasm and on the cpu reference."""
from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("wasmtime")

import jaxlab  # noqa: E402
import jaxlab.numpy as jnp  # noqa: E402
from jaxlab.backends.cpu import run_kernel_numpy  # noqa: E402
from jaxlab.backends.wasm import create  # noqa: E402
from jaxlab.backends.wasm.analysis import RIDX  # noqa: E402
from jaxlab.backends.wasm.codegen import generate  # noqa: E402
from jaxlab.backends.wasm.memory import ALIGN, LinearMemory, size_class  # noqa: E402
from jaxlab.backends.wasm import runtime as wasm_runtime  # noqa: E402
from jaxlab.backends.wasm.runtime import WasmBackend, WasmTrapError  # noqa: E402
from jaxlab.backends.wasm import tune as wasm_tune  # noqa: E402
from jaxlab.backends.wasm.tune import tune  # noqa: E402
from jaxlab.ir.alu import AluExp, AluOp  # noqa: E402
from jaxlab.ir.dtypes import DType  # noqa: E402
from jaxlab.ir.evaluate import _erf, _erfc  # noqa: E402
from jaxlab.ir.kernel import Kernel, Reduction, acc_variable  # noqa: E402
from tests.ir_helpers import gidx, load, ridx

I32, U32, F16, F32, BOOL = DType.int32, DType.uint32, DType.float16, DType.float32, DType.bool


@pytest.fixture(scope="module")
def wasm() -> WasmBackend:
    return create()





def elementwise(exp: AluExp, shape: tuple, *inputs: np.ndarray) -> Kernel:
    return Kernel(shape=shape, inputs=tuple((DType(a.dtype.name), a.size) for a in inputs),
                  exp=exp)


def run_wasm(be: WasmBackend, kernel: Kernel, *arrays: np.ndarray, **overrides) -> np.ndarray:
    handles = []
    for a in arrays:
        h = be.allocate(max(4, a.nbytes))
        be.write(h, a)
        handles.append(h)
    out = be.allocate(max(4, kernel.size * kernel.dtype.itemsize))
    be.dispatch(be.prepare_kernel(kernel, overrides or None), handles, [out])
    result = be.read(out, kernel.dtype, kernel.size)
    for h in handles + [out]:
        be.free(h)
    return result


def run_cpu(kernel: Kernel, *arrays: np.ndarray) -> np.ndarray:
    out = np.zeros(kernel.size, kernel.dtype.np)
    run_kernel_numpy(kernel, [np.ascontiguousarray(a).reshape(-1) for a in arrays], out)
    return out


def same(wasm_out: np.ndarray, cpu_out: np.ndarray, ulps: int = 0) -> None:
    if cpu_out.dtype.kind == "f" and ulps:
        np.testing.assert_array_max_ulp(wasm_out, cpu_out, maxulp=ulps)
    else:
        np.testing.assert_array_equal(wasm_out, cpu_out)


# --- generated text ----------------------------------------------------------------

def wat_of(kernel: Kernel) -> str:
    plan, form = tune(kernel)
    return generate(kernel, plan, form).text


def test_contiguous_float_kernel_is_simd_with_a_scalar_tail() -> None:
    x = np.zeros(10, np.float32)
    k = elementwise(load(0, gidx(10)) * 2.0 + 1.0, (10,), x)
    wat = wat_of(k)
    assert "v128.load" in wat and "f32x4.mul" in wat and "f32x4.add" in wat
    assert "v128.store" in wat
    # sizes not divisible by 4 end with a scalar loop over the last elements
    assert "f32.load" in wat and "f32.store" in wat and "col = 8, 9, ... < 10" in wat
    assert ";; n1 = n0 * 2.0" in wat          # a comment per IR node
    assert "(local $v0 v128)" in wat or "$v0 v128" in wat   # named locals


def test_vector_math_is_inlined_and_scalar_math_called() -> None:
    x = np.zeros(6, np.float32)
    wat = wat_of(elementwise(load(0, gidx(6)).unary(AluOp.Sin), (6,), x))
    assert ";; $sincos, inlined" in wat
    assert "(call $sin (f32x4.splat" in wat                           # the two-element tail
    assert "(func $reduce_big" in wat and "(func $erf" not in wat     # only what is called


def test_rewritten_math_is_primitive_ops() -> None:
    x = np.zeros(6, np.float32)
    wat = wat_of(elementwise(load(0, gidx(6)).unary(AluOp.Atan), (6,), x))
    assert "(call" not in wat and "(func $" not in wat.replace("(func $kernel", "")
    assert "f32x4.div" in wat and "f32.div" in wat   # atan's reduction, in both forms
    assert ";;   out[gidx] = atan(in0[gidx])" in wat     # the header shows the kernel as given


def test_exp_and_tanh_are_native_multiply_adds() -> None:
    x = np.zeros(6, np.float32)
    wat = wat_of(elementwise(load(0, gidx(6)).unary(AluOp.Tanh), (6,), x))
    # tanh's e^2a inside, one-sided (a >= 0)
    assert ";; $tanh, inlined" in wat and ";; $exp_nonneg, inlined" in wat
    assert "f32x4.relaxed_madd" in wat and "(call $tanh (f32x4.splat" in wat   # the tail


def test_codegen_needs_no_wasmtime() -> None:
    code = ("import sys; import jaxlab.backends.wasm.codegen, jaxlab.backends.wasm.tune; "
            "assert 'wasmtime' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_matmul_gets_a_register_tile_with_reasons() -> None:
    a, b = np.zeros((16, 8), np.float32), np.zeros((8, 12), np.float32)
    g, r = gidx(16 * 12), ridx(8)
    body = load(0, (g // 12) * 8 + r) * load(1, r * 12 + g % 12)
    k = Kernel(shape=(16, 12), inputs=((F32, a.size), (F32, b.size)), exp=body,
               reduction=Reduction(AluOp.Add, 8, acc_variable(F32)), reduce_shape=(8,))
    plan, form = tune(k)
    tuning = plan.record(form, threads="1 thread")
    assert tuning.value("lanes") == "col" and tuning.value("vector_width") == 4
    assert tuning.value("tile") == "6x8" and "rows" in tuning.reason("tile")
    wat = generate(k, plan, form).text
    assert "i8x16.shuffle 4 5 6 7 4 5 6 7" in wat   # a row value broadcast to the lanes
    assert "f32x4.relaxed_madd" in wat and tuning.value("fma") and "reduce: ridx" in wat
    assert tuning.value("pack") and "(param $scratch i32)" in wat and "packed panel" in wat


def matmul_kernel(m: int, k: int, n: int) -> Kernel:
    """out[m, n] = a[m, k] @ b[k, n], as the tracer would write it."""
    g, r = gidx(m * n), ridx(k)
    body = load(0, (g // n) * k + r) * load(1, r * n + g % n)
    return Kernel(shape=(m, n), inputs=((F32, m * k), (F32, k * n)), exp=body,
                  reduction=Reduction(AluOp.Add, k, acc_variable(F32)), reduce_shape=(k,))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("m,n", [(40, 12), (37, 19), (30, 16)])
def test_packed_matmul_in_blocks_of_rows_matches_numpy(monkeypatch, m, n, keep) -> None:
    """Blocks of rows (the L2 budget shrunk so that small shapes get several): a shorter
    last block (30 rows: 12, 12, 6), rows left after the last whole tile (40, 37), columns
    after the last packed strip (12, 19), on two threads; each strip packed once and kept
    for the later blocks (the threads share the strips), or (over the scratch budget) once
    per block (two strips at most: the threads share the rows)."""
    monkeypatch.setattr(wasm_tune, "ROW_BLOCK_BYTES", 1024)
    if not keep:
        monkeypatch.setattr(wasm_tune, "KEPT_STRIPS_BYTES", 0)
    k = 24
    kernel = matmul_kernel(m, k, n)
    plan, _ = tune(kernel)
    assert plan.pack and plan.row_block == 12 and plan.keep_strips == keep
    be = WasmBackend(threads=2)
    be.min_thread_work = 0
    rng = np.random.default_rng(m)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(run_wasm(be, kernel, a, b).reshape(m, n), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("m,k,n", [(40, 33, 10), (13, 7, 10), (29, 20, 17), (50, 16, 40)])
def test_packed_matmul_with_few_strips_splits_rows_across_threads(m, k, n, threads,
                                                                   transposed) -> None:
    """Under 8 strips of columns (a 10-wide layer: one strip and 2 columns after it), the
    threads take ranges of whole row tiles, the last one also the rows after them, and
    each packs every strip: 13 rows are 2 tiles and 1 row (4 threads: 2 get work), 29 rows
    4 tiles and 5 rows, 33 and 7 steps leave ridx after the last four. The row-side
    operand read down its columns (x.T @ g) is packed per thread for its rows (a row panel
    from 4 strips on: 40 columns)."""
    g, r = gidx(m * n), ridx(k)
    row_side = load(0, r * m + g // n) if transposed else load(0, (g // n) * k + r)
    kernel = Kernel(shape=(m, n), inputs=((F32, m * k), (F32, k * n)),
                    exp=row_side * load(1, r * n + g % n),
                    reduction=Reduction(AluOp.Add, k, acc_variable(F32)), reduce_shape=(k,))
    plan, _ = tune(kernel)
    assert plan.pack and plan.threads_take_rows
    be = WasmBackend(threads=threads)
    be.min_thread_work = 0
    exe = be.prepare_kernel(kernel)
    assert exe.tuning.value("threads_take") == "rows"
    assert len(exe.program.chunks) == min(threads, m // plan.tile_rows)
    rng = np.random.default_rng(m * n + threads)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    stored = np.ascontiguousarray(a.T) if transposed else a
    np.testing.assert_allclose(run_wasm(be, kernel, stored, b).reshape(m, n), a @ b,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("m,n", [(5, 5), (9, 6), (20, 7), (14, 11)])
def test_matmul_columns_after_the_last_vector_in_pairs_match_numpy(m, n, threads) -> None:
    """The 1-3 columns after a register tile's last whole vector: two at a time (each row
    value loaded once for both), then one; unpacked (5 and 9 rows) and packed (20, 14),
    the threads taking rows."""
    kernel = matmul_kernel(m, 19, n)
    plan, _ = tune(kernel)
    assert plan.tile_rows > 1 and plan.pack == (m >= 12)
    be = WasmBackend(threads=threads)
    be.min_thread_work = 0
    rng = np.random.default_rng(m * n)
    a, b = rng.standard_normal((m, 19)).astype(np.float32), rng.standard_normal((19, n)).astype(np.float32)
    exe = be.prepare_kernel(kernel)
    assert (n % 4 >= 2) == ("acc add= body[row, col+1]" in exe.source)
    np.testing.assert_allclose(run_wasm(be, kernel, a, b).reshape(m, n), a @ b, rtol=1e-5, atol=1e-5)


ROW_SIDES = {   # the row-side operand of a packed matmul with packed rows: its index, its value
    "relu": (lambda m, k, g, r: (g // 40) * k + r, lambda x: x.max(0.0), lambda a: np.maximum(a, 0)),
    "transposed": (lambda m, k, g, r: r * m + g // 40, lambda x: x, lambda a: a),
    "transposed relu": (lambda m, k, g, r: r * m + g // 40, lambda x: x.max(0.0),
                        lambda a: np.maximum(a, 0)),
}


@pytest.mark.parametrize("side", ROW_SIDES)
@pytest.mark.parametrize("m,k,block", [(13, 21, 0), (40, 24, 2048)])
def test_matmul_with_packed_rows_matches_numpy(monkeypatch, side, m, k, block) -> None:
    """A computed or transposed row-side operand is packed per block of rows: 13 rows (a
    whole tile and 1 row left) with 21 steps (vectors of four, then one at a time), and
    40 rows in two blocks of 18 (the L2 budget shrunk) with 4 rows left after the last."""
    if block:
        monkeypatch.setattr(wasm_tune, "ROW_BLOCK_BYTES", block)
    index, op, reference = ROW_SIDES[side]
    n = 40   # five strips of 8 columns: enough for the rows' copy to pay
    g, r = gidx(m * n), ridx(k)
    body = op(load(0, index(m, k, g, r))) * load(1, r * n + g % n)
    kernel = Kernel(shape=(m, n), inputs=((F32, m * k), (F32, k * n)), exp=body,
                    reduction=Reduction(AluOp.Add, k, acc_variable(F32)), reduce_shape=(k,))
    plan, _ = tune(kernel)
    assert plan.pack_rows and plan.row_block == (18 if block else 0)
    assert plan.keep_strips == bool(block)   # the packed rows and the kept strips share scratch
    be = WasmBackend(threads=2)
    be.min_thread_work = 0
    rng = np.random.default_rng(k)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    stored = np.ascontiguousarray(a.T) if "transposed" in side else a
    np.testing.assert_allclose(run_wasm(be, kernel, stored, b).reshape(m, n), reference(a) @ b,
                               rtol=1e-5, atol=1e-5)
    # a tile of another height (a knob) gets blocks of whole tiles of that height
    assert be.prepare_kernel(kernel, {"tile": (4, 2)}).tuning.value("row_block") == \
        (20 if block else "all rows")
    np.testing.assert_allclose(run_wasm(be, kernel, stored, b, tile=(4, 2)).reshape(m, n),
                               reference(a) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,block", [(13, 21, 0), (40, 24, 2048)])
def test_matmul_of_two_transposed_operands_matches_numpy(monkeypatch, m, k, block) -> None:
    """Both operands read down their columns (a weight gradient, x.T @ g.T): the row panel
    is packed four rows at a time and each column strip four ridx at a time, both turned
    by shuffles; 21 steps leave a last ridx lane by lane, 13 rows a last row alone, and
    40 rows come in blocks (the L2 budget shrunk) that reuse the kept strips."""
    if block:
        monkeypatch.setattr(wasm_tune, "ROW_BLOCK_BYTES", block)
    n = 40
    g, r = gidx(m * n), ridx(k)
    body = load(0, r * m + g // n) * load(1, (g % n) * k + r)
    kernel = Kernel(shape=(m, n), inputs=((F32, m * k), (F32, k * n)), exp=body,
                    reduction=Reduction(AluOp.Add, k, acc_variable(F32)), reduce_shape=(k,))
    plan, form = tune(kernel)
    assert plan.pack_rows and plan.keep_strips == bool(block)
    # 8 shuffles turn four vectors: one turn for the rows, one per vector of a strip
    assert generate(kernel, plan, form).text.count(";; turned") == 8 * (1 + plan.tile_vectors)
    be = WasmBackend(threads=2)
    be.min_thread_work = 0
    rng = np.random.default_rng(k)
    at, bt = rng.standard_normal((k, m)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)
    np.testing.assert_allclose(run_wasm(be, kernel, at, bt).reshape(m, n), at.T @ bt.T,
                               rtol=1e-5, atol=1e-5)


def test_row_sum_vectorises_along_ridx() -> None:
    x = np.zeros((3, 37), np.float32)
    body = load(0, gidx(3) * 37 + ridx(37))
    k = Kernel(shape=(3,), inputs=((F32, x.size),), exp=body,
               reduction=Reduction(AluOp.Add, 37, acc_variable(F32)), reduce_shape=(37,))
    plan, form = tune(k)
    assert plan.lane is RIDX and plan.accumulators > 1
    wat = generate(k, plan, form).text
    assert "v128.load" in wat and "the last ridx one at a time" in wat


def test_row_sum_of_exp_puts_lanes_across_rows() -> None:
    """A heavy body (exp) is vectorised across rows: its gathers cost less than the
    spilled accumulators of lanes along ridx."""
    x = np.random.default_rng(3).standard_normal((13, 37)).astype(np.float32)
    with jaxlab.default_device("wasm"), jaxlab.capture() as log:
        got = np.asarray(jaxlab.jit(lambda v: jnp.sum(jnp.exp(v - 1.0), axis=1))(jnp.asarray(x)))
    np.testing.assert_allclose(got, np.exp(x - 1.0).sum(axis=1), rtol=2e-6)
    tuning = next(e.tuning for e in log if e.tuning is not None)
    assert tuning.value("lanes") == "col" and "float ops" in tuning.reason("lanes")


# --- runtime: events, cache, traps ---------------------------------------------------

def test_event_carries_wat_tuning_and_cache_hit() -> None:
    with jaxlab.default_device("wasm"):
        # a size no other test uses: the scalars are kernel arguments, not kernel text
        x = jnp.asarray(np.arange(1237, dtype=np.float32))
        with jaxlab.capture() as log:
            (x * 3 + 1).block_until_ready()
            (x * 3 + 1).block_until_ready()
    first, second = log.kernels()
    assert first.backend == "wasm" and first.source_language == "wat"
    assert first.source.startswith("(module") and first.tuning.reason("lanes")
    assert first.compile_ms > 0
    assert not first.cache_hit and second.cache_hit


def test_module_cache_by_text() -> None:
    be = create()
    k = elementwise(load(0, gidx(5)) + 1.0, (5,), np.zeros(5, np.float32))
    first, second = be.prepare_kernel(k), be.prepare_kernel(k)
    assert not first.extra["module_cache_hit"] and second.extra["module_cache_hit"]
    assert first.program.module is second.program.module


def test_trap_is_a_python_error_and_the_device_keeps_working(wasm: WasmBackend) -> None:
    k = elementwise(load(0, gidx(8)) + 1.0, (8,), np.zeros(8, np.float32))
    exe = wasm.prepare_kernel(k)
    out = wasm.allocate(32)
    with pytest.raises(WasmTrapError, match="E_8") as info:
        wasm.dispatch(exe, [(1 << 32) - 16], [out])   # an input far outside the memory
    assert isinstance(info.value, RuntimeError) and "out of bounds" in str(info.value)
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(run_wasm(wasm, k, x), x + 1)


def test_out_of_fuel_traps_then_recovers() -> None:
    be = WasmBackend(fuel=50)
    x = np.arange(4096, dtype=np.float32)
    k = elementwise(load(0, gidx(x.size)) * 2.0, (x.size,), x)
    with pytest.raises(WasmTrapError, match="fuel"):
        run_wasm(be, k, x)
    be.fuel = 10 ** 7
    np.testing.assert_array_equal(run_wasm(be, k, x), x * 2)


# --- memory --------------------------------------------------------------------------

def test_allocator_aligns_reuses_and_grows_without_moving_data(wasm: WasmBackend) -> None:
    mem: LinearMemory = wasm.memory
    a = mem.allocate(100)
    b = mem.allocate(100)
    assert a % ALIGN == 0 and b % ALIGN == 0 and a != b
    mem.write(a, np.arange(25, dtype=np.int32))
    mem.free(b)
    assert mem.allocate(90) == b                         # same size class: reused
    before = mem.size
    big = [mem.allocate(3 << 20) for _ in range(4)]      # forces the memory to grow
    assert mem.size > before
    np.testing.assert_array_equal(mem.read(a, I32, 25), np.arange(25))
    for h in big + [a, b]:
        mem.free(h)


@pytest.mark.parametrize("n, cls", [(1, 64), (64, 64), (65, 128), (1024, 1024), (1025, 1280),
                                    (5000, 5120), (1 << 20, 1 << 20), ((1 << 20) + 1, 1310720)])
def test_size_classes(n: int, cls: int) -> None:
    assert size_class(n) == cls and cls % ALIGN == 0 and cls - n <= max(ALIGN - 1, n // 4)


# --- the math library, in ulps of NumPy float32 ------------------------------------------

def _unary(fn: str, x: np.ndarray, wasm: WasmBackend) -> np.ndarray:
    op = {"exp": AluOp.Exp, "log": AluOp.Log, "sin": AluOp.Sin, "cos": AluOp.Cos,
          "tanh": AluOp.Tanh, "atan": AluOp.Atan, "asin": AluOp.Asin, "erf": AluOp.Erf,
          "erfc": AluOp.Erfc}[fn]
    k = elementwise(load(0, gidx(x.size)).unary(op), (x.size,), x)
    return run_wasm(wasm, k, x)


REFERENCES = {"exp": (np.exp, (-87, 88)), "log": (np.log, (1e-30, 1e30)),
              "sin": (np.sin, (-1e4, 1e4)), "cos": (np.cos, (-1e4, 1e4)),
              "tanh": (np.tanh, (-10, 10)), "atan": (np.arctan, (-100, 100)),
              "asin": (np.arcsin, (-1, 1)), "erf": (_erf, (-5, 5)), "erfc": (_erfc, (-5, 10))}


@pytest.mark.parametrize("fn", sorted(REFERENCES))
def test_math_within_4_ulp(fn: str, wasm: WasmBackend) -> None:
    ref, (lo, hi) = REFERENCES[fn]
    rng = np.random.default_rng(1)
    if fn == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 20001)).astype(np.float32)
    else:
        x = rng.uniform(lo, hi, 20001).astype(np.float32)
    np.testing.assert_array_max_ulp(_unary(fn, x, wasm), ref(x).astype(np.float32), maxulp=4)


@pytest.mark.parametrize("fn", sorted(REFERENCES))
def test_math_edges_like_numpy(fn: str, wasm: WasmBackend) -> None:
    ref = REFERENCES[fn][0]
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, -3e38, 1.0, -1.0,
                  2.0, 0.5, 89.0, -104.0, 1e7], np.float32)
    with np.errstate(all="ignore"):
        want = ref(x).astype(np.float32)
    np.testing.assert_array_max_ulp(_unary(fn, x, wasm), want, maxulp=4)


# --- hand-built kernels against the cpu reference ------------------------------------------

INT_EDGES = np.array([0, 1, -1, 2, -2, 7, -7, 2 ** 31 - 1, -2 ** 31, 100, -100], np.int32)


@pytest.mark.parametrize("op", [AluOp.Idiv, AluOp.Mod])
@pytest.mark.parametrize("dtype", [I32, U32])
def test_integer_division_never_traps(op: AluOp, dtype: DType, wasm: WasmBackend) -> None:
    a, b = np.meshgrid(INT_EDGES, INT_EDGES)
    a, b = a.reshape(-1).astype(dtype.np), b.reshape(-1).astype(dtype.np)
    n = a.size
    k = elementwise(AluExp(op, dtype, (load(0, gidx(n), dtype), load(1, gidx(n), dtype))),
                    (n,), a, b)
    same(run_wasm(wasm, k, a, b), run_cpu(k, a, b))
    for c in (0, -1, 1, 4, 7, -3):      # constant divisors take their own paths
        kc = elementwise(AluExp(op, dtype, (load(0, gidx(n), dtype), AluExp.const(c, dtype))),
                         (n,), a)
        same(run_wasm(wasm, kc, a), run_cpu(kc, a))


FLOATS = np.array([0.0, -0.0, 1.5, -1.5, 2.5, np.nan, np.inf, -np.inf, 3e9, -3e9, 4.3e9,
                   1e-40, 65504.0, 70000.0, -0.7], np.float32)


@pytest.mark.parametrize("to", [I32, U32, BOOL, F16])
def test_casts_saturate_like_the_reference(to: DType, wasm: WasmBackend) -> None:
    n = FLOATS.size
    k = elementwise(load(0, gidx(n)).cast(to), (n,), FLOATS)
    same(run_wasm(wasm, k, FLOATS), run_cpu(k, FLOATS))


def test_nan_propagation_and_comparisons(wasm: WasmBackend) -> None:
    x = np.array([np.nan, 1.0, np.nan, -2.0, 0.0, 5.0, np.nan], np.float32)
    y = np.array([1.0, np.nan, np.nan, 3.0, -0.0, 5.0, 2.0], np.float32)
    n = x.size
    a, b = load(0, gidx(n)), load(1, gidx(n))
    three = AluExp.const(3.0, F32)
    for exp in (a.max(b), a.min(b), a.ne(b).cast(F32), a.lt(b).cast(F32),
                a.ne(b).where(a, b), AluExp(AluOp.Mod, F32, (a, b)),
                a.max(3.0), a.min(-1.5), three.min(a), three.max(a)):   # pmin/pmax by a constant
        k = elementwise(exp, (n,), x, y)
        same(run_wasm(wasm, k, x, y), run_cpu(k, x, y))


def test_shifts_use_the_low_five_bits(wasm: WasmBackend) -> None:
    x = np.array([1, -8, 12345, -1, 7, 3, 2 ** 30], np.int32)
    s = np.array([0, 1, 31, 32, 33, 65, -1], np.int32)
    n = x.size
    for op in (AluOp.Shl, AluOp.Shr):
        for dt in (I32, U32):
            exp = AluExp(op, dt, (load(0, gidx(n), dt), load(1, gidx(n), dt)))
            k = elementwise(exp, (n,), x.astype(dt.np), s.astype(dt.np))
            same(run_wasm(wasm, k, x.astype(dt.np), s.astype(dt.np)),
                 run_cpu(k, x.astype(dt.np), s.astype(dt.np)))


def test_float16_and_bool_buffers(wasm: WasmBackend) -> None:
    rng = np.random.default_rng(2)
    h = (rng.standard_normal(23) * 100).astype(np.float16)
    n = h.size
    x = load(0, gidx(n), F16)
    k = elementwise((x * x + 3.0).lt(x.unary(AluOp.Exp)), (n,), h)
    same(run_wasm(wasm, k, h), run_cpu(k, h))
    k2 = elementwise(x * 1.7 - x.unary(AluOp.Sqrt), (n,), h)
    same(run_wasm(wasm, k2, h), run_cpu(k2, h), ulps=1)
    rows = h[:20].reshape(4, 5)
    body = load(0, gidx(4) * 5 + ridx(5), F16)
    k3 = Kernel(shape=(4,), inputs=((F16, 20),), exp=body,
                reduction=Reduction(AluOp.Add, 5, acc_variable(F16)), reduce_shape=(5,))
    same(run_wasm(wasm, k3, rows), run_cpu(k3, rows))


def test_threefry_matches_the_reference(wasm: WasmBackend) -> None:
    n = 9
    c = np.arange(n, dtype=np.uint32)
    k0, k1 = AluExp.const(42, U32), AluExp.const(7, U32)
    for word in (0, 1):
        exp = AluExp(AluOp.Threefry2x32, U32, (k0, k1, load(0, gidx(n), U32), load(0, gidx(n), U32) ^ 5),
                     word)
        k = elementwise(exp, (n,), c)
        same(run_wasm(wasm, k, c), run_cpu(k, c))


@pytest.mark.parametrize("op", [AluOp.Add, AluOp.Mul, AluOp.Max, AluOp.Min])
@pytest.mark.parametrize("dtype", [F32, I32, U32, BOOL])
@pytest.mark.parametrize("shape", [(3, 37), (37, 3), (1, 5), (9, 64)])
def test_reductions_along_both_axes(op: AluOp, dtype: DType, shape: tuple,
                                    wasm: WasmBackend) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 3).astype(dtype.np)
    if dtype is F32 and op is AluOp.Mul:
        x = (1 + rng.standard_normal(shape) * 0.01).astype(np.float32)
    m, r = shape
    for index, out in ((gidx(m) * r + ridx(r), m), (ridx(m) * r + gidx(r), r)):
        k = Kernel(shape=(out,), inputs=((dtype, x.size),), exp=load(0, index, dtype),
                   reduction=Reduction(op, m * r // out, acc_variable(dtype)),
                   reduce_shape=(m * r // out,))
        got, want = run_wasm(wasm, k, x), run_cpu(k, x)
        if dtype is F32:
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)
        else:
            same(got, want)


def test_clamped_gather_of_unbounded_indices(wasm: WasmBackend) -> None:
    x = np.arange(10, dtype=np.float32)
    idx = np.array([-5, 0, 3, 9, 10, 1000, -1], np.int32)
    n = idx.size
    k = elementwise(load(0, load(1, gidx(n), I32)), (n,), x, idx)
    same(run_wasm(wasm, k, x, idx), run_cpu(k, x, idx))


def test_wasm_is_the_default_device_without_a_gpu() -> None:
    names = [d.platform for d in jaxlab.devices()]
    assert "wasm" in names
    gpu_first = names[0] == "webgpu"
    assert names.index("wasm") < names.index("cpu") and (gpu_first or names[0] == "wasm")


# --- threads ---------------------------------------------------------------------------

def test_large_kernels_split_across_threads_over_one_memory() -> None:
    be = WasmBackend(threads=3)
    x = np.random.default_rng(4).standard_normal((300, 700)).astype(np.float32)
    k = elementwise(load(0, gidx(x.size)).unary(AluOp.Exp) * 2.0, x.shape, x)
    exe = be.prepare_kernel(k)
    assert exe.tuning.value("threads").startswith("3 threads") and "(memory 1 65536 shared)" in exe.source
    np.testing.assert_array_max_ulp(run_wasm(be, k, x).reshape(x.shape), np.exp(x) * 2, maxulp=4)
    small = elementwise(load(0, gidx(7)) + 1.0, (7,), x[0, :7])
    assert be.prepare_kernel(small).tuning.value("threads").startswith("1 thread")


def test_a_reduction_needs_more_work_than_an_elementwise_kernel_to_split() -> None:
    """A reduction's body evaluation (a lane of a multiply-add) is cheaper than an
    elementwise output, but a hand-off costs the same: it splits only from
    REDUCTION_HANDOFF times the elementwise threshold (W4's 256 x 10 x 512 layer, 1.3M
    evaluations, stays on one thread); a caller's threads still win."""
    be = WasmBackend(threads=2)
    small, large = matmul_kernel(256, 512, 10), matmul_kernel(64, 512, 128)
    work = be.min_thread_work
    assert 256 * 512 * 10 > work and 64 * 512 * 128 >= work * wasm_runtime.REDUCTION_HANDOFF
    assert be.prepare_kernel(small).tuning.value("threads").startswith("1 thread (1310720 body")
    assert be.prepare_kernel(large).tuning.value("threads").startswith("2 threads")
    assert be.prepare_kernel(small, {"threads": 2}).tuning.value("threads").startswith("2 thread")
    flat = elementwise(load(0, gidx(work)) + 1.0, (work,), np.zeros(work, np.float32))
    assert be.prepare_kernel(flat).tuning.value("threads").startswith("2 threads")


def test_timing_parts_records_each_threads_part() -> None:
    """A profile of a split dispatch: one part per thread over the whole extent, one of
    them run by the dispatching thread; nothing is recorded outside the block."""
    be = WasmBackend(threads=2)
    be.min_thread_work = 0
    x = np.arange(4096, dtype=np.float32)
    k = elementwise(load(0, gidx(x.size)) + 1.0, x.shape, x)
    with be.timing_parts() as parts:
        np.testing.assert_array_equal(run_wasm(be, k, x), x + 1)
    assert sorted(p.chunk for p in parts) == [(0, 2048), (2048, 4096)]
    assert sorted(p.helper for p in parts) == [False, True]
    assert all(p.kernel == k.name and p.wall_s >= 0 and p.start_s >= 0 for p in parts)
    run_wasm(be, k, x)
    assert len(parts) == 2


def test_pool_threads_raise_what_a_job_raised_and_keep_serving() -> None:
    pool = wasm_runtime._Pool(2, "test-pool")
    total, failed = pool.submit(lambda a, b: a + b, 2, 3), pool.submit(lambda: 1 / 0)
    assert total.result() == 5
    with pytest.raises(ZeroDivisionError):
        failed.result()
    assert pool.submit(threading.get_ident).result() != threading.get_ident()
    pool.shutdown()
    assert not any(t.is_alive() for t in pool._threads)


def test_a_trap_in_a_helper_thread_is_raised_once_all_threads_stop() -> None:
    be = WasmBackend(threads=2)
    be.min_thread_work = 0
    k = elementwise(load(0, gidx(64)) + 1.0, (64,), np.zeros(64, np.float32))
    exe = be.prepare_kernel(k)
    out = be.allocate(256)
    with pytest.raises(WasmTrapError, match="out of bounds"):
        be.dispatch(exe, [(1 << 32) - 512], [out])
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(run_wasm(be, k, x), x + 1)
