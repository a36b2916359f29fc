"""Kernel (one fused loop nest, one output) and Routine (never fused)."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from jaxlab.ir.alu import LEAVES, AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.fft_stages import fft_flops
from jaxlab.ir.printer import render
from jaxlab.ir.provenance import KernelOrigins

# Reductions a kernel can carry, with the identity each starts from.
REDUCE_OPS = (AluOp.Add, AluOp.Mul, AluOp.Max, AluOp.Min)
ACC = "acc"  # the name of the accumulated value inside an epilogue

GIDX = "gidx"  # output element index
RIDX = "ridx"  # reduction step index (in a row kernel: the column)
ROW = "row"    # a row kernel's row


def reduce_identity(op: AluOp, dtype: DType) -> Any:
    if op is AluOp.Add:
        return 0
    if op is AluOp.Mul:
        return 1
    if dtype.is_float:
        return -math.inf if op is AluOp.Max else math.inf
    if dtype is DType.bool:
        return op is AluOp.Min
    lowest, highest = dtype.bounds
    return lowest if op is AluOp.Max else highest


def acc_variable(dtype: DType) -> AluExp:
    return AluExp.variable(ACC, dtype)


@dataclass(frozen=True)
class Reduction:
    """Fold `size` values of the kernel body with `op`, then apply `epilogue`
    (an expression of Variable('acc'), gidx and loads) to the result."""
    op: AluOp
    size: int
    epilogue: AluExp


@dataclass(frozen=True)
class RowFold:
    """One fold over a row of a row kernel: `name` (a Variable later expressions read)
    = fold of `body` (an expression of row, ridx and earlier folds) with `op` for
    ridx < the kernel's row length."""
    name: str
    op: AluOp
    body: AluExp


@dataclass(frozen=True)
class KernelPipeline:
    """A kernel as lowered, before simplification, and the simplifier's rules that
    fired on it (name, times)."""
    lowered: str
    rules: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Kernel:
    """out[gidx] = body(gidx) for gidx < size, or with a reduction
    out[gidx] = epilogue(fold_{ridx < reduction.size} body(gidx, ridx)), or with
    `folds` (a row kernel, rows of `row_length` values) each fold over its row in
    order, then out[row * row_length + ridx] = exp(row, ridx, folds) (or out[row] =
    exp(row, folds) when the kernel has one output per row)."""
    shape: tuple[int, ...]          # output shape (for names and reports)
    inputs: tuple[tuple[DType, int], ...]  # (dtype, element count) per input slot
    exp: AluExp
    reduction: Reduction | None = None
    reduce_shape: tuple[int, ...] = ()
    folds: tuple[RowFold, ...] = ()
    rows: int = 0           # a row kernel's rows (0: not a row kernel)
    row_length: int = 0     # ... and the values in each
    label: str = field(default="", compare=False)  # which ops it came from
    # the equations behind its nodes (engine/lower.py); not part of its identity
    origins: KernelOrigins | None = field(default=None, compare=False, repr=False)
    # how lowering made it (engine/lower.py, where someone listens); not its identity
    pipeline: KernelPipeline | None = field(default=None, compare=False, repr=False)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def dtype(self) -> DType:
        return self.reduction.epilogue.dtype if self.reduction else self.exp.dtype

    @property
    def per_row(self) -> bool:
        """Does a row kernel write one value per row (a fold's epilogue)?"""
        return bool(self.folds) and self.size == self.rows

    def roots(self) -> list[AluExp]:
        """Every expression the kernel computes: its body, epilogue and folds."""
        return [self.exp] + ([self.reduction.epilogue] if self.reduction else []) + \
            [f.body for f in self.folds]

    @property
    def name(self) -> str:
        """tinygrad-like: E_ for elementwise, r_ for reductions, then the shapes (F_
        for a row kernel, then its rows and row length)."""
        dims = "_".join(map(str, self.shape)) or "1"
        if self.folds:
            return f"F_{self.rows}_{self.row_length}"
        if self.reduction is None:
            return f"E_{dims}"
        return f"r_{dims}_{'_'.join(map(str, self.reduce_shape)) or '1'}"

    def text(self) -> str:
        """The IR a person reads in reports."""
        ins = ", ".join(f"in{i}: {d.short}[{n}]" for i, (d, n) in enumerate(self.inputs))
        head = f"kernel {self.name}({ins}) -> {self.dtype.short}[{self.size}]"
        if self.folds:
            lines = [f"  {f.name} = {f.op.name.lower()} over ridx < {self.row_length} of "
                     f"{_indent(render(f.body))}" for f in self.folds]
            where = "row" if self.per_row else f"row * {self.row_length} + ridx"
            return "\n".join([head, *lines, f"  out[{where}] = {_indent(render(self.exp))}"])
        if self.reduction is None:
            return f"{head}\n  out[gidx] = {_indent(render(self.exp))}"
        r = self.reduction
        return (f"{head}\n  acc = {r.op.name.lower()} over ridx < {r.size} of "
                f"{_indent(render(self.exp))}\n"
                f"  out[gidx] = {_indent(render(r.epilogue))}")

    @property
    def key(self) -> str:
        """A structural hash, stable across processes (for disk caches)."""
        return hashlib.sha1(self.text().encode()).hexdigest()[:16]

    def flops(self) -> int:
        steps = self.reduction.size if self.reduction else 1
        body = _count_ops(self.exp) + (1 if self.reduction else 0)
        epilogue = _count_ops(self.reduction.epilogue) if self.reduction else 0
        folds = sum(_count_ops(f.body) + 1 for f in self.folds) * self.rows * self.row_length
        return self.size * (steps * body + epilogue) + folds

    def widest_index(self) -> int:
        """The largest magnitude the kernel's index math reaches: the output and
        reduction counters and every integer node that computes a load's position.
        Data arithmetic is left out (int32 values wrap by design), and so is any part
        of a position that depends on loaded values or runtime scalars (a gather's
        index is clamped or checked when it runs, not bounded here)."""
        roots = self.roots()
        widest = max(self.size, self.reduction.size if self.reduction else 0,
                     self.rows * self.row_length)
        runtime: set[AluExp] = set()
        for root in roots:
            for load in root.leaves((AluOp.GlobalIndex,)):
                for node in load.src[0].toposort():
                    if node.op in _RUNTIME_VALUES or any(s in runtime for s in node.src):
                        runtime.add(node)
                    elif node.dtype.is_int:
                        widest = max(widest, abs(node.vmin), abs(node.vmax))
        return widest


_RUNTIME_VALUES = frozenset({AluOp.GlobalIndex, AluOp.GlobalView, AluOp.Param, AluOp.Variable})


def _count_ops(e: AluExp) -> int:
    skip = LEAVES | {AluOp.GlobalIndex, AluOp.Cast}
    return sum(1 for n in e.toposort() if n.op not in skip and n.dtype.is_float)


def _indent(text: str) -> str:
    return text.replace("\n", "\n    ")


ROUTINES = ("sort", "argsort", "cholesky", "triangular_solve", "lu", "eigh", "svd", "qr",
            "fft", "eig")


@dataclass(frozen=True)
class Routine:
    """A whole-array algorithm on contiguous inputs: never fused, run as written."""
    name: str
    inputs: tuple[tuple[tuple[int, ...], DType], ...]
    outputs: tuple[tuple[tuple[int, ...], DType], ...]
    params: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.name not in ROUTINES:
            raise ValueError(f"unknown routine {self.name!r}; known: {', '.join(ROUTINES)}")

    @property
    def param(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.outputs[0][0]

    def text(self) -> str:
        ins = ", ".join(f"{d.short}{list(s)}" for s, d in self.inputs)
        outs = ", ".join(f"{d.short}{list(s)}" for s, d in self.outputs)
        ps = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"routine {self.name}({ins}{'; ' + ps if ps else ''}) -> {outs}"

    @property
    def key(self) -> str:
        return hashlib.sha1(self.text().encode()).hexdigest()[:16]

    def flops(self) -> int:
        """The routine's conventional operation count where its shapes say it (0 where
        the data decide, as for iterative decompositions)."""
        count = _ROUTINE_FLOPS.get(self.name)
        return count(self) if count else 0


def _fft_routine_flops(r: Routine) -> int:
    (shape, _), _twiddles = r.inputs   # (rows, n, 2): rows of n complex values
    return fft_flops(shape[-2], math.prod(shape[:-2]))


_ROUTINE_FLOPS = {"fft": _fft_routine_flops}
