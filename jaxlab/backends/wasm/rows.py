"""A row kernel's WAT (kernel.folds: softmax, layer norm, logsumexp; engine/deferred.py).

Each call takes whole rows [lo, hi): the threads pull small ranges of rows in turn
(runtime._dispatch_pulled), so that one slowed by other work on its core takes fewer.
Per row, each fold in turn sweeps the row with SIMD lanes along it (several vector
accumulators, a tree, then the lanes, then a scalar tail), leaving a scalar the later
folds and the outputs read; then
one more sweep writes the row's outputs. A row of up to `MAX_ROW_LENGTH` values stays in
a core's cache between the sweeps, so it is read from memory once and written once
(three kernels read it three times from memory and store two folds between them).

Where the outputs reuse the last fold's body (softmax's e = exp(x - max) in e / sum e),
that sweep also stores the body's values in the output row, and the output sweep reads
them back: the exponentials are computed once, not twice.

Softmax's (log_softmax's, logsumexp's) max and sum of exp(b - max) take ONE sweep of the
row (online): the sum is of exp(b - r), r the row's first value, and the sweep keeps the
max beside it; at the end of the row the sum is scaled by exp(r - max) once (and the
kept values, by the same factor, in the output sweep). r stands in for the max only
where that is exact: a row whose first value is not finite, or whose values pass r by
more than `ONLINE_SLACK`, or whose sum is not finite (a NaN, an inf) is folded again in
the two sweeps, which give JAX's NaN and inf results. A running max that rescaled the
sum where it grew would have to rescale the kept values too (a scratch of block maxima);
a fixed r needs neither.

Per value, the sweeps cost what the hardware must: a float max (min) folds by the
one-instruction pmax (pmin) with NaNs noted apart; b - max(b), softmax's exp argument, is
known to be at most 0, so its exp is clamped on one side only and has no branch
(mathlib's exp_nonpos); a division by a value the same along the row (the sum) is a
product with its reciprocal, taken once per row, as XLA does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from jaxlab.backends.base import Choice, TuningRecord
from jaxlab.backends.traced import traced
from jaxlab.backends.wasm.analysis import COL, RIDX, ROW, AxisForm
from jaxlab.backends.wasm.codegen import Generated, KernelWat, _indent, fold_tree
from jaxlab.backends.wasm.optable import CAPABILITIES, SCALAR_TYPE, const, extract, kind, templates
from jaxlab.backends.wasm.scope import Scope, Val
from jaxlab.backends.wasm.tune import WIDTH, Plan
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.floatsign import Sign
from jaxlab.ir.kernel import Kernel, reduce_identity
from jaxlab.ir.mathlib import expand
from jaxlab.ir.printer import render
from jaxlab.ir.provenance import FOLD

MAX_ROW_LENGTH = 1 << 14    # 64 KiB of float32: a row stays in a core's L2 between sweeps
MIN_ROW_LENGTH = 8          # shorter rows would run mostly in the scalar tails
ROW_DTYPES = frozenset({DType.float32})
FOLD_VECTORS = 4            # vectors per step of a fold's sweep, each its own accumulator
OUT_VECTORS = 4             # vectors per step of the output sweep (objdump, softmax: 17
                            # instructions a step against 11 for 2 vectors)
ONLINE_VECTORS = 4          # vectors per step of the one sweep of max and sum of exp,
ONLINE_ACCUMULATORS = 1     # all into one max and one sum: its exp's constants fill most
                            # of the 16 vector registers (objdump: 31 instructions a vector
                            # against 35 with an accumulator a vector, fewer spilled)
# how far a row's values may pass its first value r in the one sweep: e^64 times
# MAX_ROW_LENGTH values stays finite, and exp_nonpos is exact up to 71 (its 2^(n+24))
ONLINE_SLACK = 64.0


@dataclass(frozen=True)
class RowPlan(Plan):
    """A row kernel's plan: lanes along the row, `unroll` vectors per fold step."""
    reuse: bool = False      # the last fold's sweep stores its body in the output row
    online: bool = False     # a max fold and its sum of exp share one sweep

    def record(self, form: AxisForm, threads: str) -> TuningRecord:
        return TuningRecord((
            Choice("strategy", "rows", self.reasons["strategy"]),
            Choice("lanes", f"{WIDTH} along each row",
                   f"{self.unroll} vectors per step of a fold, each its own accumulator; "
                   f"{OUT_VECTORS} per step of the output sweep"),
            Choice("reuse", self.reuse, self.reasons.get("reuse", "")),
            Choice("online", self.online, self.reasons.get("online", "")),
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
    body = _reciprocals(_over_axes(kernel.exp, n, COL.value))
    out_index = AluExp.special(ROW.value, rows) * cols + AluExp.special(COL.value, cols) \
        if cols > 1 else AluExp.special(ROW.value, rows)
    form = AxisForm(rows, cols, n, body, None, out_index.simplify())
    vectors = max(1, min(FOLD_VECTORS, n // WIDTH))
    reasons = {"strategy": (
        f"a row kernel: threads take ranges of whole rows; {len(kernel.folds)} fold(s) sweep a "
        f"row of {n} values in turn and one more sweep writes it: the row is read from "
        "memory once and stays in cache for the later sweeps")}
    reuse = _reused_body(kernel) is not None
    if reuse:
        reasons["reuse"] = ("the outputs use the last fold's body: its sweep stores the "
                            "body's values in the output row, the output sweep reads them "
                            "back (computed once)")
    folds = [_Fold(f.name, f.op, _over_axes(f.body, n, RIDX.value)) for f in kernel.folds]
    online = _online_index(folds)
    if online is not None:
        mx, total = folds[online], folds[online + 1]
        reasons["online"] = (
            f"{mx.name} (a max) and {total.name} (a sum of exp of the same values less it) "
            f"in one sweep of {ONLINE_VECTORS} vectors a step into one max and one sum: the "
            "sum is of exp(b - r), r the row's first value, scaled by exp(r - max) at the "
            "row's end; a row whose "
            f"first value is not finite, whose values pass r by more than {ONLINE_SLACK:g} "
            "or whose sum is NaN or inf is folded again in two sweeps (JAX's NaN and inf)")
    return RowPlan(cols, RIDX, WIDTH, unroll=vectors, accumulators=vectors, reuse=reuse,
                   online=online is not None, reasons=reasons), form


def _online_index(folds: list[_Fold]) -> Optional[int]:
    """i where folds[i] is a float32 max of b and folds[i + 1] the sum of exp(b - s),
    s a value of the row made from folds[i] alone (softmax's max, logsumexp's max where
    finite): the two can share one sweep."""
    for i, (mx, total) in enumerate(zip(folds, folds[1:])):
        body = total.body
        if mx.op is not AluOp.Max or total.op is not AluOp.Add or mx.body.dtype is not DType.float32 \
                or body.op is not AluOp.Exp or body.src[0].op is not AluOp.Sub \
                or body.src[0].src[0] is not mx.body:
            continue
        names = {n.arg for n in body.src[0].src[1].toposort() if n.op is AluOp.Variable}
        if names == {mx.name} and not _along_row(body.src[0].src[1]):
            return i
    return None


def _reused_body(kernel: Kernel) -> Optional[AluExp]:
    """The last fold's body, where the outputs (a row of float32, as the body) compute it."""
    if kernel.per_row or not kernel.folds:
        return None
    body = kernel.folds[-1].body
    # a load alone (x - max(x)) is read again as cheaply as it would be kept
    if body.dtype is not kernel.dtype or not body.src or kernel.dtype is not DType.float32 \
            or body.op is AluOp.GlobalIndex:
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
    return Generated(gen.module(), 0, gen.split, pulled=True)


class RowKernelWat(KernelWat):
    """KernelWat's module, names and stores around a row kernel's sweeps."""

    def __init__(self, kernel: Kernel, plan: RowPlan, form: AxisForm) -> None:
        super().__init__(kernel, plan, form)
        n = kernel.row_length
        self.folds = [_Fold(f.name, f.op, _over_axes(f.body, n, RIDX.value))
                      for f in kernel.folds]
        # the outputs along the row as the folds see it: the same nodes as their bodies
        self.out_body = _reciprocals(_over_axes(kernel.exp, n, RIDX.value))
        self.split = (ROW, form.rows, 1)
        self.values: dict[AluExp, str] = {}   # fold Variable -> the local holding it
        self.reuse = plan.reuse
        # a fold's variable -> the body it is the row's max of
        self.maxima = {AluExp.variable(f.name, f.body.dtype): f.body
                       for f in self.folds if f.op is AluOp.Max}
        for f in kernel.folds:   # a fold's value is the same along the row
            self.deps._memo[AluExp.variable(f.name, f.body.dtype)] = frozenset({ROW})
        self.online = _online_index(self.folds) if plan.online else None
        self.online_args: set[AluExp] = set()   # b - r of the one sweep (_online)

    def sign(self, node: AluExp) -> Optional[Sign]:
        """b - m, m the row's max of b (softmax's x - max), is at most 0 (or NaN); b - r
        in the one sweep is at most ONLINE_SLACK where its result is used, within
        exp_nonpos's exact range (rows.py's module docstring)."""
        if node.op is AluOp.Sub and self.maxima.get(node.src[1]) is node.src[0] \
                or node in self.online_args:
            return Sign.NONPOS
        return super().sign(node)

    def roots(self) -> list[AluExp]:
        return [self.form.body] + [f.body for f in self.folds]

    def _outputs(self) -> list[str]:
        body: list[str] = []
        last = len(self.folds) - 1
        for i, fold in enumerate(self.folds):
            if self.online is not None and i == self.online:
                body += self._online(fold, self.folds[i + 1], self.reuse and i + 1 == last)
            elif self.online is None or i != self.online + 1:
                body += self._fold(fold, self.reuse and i == last)
        body += self._write()
        return self._loop(ROW, 0, self.form.rows, 1, body, "rows, each folded then written")

    def _scope(self, lane, parent: Optional[Scope] = None, start: int = 0) -> Scope:
        """A scope that knows the folds computed so far (scalars of this row)."""
        scope = Scope(self, lane, parent=parent, start=start)
        if parent is None:
            for var, local in self.values.items():
                scope.memo[(var, ((ROW, 0),))] = Val(local, False)
        return scope

    def _sweep(self, tile: Scope, vectors: int,
               copy: Callable[[Scope, dict, bool], None]) -> list[str]:
        """Loops along the row: `vectors` vectors a step, then one vector a step, then the
        last values one at a time; `copy(loop, pos, vector)` writes one copy's lines.
        Values the same along the row go to `tile`, set before each loop."""
        n = self.kernel.row_length
        whole = n // (WIDTH * vectors) * WIDTH * vectors
        spans = [(0, whole, vectors, WIDTH), (whole, n // WIDTH * WIDTH, 1, WIDTH),
                 (n // WIDTH * WIDTH, n, 1, 1)]
        lines: list[str] = []
        for start, stop, copies, lanes in spans:
            if stop <= start:
                continue
            loop = self._scope(RIDX if lanes > 1 else None, tile, start)
            for u in range(copies):
                copy(loop, {ROW: 0, RIDX: lanes * u}, lanes > 1)
            lines += tile.lines
            tile.lines = []
            lines += self._ridx_loop(loop, start, stop, lanes * copies)
        return lines

    def _fold(self, fold: _Fold, keep: bool) -> list[str]:
        """`fold.name` = fold of its body over the row (`_Accumulator`); with `keep`,
        each body value is also written to the output row."""
        acc = _Accumulator(self, fold, self.plan.unroll, nans=True)

        def copy(loop: Scope, pos: dict, vector: bool) -> None:
            value = loop.value(fold.body, pos, vector)
            if keep:
                self._keep(loop, value, pos, vector)
            acc.add(loop, value, pos, vector)

        lines = [f";; {fold.name}: {fold.op.name.lower()} over the row"] + acc.start()
        lines += self._sweep(self._scope(None), self.plan.unroll, copy) + acc.finish()
        self.values[acc.variable] = acc.get
        return lines

    def _online(self, mx: _Fold, total: _Fold, keep: bool) -> list[str]:
        """`mx.name` (a max of b) and `total.name` (the sum of exp(b - s(max))) in one
        sweep where the row allows (module docstring), else in two: the sweep sums
        exp(b - r), r the row's first value, and keeps the max beside; at the end
        total = sum * exp(r - s), exact where s is the max and every b is at most
        r + ONLINE_SLACK. `scale` (exp(r - s), or 1 after two sweeps) turns a kept
        exp(b - r) into the exp(b - s) the outputs read."""
        f32 = DType.float32
        ref, scale, ok = (self.local(f"{total.name}_{w}", t)
                          for w, t in (("ref", "f32"), ("scale", "f32"), ("ok", "i32")))
        ref_var = AluExp.variable(f"{total.name}_ref", f32)
        self.deps._memo[ref_var] = frozenset({ROW})
        self.values[ref_var] = f"(local.get ${ref})"
        shift = total.body.src[0].src[1]
        arg = mx.body - ref_var
        self.online_args.add(arg)
        term = arg.unary(AluOp.Exp)
        most, sums = _Accumulator(self, mx, ONLINE_ACCUMULATORS, nans=False), \
            _Accumulator(self, total, ONLINE_ACCUMULATORS, nans=False)

        first = self._scope(None, self._scope(None), 0)
        first.lines.append(f"(local.set ${ref} {first.sca(mx.body, {ROW: 0, RIDX: 0})})")

        def copy(loop: Scope, pos: dict, vector: bool) -> None:
            most.add(loop, loop.value(mx.body, pos, vector), pos, vector)
            value = loop.value(term, pos, vector)
            if keep:
                self._keep(loop, value, pos, vector)
            sums.add(loop, value, pos, vector)

        fast = most.start() + sums.start()
        fast += self._sweep(self._scope(None), ONLINE_VECTORS, copy) + most.finish() + sums.finish()
        self.values[most.variable] = most.get
        end = self._scope(None)
        s = end.sca(shift, {ROW: 0})
        factor = end.sca((ref_var - shift).unary(AluOp.Exp), {ROW: 0})
        fast += end.lines + [
            f"(local.set ${scale} {factor})  ;; exp(r - {render(shift)})",
            f"(local.set ${ok} (i32.and (i32.and (f32.le (f32.sub {most.get} (local.get ${ref})) "
            f"{const(ONLINE_SLACK, f32, False)}) (f32.eq {s} {most.get})) "
            f"(f32.lt {sums.get} {const(float('inf'), f32, False)})))"
            "  ;; every b within r + slack, no NaN or inf met",
            f"(local.set ${sums.acc} (f32.mul {sums.get} (local.get ${scale})))"]
        slow = self._fold(mx, False) + self._fold(total, keep) + [f"(local.set ${scale} (f32.const 1))"]
        return ([f";; {mx.name} and {total.name} in one sweep: the sum of exp(b - r), r = b at ridx 0",
                 f"(local.set ${ok} (i32.const 0))"]
                + first.parent.lines + self._ridx_loop(first, 0, 1, 1)
                + [f"(if (f32.eq (f32.sub (local.get ${ref}) (local.get ${ref})) (f32.const 0))"
                   "  ;; r finite", "  (then"] + _indent(fast, 2) + ["  ))",
                   f"(if (i32.eqz (local.get ${ok}))  ;; else the two sweeps", "  (then"]
                + _indent(slow, 2) + ["  ))"])

    def _keep(self, loop: Scope, value: str, pos: dict, vector: bool) -> None:
        """Store the last fold's body value at `pos` in the output row (read back by the
        output sweep instead of computing it again)."""
        ptr, off = loop.address("(local.get $out)", 4, self._row_index(), pos)
        op = "v128.store" if vector else "f32.store"
        loop.lines.append(f"({op} offset={off} {ptr} {value})  ;; kept for the outputs")

    def _row_index(self) -> AluExp:
        """The output's index at the row's position ridx."""
        return (AluExp.special(ROW.value, self.form.rows) * self.form.cols
                + AluExp.special(RIDX.value, self.kernel.row_length)).simplify()

    def _write(self) -> list[str]:
        """The row's outputs, in a sweep like the folds' (values the same along the row,
        such as 1 / a fold, once per row)."""
        tile = self._scope(None)
        if self.kernel.per_row:
            self._store(tile, self.form.body, {ROW: 0, COL: 0})
            return tile.lines
        kept = self.folds[-1].body if self.reuse else None
        body = self.out_body
        if kept is not None and self.online == len(self.folds) - 2:
            # the one sweep kept exp(b - r): the body is that times scale = exp(r - s)
            # (1 after two sweeps), folded into a factor the same along the row
            # (softmax's 1 / sum) where there is one
            name = self.folds[-1].name
            scale = AluExp.variable(f"{name}_scale", DType.float32)
            self.deps._memo[scale] = frozenset({ROW})
            tile.memo[(scale, ((ROW, 0),))] = Val(f"(local.get ${name}_scale)", False)
            raw = AluExp.variable(f"{name}_kept", DType.float32)
            self.deps._memo[raw] = frozenset({ROW, RIDX})
            factors = {n: raw * (scale * n.src[1 - n.src.index(kept)]) for n in body.toposort()
                       if n.op is AluOp.Mul and kept in n.src
                       and not _along_row(n.src[1 - n.src.index(kept)])}
            body = body.substitute(factors).substitute({kept: raw * scale})
            kept = raw

        def copy(loop: Scope, pos: dict, vector: bool) -> None:
            ptr, off = loop.address("(local.get $out)", 4, self._row_index(), pos)
            if kept is not None:
                text = loop.bind(f"({'v128' if vector else 'f32'}.load offset={off} {ptr})",
                                 vector, DType.float32, "the last fold's body, kept by its sweep")
                loop.memo[(kept, self.restrict(kept, pos))] = Val(text, vector)
            value = loop.value(body, pos, vector)
            loop.lines.append(f"({'v128' if vector else 'f32'}.store offset={off} {ptr} {value})"
                              f"  ;; out[row, ridx+{pos[RIDX]}{'..+3' if vector else ''}]")

        return [f";; the row's {self.kernel.row_length} outputs"] + self._sweep(tile, OUT_VECTORS, copy)


# A float max (min) of vectors by the one-instruction pmax (pmin); NaNs are noted apart
_LOOSE = {AluOp.Max: "(f32x4.pmax {a} {b})", AluOp.Min: "(f32x4.pmin {a} {b})"}


class _Accumulator:
    """A fold's accumulators over a sweep: vectors that the copies of a step take in
    turn, then their tree and lanes, and a scalar for the last values.

    A float max (min) folds its vectors by pmax (one instruction: Wasm's max is
    eight under Cranelift, for NaN and -0), which skips a NaN; with `nans` the NaNs
    met are noted apart, so that a NaN still makes the fold NaN (the one sweep needs
    not: a NaN makes its sum NaN). Of -0 and +0 it keeps the one it met first, like
    NumPy."""

    def __init__(self, gen: RowKernelWat, fold: _Fold, copies: int, nans: bool) -> None:
        self.fold, self.dtype = fold, fold.body.dtype
        k = kind(self.dtype)
        self.s_op, self.v_op = templates(fold.op, k, k)
        self.loose = _LOOSE.get(fold.op) if self.dtype is DType.float32 else None
        self.acc = gen.local(f"{fold.name}_acc", SCALAR_TYPE[k])
        self.vaccs = [gen.local(f"{fold.name}_v{u}", "v128") for u in range(copies)]
        self.nans = [gen.local(f"{fold.name}_nan{u}", "v128")
                     for u in range(copies)] if nans and self.loose else []
        self.variable = AluExp.variable(fold.name, self.dtype)
        self.get = f"(local.get ${self.acc})"

    def start(self) -> list[str]:
        ident = reduce_identity(self.fold.op, self.dtype)
        return ([f"(local.set ${self.acc} {const(ident, self.dtype, False)})"]
                + [f"(local.set ${v} {const(ident, self.dtype, True)})" for v in self.vaccs]
                + [f"(local.set ${v} (v128.const i32x4 0 0 0 0))" for v in self.nans])

    def add(self, loop: Scope, value: str, pos: dict, vector: bool) -> None:
        """Fold `value` (the body at `pos`) in, in `loop`'s lines."""
        name, body = self.fold.name, self.fold.body
        if not vector:
            loop.lines.append(traced(f"(local.set ${self.acc} {self.s_op.format(a=self.get, b=value)})"
                                     "  ;; the last values one at a time", [FOLD, body]))
            return
        u = pos[RIDX] // WIDTH % len(self.vaccs)
        if self.nans:
            loop.lines.append(f"(local.set ${self.nans[u]} (v128.or (local.get ${self.nans[u]}) "
                              f"(f32x4.ne {value} {value})))  ;; NaNs met")
        op = self.loose or self.v_op
        loop.lines.append(traced(
            f"(local.set ${self.vaccs[u]} {op.format(a=f'(local.get ${self.vaccs[u]})', b=value)})"
            f"  ;; lanes of {name}: ridx+{pos[RIDX]}..+{WIDTH - 1}", [FOLD, body]))

    def finish(self) -> list[str]:
        """The vectors' tree, their lanes and the scalar into the scalar accumulator."""
        lines = fold_tree(self.vaccs, self.v_op) + fold_tree(self.nans, "(v128.or {a} {b})")
        get = [extract(self.dtype, f"(local.get ${self.vaccs[0]})", lane) for lane in range(WIDTH)]
        s_op = self.s_op
        lanes = s_op.format(a=s_op.format(a=get[0], b=get[1]), b=s_op.format(a=get[2], b=get[3]))
        lines.append(f"(local.set ${self.acc} {s_op.format(a=lanes, b=self.get)})")
        if self.nans:
            lines.append(f"(if (v128.any_true (local.get ${self.nans[0]})) "
                         f"(then (local.set ${self.acc} {const(float('nan'), self.dtype, False)})))"
                         "  ;; a NaN met")
        return lines


def _along_row(e: AluExp) -> bool:
    """Whether `e` changes along the row (it reads an input or a position in the row)."""
    return any(n.op is AluOp.GlobalIndex or (n.op is AluOp.Special and n.arg[0] != ROW.value)
               for n in e.toposort())


def _reciprocals(e: AluExp) -> AluExp:
    """Float divisions by a value the same along the row (softmax's sum) as products with
    its reciprocal, taken once per row: a division costs several multiplies. XLA does
    the same (JAX's softmax on CPU multiplies by 1 / sum); the result may differ from
    the quotient in the last bit."""
    mapping = {d: d.src[0] * (AluExp.const(1.0, d.dtype) / d.src[1]) for d in e.toposort()
               if d.op is AluOp.Div and d.dtype is DType.float32
               and _along_row(d.src[0]) and not _along_row(d.src[1])}
    return e.substitute(mapping) if mapping else e
