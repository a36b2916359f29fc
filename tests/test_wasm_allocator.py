"""The wasm allocator's paths against a model of what it must keep: blocks that never
overlap and keep their contents whatever order they are freed in, the newest block's
free lowering the top, merged neighbours serving larger requests, and read_array's
one-step copy against the plain read."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("wasmtime")

from jaxlab.backends.wasm.memory import ALIGN, GUARD, LinearMemory, size_class  # noqa: E402
from jaxlab.backends.wasm.runtime import WasmBackend  # noqa: E402
from jaxlab.ir.dtypes import DType  # noqa: E402

U8 = DType.uint8


@pytest.fixture(scope="module")
def backend() -> WasmBackend:
    return WasmBackend(threads=1)


def _fill(mem: LinearMemory, offset: int, nbytes: int, seed: int) -> np.ndarray:
    data = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
    mem.write(offset, data)
    return data


def _check(mem: LinearMemory, live: dict[int, tuple[int, np.ndarray]]) -> None:
    spans = sorted((h, h + size_class(n)) for h, (n, _) in live.items())
    assert all(a_end <= b for (_, a_end), (b, _) in zip(spans, spans[1:])), "blocks overlap"
    assert all(h % ALIGN == 0 and h >= GUARD for h, _ in spans)
    for h, (n, data) in live.items():
        np.testing.assert_array_equal(mem.read(h, U8, n), data)
    assert mem.stats()["live_bytes"] == sum(size_class(n) for n, _ in live.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_sizes_freed_in_any_order_keep_every_block(backend: WasmBackend,
                                                          seed: int) -> None:
    mem = backend.memory
    start = mem.stats()
    rng = np.random.default_rng(seed)
    sizes = [1, 4, 63, 64, 65, 200, 1000, 1024, 1025, 3000, 5000, 70_000, 300_000]
    live: dict[int, tuple[int, np.ndarray]] = {}
    for step in range(300):
        if live and rng.random() < 0.45:   # free a block chosen at random, not the newest
            h = list(live)[rng.integers(len(live))]
            mem.free(h)
            del live[h]
        else:
            n = int(rng.choice(sizes))
            h = mem.allocate(n)
            live[h] = (n, _fill(mem, h, n, step))
        if step % 50 == 0:
            _check(mem, live)
    _check(mem, live)
    for h in sorted(live, key=lambda _: rng.random()):
        mem.free(h)
    end = mem.stats()
    assert end["live_bytes"] == start["live_bytes"]
    assert end["used_top"] == start["used_top"]   # every span merged back into the top


def test_newest_block_freed_lowers_the_top_and_is_served_again(backend: WasmBackend) -> None:
    mem = backend.memory
    keep = mem.allocate(100)
    top = mem.stats()["used_top"]
    for n in (1, 64, 65, 1000, 1024, 4000):   # small classes and a larger one
        h = mem.allocate(n)
        assert h == top and mem.stats()["used_top"] == top + size_class(n)
        mem.free(h)
        assert mem.stats()["used_top"] == top
    mem.free(keep)


def test_blocks_freed_out_of_order_merge_into_one_span(backend: WasmBackend) -> None:
    mem = backend.memory
    top = mem.stats()["used_top"]
    a, b, c, d = (mem.allocate(64) for _ in range(4))
    assert (a, b, c, d) == (top, top + 64, top + 128, top + 192)
    mem.free(c)          # a span between two live blocks
    mem.free(a)          # another, at the bottom
    mem.free(b)          # joins both: one span a..c
    assert mem.stats()["pooled_bytes"] >= 192
    assert mem.allocate(192) == a   # the merged span serves a request three times larger
    data = _fill(mem, d, 64, 7)
    mem.free(a)
    mem.free(d)          # the newest block: the top comes down past the merged span too
    assert mem.stats()["used_top"] == top
    assert mem.allocate(64) == top
    mem.write(top, data)
    np.testing.assert_array_equal(mem.read(top, U8, 64), data)
    mem.free(top)


@pytest.mark.parametrize("dtype, shape", [(DType.float32, (16,)), (DType.int8, (3, 5)),
                                          (DType.float64, (2, 1, 3)), (DType.uint16, ())])
def test_read_array_is_read_in_its_shape(backend: WasmBackend, dtype: DType,
                                         shape: tuple) -> None:
    n = int(np.prod(shape))
    values = np.arange(1, n + 1).astype(dtype.np).reshape(shape)
    h = backend.allocate(values.nbytes)
    backend.write(h, values)
    got = backend.read_array(h, dtype, shape)
    assert got.shape == shape and got.dtype == dtype.np
    np.testing.assert_array_equal(got, backend.read(h, dtype, n).reshape(shape))
    np.testing.assert_array_equal(got, values)
    backend.write(h, np.zeros_like(values))   # a copy: later writes do not show through
    np.testing.assert_array_equal(got, values)
    backend.free(h)
