"""Kernel -> WebAssembly text (WAT). Pure text: no wasmtime here.

The generated function is `kernel(out, in0, in1, ..., [scratch,] lo, hi)`,
each buffer a byte offset into the one linear memory; it computes the outputs
whose outer loop index (rows, or columns when there is one row) lies in
[lo, hi), so that threads can share a dispatch. Its loops follow the Plan:

    [batch loop (a batched contraction)]
    row loop (register tiles of tile_rows rows, then single rows)
      col loop (tile_vectors vectors of 4 lanes, then single vectors, then scalars)
        tile: values of the IR nodes for every (row, col) copy in the tile
        [ridx loop: accumulate the body into one accumulator per copy]
        store out[row*cols + col] (the epilogue, for reductions)

A packed plan walks strips of columns outermost instead, first copying each
strip's column-side operands to `scratch`.

Every IR node becomes a named local (`$v12_r1c4`: node 12, vector, at row+1,
col+4) set once per copy, with a comment saying what it computes (scope.py).
Nodes that do not depend on ridx are computed before the reduction loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from jaxlab.backends.traced import like, listing, traced
from jaxlab.backends.wasm import mathlib
from jaxlab.backends.wasm.analysis import (BATCH, COL, RIDX, ROW, Axis, AxisForm, Deps, contiguous,
                                           in_bounds, loads, panel_operands)
from jaxlab.backends.wasm.optable import (MEM, SCALAR_TYPE, const, extract, kind,
                                          functions_for, splat, templates, vector_memory)
from jaxlab.backends.wasm.scope import AXES, Pos, Scope, Val, round_f16
from jaxlab.backends.wasm.tune import Plan
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.floatsign import Sign, sign_of
from jaxlab.ir.kernel import Kernel, reduce_identity
from jaxlab.ir.provenance import FOLD


@dataclass(frozen=True)
class Generated:
    text: str                 # the module
    scratch_bytes: int        # size of the $scratch argument, its fixed part
    split: tuple[Axis, int, int]  # (axis, extent, unit): [$lo, $hi) of that axis is computed
    scratch_per_unit: int = 0  # and bytes per whole unit of the split that a call computes
    # threads may pull small ranges of the split in turn (no scratch, every unit apart)
    pulled: bool = False

    @property
    def takes_scratch(self) -> bool:
        return bool(self.scratch_bytes or self.scratch_per_unit)

    def scratch_for(self, lo: int, hi: int) -> int:
        """Bytes of $scratch a call over [lo, hi) of the split axis needs."""
        return self.scratch_bytes + (hi - lo) // self.split[2] * self.scratch_per_unit


MEMORY_PAGES = 65536          # a shared memory declares its maximum: all of memory32
SIGN_DEPTH = 64               # a float sign is looked for under this depth


def fold_tree(names: list[str], op: str) -> list[str]:
    """Lines that fold the locals `names` into the first by `op` ("{a}", "{b}"), in a
    tree: (0+1)+(2+3)."""
    lines, width = [], len(names)
    while width > 1:
        half = (width + 1) // 2
        lines += [f"(local.set ${names[u]} "
                  f"{op.format(a=f'(local.get ${names[u]})', b=f'(local.get ${names[u + half]})')})"
                  for u in range(width - half)]
        width = half
    return lines


def generate(kernel: Kernel, plan: Plan, form: AxisForm) -> Generated:
    """The whole module: imports, the math functions it calls, the kernel.

    The kernel computes the part of the output whose outer loop index is in
    [$lo, $hi) (multiples of the split's unit, $hi may be the extent), so that
    several threads can share one dispatch. The imported memory is always a
    shared one: every instance lives in a store of its own (see runtime.py),
    and only a shared memory can be imported by several stores.
    """
    gen = KernelWat(kernel, plan, form)
    # (the text is a traced.Listing: its line_marks say what each line computes)
    return Generated(gen.module(), gen.scratch_bytes, gen.split, gen.scratch_per_unit)


def _indent(lines: list[str], n: int = 1) -> list[str]:
    pad = "  " * n
    return [like(pad + line.replace("\n", "\n" + pad), line) for line in lines]


class KernelWat:
    def __init__(self, kernel: Kernel, plan: Plan, form: AxisForm) -> None:
        self.kernel, self.plan, self.form = kernel, plan, form
        self.lanes = plan.width if plan.lane is not None else 4   # lanes a vector computes
        self.deps = Deps()
        self.ids: dict[AluExp, int] = {}
        self.locals: dict[str, str] = {axis.value: "i32" for axis in Axis}
        self.labels = 0
        self.packed: dict[AluExp, int] = {}    # panel operands being read from $scratch
        self.row_packed: dict[AluExp, int] = {}   # row-side operands read from the row panel
        self.row_panel = (0, 0)                  # its byte offset in $scratch, bytes per operand
        self.warming = False                   # Scope is computing sources ahead of use
        self.pack_stride = 0                    # bytes of packed values per ridx step
        self.scratch_bytes = 0
        self.scratch_per_unit = 0               # kept strips: bytes per strip of a call's range
        self.split = (ROW, form.rows, plan.tile_rows)
        self.splitting = True                   # clip loops over the split axis to [lo, hi)

    # --- names -------------------------------------------------------------
    def local(self, name: str, wasm_type: str) -> str:
        known = self.locals.setdefault(name, wasm_type)
        assert known == wasm_type, f"local ${name} is {known}, not {wasm_type}"
        return name

    def label(self, node: AluExp) -> str:
        return f"n{self.ids.setdefault(node, len(self.ids))}"

    def sign(self, node: AluExp) -> Optional[Sign]:
        """The sign every non-NaN value of a float node has, where known (a one-sided
        exp); not looked for under a deep chain (sign_of recurses)."""
        return sign_of(node) if node.depth < SIGN_DEPTH else None

    def restrict(self, node: AluExp, pos: Pos) -> tuple[tuple[str, int], ...]:
        d = self.deps(node)
        return tuple((a, pos[a]) for a in AXES if a in d and a in pos)

    def fresh(self, stem: str) -> str:
        self.labels += 1
        return f"{stem}{self.labels}"

    # --- module --------------------------------------------------------------
    def module(self) -> str:
        body = self._outputs()
        k, plan, form = self.kernel, self.plan, self.form
        params = " ".join(["(param $out i32)"] + [f"(param $in{i} i32)"
                                                  for i in range(len(k.inputs))]
                          + (["(param $scratch i32)"] if self.scratch_bytes or self.scratch_per_unit else [])
                          + ["(param $lo i32) (param $hi i32)"])
        head = [f";; {line}" for line in k.text().splitlines()]
        head.append(f";; loops: {form.rows} rows x {form.cols} cols"
                    + (f", reduction of {form.steps}" if k.reduction else "")
                    + f"; lanes along {plan.lane.value if plan.lane else 'nothing (scalar)'}"
                    + f"; this call computes {self.split[0].value}s [lo, hi)")
        decls = [f"(local ${n} {t})" for n, t in self.locals.items()]
        decls = [" ".join(decls[i:i + 6]) for i in range(0, len(decls), 6)]
        func = ([f'(func $kernel (export "kernel") {params}']
                + _indent(decls) + _indent(body) + [")"])
        roots = self.roots()
        dtypes = {d for d, _ in k.inputs} | {k.dtype} | {n.dtype for r in roots for n in r.toposort()}
        math = [line for fn in mathlib.texts(functions_for(roots, dtypes)) for line in fn.splitlines()]
        text = (head + [f'(import "env" "memory" (memory 1 {MEMORY_PAGES} shared))'] + math + func)
        return listing(["(module"] + _indent(text) + [")"])

    def roots(self) -> list[AluExp]:
        """The expressions the kernel computes (what its math functions are chosen by)."""
        form = self.form
        return [form.body] + ([form.epilogue] if form.epilogue is not None else [])

    # --- loops over the outputs ----------------------------------------------
    def _loop(self, axis: Axis, start: int, stop: int, step: int, body: list[str],
              what: str) -> list[str]:
        """for axis in range(start, stop, step); over the split axis, only this call's share."""
        if stop <= start:
            return []
        var = axis.value
        label = self.fresh(var)
        if self.splitting and axis is self.split[0]:
            # [max(lo, start), min(hi, stop)), which may be empty
            lo = "(local.get $lo)" if start == 0 else \
                f"(select (local.get $lo) (i32.const {start}) (i32.gt_u (local.get $lo) (i32.const {start})))"
            extent = self.split[1]
            if stop == extent:
                hi = "(local.get $hi)"
            elif stop > extent:   # the rows after the split's last whole tile: the last call's
                hi = (f"(select (i32.const {stop}) (local.get $hi) "
                      f"(i32.eq (local.get $hi) (i32.const {extent})))")
            else:
                hi = f"(select (local.get $hi) (i32.const {stop}) (i32.lt_u (local.get $hi) (i32.const {stop})))"
            end = self.local("end", "i32")
            return ([f"(local.set ${var} {lo})", f"(local.set ${end} {hi})",
                     f"(if (i32.lt_u (local.get ${var}) (local.get ${end}))",
                     f"  (then (loop ${label}  ;; {what}: {var} = {start}, {start + step}, ... < {stop},"
                     " within [lo, hi)"]
                    + _indent(body, 2)
                    + _indent([f"(local.set ${var} (i32.add (local.get ${var}) (i32.const {step})))",
                               f"(br_if ${label} (i32.lt_u (local.get ${var}) (local.get ${end}))))))"], 2))
        head = [f"(local.set ${var} (i32.const {start}))"]
        if stop - start == step:
            return head + body
        return (head + [f"(loop ${label}  ;; {what}: {var} = {start}, {start + step}, ... < {stop}"]
                + _indent(body)
                + _indent([f"(local.set ${var} (i32.add (local.get ${var}) (i32.const {step})))",
                           f"(br_if ${label} (i32.lt_u (local.get ${var}) (i32.const {stop}))))"]))

    def _outputs(self) -> list[str]:
        lines = self._outputs_of_batch()
        if self.form.batches == 1:
            return lines
        return self._loop(BATCH, 0, self.form.batches, 1, lines,
                          "batches, each a contraction of its own")

    def _outputs_of_batch(self) -> list[str]:
        plan, form = self.plan, self.form
        width = plan.width if plan.lane == COL else 1
        if plan.lane == ROW:
            return self._row_lanes()
        if not plan.pack:
            if form.rows == 1:   # one row: the columns are what threads share
                self.split = (COL, form.cols, plan.tile_vectors * width)
            return self._grid(self._col_parts(0, plan.tile_vectors, width))
        strip = plan.tile_vectors * width
        packed_cols = form.cols // strip * strip
        # threads take ranges of strips, or ranges of whole row tiles (the last call also
        # the rows after them) and every strip
        self.split = ((ROW, self._row_parts()[0][1], plan.tile_rows) if plan.threads_take_rows
                      else (COL, form.cols, strip))
        blocked = bool(plan.row_block or plan.pack_rows)
        pack_rows = self._pack_rows() if plan.pack_rows else []   # at the start of $scratch
        inner = self._pack_strip()
        self.splitting = plan.threads_take_rows
        inner += self._packed_rows() if blocked else [
            line for r0, r1, tm in self._row_parts()
            for line in self._loop(ROW, r0, r1, tm, self._tile(tm, plan.tile_vectors, width),
                                   f"rows {tm} at a time over the packed strip")]
        self.packed, self.row_packed = {}, {}
        rest = self._grid(self._col_parts(packed_cols, 1, width))
        self.splitting = True
        lines = self._loop(COL, 0, packed_cols, strip, inner,
                           f"strips of {strip} columns, each packed once"
                           + (" per block of rows" if blocked else ""))
        if blocked:
            lines = self._row_blocks(pack_rows + lines)
        if plan.threads_take_rows:   # every call: the columns after the last strip, its rows
            return lines + rest
        if rest:   # the columns after the last strip, done by the call that ends the range
            lines += ([f"(if (i32.gt_u (local.get $hi) (i32.const {packed_cols}))", "  (then"]
                      + _indent(rest, 2) + ["))"])
        return lines

    def _row_blocks(self, body: list[str]) -> list[str]:
        """`body` (the packed strips) once per block of plan.row_block rows of the whole
        tiles (of this call's range of them, where threads take rows): $rb is the block's
        first row and $rend its end."""
        main = self._row_parts()[0][1]
        block = self.plan.row_block or main
        rb, rend = self.local("rb", "i32"), self.local("rend", "i32")
        first, end = (("(local.get $lo)", "(local.get $hi)") if self.plan.threads_take_rows
                      else ("(i32.const 0)", f"(i32.const {main})"))
        label = self.fresh("rb")
        return [f"(local.set ${rb} {first})",
                f"(loop ${label}  ;; blocks of {block} rows: rb = {first}, + {block}, ... < {end}",
                f"  (local.set ${rend} (i32.add (local.get ${rb}) (i32.const {block})))",
                f"  (if (i32.gt_u (local.get ${rend}) {end})"
                f" (then (local.set ${rend} {end})))"] + _indent(body) + [
                f"  (local.set ${rb} (local.get ${rend}))",
                f"  (br_if ${label} (i32.lt_u (local.get ${rb}) {end})))"]

    def _packed_rows(self) -> list[str]:
        """The row tiles of the block [$rb, $rend) over the packed strip, then, in the last
        block, the tile of the rows left over."""
        (_, main, tm), *rest = self._row_parts()
        tile = self._tile(tm, self.plan.tile_vectors, self.plan.width)
        label = self.fresh("row")
        lines = ["(local.set $row (local.get $rb))",
                 f"(loop ${label}  ;; rows {tm} at a time over the packed strip: row = rb, "
                 f"rb + {tm}, ... < rend"] + _indent(tile) + [
                 f"  (local.set $row (i32.add (local.get $row) (i32.const {tm})))",
                 f"  (br_if ${label} (i32.lt_u (local.get $row) (local.get $rend))))"]
        for r0, r1, left in rest:   # after the last block
            leftover = self._loop(ROW, r0, r1, left, self._tile(left, self.plan.tile_vectors,
                                                                 self.plan.width),
                                  f"the last {left} row(s)")
            lines += [f"(if (i32.eq (local.get $rend) (i32.const {main}))", "  (then"] + \
                _indent(leftover, 2) + ["))"]
        return lines

    def _pack_rows(self) -> list[str]:
        """Store the row-side operands of the rows [$rb, $rend) (and, in the last block, of
        the rows after the last whole tile) for every ridx into $scratch, one row after
        another, so that the tiles read plain rows whatever computed them (a relu, a
        transposed read); four ridx at a time, then one at a time. Operands read down
        their columns (transposed) go four rows at a time, turned by shuffles."""
        nodes = panel_operands(self.form.body, self.deps, ROW)
        steps, rows = self.form.steps, self.form.rows
        main = self._row_parts()[0][1]
        row_bytes = steps * 4
        size = ((self.plan.row_block or main) + rows - main) * row_bytes
        self.row_panel = (self.scratch_bytes, size)
        self.scratch_bytes += len(nodes) * size
        pr, last = self.local("pr", "i32"), self.local("rlast", "i32")
        self.local("pw", "i32")   # the write pointer within a row (_pack_row_steps)
        lines = [f"(local.set $row (local.get $rb))  ;; pack the rows of this block",
                 f"(local.set ${last} (select (i32.const {rows}) (local.get $rend) "
                 f"(i32.eq (local.get $rend) (i32.const {main}))))",
                 f"(local.set ${pr} (i32.add (local.get $scratch) (i32.const {self.row_panel[0]})))"]
        if self._read_along(nodes, ROW, RIDX):
            fours = self.local("rfours", "i32")
            lines += [f"(local.set ${fours} (i32.sub (local.get ${last}) (i32.and "
                      f"(i32.sub (local.get ${last}) (local.get $rb)) (i32.const 3))))"]
            lines += self._row_loop(fours, 4, row_bytes,
                                    self._pack_row_steps(nodes, size, row_bytes, True),
                                    "four rows at a time")
        lines += self._row_loop(last, 1, row_bytes, self._pack_row_steps(nodes, size, row_bytes, False),
                                f"one row at a time (the last block: < {rows})")
        self.row_packed = {node: j for j, node in enumerate(nodes)}
        return lines

    def _row_loop(self, stop: str, step: int, row_bytes: int, body: list[str],
                  what: str) -> list[str]:
        """while $row < $stop: body, then $pr and $row move on by `step` rows."""
        label = self.fresh("row")
        return [f"(if (i32.lt_u (local.get $row) (local.get ${stop}))",
                f"  (then (loop ${label}  ;; pack rows {what}, row < {stop}"] + _indent(
            body + [f"(local.set $pr (i32.add (local.get $pr) (i32.const {step * row_bytes})))",
                    f"(local.set $row (i32.add (local.get $row) (i32.const {step})))",
                    f"(br_if ${label} (i32.lt_u (local.get $row) (local.get ${stop}))))))"], 2)

    def _pack_row_steps(self, nodes: list[AluExp], size: int, row_bytes: int,
                        four_rows: bool) -> list[str]:
        """Row $row of the row panel (four_rows: rows $row..+3, from operands read down
        their columns), four ridx at a time, then one at a time."""
        steps = self.form.steps
        body: list[str] = []
        quads = steps // 4 * 4
        for start, stop, step in ((0, quads, 4), (quads, steps, 1)):
            if stop <= start:
                continue
            loop = Scope(self, ROW if four_rows else RIDX if step == 4 else None, start=start)
            loop.prelude.append(f"(local.set $pw (i32.add (local.get $pr) (i32.const {4 * start})))")
            for j, node in enumerate(nodes):
                for r, v, vector in self._row_panel_values(loop, node, step, four_rows):
                    store = "v128.store" if vector else f"{SCALAR_TYPE[kind(node.dtype)]}.store"
                    loop.lines.append(f"({store} offset={j * size + r * row_bytes} (local.get $pw) "
                                      f"{v})  ;; packed {self.label(node)}" + (f", row+{r}" if r else ""))
            loop.increments["pw"] = 4
            body += self._ridx_loop(loop, start, stop, step)
        return body

    def _row_panel_values(self, loop: "Scope", node: AluExp, step: int,
                          four_rows: bool) -> list[tuple[int, str, bool]]:
        """(row offset, value, is a vector) to store for one iteration of a row-packing
        loop of `step` ridx: four rows' vectors of four ridx are turned into each row's."""
        at = {ROW: 0, RIDX: 0}
        if not four_rows:
            return [(0, loop.vec(node, at), True) if step == 4 else (0, loop.sca(node, at), False)]
        down = [loop.vec(node, {ROW: 0, RIDX: u}) for u in range(step)]
        if step == 4:
            return [(r, v, True) for r, v in enumerate(self._transpose(loop, down, node.dtype))]
        return [(r, extract(node.dtype, down[0], r), False) for r in range(4)]

    def _read_along(self, nodes: list[AluExp], axis: Axis, other: Axis) -> bool:
        """Every load of `nodes` reads four consecutive elements along `axis` but not along
        `other` (a transposed operand, seen from `other`), and is in bounds (a vector load
        may not read past the input)."""
        found = [ld for node in nodes for ld in loads(node)]
        counts = self.kernel.inputs
        return bool(found) and all(
            contiguous(ld.src[0], axis, self.deps) and not contiguous(ld.src[0], other, self.deps)
            and in_bounds(ld.src[0], counts[ld.arg][1]) for ld in found)

    @staticmethod
    def _transpose(scope: "Scope", vectors: list[str], dtype: DType) -> list[str]:
        """Four vectors turned: lane i of vector u becomes lane u of vector i (two rounds
        of shuffles: pairs of lanes interleaved, then halves joined)."""
        def shuffle(x: str, y: str, lanes: tuple[int, ...]) -> str:
            picks = " ".join(str(4 * lane + b) for lane in lanes for b in range(4))
            return scope.bind(f"(i8x16.shuffle {picks} {x} {y})", True, dtype, "turned")
        v0, v1, v2, v3 = vectors
        low01, high01 = shuffle(v0, v1, (0, 4, 1, 5)), shuffle(v0, v1, (2, 6, 3, 7))
        low23, high23 = shuffle(v2, v3, (0, 4, 1, 5)), shuffle(v2, v3, (2, 6, 3, 7))
        return [shuffle(low01, low23, (0, 1, 4, 5)), shuffle(low01, low23, (2, 3, 6, 7)),
                shuffle(high01, high23, (0, 1, 4, 5)), shuffle(high01, high23, (2, 3, 6, 7))]

    def row_panel_row(self) -> str:
        """The address of row $row's values in the row panel."""
        return (f"(i32.add (local.get $scratch) (i32.add (i32.const {self.row_panel[0]}) "
                f"(i32.mul (i32.sub (local.get $row) (local.get $rb)) "
                f"(i32.const {self.form.steps * 4}))))")

    def _row_lanes(self) -> list[str]:
        """Lanes along rows (inputs read down columns, as a transpose): four rows at a time
        with `tile_vectors` columns per step, then the last rows one by one."""
        rows, cols, tn = self.form.rows, self.form.cols, self.plan.tile_vectors
        self.split = (ROW, rows, 4)
        lines: list[str] = []
        for r0, r1, w in ((0, rows // 4 * 4, 4), (rows // 4 * 4, rows, 1)):
            inner: list[str] = []
            for c0, c1, step in ((0, cols // tn * tn, tn), (cols // tn * tn, cols, 1)):
                inner += self._loop(COL, c0, c1, step, self._tile(1, step, w, ROW),
                                    f"{step} column(s) of {w} row(s)")
            lines += self._loop(ROW, r0, r1, w, inner, f"rows {w} at a time, as lanes")
        return lines

    def _row_parts(self) -> list[tuple[int, int, int]]:
        """(start, stop, rows per tile): whole tiles, then one tile of the rows left over
        (a 4-row tile for the last 4 of 64 rows, not four 1-row ones)."""
        rows, tm = self.form.rows, self.plan.tile_rows
        main = rows // tm * tm
        return [p for p in ((0, main, tm), (main, rows, rows - main)) if p[1] > p[0]]

    def _grid(self, col_parts: list[tuple[int, int, int, int]]) -> list[str]:
        """Rows outside, columns inside, a tile per step."""
        lines: list[str] = []
        for r0, r1, tm in self._row_parts():
            inner: list[str] = []
            for c0, c1, tn, w in col_parts:
                what = (f"tiles of {tm} row(s) x {tn * w} column(s)"
                        + (f" ({tn} x {w} lanes)" if w > 1 else ""))
                inner += self._loop(COL, c0, c1, tn * w, self._tile(tm, tn, w), what)
            if inner:   # (no columns left after a matmul's last strip: no row loop)
                lines += self._loop(ROW, r0, r1, tm, inner, f"rows {tm} at a time")
        return lines

    def _col_parts(self, start: int, tn: int, width: int) -> list[tuple[int, int, int, int]]:
        """(start, stop, vectors per tile, lanes): tiles of tn vectors, single vectors, scalars."""
        cols = self.form.cols
        a = start + (cols - start) // (tn * width) * (tn * width)
        parts = [(start, a, tn, width)]
        if width > 1:
            b = cols // width * width
            # the last columns of a register tile's rows two at a time, each row value loaded
            # once for both (W4's 10-wide layers, 256 x 10 x 512 and 512 x 10 x 256 on one
            # thread, ms of CPU time: 0.19 -> 0.16-0.17 and 0.21 -> 0.18, measured)
            pairs = b + (cols - b) // 2 * 2 if self.plan.tile_rows > 1 else b
            parts += [(a, b, 1, width), (b, pairs, 2, 1), (pairs, cols, 1, 1)]
        else:
            parts.append((a, cols, 1, 1))
        return [p for p in parts if p[1] > p[0]]

    def _pack_strip(self) -> list[str]:
        """Store the panel operands of columns col..col+strip for every ridx into $scratch
        at $panel, ridx-major, so that the row tiles read them with unit stride. Kept
        strips (plan.keep_strips) each have a panel of their own, packed in the first
        block of rows only. Operands read along columns are packed two strips at a time
        (an even strip of the call's range packs the next one too, into the panel after
        its own): each row of the operand is then read a whole cache line at once."""
        nodes = panel_operands(self.form.body, self.deps)
        tn = self.plan.tile_vectors
        strip = tn * 4
        self.pack_stride = len(nodes) * tn * 16
        steps = self.form.steps
        strip_bytes = steps * self.pack_stride
        panel, pk = self.local("panel", "i32"), self.local("pk", "i32")
        # operands read along ridx (a transposed one): four ridx of four columns at a time,
        # turned by shuffles, then the last ridx lane by lane
        across = steps // 4 * 4 if self._read_along(nodes, RIDX, COL) else 0
        # strip `nth` of this call's range of strips (of all of them where threads take rows)
        first = "(i32.const 0)" if self.plan.threads_take_rows else "(local.get $lo)"
        nth = f"(i32.div_u (i32.sub (local.get $col) {first}) (i32.const {strip}))"
        if self.plan.keep_strips:   # strip (col - lo) / strip of this call's range
            self.scratch_per_unit = strip_bytes
            which = nth
        else:   # two panels, for the even and the odd strips
            which = f"(i32.and {nth} (i32.const 1))" if not across else "(i32.const 0)"
            self.scratch_bytes += (1 if across else 2) * strip_bytes
        base = self.scratch_bytes - (0 if self.plan.keep_strips else (1 if across else 2) * strip_bytes)
        at = (f"(i32.add (local.get $scratch) (i32.add (i32.const {base}) "
              f"(i32.mul {which} (i32.const {strip_bytes}))))")
        if across:
            pack = self._pack_strips(nodes, across, 1, pk)
        else:
            packed_cols = self.form.cols // strip * strip
            last = (f"(i32.const {packed_cols})" if self.plan.threads_take_rows else
                    f"(select (local.get $hi) (i32.const {packed_cols}) "
                    f"(i32.lt_u (local.get $hi) (i32.const {packed_cols})))")
            has_next = f"(i32.lt_u (i32.add (local.get $col) (i32.const {strip})) {last})"
            pack = [f"(if (i32.eqz (i32.and {nth} (i32.const 1)))  ;; an even strip packs the next one too",
                    f"  (then (if {has_next}", "    (then"] + _indent(self._pack_strips(nodes, 0, 2, pk), 3) + [
                    "    ) (else"] + _indent(self._pack_strips(nodes, 0, 1, pk), 3) + ["    ))))"]
        self.packed = {node: j for j, node in enumerate(nodes)}
        if self.plan.keep_strips:
            pack = (["(if (i32.eqz (local.get $rb))  ;; the first block of rows packs the strip",
                     "  (then"] + _indent(pack, 2) + ["))"])
        return [f"(local.set ${panel} {at})  ;; this strip's packed panel"] + pack

    def _pack_strips(self, nodes: list[AluExp], across: int, strips: int, pk: str) -> list[str]:
        """The packing loops of `strips` strips from $col on (the second into the panel
        after $panel); ridx < `across` four at a time, turned by shuffles."""
        tn, steps = self.plan.tile_vectors, self.form.steps
        strip_bytes = steps * self.pack_stride
        pack = [f"(local.set ${pk} (local.get $panel))  ;; pack this strip"
                + (" and the next" if strips == 2 else "")]
        for start, stop, lane in ((0, across, RIDX), (across, steps, COL)):
            if stop <= start:
                continue
            tile = Scope(self, lane)
            loop = Scope(self, lane, parent=tile, start=start)
            for s in range(strips):
                for j, node in enumerate(nodes):
                    for c in range(tn):
                        col = 4 * (s * tn + c)
                        if lane is RIDX:
                            steps_of = self._transpose(loop, [loop.vec(node, {COL: col + i, RIDX: 0})
                                                              for i in range(4)], node.dtype)
                        else:
                            steps_of = [loop.vec(node, {COL: col, RIDX: 0})]
                        for u, v in enumerate(steps_of):
                            off = s * strip_bytes + u * self.pack_stride + (j * tn + c) * 16
                            loop.lines.append(f"(v128.store offset={off} (local.get ${pk}) {v})"
                                              f"  ;; packed {self.label(node)} @ col+{col}"
                                              + (f", ridx+{u}" if u else ""))
            loop.increments[pk] = self.pack_stride
            pack += tile.lines + self._ridx_loop(loop, start, stop, 4 if lane is RIDX else 1)
        return pack

    # --- one tile ----------------------------------------------------------------
    def _tile(self, tm: int, tn: int, w: int, lane: Axis = COL) -> list[str]:
        """tm x tn copies of the kernel; each copy is w lanes along `lane`."""
        tile = Scope(self, lane if w > 1 else None)
        step = {ROW: w if lane == ROW else 1, COL: w if lane == COL else 1}
        copies = [{ROW: r * step[ROW], COL: c * step[COL]} for r in range(tm) for c in range(tn)]
        if self.kernel.reduction is None:
            for pos in copies:
                self._store(tile, self.form.body, pos)
            return tile.lines
        pre = tile.lines
        loops = self._reduce(tile, copies)
        tile.lines = post = []
        for pos in copies:
            self._store(tile, self.form.epilogue, pos)
        return pre + loops + post

    def _store(self, scope: "Scope", root: AluExp, pos: Pos) -> None:
        dtype = self.kernel.dtype
        mem = MEM[dtype]
        if scope.lane == ROW:   # four rows of one column: a scalar store per lane
            v = scope.vec(root, pos)
            for lane in range(4):
                scalar = scope.bind(extract(dtype, v, lane), False, dtype, f"lane {lane}")
                self._store_scalar(scope, scalar, {**pos, ROW: pos[ROW] + lane})
            return
        moves = vector_memory(dtype, self.lanes)
        if scope.lane is not None and moves is None:   # two narrow lanes: one store each
            v = scope.vec(root, pos)
            for lane in range(self.lanes):
                scalar = scope.bind(extract(dtype, v, lane), False, dtype, f"lane {lane}")
                self._store_scalar(scope, scalar, {**pos, COL: pos[COL] + lane})
            return
        if scope.lane is not None:
            ptr, off = scope.address("(local.get $out)", dtype.itemsize, self.form.out_index, pos)
            v = scope.vec(root, pos)
            if mem.encode:
                v = scope.bind(mem.encode.format(v=v), True, DType.int32, "encoded")
            scope.lines.append(moves[1].format(off=off, addr=ptr, v=v)
                               + f"  ;; out[{self._where(pos)}..+{self.lanes - 1}]")
            return
        self._store_scalar(scope, scope.sca(root, pos), pos)

    def _store_scalar(self, scope: "Scope", v: str, pos: Pos) -> None:
        dtype = self.kernel.dtype
        mem = MEM[dtype]
        ptr, off = scope.address("(local.get $out)", dtype.itemsize, self.form.out_index, pos)
        if dtype is DType.float16:   # the encoder is a vector function: use lane 0
            v = extract(DType.int32, mem.encode.format(v=splat(DType.float32, v)), 0)
        elif mem.encode_scalar:
            v = mem.encode_scalar.format(v=v)
        scope.lines.append(f"({mem.store} offset={off} {ptr} {v})  ;; out[{self._where(pos)}]")

    @staticmethod
    def _where(pos: Pos) -> str:
        return ", ".join(f"{a.value}+{o}" if o else a.value for a, o in pos.items())

    # --- reductions ------------------------------------------------------------------
    def _reduce(self, tile: "Scope", copies: list[Pos]) -> list[str]:
        """The ridx loops; leaves each copy's folded value in tile.accs."""
        red, dtype = self.kernel.reduction, self.kernel.exp.dtype
        k = kind(dtype)
        s_op, v_op = templates(red.op, k, k)
        ident = reduce_identity(red.op, dtype)
        steps, plan = self.form.steps, self.plan
        scalar_type = SCALAR_TYPE[k]
        if plan.lane == RIDX:
            return self._reduce_along_ridx(tile, copies[0], s_op, v_op, ident, dtype)
        vector = tile.lane is not None
        op = v_op if vector else s_op
        accs = {}
        for ci, pos in enumerate(copies):
            for a in range(plan.accumulators):
                name = self.local(f"{'v' if vector else 's'}acc{ci}_{a}",
                                  "v128" if vector else scalar_type)
                tile.lines.append(f"(local.set ${name} {const(ident, dtype, vector)})")
                accs[ci, a] = name
        main = steps // plan.unroll * plan.unroll
        loops = []
        for start, stop, unroll in ((0, main, plan.unroll), (main, steps, 1)):
            if stop <= start:
                continue
            loop = Scope(self, tile.lane, parent=tile, start=start, quads=unroll % 4 == 0,
                         tile_rows=1 + max(pos.get(ROW, 0) for pos in copies))
            for u in range(unroll):
                for ci, pos in enumerate(copies):
                    acc = accs[ci, u % plan.accumulators]
                    step = self._accumulate(loop, acc, {**pos, RIDX: u}, op, vector)
                    loop.lines.append(traced(f"(local.set ${acc} {step})  ;; acc "
                                             f"{red.op.name.lower()}= body[{self._where(pos)}]",
                                             [FOLD, self.form.body]))
            loops += self._ridx_loop(loop, start, stop, unroll)
        for ci, pos in enumerate(copies):
            acc = accs[ci, 0]
            for a in range(1, plan.accumulators):
                loops.append(f"(local.set ${acc} {op.format(a=f'(local.get ${acc})', b=f'(local.get ${accs[ci, a]})')})")
            tile.accs[self._acc_key(pos)] = self._round_acc(loops, acc, dtype, vector)
        return loops

    def _reduce_along_ridx(self, tile: "Scope", pos: Pos, s_op: str, v_op: str, ident,
                           dtype: DType) -> list[str]:
        """`lanes` ridx values per vector, `unroll` vectors per step, then a scalar tail."""
        steps, nvec, lanes = self.form.steps, self.plan.unroll, self.lanes
        acc = self.local("acc", SCALAR_TYPE[kind(dtype)])
        main = steps // (lanes * nvec) * (lanes * nvec)
        loops: list[str] = []
        tile.lines.append(f"(local.set ${acc} {const(ident, dtype, False)})")
        if main:
            vaccs = [self.local(f"vacc{u}", "v128") for u in range(nvec)]
            tile.lines += [f"(local.set ${v} {const(ident, dtype, True)})" for v in vaccs]
            loop = Scope(self, RIDX, parent=tile)
            for u, vacc in enumerate(vaccs):
                step = self._accumulate(loop, vacc, {**pos, RIDX: lanes * u}, v_op, True)
                loop.lines.append(traced(f"(local.set ${vacc} {step})"
                                         f"  ;; lanes of acc: ridx+{lanes * u}..+{lanes - 1}",
                                         [FOLD, self.form.body]))
            loops += self._ridx_loop(loop, 0, main, lanes * nvec)
            loops.append(";; fold the vector accumulators, then their lanes")
            loops += fold_tree(vaccs, v_op)
            values = [extract(dtype, f"(local.get ${vaccs[0]})", lane) for lane in range(lanes)]
            lane_names = [self.local(f"lane{i}", SCALAR_TYPE[kind(dtype)]) for i in range(lanes)]
            loops += [f"(local.set ${n} {t})" for n, t in zip(lane_names, values)]
            get = [f"(local.get ${n})" for n in lane_names]
            pairs = [s_op.format(a=get[i], b=get[i + 1]) for i in range(0, lanes, 2)]
            loops.append(f"(local.set ${acc} "
                         f"{pairs[0] if lanes == 2 else s_op.format(a=pairs[0], b=pairs[1])})")
        if main < steps:
            loop = Scope(self, None, parent=tile, start=main)
            v = loop.sca(self.form.body, {**pos, RIDX: 0})
            loop.lines.append(traced(f"(local.set ${acc} {s_op.format(a=f'(local.get ${acc})', b=v)})"
                                     "  ;; the last ridx one at a time", [FOLD, self.form.body]))
            loops += self._ridx_loop(loop, main, steps, 1)
        tile.accs[self._acc_key(pos)] = self._round_acc(loops, acc, dtype, False)
        return loops

    def _accumulate(self, loop: "Scope", acc: str, pos: Pos, op: str, vector: bool) -> str:
        """acc op body; a product into a sum is one fused multiply-add when the plan says so."""
        body = self.form.body
        if self.plan.fma and vector:
            a, b = (loop.vec(s, pos) for s in body.src)
            if COL in self.deps(body.src[1]) and COL not in self.deps(body.src[0]):
                # the column vector first: Cranelift's x64 FMA overwrites its first
                # multiplicand, and a copy of it spills less than of the row value
                # (6x8 tile: 30 against 45 stack accesses per 48 multiply-adds; 45.4-45.7
                # against 42.6-43.3 GFLOP/s with the data in L1, measured)
                a, b = b, a
            return f"(f32x4.relaxed_madd {a} {b} (local.get ${acc}))"
        return op.format(a=f"(local.get ${acc})", b=loop.value(body, pos, vector))

    def _round_acc(self, lines: list[str], acc: str, dtype: DType, vector: bool) -> Val:
        """float16 accumulates in f32 (as the cpu backend) and rounds once at the end."""
        if dtype is DType.float16:
            lines.append(f"(local.set ${acc} {round_f16(f'(local.get ${acc})', vector)})")
        return Val(f"(local.get ${acc})", vector)

    def _acc_key(self, pos: Pos) -> tuple:
        return tuple((a, pos[a]) for a in (ROW, COL) if a in pos)

    def _ridx_loop(self, loop: "Scope", start: int, stop: int, step: int) -> list[str]:
        var = RIDX.value
        label = self.fresh(var)
        bumps = [f"(local.set ${p} (i32.add (local.get ${p}) (i32.const {per * step})))"
                 for p, per in loop.increments.items()]
        return (loop.prelude + [f"(local.set ${var} (i32.const {start}))",
                                f"(loop ${label}  ;; reduce: {var} = {start}, {start + step}, ... < {stop}"]
                + _indent(loop.lines + bumps
                          + [f"(local.set ${var} (i32.add {RIDX.get} (i32.const {step})))",
                             f"(br_if ${label} (i32.lt_u {RIDX.get} (i32.const {stop}))))"]))
