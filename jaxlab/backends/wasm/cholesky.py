"""Cholesky as WebAssembly text, with the semantics of jax.lax.linalg (and
backends/numpy_routines.py): a failed factorization is NaN in its lower triangle.

Blocked and right-looking: per block of columns, the diagonal block by Crout, the panel
below by substitution on its transpose (four vectors of panel rows at a time, in
registers, each coefficient spread once for them), the trailing lower
triangle by tiles.py's register tiles reading that transpose.

A team of threads shares one matrix through a work list (routine_text.WORK_LIST):
thread 0 publishes each step's items (chunks of rows to copy, chunks of the panel, row
blocks of the trailing update), every thread takes items until none is left, and thread
0 waits only for the items others have taken. It alone factors each diagonal block,
after updating that block's rows itself, so no thread ever waits for a thread that has
taken nothing: a helper the system does not run costs the team nothing.
"""
from __future__ import annotations

from jaxlab.backends.wasm import tiles
from jaxlab.backends.wasm.routine_text import Body, Fn, Team, get, i32, layout, matrix_row, work_list, work_phase
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.kernel import Routine

BLOCK = 16         # columns a step (measured at 512: 8-16 best, 32 and 64 slower)
COPY_ROWS = 32     # rows of the input an item copies
PANEL_ROWS = 32    # panel rows an item solves (a multiple of the tiles' rows)
SOLVE_VECTORS = 4  # vectors of panel rows substituted together: a coefficient spread once for all
BLOCKS_PER_ITEM = 4   # row blocks of the trailing update an item updates
# one matrix this large, alone in its batch, is shared by up to this many threads. Below
# it a team of two was slower than one thread: benchmarks.wasm_teams on 2 quiet pinned
# cores of the GPU host (08:08, load ~0.8, medians, team against one thread): 256 0.75
# against 0.47 ms, 384 1.94 against 1.46, 512 4.02 against 3.05; 768 10.4 against 14.5
# (min 9.8 both), 1024 20.9 against 32.8. A step's items are small and each phase costs
# a hand-off; from 768 the items are large enough.
TEAM_FROM = 768
TEAM_THREADS = 4
ARGS = ["out0", "in0"]   # the buffers, as $matrix and $item take them


class _Writer:
    """The pieces of the routine, for one function being written (its locals)."""

    def __init__(self, f: Fn, n: int, nb: int) -> None:
        self.f, self.n, self.nb = f, n, nb
        for name in ("XT", "SYNC", "k0", "end", "c0", "m", "stride", "i0", "j0", "lo", "hi", "next_end"):
            f.var(name)
        f.fvar("pivot")

    def row(self, r: str) -> str:
        return matrix_row(self.f, "(local.get $out0)", r, self.n)

    def minus_dot(self, r: str, c: str, stop: str = get("end")) -> str:
        """L[r][c] -= L[r][k0:stop] . L[c][k0:stop]"""
        f, n = self.f, self.n
        from_k0 = lambda x: f"(i32.add {self.row(x)} (i32.shl {get('k0')} {i32(f.ft.shift)}))"  # noqa: E731
        at = f.at2("(local.get $out0)", r, c, n)
        depth = f"(i32.sub {stop} {get('k0')})"
        return f.store(at, f.op("sub", f.load(at), f"(call $dot {from_k0(r)} {from_k0(c)} {depth})"))

    def block(self, k0: str) -> list[str]:
        """$k0, $end (the block's columns), $c0 and $m (the rows below), $stride (bytes
        of a row of the panel's transpose), $next_end (the next block's end)."""
        n, nb = self.n, self.nb
        clip = lambda x: f"(select {i32(n)} {x} (i32.gt_s {x} {i32(n)}))"  # noqa: E731
        end, next_end = (clip(f"(i32.add {get(start)} {i32(nb)})") for start in ("k0", "c0"))
        return [f"(local.set $k0 {k0})", f"(local.set $end {end})",
                f"(local.set $c0 {get('end')}) (local.set $m (i32.sub {i32(n)} {get('end')}))",
                f"(local.set $stride (i32.shl {get('m')} {i32(self.f.ft.shift)}))",
                f"(local.set $next_end {next_end})"]

    def diagonal(self) -> list[str]:
        """Columns [k0, end) of the diagonal block by Crout; $failed on a pivot <= 0."""
        f, L, n = self.f, "(local.get $out0)", self.n
        return f.loop("j", get("k0"), get("end"), f.loop(
            "i", get("j"), get("end"), [self.minus_dot(get("i"), get("j"), get("j"))],
            "rows i >= j of the block: minus row i . row j over the block's columns before j") + [
            f"(local.set $pivot {f.load(f.at2(L, get('j'), get('j'), n))})",
            ";; not positive definite: a pivot <= 0 (a NaN pivot is no failure: it propagates)",
            f"(local.set $failed (i32.or {get('failed')} {f.op('le', get('pivot'), f.const(0.0))}))",
            f"(local.set $pivot {f.op('sqrt', get('pivot'))})",
            f.store(f.at2(L, get("j"), get("j"), n), get("pivot"))] + f.loop(
            "i", f"(i32.add {get('j')} {i32(1)})", get("end"), [f.store(
                f.at2(L, get("i"), get("j"), n), f.op("div", f.load(f.at2(L, get("i"), get("j"), n)), get("pivot")))],
            "the block's column below the diagonal over the pivot"), "column j of the diagonal block (Crout)")

    def panel(self) -> list[str]:
        """Panel rows [lo, hi) (counted from c0): packed transposed into XT (a row per
        column of the block), solved against the diagonal block, put back. A vector
        holds one column of the block for as many panel rows as it has lanes."""
        f, L, n, ft = self.f, "(local.get $out0)", self.n, self.f.ft
        for name in ("ch", "stop"):
            f.var(name)
        depth = f"(i32.sub {get('end')} {get('k0')})"
        xt_at = self.xt_at
        panel_at = lambda kk, i: f.at2(L, f"(i32.add {get('c0')} {i})", f"(i32.add {get('k0')} {kk})", n)  # noqa: E731
        row_bytes, bits = n * ft.size, 8 * ft.size
        here = (panel_at(get("kk"), get("ch")), xt_at(get("kk"), get("ch")))
        gathered = f"(v128.load{bits}_splat {here[0]})"
        for lane in range(1, ft.lanes):
            gathered = f"(v128.load{bits}_lane offset={lane * row_bytes} {lane} {here[0]} {gathered})"
        scattered = [f"(v128.store{bits}_lane offset={lane * row_bytes} {lane} {here[0]} (v128.load {here[1]}))"
                     for lane in range(ft.lanes)]
        by_column = lambda body: f.loop("kk", i32(0), depth, body, "the block's columns")  # noqa: E731
        pack = (self.columns(ft.lanes, by_column([f"(v128.store {here[1]} {gathered})"]), "a vector of panel rows", True)
                + self.columns(1, by_column([f.store(here[1], f.load(here[0]))]), "the rest one at a time"))
        unpack = (self.columns(ft.lanes, by_column(scattered), "a vector of panel rows", True)
                  + self.columns(1, by_column([f.store(here[0], f.load(here[1]))]), "the rest one at a time"))
        solve = (self.columns(SOLVE_VECTORS * ft.lanes, self.substitution(SOLVE_VECTORS),
                              f"{SOLVE_VECTORS} vectors of panel rows", True)
                 + self.columns(ft.lanes, self.substitution(1), "a vector of panel rows")
                 + self.columns(1, self.substitution(0), "the rest one at a time"))
        return pack + solve + unpack

    def xt_at(self, kk: str, i: str) -> str:
        """The address of the panel's transpose at row kk (a column of the block), column
        i (a panel row)."""
        return (f"(i32.add (i32.add (local.get $XT) (i32.mul {kk} {get('stride')})) "
                f"(i32.shl {i} {i32(self.f.ft.shift)}))")

    def substitution(self, vectors: int) -> list[str]:
        """x_j = (p_j - sum over k < j of L_jk x_k) / L_jj down XT's rows at column $ch:
        `vectors` vectors of panel rows (0: one row, scalars) in registers, each
        coefficient spread once for all of them (an axpy per coefficient over whole rows
        loaded and stored each row once per coefficient: 0.45 of 2.3 ms at 512, now 0.17)."""
        f, ft, n, L = self.f, self.f.ft, self.n, "(local.get $out0)"
        depth = f"(i32.sub {get('end')} {get('k0')})"
        diag = lambda a, b: f.load(f.at2(L, f"(i32.add {get('k0')} {a})", f"(i32.add {get('k0')} {b})", n))  # noqa: E731
        at = lambda kk, g: self.xt_at(kk, f"(i32.add {get('ch')} {i32(g * ft.lanes)})")  # noqa: E731
        if vectors:
            accs, kind, vec = [f"acc{g}" for g in range(vectors)], "v128", ft.vec
            load, spread = (lambda kk, g: f"(v128.load {at(kk, g)})"), (lambda v: f"({vec}.splat {v})")  # noqa: E731
            op = lambda name, a, b: f"({vec}.{name} {a} {b})"  # noqa: E731
            store = lambda kk, g, v: f"(v128.store {at(kk, g)} {v})"  # noqa: E731
        else:
            accs, kind = ["sacc"], ft.name
            load, spread, op = (lambda kk, g: f.load(at(kk, g))), (lambda v: v), f.op  # noqa: E731
            store = lambda kk, g, v: f.store(at(kk, g), v)  # noqa: E731
        cf = f"cf_{kind}"
        for name in accs + [cf]:
            f.var(name, kind)
        return f.loop("j", i32(0), depth, [f"(local.set ${a} {load(get('j'), g)})" for g, a in enumerate(accs)] + f.loop(
            "k", i32(0), get("j"), [f"(local.set ${cf} {spread(f.op('neg', diag(get('j'), get('k'))))})"]
            + [f"(local.set ${a} {op('add', get(a), op('mul', get(cf), load(get('k'), g)))})" for g, a in enumerate(accs)],
            "minus each solved column times its coefficient")
            + [f"(local.set ${cf} {spread(f.op('div', f.const(1.0), diag(get('j'), get('j'))))})"]
            + [store(get("j"), g, op("mul", get(cf), get(a))) for g, a in enumerate(accs)],
            "the block's columns, in order")

    def columns(self, width: int, body: list[str], what: str, first: bool = False) -> list[str]:
        """body for $ch in [$lo, $hi), `width` at a time while whole: from $lo if `first`,
        else from where the previous such loop stopped."""
        f = self.f
        f.labels += 1
        label = f"ch{f.labels}"
        return ([f"(local.set $ch {get('lo')})"] if first else []) + [
            f"(local.set $stop (i32.sub {get('hi')} {i32(width - 1)}))",
            f"(block ${label}_done (loop ${label}  ;; {what}",
            f"  (br_if ${label}_done (i32.ge_s {get('ch')} {get('stop')}))"] + [
            f"  {line}" for line in body] + [f"  (local.set $ch (i32.add {get('ch')} {i32(width)}))", f"  (br ${label})))"]

    def row_block(self) -> list[str]:
        """The trailing triangle's rows [i0, i0 + TILE_ROWS): whole tiles up to the
        diagonal, then dot products for the columns past the last one."""
        f, n, XT, tr, tc = self.f, self.n, "(local.get $XT)", tiles.TILE_ROWS, tiles.tile_columns(self.f.ft)
        return ([f"(local.set $j0 {get('c0')})",
                 "(block $tiles_done (loop $tiles  ;; the grid's tiles up to the diagonal, inside the row",
                 f"  (br_if $tiles_done (i32.gt_s {get('j0')} (i32.add {get('i0')} {i32(tr - 1)})))",
                 f"  (br_if $tiles_done (i32.gt_s (i32.add {get('j0')} {i32(tc)}) {i32(n)}))",
                 f"  (call $update_tile {f.at2('(local.get $out0)', get('i0'), get('j0'), n)} "
                 f"(i32.add {XT} (i32.shl (i32.sub {get('i0')} {get('c0')}) {i32(f.ft.shift)})) "
                 f"(i32.add {XT} (i32.shl (i32.sub {get('j0')} {get('c0')}) {i32(f.ft.shift)})) "
                 f"(i32.sub {get('end')} {get('k0')}) {get('stride')} {get('stride')})",
                 f"  (local.set $j0 (i32.add {get('j0')} {i32(tc)}))",
                 "  (br $tiles)))"]
                + f.loop("r", get("i0"), f"(i32.add {get('i0')} {i32(tr)})", f.loop(
                    "c", get("j0"), f"(i32.add {get('r')} {i32(1)})", [self.minus_dot(get("r"), get("c"))],
                    "columns to the diagonal"), "past the last whole tile of the row: dot products"))

    def dot_rows(self, top: str, bottom: str) -> list[str]:
        """Rows [top, bottom) of the trailing triangle by dot products alone."""
        f = self.f
        return f.loop("r", top, bottom, f.loop("c", get("c0"), f"(i32.add {get('r')} {i32(1)})",
                                              [self.minus_dot(get("r"), get("c"))], "columns to the diagonal"),
                      "rows above the whole row blocks")

    def symmetrized_rows(self, top: str, bottom: str, a: str) -> list[str]:
        """Rows [top, bottom) of (a + a^T) / 2 up to the diagonal, zeros past it: what
        JAX factors when it symmetrizes, computed as the input is read (a row of a plus
        the column of a it mirrors, gathered a lane at a time: its values lie a row
        apart), in a's dtype as JAX's elementwise (x + x^T) / 2."""
        f, n, ft = self.f, self.n, self.f.ft
        for name in ("src", "col", "dst", "stop"):
            f.var(name)
        f.var("half", "v128")
        row_bytes, bits = n * ft.size, 8 * ft.size
        mirrored = f"(v128.load{bits}_splat {get('col')})"
        for lane in range(1, ft.lanes):
            mirrored = f"(v128.load{bits}_lane offset={lane * row_bytes} {lane} {get('col')} {mirrored})"
        vec = ft.vec
        vector = [f"(v128.store {get('dst')} ({vec}.mul ({vec}.add (v128.load {get('src')}) {mirrored}) "
                  f"{get('half')}))"]
        scalar = [f.store(get("dst"), f.op("mul", f.op("add", f.load(get("src")), f.load(get("col"))),
                                           f.const(0.5)))]

        def run(label: str, lanes: int, body: list[str], stop: str, what: str) -> list[str]:
            f.labels += 1
            label = f"{label}{f.labels}"
            step = [f"(local.set ${p} (i32.add {get(p)} {i32(lanes * ft.size)}))" for p in ("src", "dst")]
            return ([f"(local.set $stop {stop})", f"(block ${label}_done (loop ${label}  ;; {what}",
                     f"  (br_if ${label}_done (i32.ge_u {get('dst')} {get('stop')}))"]
                    + [f"  {line}" for line in body + step]
                    + [f"  (local.set $col (i32.add {get('col')} {i32(lanes * row_bytes)}))",
                       f"  (br ${label})))"])
        columns = f"(i32.add {get('r')} {i32(1)})"   # those to the diagonal
        whole = f"(i32.and {columns} {i32(-ft.lanes)})"
        row = [f"(local.set $src {matrix_row(f, a, get('r'), n)})",
               f"(local.set $dst {self.row(get('r'))})",
               f"(local.set $col (i32.add {a} (i32.shl {get('r')} {i32(ft.shift)})))"]
        return ([f"(local.set $half ({vec}.splat {f.const(0.5)}))"]
                + f.loop("r", top, bottom, row
                         + run("sym_vectors", ft.lanes, vector,
                               f"(i32.add {get('dst')} (i32.shl {whole} {i32(ft.shift)}))",
                               f"{ft.lanes} columns at a time")
                         + run("sym_scalars", 1, scalar,
                               f"(i32.add {self.row(get('r'))} (i32.shl {columns} {i32(ft.shift)}))",
                               "the rest to the diagonal one at a time")
                         + [self.zeros_past_diagonal(get("r"))],
                         "rows: (a + a^T) / 2 to the diagonal, zeros past it"))

    def zeros_past_diagonal(self, r: str) -> str:
        f, n = self.f, self.n
        return (f"(memory.fill (i32.add {self.row(r)} (i32.shl (i32.add {r} {i32(1)}) {i32(f.ft.shift)})) "
                f"(i32.const 0) (i32.shl (i32.sub {i32(n - 1)} {r}) {i32(f.ft.shift)}))")

    def copy_rows(self, top: str, bottom: str, a: str) -> list[str]:
        f, n = self.f, self.n
        return f.loop("r", top, bottom, [
            f"(memory.copy {self.row(get('r'))} {matrix_row(f, a, get('r'), n)} "
            f"(i32.shl (i32.add {get('r')} {i32(1)}) {i32(f.ft.shift)}))", self.zeros_past_diagonal(get("r"))],
            "rows: columns to the diagonal copied, zeros past it (bulk memory: a memcpy and a memset)")


def _blocks_below(n: int) -> str:
    """Whole row blocks of the trailing rows under the next diagonal block's."""
    return f"(i32.shr_u (i32.sub {i32(n)} {get('next_end')}) {i32(tiles.TILE_ROWS.bit_length() - 1)})"


def _item(n: int, nb: int, ft: FloatType, panel_offset: int, symmetrize: bool) -> str:
    """`$item(out, in, scratch, phase, index)`: one item of a phase of the work list.
    Phase 0 copies rows (symmetrized, if asked); phase 2s + 1 solves rows of step s's
    panel; phase 2s + 2 updates one row block (counted from the bottom) of step s's
    trailing triangle."""
    f = Fn(ft)
    w = _Writer(f, n, nb)
    copy = w.symmetrized_rows if symmetrize else w.copy_rows
    f.var("step")
    tr = tiles.TILE_ROWS
    clip = lambda x, top: f"(select {top} {x} (i32.gt_s {x} {top}))"  # noqa: E731
    first_of = lambda size: f"(i32.mul (local.get $index) {i32(size)})"  # noqa: E731
    body = ([f"(local.set $XT (i32.add (local.get $scratch) {i32(panel_offset)}))",
             "(if (i32.eqz (local.get $phase)) (then  ;; rows of the input"]
            + [f"  {line}" for line in copy(first_of(COPY_ROWS),
                                                   clip(f"(i32.add {first_of(COPY_ROWS)} {i32(COPY_ROWS)})", i32(n)),
                                                   "(local.get $in0)")]
            + ["  (return)))",
               "(local.set $step (i32.shr_u (i32.sub (local.get $phase) (i32.const 1)) (i32.const 1)))"]
            + w.block(f"(i32.mul (local.get $step) {i32(nb)})")
            + ["(if (i32.and (local.get $phase) (i32.const 1)) (then  ;; rows of the panel",
               f"  (local.set $lo {first_of(PANEL_ROWS)})",
               f"  (local.set $hi {clip(f'(i32.add {first_of(PANEL_ROWS)} {i32(PANEL_ROWS)})', get('m'))})"]
            + [f"  {line}" for line in w.panel()]
            + ["  (return)))",
               ";; row blocks [BLOCKS_PER_ITEM index, ...) of the update, counted from the bottom, "
               "down to the whole blocks' last",
               f"(local.set $lo {first_of(BLOCKS_PER_ITEM)})",
               f"(local.set $hi {clip(f'(i32.add {first_of(BLOCKS_PER_ITEM)} {i32(BLOCKS_PER_ITEM)})', _blocks_below(n))})"]
            + f.loop("b", get("lo"), get("hi"), [f"(local.set $i0 (i32.sub {i32(n - tr)} (i32.shl {get('b')} {i32(tr.bit_length() - 1)})))"]
                     + w.row_block(), "row blocks"))
    return f.text("(func $item (param $out0 i32) (param $in0 i32) (param $scratch i32) (param $phase i32) "
                  "(param $index i32)", body, f"one item of the Cholesky of a {n}x{n} matrix")


def _team(n: int, nb: int, ft: FloatType, offsets: dict[str, int]) -> str:
    """`$team(out, in, scratch, t, T)`: thread 0 publishes the phases and does the work
    that is its alone; every thread takes items."""
    f = Fn(ft)
    w = _Writer(f, n, nb)
    f.var("failed")
    tr = tiles.TILE_ROWS
    items = lambda phase, count, own=(): work_phase(ARGS, phase, count, list(own))  # noqa: E731
    step = (w.block(get("k0"))
            + [f"(if (i32.gt_s {get('m')} (i32.const 0)) (then"]
            + [f"  {line}" for line in
               items(f"(i32.add (i32.shl (i32.div_u {get('k0')} {i32(nb)}) (i32.const 1)) (i32.const 1))",
                     f"(i32.div_u (i32.add {get('m')} {i32(PANEL_ROWS - 1)}) {i32(PANEL_ROWS)})")
               + [";; the trailing update: the row blocks below the next diagonal block as items; "
                  "that block's rows and the rows between by this thread, then the next diagonal block"]
               + items(f"(i32.add (i32.shl (i32.div_u {get('k0')} {i32(nb)}) (i32.const 1)) (i32.const 2))",
                       f"(i32.div_u (i32.add {_blocks_below(n)} {i32(BLOCKS_PER_ITEM - 1)}) {i32(BLOCKS_PER_ITEM)})",
                       own=w.dot_rows(get("c0"), f"(i32.sub {i32(n)} (i32.shl {_blocks_below(n)} "
                                                 f"{i32(tr.bit_length() - 1)}))")
                       + [f"(local.set $k0 {get('c0')}) (local.set $end {get('next_end')})"] + w.diagonal())]
            + ["))"])
    main = ([f"(local.set $XT (i32.add (local.get $scratch) {i32(offsets['panel'])}))",
             ";; l <- the lower triangle of a, zeros above", "(local.set $failed (i32.const 0))"]
            + items(i32(0), i32(-(-n // COPY_ROWS)))
            + [f"(local.set $k0 (i32.const 0)) (local.set $end {i32(nb)})"] + w.diagonal()
            + ["(local.set $k0 (i32.const 0))",
               f"(block $steps_done (loop $steps  ;; a block of {nb} columns a step",
               f"  (br_if $steps_done (i32.ge_s {get('k0')} {i32(n)}))"]
            + [f"  {line}" for line in step]
            + [f"  (local.set $k0 {get('c0')})", "  (br $steps)))",
               "(call $work_done (local.get $SYNC))",
               ";; the tiles wrote past the diagonal: zeros above it again"]
            + f.loop("r", i32(0), i32(n), [w.zeros_past_diagonal(get("r"))], "rows")
            + [";; as jax.lax.linalg: a failed matrix is NaN on and below the diagonal",
               f"(if {get('failed')} (then"]
            + [f"  {line}" for line in f.loop("r", i32(0), i32(n), f.loop(
                "c", i32(0), f"(i32.add {get('r')} {i32(1)})",
                [f.store(f.at2("(local.get $out0)", get("r"), get("c"), n), f.const(float("nan")))], "columns <= r"),
                "rows")] + ["))"])
    body = ([f"(local.set $SYNC (i32.add (local.get $scratch) {i32(offsets['sync'])}))",
             ";; a thread alone has scratch of its own, as it was left (a team's comes zeroed)",
             "(if (i32.eq (local.get $T) (i32.const 1)) (then (memory.fill (local.get $SYNC) (i32.const 0) (i32.const 16))))",
             "(if (i32.eqz (local.get $t)) (then"] + [f"  {line}" for line in main]
            + ["  (return)))", ";; another thread: items until thread 0 says the work is done",
               "(call $take_items (local.get $out0) (local.get $in0) (local.get $scratch) (local.get $SYNC))"])
    return f.text("(func $team (param $out0 i32) (param $in0 i32) (param $scratch i32) (param $t i32) (param $T i32)",
                  body, f"thread t of T: its part of the Cholesky of one {n}x{n} matrix, {nb} columns a step")


def generate(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    n = shape[-1]
    nb, tc = min(BLOCK, n), tiles.tile_columns(ft)
    lay = layout(sync=16, panel=nb * n * ft.size)
    symmetrize = bool(routine.param.get("symmetrize", False))
    item, team_fn = _item(n, nb, ft, lay.offsets["panel"], symmetrize), _team(n, nb, ft, lay.offsets)
    entry = ("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)\n"
             f"  ;; Cholesky of one {n}x{n} matrix: a team of one thread\n"
             "  (call $team (local.get $out0) (local.get $in0) (local.get $scratch) (i32.const 0) (i32.const 1)))")
    shared = [team_fn, item, tiles.update_tile(ft, n * ft.size), work_list(ARGS)]
    notes = {"input": ("(a + a^T) / 2" if symmetrize else "a's lower triangle",
                       "symmetrized as the rows are copied in (a row of a plus the column it "
                       "mirrors), as JAX symmetrizes before factoring: no kernel of its own"
                       if symmetrize else "read as it is copied in"),
             "algorithm": ("blocked right-looking Cholesky",
                           "per block of columns: the diagonal block by Crout (dot products of row "
                           "prefixes), the panel below by forward substitution on its transpose "
                           f"({SOLVE_VECTORS} vectors of panel rows in registers at a time), the trailing lower triangle "
                           "by register tiles"),
             "block": (nb, "the panel's transpose (block x rows below) stays in L2; the tiles' depth"),
             "tile": (f"{tiles.TILE_ROWS}x{tc}", f"{tiles.TILE_ROWS * tiles.TILE_VECTORS} accumulators, "
                      f"{tiles.TILE_VECTORS} B vectors, A's values and one spread over the lanes: within the "
                      "16 vector registers"),
             "rows": ("one matrix after another", "threads take ranges of the batch; one matrix of at "
                      f"least {TEAM_FROM} alone in its batch is shared by them through a work list "
                      f"(items: {COPY_ROWS} rows to copy, {PANEL_ROWS} panel rows, a row block of the "
                      "update); thread 0 factors the diagonal blocks")}
    team = Team(shared, lay, TEAM_THREADS) if n >= TEAM_FROM else None
    return Body([entry] + shared, ["out0", "in0"], lay, notes, n ** 3 // 3, team=team)
