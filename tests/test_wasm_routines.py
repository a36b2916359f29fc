"""The wasm device's routines are generated WebAssembly (not NumPy): their WAT in the
events, their agreement with the cpu device (NumPy) on edge cases, and a batch split
across threads."""
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.lax import linalg as lax_linalg
from tests.conftest import assert_close

RNG = np.random.default_rng(7)
SPD = (lambda m: m @ m.T + 4 * np.eye(4, dtype=np.float32))(
    RNG.standard_normal((4, 4)).astype(np.float32))
CALLS = {
    "sort": lambda: jnp.sort(jnp.asarray([3.0, -0.0, np.nan, 1.0, 0.0])),
    "argsort": lambda: jnp.argsort(jnp.asarray([3, 1, 2, 1], dtype=jnp.int32)),
    "cholesky": lambda: jnp.linalg.cholesky(jnp.asarray(SPD)),
    "triangular_solve": lambda: lax_linalg.triangular_solve(
        jnp.asarray(SPD), jnp.ones((2, 4)), lower=True),
    "lu": lambda: lax_linalg.lu(jnp.asarray(SPD))[0],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_routine_is_generated_wat(name):
    with jaxlab.default_device("wasm"), jaxlab.capture() as log:
        np.asarray(CALLS[name]())
    (event,) = [e for e in log if e.kind == "routine"]
    assert event.source_language == "wat" and '(func $kernel (export "kernel")' in event.source
    assert event.tuning.value("algorithm")
    with jaxlab.default_device("cpu"):
        want = np.asarray(CALLS[name]())
    with jaxlab.default_device("wasm"):
        got = np.asarray(CALLS[name]())
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_narrow_dtypes_sort_through_wider_keys():
    x = np.array([[3, 0, 1, 1], [1, 0, 0, 1]], bool)
    h = np.array([2.5, -1.0, np.nan, 0.5], np.float16)
    with jaxlab.default_device("wasm"):
        assert_close(jnp.sort(jnp.asarray(x)), np.sort(x))
        assert_close(jnp.argsort(jnp.asarray(x)), np.argsort(x, kind="stable").astype(np.int32))
        assert_close(jnp.sort(jnp.asarray(h)), np.sort(h))


def test_singular_triangular_solve_and_failed_cholesky_match_numpy():
    t = np.array([[1.0, 0.0], [2.0, 0.0]], np.float32)
    b = np.array([[1.0], [1.0]], np.float32)
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    results = {}
    for device in ("cpu", "wasm"):
        with jaxlab.default_device(device):
            results[device] = (
                np.asarray(lax_linalg.triangular_solve(jnp.asarray(t), jnp.asarray(b),
                                                       left_side=True, lower=True)),
                np.asarray(jnp.linalg.cholesky(jnp.asarray(not_pd))))
    for got, want in zip(results["wasm"], results["cpu"]):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))


def test_lu_pivots_past_nans_and_zero_columns_as_the_cpu_device():
    """Across blocks of the transposed panel: a NaN wins the pivot search, a zero pivot
    leaves its multipliers; the pivots and where NaNs spread are the cpu device's."""
    a = np.random.default_rng(2).standard_normal((37, 37)).astype(np.float32)
    a[7, 20], a[:, 11] = np.nan, 0.0
    results = {}
    for device in ("cpu", "wasm"):
        with jaxlab.default_device(device):
            results[device] = [np.asarray(v) for v in lax_linalg.lu(jnp.asarray(a))]
    (lu, pivots, perm), (want_lu, want_pivots, want_perm) = results["wasm"], results["cpu"]
    np.testing.assert_array_equal(pivots, want_pivots)
    np.testing.assert_array_equal(perm, want_perm)
    np.testing.assert_array_equal(np.isnan(lu), np.isnan(want_lu))
    assert_close(np.nan_to_num(lu), np.nan_to_num(want_lu), rtol=1e-4, atol=1e-4)


def test_batch_split_across_threads():
    """Enough rows that the batch is shared by the device's threads (when it has two)."""
    x = RNG.standard_normal((64, 2048)).astype(np.float32)
    with jaxlab.default_device("wasm"), jaxlab.capture() as log:
        out = np.asarray(jnp.argsort(jnp.asarray(x), axis=-1))
    np.testing.assert_array_equal(out, np.argsort(x, axis=-1, kind="stable"))
    threads = jaxlab.engine.devices.get_device("wasm").backend.threads
    (event,) = [e for e in log if e.kind == "routine"]
    assert event.tuning.value("threads") == min(threads, 64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [9, 1 << 16])   # 8- and 11-bit digits
def test_sort_keeps_zero_signs_and_nan_bits(x64, dtype, n):
    """A sort moves keys, which hold -0.0 as +0.0 and every NaN as one: the values they
    do not give back are put back bit for bit, in the row's (stable) order."""
    ints = np.uint64 if dtype is np.float64 else np.uint32
    top = ints(1) << ints(8 * np.dtype(dtype).itemsize - 1)
    odd_nans = (np.array([np.nan, np.nan, np.nan], dtype).view(ints) | np.array([1, 0, 3], ints)
                | np.array([0, top, top], ints)).view(dtype)
    pool = np.concatenate([np.array([0.0, -0.0, 1.0, -2.0, np.inf, np.nan], dtype), odd_nans])
    x = RNG.choice(pool, (2, n))
    with jaxlab.default_device("wasm"):
        got = np.asarray(jnp.sort(jnp.asarray(x)))
    np.testing.assert_array_equal(got.view(ints), np.sort(x, kind="stable").view(ints))


def _team_sort(be, name, x):
    from jaxlab.ir.dtypes import DType
    from jaxlab.ir.kernel import Routine
    dtype = DType(x.dtype.name)
    out_dtype = dtype if name == "sort" else DType.int32
    exe = be.prepare_routine(Routine(name, (((x.size,), dtype),), (((x.size,), out_dtype),)))
    hin, hout = be.allocate(x.nbytes), be.allocate(x.size * out_dtype.itemsize)
    be.write(hin, x)
    be.dispatch(exe, [hin], [hout])
    return exe, be.read(hout, out_dtype, x.size)


@pytest.fixture
def sort_team_from(monkeypatch):
    """Teams for rows from 2^17 (the default threshold is larger): quicker tests."""
    from jaxlab.backends.wasm import sorting
    monkeypatch.setattr(sorting, "TEAM_FROM", 1 << 17)
    return 1 << 17


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint64])
def test_long_rows_of_each_key_width_by_one_thread_and_a_team(threads, dtype, sort_team_from):
    """Keys made in SIMD lanes with a scalar tail, places as byte addresses, passes four
    keys a step: sort bit for bit and a stable argsort against NumPy, each thread's range
    ending inside a vector (a row 3 past the team's threshold), -0.0, NaNs of both signs
    and payloads, ties, and 64-bit keys whose high halves agree."""
    from jaxlab.backends.wasm.runtime import WasmBackend
    n = sort_team_from + 3
    if np.dtype(dtype).kind == "f":
        x = np.round(RNG.standard_normal(n), 2).astype(dtype)
        ints = np.dtype(f"u{x.itemsize}").type
        x[::7], x[1::9], x[2::11], x[3::13] = 0.0, -0.0, np.nan, -np.nan
        x[4::17] = (x[4::17].view(ints) & ints(0)) | np.array(np.nan, dtype).view(ints) | ints(5)
        x[4::17] = x[4::17].view(dtype)
    else:
        x = RNG.integers(0, 1 << 20, n).astype(dtype)   # high halves (of 64 bits) agree
        x[::5] = x[0]
    be = WasmBackend(threads=threads)
    exe, got = _team_sort(be, "sort", x)
    assert exe.tuning.value("threads") == threads
    bits = np.dtype(f"u{x.itemsize}")
    np.testing.assert_array_equal(got.view(bits), np.sort(x, kind="stable").view(bits))
    np.testing.assert_array_equal(_team_sort(be, "argsort", x)[1], np.argsort(x, kind="stable"))


def test_a_long_row_is_sorted_by_a_team_of_threads(sort_team_from):
    """One row long enough to share: three threads take its chunks (uneven) to count,
    thread 0 decides the passes and places, they take chunks to scatter; stable, and bit
    for bit NumPy's."""
    from jaxlab.backends.wasm.runtime import WasmBackend
    x = RNG.standard_normal(sort_team_from + 5).astype(np.float32)
    x[::7], x[1::9], x[2::11] = 0.0, -0.0, np.nan
    be = WasmBackend(threads=3)
    exe, got = _team_sort(be, "sort", x)
    assert exe.tuning.value("threads") == 3 and exe.program.team
    np.testing.assert_array_equal(got.view(np.uint32), np.sort(x, kind="stable").view(np.uint32))
    _, order = _team_sort(be, "argsort", np.round(x * 4))   # ties
    np.testing.assert_array_equal(order, np.argsort(np.round(x * 4), kind="stable"))


def test_a_trap_in_one_thread_of_a_team_stops_them_all(sort_team_from):
    """A thread out of fuel marks the trap: the others, waiting on the work list, trap
    too instead of waiting for it; the first trap is raised and the device keeps working."""
    import threading
    from jaxlab.backends.wasm.runtime import WasmBackend, WasmTrapError
    x = RNG.standard_normal(sort_team_from).astype(np.float32)
    be = WasmBackend(threads=2, fuel=200_000)
    raised = []

    def run():
        try:
            _team_sort(be, "sort", x)
        except WasmTrapError as exc:
            raised.append(exc.reason)
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive() and len(raised) == 1 and "fuel" in raised[0], raised
    be.fuel = 10 ** 10
    np.testing.assert_array_equal(_team_sort(be, "sort", x)[1], np.sort(x))


def test_a_helper_waiting_for_work_traps_when_the_host_marks_a_trap():
    """A helper waits for a phase that never comes (thread 0 trapped): the host's mark in
    the work list's words ends the wait with a trap instead of a hang."""
    import threading
    import wasmtime
    from jaxlab.backends.wasm.codegen import MEMORY_PAGES
    from jaxlab.backends.wasm.routine_text import work_list
    from jaxlab.backends.wasm.runtime import WasmBackend
    be = WasmBackend(threads=1)
    text = "\n".join([f'(module (import "env" "memory" (memory 1 {MEMORY_PAGES} shared))', work_list(["out0"]),
                      "(func $item (param $out0 i32) (param $scratch i32) (param $phase i32) (param $index i32))",
                      '(func (export "kernel") (param $sync i32) '
                      "(call $take_items (i32.const 0) (i32.const 0) (local.get $sync))))"])
    store = wasmtime.Store(be.wasm.engine)
    linker = wasmtime.Linker(be.wasm.engine)
    be.memory.define(linker, store)
    wait = linker.instantiate(store, wasmtime.Module(be.wasm.engine, text)).exports(store)["kernel"]
    sync = be.allocate(16)
    be.write(sync, np.zeros(4, np.int32))
    threading.Timer(0.05, lambda: be.write(sync + 8, np.ones(1, np.int32))).start()
    with pytest.raises(wasmtime.Trap, match="unreachable"):
        wait(store, sync)


def _cholesky_on(be, a, symmetrize=False):
    from jaxlab.ir.dtypes import DType
    from jaxlab.ir.kernel import Routine
    exe = be.prepare_routine(Routine("cholesky", ((a.shape, DType.float32),), ((a.shape, DType.float32),),
                                     (("symmetrize", symmetrize),)))
    hin, hout = be.allocate(a.nbytes), be.allocate(a.nbytes)
    be.write(hin, a)
    be.dispatch(exe, [hin], [hout])
    got = be.read(hout, DType.float32, a.size).reshape(a.shape)
    be.free(hin), be.free(hout)
    return exe, got


@pytest.fixture
def cholesky_team_from_128(monkeypatch):
    """Teams for matrices from 128 (the default threshold is larger): small and quick."""
    from jaxlab.backends.wasm import cholesky
    monkeypatch.setattr(cholesky, "TEAM_FROM", 128)
    return 128


def _spd(n, seed=0):
    m = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
    return (m @ m.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_large_cholesky_is_shared_through_a_work_list(threads, cholesky_team_from_128):
    """One matrix past the team's threshold, 3 past a block (tails in every kind of item:
    copied rows, panel rows, row blocks): the same factor whichever thread took which
    item, NaN below the diagonal when not positive definite, zeros above it."""
    from jaxlab.backends.wasm.runtime import WasmBackend
    be = WasmBackend(threads=threads)
    a = _spd(cholesky_team_from_128 + 3)
    exe, got = _cholesky_on(be, a)
    assert exe.tuning.value("threads") == threads and exe.program.team == (threads > 1)
    assert_close(got, np.linalg.cholesky(a.astype(np.float64)), rtol=1e-4, atol=1e-5)
    assert not np.triu(got, 1).any()
    # symmetrized as its rows are read: the factor of (a + a^T) / 2, bit for bit
    skewed = a + np.triu(np.random.default_rng(1).standard_normal(a.shape).astype(np.float32), 1)
    _, symmetrized = _cholesky_on(be, skewed, symmetrize=True)
    np.testing.assert_array_equal(symmetrized, _cholesky_on(be, (skewed + skewed.T) * np.float32(0.5))[1])
    a[40, 40] = -1.0
    _, failed = _cholesky_on(be, a)
    assert np.isnan(failed[np.tril_indices(a.shape[0])]).all() and not np.triu(failed, 1).any()


def test_thread_0_finishes_a_cholesky_without_a_helper_that_comes_late(cholesky_team_from_128):
    """The pool's only thread is busy: the factor is made by thread 0 alone, the late
    helper then joins nothing, and the team's scratch is freed once, by the last."""
    import threading
    from jaxlab.backends.wasm.runtime import WasmBackend
    be = WasmBackend(threads=2)
    a = _spd(cholesky_team_from_128)
    _cholesky_on(be, a)   # compiled, buffers pooled
    be.wasm.pool.submit(lambda: None).result()   # its helper has left
    live = be.memory_stats()["live_bytes"]
    busy = threading.Event()
    blocker = be.wasm.pool.submit(busy.wait, 30)
    _, got = _cholesky_on(be, a)
    assert_close(got, np.linalg.cholesky(a.astype(np.float64)), rtol=1e-4, atol=1e-5)
    busy.set()
    blocker.result()
    be.wasm.pool.submit(lambda: None).result()   # the late helper has run and left
    assert be.memory_stats()["live_bytes"] == live


def test_a_trap_in_a_cholesky_team_is_raised_and_the_device_works_after(cholesky_team_from_128):
    from jaxlab.backends.wasm.runtime import WasmBackend, WasmTrapError
    be = WasmBackend(threads=2, fuel=100_000)
    a = _spd(cholesky_team_from_128)
    with pytest.raises(WasmTrapError, match="fuel"):
        _cholesky_on(be, a)
    be.fuel = 10 ** 10
    assert_close(_cholesky_on(be, a)[1], np.linalg.cholesky(a.astype(np.float64)), rtol=1e-4, atol=1e-5)
