"""A row kernel's WAT (kernel.folds: softmax, layer norm, logsumexp; engine/deferred.py).

Each call takes whole rows [lo, hi) (threads share the rows). Per row, each fold in turn
sweeps the row with SIMD lanes along it (several vector accumulators, a tree, then the
lanes, then a scalar tail), leaving a scalar the later folds and the outputs read; then
one more sweep writes the row's outputs. A row of up to `MAX_ROW_LENGTH` values stays in
a core's cache between the sweeps, so it is read from memory once and written once
(three kernels read it three times from memory and store two folds between them).

Where the outputs reuse the last fold's body (softmax's e = exp(x - max) in e / sum e),
that sweep also stores the body's values in the output row, and the output sweep reads
them back: the exponentials are computed once, not twice.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from jaxlab.backends.base import Choice, TuningRecord
from jaxlab.backends.traced import traced
from jaxlab.backends.wasm.analysis import COL, RIDX, ROW, AxisForm
from jaxlab.backends.wasm.codegen import Generated, KernelWat
from jaxlab.backends.wasm.optable import CAPABILITIES, SCALAR_TYPE, const, extract, kind, templates
from jaxlab.backends.wasm.scope import Scope, Val
from jaxlab.backends.wasm.tune import WIDTH, Plan
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, reduce_identity
from jaxlab.ir.mathlib import expand
from jaxlab.ir.printer import render
from jaxlab.ir.provenance import FOLD

MAX_ROW_LENGTH = 1 << 14    # 64 KiB of float32: a row stays in a core's L2 between sweeps
MIN_ROW_LENGTH = 8          # shorter rows would run mostly in the scalar tails
ROW_DTYPES = frozenset({DType.float32})
FOLD_VECTORS = 4            # vectors per step of a fold's sweep, each its own accumulator
OUT_VECTORS = 2             # vectors per step of the output sweep


@dataclass(frozen=True)
class RowPlan(Plan):
    """A row kernel's plan: lanes along the row, `unroll` vectors per fold step."""
    reuse: bool = False      # the last fold's sweep stores its body in the output row

    def record(self, form: AxisForm, threads: str) -> TuningRecord:
        return TuningRecord((
            Choice("strategy", "rows", self.reasons["strategy"]),
            Choice("lanes", f"{WIDTH} along each row",
                   f"{self.unroll} vectors per step of a fold, each its own accumulator; "
                   f"{OUT_VECTORS} per step of the output sweep"),
            Choice("reuse", self.reuse, self.reasons.get("reuse", "")),
            Choice("threads", threads)))


@dataclass(frozen=True)
class _Fold:
    name: str
    op: AluOp
    body: AluExp          # over (row, ridx), float math expanded


def _over_axes(e: AluExp, n: int, along: str) -> AluExp:
    """`e` with the row's position (the IR's ridx) as the loop axis `along`."""
    ridx = AluExp.special(RIDX.value, n)
    mapping = {} if along == RIDX.value else {ridx: AluExp.special(along, n)}
    return expand((e.substitute(mapping) if mapping else e).simplify(), CAPABILITIES)


def tune_rows(kernel: Kernel) -> tuple[RowPlan, AxisForm]:
    """The plan and the outputs' form (rows x row length, or rows x 1 per row)."""
    n, rows = kernel.row_length, kernel.rows
    cols = 1 if kernel.per_row else n
    body = _over_axes(kernel.exp, n, COL.value)
    out_index = AluExp.special(ROW.value, rows) * cols + AluExp.special(COL.value, cols) \
        if cols > 1 else AluExp.special(ROW.value, rows)
    form = AxisForm(rows, cols, n, body, None, out_index.simplify())
    vectors = max(1, min(FOLD_VECTORS, n // WIDTH))
    reasons = {"strategy": (
        f"a row kernel: each thread takes whole rows; {len(kernel.folds)} fold(s) sweep a "
        f"row of {n} values in turn and one more sweep writes it: the row is read from "
        "memory once and stays in cache for the later sweeps")}
    reuse = _reused_body(kernel) is not None
    if reuse:
        reasons["reuse"] = ("the outputs use the last fold's body: its sweep stores the "
                            "body's values in the output row, the output sweep reads them "
                            "back (computed once)")
    return RowPlan(cols, RIDX, WIDTH, unroll=vectors, accumulators=vectors, reuse=reuse,
                   reasons=reasons), form


def _reused_body(kernel: Kernel) -> Optional[AluExp]:
    """The last fold's body, where the outputs (a row of float32, as the body) compute it."""
    if kernel.per_row or not kernel.folds:
        return None
    body = kernel.folds[-1].body
    if body.dtype is not kernel.dtype or not body.src or kernel.dtype is not DType.float32:
        return None
    return body if any(node is body for node in kernel.exp.toposort()) else None


def work(kernel: Kernel, form: AxisForm) -> int:
    """Values a call computes: each fold's sweep and the output sweep over every row."""
    return kernel.rows * kernel.row_length * (len(kernel.folds) + 1)


def tuned_ir(kernel: Kernel, form: AxisForm) -> str:
    """The kernel as the sweeps compute it (the outputs over row and col)."""
    return f"{kernel.text()}\n  as written: out[{render(form.out_index)}] = {render(form.body)}"


def generate_rows(kernel: Kernel, plan: RowPlan, form: AxisForm) -> Generated:
    gen = RowKernelWat(kernel, plan, form)
    return Generated(gen.module(), 0, gen.split)


class RowKernelWat(KernelWat):
    """KernelWat's module, names and stores around a row kernel's sweeps."""

    def __init__(self, kernel: Kernel, plan: RowPlan, form: AxisForm) -> None:
        super().__init__(kernel, plan, form)
        n = kernel.row_length
        self.folds = [_Fold(f.name, f.op, _over_axes(f.body, n, RIDX.value))
                      for f in kernel.folds]
        self.split = (ROW, form.rows, 1)
        self.values: dict[AluExp, str] = {}   # fold Variable -> the local holding it
        reused = _reused_body(kernel) if plan.reuse else None
        self.reused = _over_axes(reused, n, COL.value) if reused is not None else None
        for f in kernel.folds:   # a fold's value is the same along the row
            self.deps._memo[AluExp.variable(f.name, f.body.dtype)] = frozenset({ROW})

    def roots(self) -> list[AluExp]:
        return [self.form.body] + [f.body for f in self.folds]

    def _outputs(self) -> list[str]:
        body: list[str] = []
        for i, fold in enumerate(self.folds):
            store = self.reused is not None and i == len(self.folds) - 1
            body += self._fold(fold, store)
        body += self._write()
        return self._loop(ROW, 0, self.form.rows, 1, body, "rows, each folded then written")

    def _scope(self, lane, parent: Optional[Scope] = None, start: int = 0) -> Scope:
        """A scope that knows the folds computed so far (scalars of this row)."""
        scope = Scope(self, lane, parent=parent, start=start)
        if parent is None:
            for var, local in self.values.items():
                scope.memo[(var, ((ROW, 0),))] = Val(local, False)
        return scope

    def _fold(self, fold: _Fold, store: bool) -> list[str]:
        """`fold.name` = fold of its body over the row: vectors of `plan.unroll`
        accumulators, their tree and lanes, then the last values one at a time; with
        `store`, each body value is also written to the output row."""
        dtype = fold.body.dtype
        k = kind(dtype)
        s_op, v_op = templates(fold.op, k, k)
        ident = reduce_identity(fold.op, dtype)
        n, nvec = self.kernel.row_length, self.plan.unroll
        tile = self._scope(None)
        acc = self.local(f"{fold.name}_acc", SCALAR_TYPE[k])
        lines = [f";; {fold.name}: {fold.op.name.lower()} over the row",
                 f"(local.set ${acc} {const(ident, dtype, False)})"]
        vaccs = [self.local(f"{fold.name}_v{u}", "v128") for u in range(nvec)]
        spans = [(0, n // (WIDTH * nvec) * WIDTH * nvec, nvec)]
        spans.append((spans[0][1], n // WIDTH * WIDTH, 1))
        if any(stop > start for start, stop, _ in spans):
            lines += [f"(local.set ${v} {const(ident, dtype, True)})" for v in vaccs]
        for start, stop, vectors in spans:
            if stop <= start:
                continue
            loop = self._scope(RIDX, tile, start)
            for u in range(vectors):
                pos = {ROW: 0, RIDX: WIDTH * u}
                value = loop.vec(fold.body, pos)
                if store:
                    self._keep(loop, value, pos)
                loop.lines.append(traced(
                    f"(local.set ${vaccs[u]} {v_op.format(a=f'(local.get ${vaccs[u]})', b=value)})"
                    f"  ;; lanes of {fold.name}: ridx+{WIDTH * u}..+{WIDTH - 1}", [FOLD, fold.body]))
            lines += tile.lines
            tile.lines = []
            lines += self._ridx_loop(loop, start, stop, WIDTH * vectors)
        if spans[1][1]:
            width = nvec
            while width > 1:   # a tree: (0+1)+(2+3)
                half = (width + 1) // 2
                lines += [f"(local.set ${vaccs[u]} "
                          f"{v_op.format(a=f'(local.get ${vaccs[u]})', b=f'(local.get ${vaccs[u + half]})')})"
                          for u in range(width - half)]
                width = half
            get = [extract(dtype, f"(local.get ${vaccs[0]})", lane) for lane in range(WIDTH)]
            lines.append(f"(local.set ${acc} {s_op.format(a=s_op.format(a=get[0], b=get[1]), b=s_op.format(a=get[2], b=get[3]))})")
        if spans[1][1] < n:
            loop = self._scope(None, tile, spans[1][1])
            value = loop.sca(fold.body, {ROW: 0, RIDX: 0})
            if store:
                self._keep(loop, value, {ROW: 0, RIDX: 0})
            loop.lines.append(traced(f"(local.set ${acc} {s_op.format(a=f'(local.get ${acc})', b=value)})"
                                     "  ;; the last values one at a time", [FOLD, fold.body]))
            lines += tile.lines
            tile.lines = []
            lines += self._ridx_loop(loop, spans[1][1], n, 1)
        self.values[AluExp.variable(fold.name, dtype)] = f"(local.get ${acc})"
        return lines

    def _keep(self, loop: Scope, value: str, pos: dict) -> None:
        """Store the last fold's body value at `pos` in the output row (read back by the
        output sweep instead of computing it again)."""
        vector = loop.lane is not None
        index = AluExp.special(ROW.value, self.form.rows) * self.form.cols + \
            AluExp.special(RIDX.value, self.kernel.row_length)
        ptr, off = loop.address("(local.get $out)", 4, index.simplify(), pos)
        op = "v128.store" if vector else "f32.store"
        loop.lines.append(f"({op} offset={off} {ptr} {value})  ;; kept for the outputs")

    def _write(self) -> list[str]:
        """The row's outputs: vectors along the row, then the last values one by one."""
        if self.kernel.per_row:
            tile = self._scope(None)
            self._store(tile, self.form.body, {ROW: 0, COL: 0})
            return tile.lines
        n = self.form.cols
        lines = [f";; the row's {n} outputs"]
        spans = [(0, n // (WIDTH * OUT_VECTORS) * WIDTH * OUT_VECTORS, OUT_VECTORS, WIDTH),
                 (n // (WIDTH * OUT_VECTORS) * WIDTH * OUT_VECTORS, n // WIDTH * WIDTH, 1, WIDTH),
                 (n // WIDTH * WIDTH, n, 1, 1)]
        for start, stop, vectors, lanes in spans:
            if stop <= start:
                continue
            scope = self._scope(COL if lanes > 1 else None)
            for u in range(vectors):
                pos = {ROW: 0, COL: lanes * u}
                if self.reused is not None:
                    scope.memo[(self.reused, self.restrict(self.reused, pos))] = \
                        Val(self._kept(scope, pos, lanes > 1), lanes > 1)
                self._store(scope, self.form.body, pos)
            lines += self._loop(COL, start, stop, lanes * vectors, scope.lines,
                                f"{vectors} x {lanes} output(s) at a time")
        return lines

    def _kept(self, scope: Scope, pos: dict, vector: bool) -> str:
        """The fold body's value stored by its sweep, read back from the output row."""
        ptr, off = scope.address("(local.get $out)", 4, self.form.out_index, pos)
        load = "v128.load" if vector else "f32.load"
        return scope.bind(f"({load} offset={off} {ptr})", vector, DType.float32,
                          "the last fold's body, kept by its sweep")
