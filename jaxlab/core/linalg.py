"""dot_general (one fused multiply-and-sum kernel) and the routine primitives."""
from __future__ import annotations

from typing import Any, Sequence

from jaxlab.core.primitives import lowerings, primitive
from jaxlab.engine import dispatch
from jaxlab.engine import lazy as lz
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

dot_general_p = primitive("dot_general")


def _dot_general(x: Lazy, y: Lazy, *, dimension_numbers: Any,
                 preferred_element_type: DType | None = None) -> Lazy:
    """Both operands viewed as (batch, x_free, y_free, contract), multiplied,
    summed over contract: the kernel a matmul is, with nothing materialised."""
    (xc, yc), (xb, yb) = dimension_numbers
    for dx, dy in zip(xc, yc):
        if x.shape[dx] != y.shape[dy]:
            raise ValueError(f"dot_general: contracting dimensions differ: {x.shape} axis {dx} "
                             f"vs {y.shape} axis {dy}")
    for dx, dy in zip(xb, yb):
        if x.shape[dx] != y.shape[dy]:
            raise ValueError(f"dot_general: batch dimensions differ: {x.shape} vs {y.shape}")
    dtype = preferred_element_type or x.dtype
    x, y = lz.cast(x, dtype), lz.cast(y, dtype)
    xf = [d for d in range(len(x.shape)) if d not in xc and d not in xb]
    yf = [d for d in range(len(y.shape)) if d not in yc and d not in yb]
    nb, nxf, nyf, nc = len(xb), len(xf), len(yf), len(xc)
    batch = [x.shape[d] for d in xb]
    contract = [x.shape[d] for d in xc]
    full = tuple(batch + [x.shape[d] for d in xf] + [y.shape[d] for d in yf] + contract)
    xt = lz.movement(x, "permute", tuple(list(xb) + xf + list(xc)))
    xt = lz.movement(xt, "reshape", tuple(batch + [x.shape[d] for d in xf] + [1] * nyf + contract))
    yt = lz.movement(y, "permute", tuple(list(yb) + yf + list(yc)))
    yt = lz.movement(yt, "reshape", tuple(batch + [1] * nxf + [y.shape[d] for d in yf] + contract))
    prod = lz.elementwise(AluOp.Mul, [lz.movement(xt, "expand", full),
                                      lz.movement(yt, "expand", full)])
    if dtype is DType.bool:
        return lz.reduce(prod, AluOp.Max, range(nb + nxf + nyf, nb + nxf + nyf + nc))
    return lz.reduce(prod, AluOp.Add, range(nb + nxf + nyf, nb + nxf + nyf + nc))


lowerings[dot_general_p] = _dot_general


# --- routines: contiguous inputs, whole-array algorithms, never fused ----------

def run_routine(name: str, xs: Sequence[Lazy], outputs: Sequence[tuple[tuple, DType]],
                **params: Any) -> list[Lazy]:
    xs = [lz.realize(x) for x in xs]
    routine = Routine(name, tuple((x.shape, x.dtype) for x in xs), tuple(outputs),
                      tuple(sorted(params.items())))
    bufs = dispatch.run(xs[0].device, routine, [x.buffer for x in xs])
    return [lz.from_buffer(b, shape) for b, (shape, _) in zip(bufs, outputs)]


sort_p = primitive("sort")
argsort_p = primitive("argsort")
cholesky_p = primitive("cholesky")
triangular_solve_p = primitive("triangular_solve")
lu_p = primitive("lu", multiple_results=True)


def _last_axis(name: str, out_dtype: DType | None):
    def rule(x: Lazy, *, dimension: int) -> Lazy:
        nd = len(x.shape)
        if not -nd <= dimension < nd:
            raise ValueError(f"{name}: axis {dimension} out of bounds for shape {x.shape}")
        dimension %= nd
        perm = [d for d in range(nd) if d != dimension] + [dimension]
        moved = lz.movement(x, "permute", tuple(perm)) if dimension != nd - 1 else x
        (out,) = run_routine(name, [moved], [(moved.shape, out_dtype or x.dtype)])
        inverse = tuple(perm.index(d) for d in range(nd))
        return lz.movement(out, "permute", inverse) if dimension != nd - 1 else out
    return rule


def _square_float(name: str, a: Lazy) -> None:
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} needs square matrices in the last two axes, got {a.shape}")
    if not a.dtype.is_float:
        raise TypeError(f"{name} needs a floating point matrix, got {a.dtype}")


def _cholesky(a: Lazy) -> Lazy:
    _square_float("cholesky", a)
    return run_routine("cholesky", [a], [(a.shape, a.dtype)])[0]


def _triangular_solve(a: Lazy, b: Lazy, *, left_side: bool = False, lower: bool = False,
                      transpose_a: bool = False, unit_diagonal: bool = False) -> Lazy:
    _square_float("triangular_solve", a)
    n = a.shape[-1]
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != n or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triangular_solve: a {a.shape} and b {b.shape} do not match "
                         f"(left_side={left_side})")
    return run_routine("triangular_solve", [a, lz.cast(b, a.dtype)], [(b.shape, a.dtype)],
                       left_side=bool(left_side), lower=bool(lower),
                       transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))[0]


def _lu(a: Lazy) -> tuple[Lazy, Lazy, Lazy]:
    if len(a.shape) < 2 or not a.dtype.is_float:
        raise ValueError(f"lu needs a floating point matrix, got {a.dtype}{list(a.shape)}")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return tuple(run_routine("lu", [a], [(a.shape, a.dtype), (batch + (min(m, n),), DType.int32),
                                         (batch + (m,), DType.int32)]))


lowerings.update({
    sort_p: _last_axis("sort", None), argsort_p: _last_axis("argsort", DType.int32),
    cholesky_p: _cholesky, triangular_solve_p: _triangular_solve, lu_p: _lu,
})
