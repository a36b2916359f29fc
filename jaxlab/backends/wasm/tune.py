"""The wasm tuner: how a kernel's loops are split, vectorised, tiled and unrolled.

Every choice goes into the Plan with the reason for it; the plan is what the
event's `tuning` shows.

- split: the output is walked as rows x cols (gidx = row*cols + col), either
  flat (one row) or with cols = the last output axis, whichever leaves fewer
  gathers (loads whose four lanes are not four neighbours in memory). A
  contraction whose operands vary along rows and cols only once its leading
  output axes are taken out (a convolution: images x out-channels x pixels, an
  implicit GEMM per image; a batched matmul) gets those axes as a batch loop.
- lanes: four-wide SIMD along col (elementwise kernels, and reductions whose
  loads are contiguous or broadcast along the output), along row (elementwise
  kernels that read down columns, i.e. transposes), or along ridx (reductions
  that read contiguous runs, e.g. a row sum), else scalar.
- register tile: a reduction with one operand broadcast along rows and another
  along cols (matmul) gets a rows x vectors tile of accumulators, so each
  loaded value is reused across the tile; its column-side operands are packed
  per strip of columns, and a summed product is a fused multiply-add.
- unroll and accumulators: several independent accumulators hide the add
  latency and sum in a tree, which is also more accurate for floats.
- 64-bit values (f64x2, i64x2) are two to a vector: a kernel that holds one has
  two lanes (its 32-bit values fill the first two of their four), no lanes along
  rows and no packed strips.

(How many threads share a kernel is the runtime's choice, by its size.)
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Optional

from jaxlab.backends.base import Choice, TuningRecord
from jaxlab.backends.wasm.analysis import (COL, RIDX, ROW, Axis, AxisForm, Deps, axis_form,
                                           contiguous, loads, panel_operands)
from jaxlab.backends.wasm.mathlib import vector_ops
from jaxlab.backends.wasm.optable import INLINED, is_wide
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel

WIDTH = 4                 # f32x4 / i32x4
WIDE_WIDTH = 2            # f64x2 / i64x2: the lanes of a kernel that holds a 64-bit value
ELEMENTWISE_VECTORS = 2   # vectors per elementwise iteration
MATMUL_TILE = (6, 2)      # rows x vectors of accumulators: 12 of the 16 v128 registers
MATMUL_UNROLL = 4         # ridx steps per iteration: a row's 4 values are one v128 load
TRANSPOSED_UNROLL = 2     # ... when the row values come four rows per load instead
RIDX_VECTORS = 4          # vectors per step of a reduction along ridx (16 partial sums)
ROW_BLOCK_BYTES = 1 << 20  # row-side operand bytes a block of rows may take: half a core's L2
KEPT_STRIPS_BYTES = 64 << 20  # packed column strips kept for every block of rows, at most
HEAVY_BODY = 16           # float ops per step from which a reduction's lanes go along col


@dataclass(frozen=True)
class Plan:
    cols: int                     # gidx = row * cols + col
    lane: Optional[Axis]          # the axis SIMD lanes run along: COL, ROW, RIDX or None
    width: int                    # lanes per vector (1 when scalar)
    tile_rows: int = 1            # rows per register tile
    tile_vectors: int = 1         # vectors (or scalars) per tile along col
    unroll: int = 1               # ridx steps per reduction-loop iteration
    accumulators: int = 1         # independent accumulators along ridx
    fma: bool = False             # accumulate a product with f32x4.relaxed_madd
    pack: bool = False            # copy each column strip's operands to contiguous scratch
    row_block: int = 0            # rows per block of a packed plan (0: all rows in one block)
    pack_rows: bool = False       # also copy each block's row-side operands to scratch
    keep_strips: bool = False     # pack each strip once (first block of rows), keep it for the rest
    threads_take_rows: bool = False  # a packed plan's threads share its rows, not its strips
    reasons: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def record(self, form: AxisForm, threads: str) -> TuningRecord:
        """The plan as the lab shows it; `threads` says how the runtime split the work."""
        tile = ([self.width, self.tile_vectors] if self.lane == ROW else
                [self.tile_rows, self.tile_vectors * (self.width if self.lane == COL else 1)])
        why = self.reasons.get
        return TuningRecord((
            Choice("split", _extents(form), why("split", "")),
            Choice("lanes", _lane_name(self.lane), why("lanes", "")),
            Choice("vector_width", self.width),
            Choice("tile", f"{tile[0]}x{tile[1]}", why("tile", "")),
            Choice("unroll", self.unroll, why("unroll", "")),
            Choice("accumulators", self.accumulators),
            Choice("fma", self.fma, why("fma", "")),
            Choice("pack", self.pack, why("pack", "")),
            Choice("row_block", self.row_block or "all rows", why("row_block", "")),
            Choice("pack_rows", self.pack_rows, why("pack_rows", "")),
            Choice("keep_strips", self.keep_strips, why("keep_strips", "")),
            Choice("threads_take", "rows" if self.threads_take_rows else
                   "strips of columns" if self.pack else "the outer loop", why("threads_take", "")),
            Choice("threads", threads)))


def _gathers(form: AxisForm, lane: Axis, deps: Deps, weight_loop: int = 1,
             free: frozenset = frozenset()) -> int:
    """Loads that depend on `lane` but do not read four neighbours (loop loads weigh more;
    `free` ones are read once per strip into packed scratch)."""
    count = 0
    for e in (form.body, form.epilogue):
        for ld in loads(e):
            d = deps(ld)
            if lane in d and ld not in free and not contiguous(ld.src[0], lane, deps):
                count += weight_loop if RIDX in d else 1
    return count


def _lane_by_lane_divisions(form: AxisForm, deps: Deps) -> int:
    """Integer // and % by constants that are not powers of two, on values that vary along
    col: SIMD128 has no vector division, so each runs once per lane (a padded image walked
    flat computes its row and column that way; walked by rows, once per row)."""
    return sum(1 for n in form.body.toposort()
               if n.op in (AluOp.Idiv, AluOp.Mod) and n.src[1].is_const
               and isinstance(n.src[1].arg, int) and n.src[1].arg & (n.src[1].arg - 1)
               and COL in deps(n))


def _float_ops(body: AluExp) -> int:
    """Float operations in a body (not loads or constants): how much math a step does (a
    natively spelled function, exp or sin, as the SIMD instructions of its text)."""
    return sum(vector_ops(INLINED[n.op][0]) if n.op in INLINED else 1
               for n in body.toposort()
               if n.src and n.op is not AluOp.GlobalIndex and n.dtype.is_float)


def _matmul_like(form: AxisForm, deps: Deps) -> bool:
    """One loop input varies only along rows, another only along columns."""
    loop_loads = [deps(ld) for ld in loads(form.body) if RIDX in deps(ld)]
    return (any(COL not in d and ROW in d for d in loop_loads)
            and any(ROW not in d and COL in d for d in loop_loads))


def _read_down_columns(form: AxisForm, deps: Deps) -> bool:
    """The row-side operands are consecutive along rows, not along ridx (A.T @ B)."""
    row_side = [ld.src[0] for ld in loads(form.body) if RIDX in deps(ld) and COL not in deps(ld)]
    return bool(row_side) and all(contiguous(i, ROW, deps) and not contiguous(i, RIDX, deps)
                                  for i in row_side)


def _packable(form: AxisForm, deps: Deps, width: int) -> bool:
    """Enough row tiles reuse a packed strip of columns (of four-lane vectors)."""
    return (width == WIDTH and _matmul_like(form, deps) and form.rows >= 2 * MATMUL_TILE[0]
            and form.cols >= WIDTH)


ROW_PANEL_STRIPS = 4       # column strips from which packing the row-side operands pays


def _row_panel_pays(form: AxisForm, deps: Deps) -> bool:
    """The row-side operands are 4-byte values, and one is computed or not contiguous along
    ridx: copying them once per block of rows saves redoing that work in every strip (with
    fewer strips the copy costs more than it saves: 512 x 10 x 256, 0.22 -> 0.32 ms)."""
    ops = panel_operands(form.body, deps, ROW)
    strips = form.cols // (MATMUL_TILE[1] * WIDTH)
    return bool(ops) and strips >= ROW_PANEL_STRIPS and all(o.dtype.itemsize == 4 and not is_wide(o.dtype) for o in ops) and any(
        o.op is not AluOp.GlobalIndex or not contiguous(o.src[0], RIDX, deps) for o in ops)


def _packed_loads(form: AxisForm, deps: Deps, width: int) -> frozenset:
    if not _packable(form, deps, width):
        return frozenset()
    return frozenset(ld for op in panel_operands(form.body, deps) for ld in loads(op))


def _batched_contraction(kernel: Kernel, deps: Deps, width: int) -> Optional[AxisForm]:
    """The output's leading axes as a batch, the middle ones as rows and the trailing ones
    as cols, where that makes one operand vary along rows alone and another along cols
    alone within a batch (a convolution: images x output channels x pixels), so that
    each batch is a packed matmul; None where no such split exists."""
    shape = kernel.shape
    for i in range(1, len(shape) - 1):
        for j in range(i + 1, len(shape)):
            cols = math.prod(shape[j:])
            if cols < WIDTH:
                continue
            form = axis_form(kernel, cols, math.prod(shape[:i]))
            if form.batches > 1 and _packable(form, deps, width):
                return form
    return None


def _splits(kernel: Kernel) -> list[int]:
    last = kernel.shape[-1] if kernel.shape else 1
    return sorted({kernel.size, last}, reverse=True)


def has_wide_values(kernel: Kernel) -> bool:
    """Whether the kernel loads, stores or computes a 64-bit value."""
    roots = [kernel.exp] + ([kernel.reduction.epilogue] if kernel.reduction else [])
    return is_wide(kernel.dtype) or any(is_wide(n.dtype) for r in roots for n in r.toposort())


def lane_width(kernel: Kernel) -> int:
    """Lanes per vector: four, or two where 64-bit values take a vector's 16 bytes."""
    return WIDE_WIDTH if has_wide_values(kernel) else WIDTH


def tune(kernel: Kernel) -> tuple[Plan, AxisForm]:
    deps = Deps()
    width = lane_width(kernel)
    if kernel.reduction is None:
        return _tune_elementwise(kernel, deps, width)
    plan, form = _tune_reduction(kernel, deps, width)
    red = kernel.reduction
    if plan.lane is not None and red.op is AluOp.Add and kernel.exp.dtype is DType.float32 \
            and form.body.op is AluOp.Mul:
        plan.reasons["fma"] = ("the body is a product summed in f32: f32x4.relaxed_madd, one "
                               "instruction (and at most one rounding) per step; scalar tails "
                               "multiply then add")
        plan = dataclasses.replace(plan, fma=True)
    return plan, form


def _tune_elementwise(kernel: Kernel, deps: Deps, width: int) -> tuple[Plan, AxisForm]:
    forms = [axis_form(kernel, c) for c in _splits(kernel)]
    form = min(forms, key=lambda f: (f.cols < width, _gathers(f, COL, deps),
                                     _lane_by_lane_divisions(f, deps)))
    reasons = {"split": _split_reason(form, forms, deps)}
    by_rows = _row_lane_plan(forms[-1], form, deps, reasons) if width == WIDTH else None
    if by_rows is not None:
        return by_rows, forms[-1]
    if form.cols < width:
        reasons["lanes"] = f"scalar: {form.cols} columns are fewer than {width} lanes"
        return Plan(form.cols, None, 1, reasons=reasons), form
    vectors = max(1, min(ELEMENTWISE_VECTORS, form.cols // width))
    reasons["lanes"] = f"{width} lanes along col, a scalar loop for the last {form.cols % width}"
    reasons["tile"] = (f"{vectors} vectors per iteration: independent work for the CPU "
                       "to overlap, few enough that values stay in registers")
    return Plan(form.cols, COL, width, tile_vectors=vectors, reasons=reasons), form


def _row_lane_plan(form: AxisForm, best: AxisForm, deps: Deps,
                   reasons: dict[str, str]) -> Optional[Plan]:
    """Lanes along rows, when inputs are contiguous down the columns (a transpose): the
    loads become vector loads and only the store is split into four."""
    if form.rows < WIDTH or form.cols < 2:
        return None
    down = _gathers(form, ROW, deps) + 1            # the store is scattered over 4 rows
    across = _gathers(best, COL, deps) if best.cols >= WIDTH else 4 * len(loads(best.body))
    if down >= across:
        return None
    vectors = min(ELEMENTWISE_VECTORS, form.cols)
    reasons["lanes"] = (f"{WIDTH} lanes along row: {down - 1} gathers and a scattered store, "
                        f"against {across} gathers with lanes along col")
    reasons["tile"] = f"{vectors} columns of four rows per iteration"
    return Plan(form.cols, ROW, WIDTH, tile_vectors=vectors, reasons=reasons)


def _extents(form: AxisForm) -> str:
    return (f"{form.batches}x" if form.batches > 1 else "") + f"{form.rows}x{form.cols}"


def _split_reason(form: AxisForm, forms: list[AxisForm], deps: Deps) -> str:
    if len(forms) == 1:
        return f"{form.rows} x {form.cols}: the only split"
    other = next(f for f in forms if f is not form)
    return (f"{form.rows} x {form.cols}: {_gathers(form, COL, deps)} gathers along col, "
            f"against {_gathers(other, COL, deps)} with {other.rows} x {other.cols}")


def _tune_reduction(kernel: Kernel, deps: Deps, width: int) -> tuple[Plan, AxisForm]:
    steps = kernel.reduction.size
    # (gathers, prefer, lane, form) for each possible way to vectorise
    options = []
    for cols in _splits(kernel):
        form = axis_form(kernel, cols)
        if cols >= width:   # a register tile (matmul-like) wins ties: it reuses loads
            free = _packed_loads(form, deps, width)
            options.append((_gathers(form, COL, deps, steps, free), -1 if free else 1, COL,
                            form))
        if steps >= width:
            options.append((_gathers(form, RIDX, deps, steps), 0 if steps >= 16 else 2, RIDX,
                            form))
    batched = _batched_contraction(kernel, deps, width)
    if batched is not None:   # after the others: on a tie, no batch loop
        options.append((_gathers(batched, COL, deps, steps, _packed_loads(batched, deps, width)), -1,
                        COL, batched))
    if not options:
        form = axis_form(kernel, _splits(kernel)[0])
        return Plan(form.cols, None, 1, reasons={
            "lanes": f"scalar: {form.cols} outputs and {steps} steps are both under {width}"}), form
    gathers, _, lane, form = min(options, key=lambda o: o[:2])
    costs = ", ".join(f"{o[2]} on {_extents(o[3])}: {o[0]}" for o in options)
    reasons = {"lanes": f"{width} lanes along {lane}; weighted gathers per option: {costs}"}
    across = [o for o in options if o[2] == COL]
    if lane == RIDX and across and _float_ops(form.body) >= HEAVY_BODY:
        gathers, _, lane, form = min(across, key=lambda o: o[:2])
        reasons["lanes"] = (f"{width} lanes along col, though {costs}: a body of "
                            f"{_float_ops(form.body)} float ops (>= {HEAVY_BODY}) per step "
                            "outweighs its gathers, and along ridx Cranelift spills its "
                            "accumulators (a row sum of exp: 7.8 against 13-14 ms, measured)")
    if form.batches > 1:
        reasons["split"] = (f"{_extents(form)}: a batch of {form.batches} contractions, each "
                            f"{form.rows} rows (varying one operand) x {form.cols} cols "
                            "(varying the other)")
    if lane == RIDX:
        vectors = max(1, min(RIDX_VECTORS, steps // width))
        reasons["unroll"] = (f"{vectors} vectors of ridx per iteration, each its own "
                             f"accumulator: {vectors * width} partial results summed as a tree")
        return Plan(form.cols, RIDX, width, unroll=vectors, accumulators=vectors,
                    reasons=reasons), form
    return _tile_plan(form, deps, reasons, width), form


def _tile_plan(form: AxisForm, deps: Deps, reasons: dict[str, str], width: int) -> Plan:
    """Lanes along col: pick the register tile."""
    vectors_available = form.cols // width
    if _matmul_like(form, deps):
        rows = min(MATMUL_TILE[0], form.rows)
        vectors = min(MATMUL_TILE[1], vectors_available)
        reasons["tile"] = (f"{rows} rows x {vectors * width} columns of accumulators: one input "
                           "varies only along rows and another only along columns, so each "
                           f"loaded row value serves {vectors} vectors and each column vector "
                           f"serves {rows} rows (measured against 4x8, 4x12, 5x8, 3x16 and 8x4; "
                           "Cranelift's loop: 164 instructions per 48 multiply-adds, 30 of "
                           "them stack accesses and 40 copies, as its FMA overwrites its "
                           "first multiplicand (the column vector: see codegen); 0.94 of an "
                           "FMA-only loop's rate with the data in L1; rows interleaved per "
                           "step in the panel, two-step pair loads, exit tests between "
                           "steps, one step per iteration with splat loads (no spills, but "
                           "12 register moves on the back edge: 27 against 43 GFLOP/s), "
                           "4x3, 5x2, 7x2, 8x1, 10x1, 12x1: no faster, measured)")
        pack = _packable(form, deps, width)
        pack_rows = pack and _row_panel_pays(form, deps)
        if pack_rows:
            reasons["pack_rows"] = (
                "the row-side operand is computed or read down columns (a fused relu, a "
                "transposed operand): its values are first copied, once per block of rows, "
                "to scratch in row-major order, and every strip reads them from there "
                "(W4 on one thread, GFLOP/s of CPU time without -> with: relu-fed 256x512x512 "
                "22-24 -> 35-39, relu-fed transposed 512x256x512 20-21 -> 32-34, transposed "
                "784x256x512 28-32 -> 31-39, measured); a transposed one four rows at a time "
                "and a transposed column side four steps at a time, turned by shuffles instead "
                "of read lane by lane (W4's x.T @ g, 784x512x256 on one thread, ms of CPU time: "
                "6.50 -> 5.94, measured)")
        if _read_down_columns(form, deps) and not pack_rows:
            unroll = TRANSPOSED_UNROLL if form.steps >= 2 * TRANSPOSED_UNROLL else 1
            reasons["unroll"] = (f"{unroll} ridx steps per iteration: the row values of a step "
                                 "come four rows per v128 load (a transposed operand); with 4 "
                                 "steps Cranelift spills more (measured)")
        else:
            unroll = MATMUL_UNROLL if form.steps >= 2 * MATMUL_UNROLL else 1
            if unroll > 1:
                reasons["unroll"] = (f"{unroll} ridx steps per iteration: " + (
                    "four row values come in one v128 load and are spread to the lanes by "
                    "shuffles (a v128.load32_splat is three instructions in Cranelift's x64 "
                    "code: mov, vmovd, vpbroadcastd; 30-31 against 49-50 GFLOP/s, measured)"
                    if width == WIDTH else "a row value is loaded into both lanes"))
        if pack:
            reasons["pack"] = ("each strip of columns is read by every row tile: its operands "
                               "are first copied to scratch in ridx order (strided or gathered "
                               "reads happen once, the row tiles then read with unit stride); "
                               "two strips at a time where the operands run along columns, "
                               "a whole cache line of each of their rows (W4's 256x512x784 on "
                               "one thread, ms of CPU time: 5.34 -> 5.03, measured)")
        row_block = _row_block(form, rows, reasons) if pack else 0
        keep = _keep_strips(form, deps, row_block, reasons)
        return Plan(form.cols, COL, width, rows, vectors, unroll=unroll, pack=pack,
                    row_block=row_block, pack_rows=pack_rows, keep_strips=keep,
                    threads_take_rows=pack and _threads_take_rows(form, vectors, keep, reasons),
                    reasons=reasons)
    vectors = min(4, vectors_available)
    accs = 2 if vectors == 1 else 1
    reasons["tile"] = (f"1 row x {vectors * width} columns: independent accumulators to hide "
                       "the add latency" + (", two of them along ridx" if accs == 2 else ""))
    return Plan(form.cols, COL, width, 1, vectors, unroll=accs, accumulators=accs,
                reasons=reasons)


def _row_block(form: AxisForm, tile_rows: int, reasons: dict[str, str]) -> int:
    """Rows per block when the row-side operand of all rows outgrows a core's L2 (a
    1024 x 1024 matmul: 4 MiB): every packed strip then rereads only one block's rows,
    from L2 instead of L3 (0: one block)."""
    row_bytes = form.steps * WIDTH   # one row of the row-side operand over ridx, 4-byte values
    tiles = form.rows // tile_rows
    blocks = -(-tiles * tile_rows * row_bytes // ROW_BLOCK_BYTES)
    if blocks <= 1:
        return 0
    rows = -(-tiles // blocks) * tile_rows
    reasons["row_block"] = (
        f"{rows} rows per block ({blocks} blocks): {form.rows} rows x {form.steps} steps of the "
        f"row-side operand are {form.rows * row_bytes >> 10} KiB, over the "
        f"{ROW_BLOCK_BYTES >> 10} KiB kept in a core's L2; each column strip is packed once per "
        "block and its row tiles reread that block from L2 (1024 x 1024 x 1024, GFLOP/s of "
        "CPU time without -> with: 37.1-38.8 -> 38.4-39.9 on a loaded machine, measured)")
    return rows


def _keep_strips(form: AxisForm, deps: Deps, row_block: int, reasons: dict[str, str]) -> bool:
    """With several blocks of rows, each column strip would be packed once per block (a
    strided read of the column-side operand each time): pack every strip once, in the
    first block, into scratch that holds all of a thread's strips, and let the later
    blocks read it back (contiguous reads), unless that scratch would be too large."""
    if not row_block or row_block >= form.rows:
        return False
    kept = len(panel_operands(form.body, deps)) * form.steps * form.cols * WIDTH
    if kept > KEPT_STRIPS_BYTES:
        return False
    reasons["keep_strips"] = (
        f"{-(-form.rows // row_block)} blocks of rows would pack each strip {-(-form.rows // row_block)} "
        f"times: it is packed in the first block only and kept ({kept >> 10} KiB of scratch "
        "for all strips, split among the threads) for the later ones (1024 x 1024 x 1024 on "
        "one thread, GFLOP/s of CPU time without -> with: 34.9 -> 36.7, measured; packing "
        "no strip at all: 39.9)")
    return True


THREAD_STRIPS = 8   # whole strips of columns under which threads share rows instead


def _threads_take_rows(form: AxisForm, vectors: int, keep: bool,
                       reasons: dict[str, str]) -> bool:
    """Whether the threads of a packed plan share its rows rather than its strips of
    columns: where there are too few strips to share evenly (a 10-wide layer is one strip
    of 8 columns and 2 columns after it: W4's h @ w3 took 0.086 and 0.131 ms of CPU time
    on its two threads, against 0.114 and 0.119 taking rows; one W4 profile each, on a
    loaded machine). Each thread then packs every strip.
    (Taking rows also spares each thread the row panel's other rows, but for W4's
    transposed x.T @ g and h.T @ g that measured the same as taking strips, 4.84 against
    4.71-4.92 ms of CPU time, so strips stay the rule.)"""
    strips = form.cols // (vectors * WIDTH)
    if form.batches > 1 or keep or strips >= THREAD_STRIPS:
        return False
    reasons["threads_take"] = (f"rows: {strips} whole strip(s) of {vectors * WIDTH} columns "
                               f"(of {form.cols}) would not share evenly among threads")
    return True


# --- overrides: the knobs a caller may set ------------------------------------------------

# Values a caller may try per knob; knobs() keeps those valid for a kernel's plan.
_TILES = ((1, 1), (1, 2), (1, 4), (2, 2), (4, 1), (4, 2), (6, 2), (8, 1))
_KNOB_VALUES: dict[str, tuple[Any, ...]] = {
    "lanes": ("none", COL.value, ROW.value, RIDX.value),
    "tile": _TILES,
    "unroll": (1, 2, 4, 8),
    "accumulators": (1, 2, 4),
}
KNOB_DOCS = {
    "lanes": f"the loop axis the SIMD lanes run along ({WIDTH}, or {WIDE_WIDTH} with 64-bit "
             "values; none: scalar code)",
    "tile": "rows x vectors of outputs per loop iteration (a register tile)",
    "unroll": "reduction steps per loop iteration (vectors of steps with lanes along ridx)",
    "accumulators": "independent partial results per output, summed as a tree at the end",
    "threads": "threads that share the kernel's outer loop, each a range of it",
}


def _lane_name(lane: Optional[Axis]) -> str:
    """How knobs and records name a lane axis (none: scalar code)."""
    return lane.value if lane else "none"


def current(plan: Plan) -> dict[str, Any]:
    """The plan's value of each knob."""
    return {"lanes": _lane_name(plan.lane), "tile": (plan.tile_rows, plan.tile_vectors),
            "unroll": plan.unroll, "accumulators": plan.accumulators}


def override(kernel: Kernel, plan: Plan, form: AxisForm, name: str, value: Any) -> Plan:
    """`plan` with knob `name` set to `value` (the other choices adjusted to stay valid);
    ValueError where the kernel's code cannot be laid out that way."""
    bad = ValueError(f"wasm tuning: {name}={value!r} is not valid for {kernel.name} "
                     f"(lanes along {_lane_name(plan.lane)})")
    red = kernel.reduction is not None
    why = {**plan.reasons, name: "set by the caller"}
    if name == "lanes":
        if value not in _KNOB_VALUES["lanes"]:
            raise bad
        lane = None if value == "none" else Axis(value)
        width = lane_width(kernel)
        if (lane is RIDX and (not red or form.steps < width)) or (lane is COL and form.cols < width) \
                or (lane is ROW and (red or form.rows < WIDTH or width != WIDTH)):
            raise bad
        if lane == plan.lane:
            return plan
        unroll = min(RIDX_VECTORS, form.steps // width) if lane == RIDX else 1
        return Plan(form.cols, lane, width if lane else 1, unroll=unroll,
                    accumulators=unroll, fma=plan.fma and lane is not None, reasons=why)
    if name == "tile":
        rows, vectors = value
        if plan.lane == RIDX or (plan.lane == ROW and rows != 1) or rows > form.rows:
            raise bad
        # blocks of rows hold whole tiles of the new height
        block = _row_block(form, rows, why) if plan.pack else 0
        keep = plan.pack and _keep_strips(form, Deps(), block, why)
        take_rows = plan.pack and _threads_take_rows(form, vectors, keep, why)
        return dataclasses.replace(plan, tile_rows=rows, tile_vectors=vectors, row_block=block,
                                   keep_strips=keep, threads_take_rows=take_rows, reasons=why)
    if name == "unroll":
        if not red or value not in _KNOB_VALUES["unroll"]:
            raise bad
        accumulators = value if plan.lane == RIDX else min(plan.accumulators, value)
        return dataclasses.replace(plan, unroll=value, accumulators=accumulators, reasons=why)
    if name == "accumulators":
        if not red or plan.lane == RIDX or value > plan.unroll:
            raise bad
        return dataclasses.replace(plan, accumulators=value, reasons=why)
    raise ValueError(f"wasm tuning: unknown setting {name!r}; known: "
                     f"{', '.join([*_KNOB_VALUES, 'threads'])}")


def apply(kernel: Kernel, plan: Plan, form: AxisForm, overrides: dict[str, Any]) -> Plan:
    """Each override in turn (lanes first: it resets the others)."""
    for name in sorted(overrides, key=lambda n: n != "lanes"):
        plan = override(kernel, plan, form, name, overrides[name])
    return plan


def knob_values(kernel: Kernel, plan: Plan, form: AxisForm) -> dict[str, tuple[Any, ...]]:
    """Per knob, the values valid for this kernel on their own (the plan's other choices
    kept); knobs with a single value are left out."""
    found = {}
    for name, values in _KNOB_VALUES.items():
        valid = []
        for value in values:
            try:
                override(kernel, plan, form, name, value)
            except ValueError:
                continue
            valid.append(value)
        if len(valid) > 1:
            found[name] = tuple(valid)
    return found
