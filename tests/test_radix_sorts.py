"""Sorts of rows long enough for webgpu's radix sort (backends/webgpu/radix.py), on
every device against NumPy's stable sort and JAX: ties, NaN of both signs, infinities
and signed zeros, several rows, rows that end inside a tile, small and 64-bit ints."""
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu import radix, radix_scan, radix_scatter, routines
from jaxlab.backends.webgpu.radix_scan import SCAN_BLOCK, THREADS
from jaxlab.backends.webgpu.runtime import WebGpuBackend
from jaxlab.engine.devices import Device
from tests.conftest import computes

RADIX_FROM = 4096        # the threshold here: rows just over it keep lavapipe quick
LONG = RADIX_FROM + 37   # a row over the radix threshold that ends inside a tile


@pytest.fixture(autouse=True)
def radix_from_shorter_rows(monkeypatch):
    """Rows of RADIX_FROM or more sort by radix on webgpu (these shapes only appear here,
    so no plan made with the usual threshold is reused)."""
    monkeypatch.setattr(routines, "RADIX_MIN_LENGTH", RADIX_FROM)


def _specials(rng, shape) -> np.ndarray:
    """Few distinct values (long runs of ties) and every special float."""
    x = np.round(rng.standard_normal(shape), 1).astype(np.float32)
    flat = x.reshape(-1)
    for step, value in ((7, 0.0), (11, -0.0), (13, np.nan), (17, np.inf), (19, -np.inf),
                        (23, -np.nan)):
        flat[::step] = value
    return x


def _check(x: np.ndarray, webgpu: bool) -> None:
    with jaxlab.capture() as log:
        got_sorted = np.asarray(jnp.sort(jnp.asarray(x)))
        got_order = np.asarray(jnp.argsort(jnp.asarray(x)))
    np.testing.assert_array_equal(got_order, np.argsort(x, axis=-1, kind="stable"))
    want = np.asarray(jjnp.sort(x))
    np.testing.assert_array_equal(got_sorted, want)
    if want.dtype.kind == "f":   # -0.0 and 0.0 keep their order, as JAX's stable sort
        np.testing.assert_array_equal(np.signbit(got_sorted), np.signbit(want))
    if webgpu:   # the record says which sort ran
        algorithms = {e.tuning.value("algorithm") for e in log if e.kind == "routine"}
        assert algorithms == {"LSD radix sort, 8-bit digits"}


def test_long_float_rows(backend):
    _check(_specials(np.random.default_rng(0), (3, LONG)), backend == "webgpu")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint16, np.bool_,
                                   np.float16])
def test_long_rows_of_other_dtypes(backend, dtype):
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, (2, LONG), dtype=np.int64, endpoint=True)
        x[:, ::3] = x[:, :1]   # ties
        x = x.astype(dtype)
    else:
        x = _specials(rng, (2, LONG)).astype(dtype)
    _check(x, backend == "webgpu")


def test_long_64_bit_rows(backend, x64):
    if not computes(backend, np.int64):
        return
    rng = np.random.default_rng(2)
    x = rng.integers(-2 ** 63, 2 ** 63 - 1, (2, LONG), dtype=np.int64)
    x[0, ::5] &= 0xFFFFFFFF   # equal high words
    x[1, ::3] = x[1, 0]       # equal values
    _check(x, backend == "webgpu")
    _check(x.view(np.uint64), backend == "webgpu")


@pytest.mark.parametrize("summed_blocks", [SCAN_BLOCK, 1])
def test_many_tiles_scan_in_two_levels(backend, monkeypatch, summed_blocks):
    """More (digit, tile) counts than one block of the prefix sum holds: each block
    adds up the sums of the blocks before it, or (past SUMMED_BLOCKS) the sums are
    scanned first."""
    monkeypatch.setattr(radix_scan, "SUMMED_BLOCKS", summed_blocks)
    # each case a length of its own: plans are kept by shape
    tiles = SCAN_BLOCK // 256 + (1 if summed_blocks > 1 else 2)
    x = np.random.default_rng(3).integers(-50, 50, THREADS * 8 * tiles).astype(np.int32)
    _check(x, backend == "webgpu")


@pytest.mark.parametrize("ranking", [radix_scatter.Ranking.NIBBLES,
                                     radix_scatter.Ranking.SPLITS])
@pytest.mark.parametrize("subgroups", [None, False])
def test_radix_sort_with_and_without_subgroups(monkeypatch, subgroups, ranking):
    monkeypatch.setattr(radix, "RANKING", ranking)
    dev = Device("webgpu", WebGpuBackend(subgroups=subgroups))
    x = _specials(np.random.default_rng(4), (2, LONG))
    with jaxlab.default_device(dev):
        _check(x, True)
        with jaxlab.capture() as log:
            jnp.sort(jnp.asarray(x)).block_until_ready()
    made = {(e.tuning.value("thread_scan"), e.tuning.value("ranking"))
            for e in log if e.kind == "routine"}
    assert made == {("subgroup" if dev.backend.lang.subgroups else "shared memory",
                     ranking.value)}


@pytest.mark.parametrize("items, length", [(8, LONG + 11), (3, LONG + 3)])
def test_nibble_counts_at_their_limits(monkeypatch, items, length):
    """NIBBLES: tiles whose keys all have one digit (a thread's 4-bit count of a nibble
    reaches 8, a 16-bit total the whole tile), rows of two digits, and threads that
    hold fewer keys (shared memory for fewer). Rows of a multiple of 4 keys are read
    four keys at a time (the first case), others through shared memory. (A length of
    its own per case: plans are kept by shape.)"""
    monkeypatch.setattr(radix, "RANKING", radix_scatter.Ranking.NIBBLES)
    monkeypatch.setattr(radix_scatter, "MAX_ITEMS", items)
    rng = np.random.default_rng(8)
    x = np.stack([np.full(length, 5), rng.integers(0, 2, length) * 0x0F0F0F0F,
                  rng.integers(-2 ** 31, 2 ** 31 - 1, length)]).astype(np.int32)
    with jaxlab.default_device("webgpu"), jaxlab.capture() as log:
        _check(x, True)
    assert {e.tuning.value("tile") for e in log if e.kind == "routine"} == {THREADS * items}


def _ballots(monkeypatch, offsets: radix_scatter.Offsets) -> Device:
    """A webgpu device whose sorts rank by subgroup ballots, placed by `offsets`."""
    monkeypatch.setattr(radix, "RANKING", radix_scatter.Ranking.BALLOTS)
    monkeypatch.setattr(radix, "OFFSETS", offsets)
    dev = Device("webgpu", WebGpuBackend())
    if not dev.backend.lang.subgroups:
        pytest.skip("the adapter has no subgroups")
    return dev


@pytest.mark.parametrize("slots, offsets", [(4, radix_scatter.Offsets.SCANNED),
                                            (32, radix_scatter.Offsets.LOOKBACK)])
def test_subgroups_taking_turns_at_a_slot(monkeypatch, slots, offsets):
    """Ballot ranking with as many slots of counts as subgroups, and with fewer (the
    subgroups sharing one take turns): lavapipe has 32 subgroups of 8 lanes."""
    monkeypatch.setattr(radix_scatter, "SLOTS", slots)
    with jaxlab.default_device(_ballots(monkeypatch, offsets)), jaxlab.capture() as log:
        _check(_specials(np.random.default_rng(5), (2, LONG)), True)
    assert {e.tuning.value("ranking") for e in log if e.kind == "routine"} == \
        {radix_scatter.Ranking.BALLOTS.value}


def test_tiles_walk_back_for_their_offsets(monkeypatch):
    """Decoupled look-back over the tiles of two rows; without spinning, a tile counts
    the keys of any tile before it that has not published its counts yet itself."""
    monkeypatch.setattr(radix_scatter, "SPINS", 0)
    monkeypatch.setattr(radix, "SOFTWARE_LOOKBACK_TILES", 64)
    dev = _ballots(monkeypatch, radix_scatter.Offsets.LOOKBACK)
    x = np.random.default_rng(6).integers(-1000, 1000, (2, 8 * THREADS * 8 + 5), np.int32)
    with jaxlab.default_device(dev):
        _check(x, True)
        with jaxlab.capture() as log:
            jnp.sort(jnp.asarray(x)).block_until_ready()
    assert {e.tuning.value("offsets") for e in log if e.kind == "routine"} == \
        {radix_scatter.Offsets.LOOKBACK.value}


@pytest.mark.parametrize("dtype, passes", [(np.float16, 2), (np.uint8, 1)])
def test_narrow_values_reach_the_webgpu_sort_as_they_are(dtype, passes):
    """No kernel widens 8/16-bit values to 32 bits before webgpu's sort and narrows them
    after (on NVIDIA a float16 NaN back from float32 lost its sign): the keys are as
    wide as the values, so float16 takes two radix passes and uint8 one."""
    rng = np.random.default_rng(7)
    x = (_specials(rng, (LONG,)) if dtype is np.float16 else rng.integers(0, 256, LONG)
         ).astype(dtype)
    with jaxlab.default_device("webgpu"), jaxlab.capture() as log:
        got = np.asarray(jnp.sort(jnp.asarray(x)))
    np.testing.assert_array_equal(got.view(np.uint8), np.asarray(jjnp.sort(x)).view(np.uint8))
    assert [e.kind for e in log] == ["routine"]
    assert log[0].tuning.value("radix_passes") == passes
