"""A wasm row kernel's threads pull ranges of rows in turn (runtime._dispatch_pulled):
every row is computed once whatever thread takes it, and a trap in one stops the rest."""
from __future__ import annotations

import numpy as np
import pytest

from jaxlab.backends.wasm.runtime import PIECES_PER_THREAD, WasmBackend, WasmTrapError
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, RowFold

F32 = DType.float32


def minus_row_max(rows: int, n: int) -> Kernel:
    """out[row, i] = x[row, i] - max(x[row, :]), a row kernel of one fold."""
    x = AluExp.load(0, AluExp.special("row", rows) * n + AluExp.special("ridx", n), F32)
    return Kernel(shape=(rows, n), inputs=((F32, rows * n),), exp=x - AluExp.variable("fold0", F32),
                  folds=(RowFold("fold0", AluOp.Max, x),), rows=rows, row_length=n)


def _run(be: WasmBackend, kernel: Kernel, x: np.ndarray) -> np.ndarray:
    src, out = be.allocate(x.nbytes), be.allocate(x.nbytes)
    try:
        be.write(src, x)
        be.dispatch(be.prepare_kernel(kernel), [src], [out])
        return np.asarray(be.read(out, F32, x.size)).reshape(x.shape)
    finally:
        be.free(src)
        be.free(out)


@pytest.mark.parametrize("threads,rows", [(2, 8), (3, 50)])
def test_threads_pull_every_row_once(threads, rows):
    be = WasmBackend(threads=threads)
    be.min_thread_work = 0
    x = np.random.default_rng(rows).standard_normal((rows, 21)).astype(np.float32)
    x[rows // 2, 3] = np.nan
    kernel = minus_row_max(rows, 21)
    prog = be.prepare_kernel(kernel).program
    assert len(prog.chunks) == threads
    assert len(prog.pieces) == min(rows, threads * PIECES_PER_THREAD)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_run(be, kernel, x), x - x.max(1, keepdims=True))


def test_a_trap_in_one_piece_stops_the_call_and_the_backend_recovers():
    be = WasmBackend(threads=2, fuel=300)   # too little for a call's rows: out of fuel
    be.min_thread_work = 0
    x = np.random.default_rng(0).standard_normal((40, 64)).astype(np.float32)
    with pytest.raises(WasmTrapError, match="fuel"):
        _run(be, minus_row_max(40, 64), x)
    be.fuel = 10 ** 8
    np.testing.assert_array_equal(_run(be, minus_row_max(40, 64), x), x - x.max(1, keepdims=True))
