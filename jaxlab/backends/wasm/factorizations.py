"""Triangular solve and LU with partial pivoting as WebAssembly text (Cholesky: in
cholesky.py), with the semantics of jax.lax.linalg (and backends/numpy_routines.py): a
zero on a triangular diagonal gives inf/NaN, an LU pivot of zero or NaN leaves its
multipliers as they are.

Each is row-oriented, so that its inner loops are vector_loops' SIMD runs over
contiguous rows: substitution's axpy of solved rows into the next one, LU's rank-1
update of each row below the pivot. Both are blocked (a triangular solve when it has
many right-hand sides): most of their work is then an update in tiles.py's register
tiles (_tiled_update).
"""
from __future__ import annotations

from typing import Callable

from jaxlab.backends.wasm import cholesky, tiles
from jaxlab.backends.wasm.routine_text import Body, Fn, get, i32, layout, matrix_row, transposed_copy
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.kernel import Routine

LU_BLOCK = 16      # LU's columns a block
SOLVE_BLOCK = 16   # a blocked triangular solve's unknowns a step (measured at 512: 16 best of 16-64)


def _triangular_solve(routine: Routine, ft: FloatType) -> Body:
    """Substitution a row of x (one per unknown) at a time. With as many right-hand sides
    as a tile is wide, blocked: each block of unknowns by substitution among
    themselves, then the unknowns not yet solved lose t(them, block) x(block) in
    register tiles (the block's coefficients packed transposed)."""
    (a_shape, _), (b_shape, _) = routine.inputs
    p = routine.param
    n, left = a_shape[-1], p["left_side"]
    rhs = b_shape[-1] if left else b_shape[-2]     # right-hand sides per matrix
    flipped = p["transpose_a"] == left              # t = a^T (see numpy_routines)
    forward = p["lower"] != flipped                 # t is lower triangular
    sz, tc, tr = ft.size, tiles.tile_columns(ft), tiles.TILE_ROWS
    nb = SOLVE_BLOCK if rhs >= tc and n > SOLVE_BLOCK else n
    lay = layout(x=0 if left else n * rhs * sz, panel=nb * n * sz if nb < n else 0)
    f = Fn(ft)
    A, OUT, B = "(local.get $in0)", "(local.get $out0)", "(local.get $in1)"
    X, P = (OUT if left else "(local.get $X)"), "(local.get $P)"
    for name in ("X", "P", "row", "bs", "be", "rs", "m", "i", "c"):
        f.var(name)

    def t(r: str, c: str) -> str:
        return f.load(f.at2(A, c, r, n) if flipped else f.at2(A, r, c, n))
    x_row = lambda r: matrix_row(f, X, r, rhs)  # noqa: E731
    known = (get("bs"), get("row")) if forward else (f"(i32.add {get('row')} {i32(1)})", get("be"))
    kth = (f"(i32.add {get('bs')} {get('k')})" if forward else
           f"(i32.sub {get('be')} (i32.add {get('k')} {i32(1)}))")
    solve_row = ([f"(local.set $row {kth})"]
                 + f.loop("j", *known, [f"(call $axpy {x_row(get('j'))} {x_row(get('row'))} {i32(rhs)} {f.op('neg', t(get('row'), get('j')))})"],
                          "minus each solved row of the block times its coefficient")
                 + ([] if p["unit_diagonal"] else
                    [f"(call $scale {x_row(get('row'))} {i32(rhs)} {f.op('div', f.const(1.0), t(get('row'), get('row')))})"]))
    block = f.loop("k", i32(0), f"(i32.sub {get('be')} {get('bs')})", solve_row,
                   f"{'forward' if forward else 'back'} substitution within the block, a row at a time")
    if left:
        setup = [f"(memory.copy {X} {B} {i32(n * rhs * sz)})"]
        finish: list[str] = []
    else:
        setup = [f"(local.set $X (i32.add (local.get $scratch) {i32(lay.offsets['x'])}))"] + \
            transposed_copy(f, B, X, rhs, n)
        finish = transposed_copy(f, X, OUT, n, rhs)
    # the block's rows [bs, be); the rows still unknown after it [rs, rs + m)
    bounds = ([f"(local.set $bs (i32.mul {get('s')} {i32(nb)}))",
               f"(local.set $be (select {i32(n)} (i32.add {get('bs')} {i32(nb)}) (i32.gt_s (i32.add {get('bs')} {i32(nb)}) {i32(n)})))",
               f"(local.set $rs {get('be')}) (local.set $m (i32.sub {i32(n)} {get('be')}))"] if forward else
              [f"(local.set $be (i32.sub {i32(n)} (i32.mul {get('s')} {i32(nb)})))",
               f"(local.set $bs (select (i32.const 0) (i32.sub {get('be')} {i32(nb)}) (i32.lt_s (i32.sub {get('be')} {i32(nb)}) (i32.const 0))))",
               f"(local.set $rs (i32.const 0)) (local.set $m {get('bs')})"])
    depth = f"(i32.sub {get('be')} {get('bs')})"
    block_row = lambda d: x_row(f"(i32.add {get('bs')} {d})")  # noqa: E731
    update = _tiled_update(
        f, P, depth, coeff=lambda r, d: t(r, f"(i32.add {get('bs')} {d})"),
        c_at=lambda r, col: f"(i32.add {x_row(r)} (i32.shl {col} {i32(ft.shift)}))",
        b_at=lambda d, col: f"(i32.add {block_row(d)} (i32.shl {col} {i32(ft.shift)}))",
        cols=(i32(0), i32(rhs)), b_stride=i32(rhs * sz), what="the block's solutions")
    steps = f.loop("s", i32(0), i32(-(-n // nb)), bounds + block + (update if nb < n else []),
                   f"blocks of {nb} unknowns")
    body = ([";; x <- the right-hand sides, one row per unknown (b transposed for the right side)"]
            + ([f"(local.set $P (i32.add (local.get $scratch) {i32(lay.offsets['panel'])}))"] if nb < n else [])
            + setup + steps + finish)
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $in1 i32) (param $scratch i32)",
                body, f"triangular solve with one {n}x{n} matrix and {rhs} right-hand sides")
    notes = {"algorithm": (f"{'forward' if forward else 'back'} substitution"
                           + (f", blocks of {nb} unknowns" if nb < n else ""),
                           "each unknown's row of solutions (one per right-hand side) loses the "
                           "solved rows times their coefficients: axpy over contiguous rows"
                           + ("; the rows after a block lose its part in register tiles" if nb < n else
                              " (blocked only with at least a tile's width of right-hand sides)")),
             "orientation": ("a transposed" if flipped else "a as stored",
                             "x op(a) = b is solved as op(a)^T x^T = b^T")}
    extra = [tiles.update_tile(ft, rhs * sz)] if nb < n else []
    return Body([fn] + extra, ["out0", "in0", "in1"], lay, notes, n * n * rhs)


def _tiled_update(f: Fn, P: str, depth: str, coeff: Callable[[str, str], str],
                  c_at: Callable[[str, str], str], b_at: Callable[[str, str], str],
                  cols: tuple[str, str], b_stride: str, what: str) -> list[str]:
    """C[r][cols] -= sum over d < depth of coeff(r, d) * B[d][cols] for the rows r in
    [$rs, $rs + $m): register tiles of tiles.TILE_ROWS rows, the coefficients packed
    transposed at P first; rows and columns past the last whole tile by axpy.
    `c_at(r, col)`, `b_at(d, col)`: addresses; `cols`: (first, count)."""
    ft, tr, tc = f.ft, tiles.TILE_ROWS, tiles.tile_columns(f.ft)
    first, width = cols
    whole_rows = f"(i32.and {get('m')} {i32(-tr)})"
    whole_cols = f"(i32.and {width} {i32(-tc)})"
    pack = f.loop("d", i32(0), depth, f.loop("i", i32(0), get("m"), [
        f.store(f.at(f"(i32.add {P} (i32.mul {get('d')} (i32.shl {get('m')} {i32(ft.shift)})))", get("i")),
                coeff(f"(i32.add {get('rs')} {get('i')})", get("d")))], "the rows"),
        "the coefficients, transposed: a row per d")
    column = lambda: f"(i32.add {first} (i32.shl {get('c')} {i32(tc.bit_length() - 1)}))"  # noqa: E731
    tiled = f.loop("i", i32(0), f"(i32.shr_u {whole_rows} {i32(tr.bit_length() - 1)})", [
        f"(local.set $row (i32.add {get('rs')} (i32.shl {get('i')} {i32(tr.bit_length() - 1)})))"] + f.loop(
        "c", i32(0), f"(i32.shr_u {width} {i32(tc.bit_length() - 1)})", [
            f"(call $update_tile {c_at(get('row'), column())} "
            f"(i32.add {P} (i32.shl (i32.sub {get('row')} {get('rs')}) {i32(ft.shift)})) "
            f"{b_at(i32(0), column())} {depth} (i32.shl {get('m')} {i32(ft.shift)}) {b_stride})"],
        "whole tiles of the row"),
        f"the rows, {tr} at a time: minus their coefficients times {what}")
    past = lambda r, col, count: f.loop("d", i32(0), depth, [  # noqa: E731
        f"(call $axpy {b_at(get('d'), col)} {c_at(r, col)} {count} {f.op('neg', coeff(r, get('d')))})"],
        what)
    rest = f"(i32.add {first} {whole_cols})"
    edges = (f.loop("row", f"(i32.add {get('rs')} {whole_rows})", f"(i32.add {get('rs')} {get('m')})",
                    past(get("row"), first, width), "rows past the last whole tile row")
             + [f"(if (i32.lt_u {whole_cols} {width}) (then"]
             + [f"  {line}" for line in f.loop("row", get("rs"), f"(i32.add {get('rs')} {whole_rows})",
                                               past(get("row"), rest, f"(i32.sub {width} {whole_cols})"),
                                               "columns past the last whole tile")] + ["))"])
    return [f"(if (i32.gt_s {get('m')} (i32.const 0)) (then"] + [f"  {line}" for line in pack + tiled + edges] + ["))"]


def _lu(routine: Routine, ft: FloatType) -> Body:
    """Right-looking LU with partial pivoting, blocked: per block of columns, the panel
    (every row from the block's first down) pivoted and eliminated within its columns,
    then the block's rows of U to its right by substitution, then the rows below lose
    L21 U12 in register tiles."""
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    sz = ft.size
    nb = LU_BLOCK if k > LU_BLOCK else k
    lay = layout(row=n * sz, panel=nb * m * sz if nb < k else 0)
    f = Fn(ft)
    LU, PIV, PERM, ROW = "(local.get $out0)", "(local.get $out1)", "(local.get $out2)", "(local.get $ROW)"
    for name in ("ROW", "P", "best", "moved", "j0", "je", "rs", "m", "row", "usable"):
        f.var(name)
    f.fvar("top"), f.fvar("v"), f.fvar("pivot")
    is_nan = lambda x: f.op("ne", x, x)  # noqa: E731
    search = f.loop("r", f"(i32.add {get('j')} {i32(1)})", i32(m), [
        f"(local.set $v {f.op('abs', f.load(f.at2(LU, get('r'), get('j'), n)))})",
        f"(if (i32.and (i32.eqz {is_nan(get('top'))}) (i32.or {f.op('gt', get('v'), get('top'))} {is_nan(get('v'))}))",
        "  (then (local.set $best (local.get $r)) (local.set $top (local.get $v))))"],
        "rows below: the first largest |value| (a NaN wins, as argmax)")
    int_at = lambda base, idx: f"(i32.add {base} (i32.shl {idx} (i32.const 2)))"  # noqa: E731
    row_j, row_best = matrix_row(f, LU, get("j"), n), matrix_row(f, LU, get("best"), n)
    at = lambda r, c: f"(i32.add {matrix_row(f, LU, r, n)} (i32.shl {c} {i32(ft.shift)}))"  # noqa: E731
    after_j = f"(i32.add {get('j')} {i32(1)})"
    eliminate = f.loop("r", after_j, i32(m), [
        f"(if {get('usable')} (then {f.store(f.at2(LU, get('r'), get('j'), n), f.op('div', f.load(f.at2(LU, get('r'), get('j'), n)), get('pivot')))}))",
        f"(call $axpy {at(get('j'), after_j)} {at(get('r'), after_j)} (i32.sub {get('je')} {after_j}) "
        f"{f.op('neg', f.load(f.at2(LU, get('r'), get('j'), n)))})"],
        "each row below: its multiplier, then minus multiplier times the pivot row (the panel's columns)")
    step = ([f"(local.set $best {get('j')})",
             f"(local.set $top {f.op('abs', f.load(f.at2(LU, get('j'), get('j'), n)))})"]
            + search
            + [f"(i32.store {int_at(PIV, get('j'))} {get('best')})",
               f"(local.set $moved (i32.load {int_at(PERM, get('j'))}))",
               f"(i32.store {int_at(PERM, get('j'))} (i32.load {int_at(PERM, get('best'))}))",
               f"(i32.store {int_at(PERM, get('best'))} {get('moved')})",
               f"(if (i32.ne {get('best')} {get('j')}) (then  ;; swap rows j and best",
               f"  (memory.copy {ROW} {row_j} {i32(n * sz)})",
               f"  (memory.copy {row_j} {row_best} {i32(n * sz)})",
               f"  (memory.copy {row_best} {ROW} {i32(n * sz)})))",
               f"(local.set $pivot {f.load(f.at2(LU, get('j'), get('j'), n))})",
               ";; a zero or NaN pivot leaves the multipliers as they are (as JAX)",
               f"(local.set $usable (i32.and {f.op('ne', get('pivot'), f.const(0.0))} "
               f"(i32.eqz {is_nan(get('pivot'))})))"]
            + eliminate)
    right = f"(i32.sub {i32(n)} {get('je')})"
    u12 = f.loop("j", get("j0"), get("je"), f.loop("r", after_j, get("je"), [
        f"(call $axpy {at(get('j'), get('je'))} {at(get('r'), get('je'))} {right} "
        f"{f.op('neg', f.load(f.at2(LU, get('r'), get('j'), n)))})"], "the block's rows below j"),
        "the block's rows right of it: substitution with its unit lower triangle")
    trailing = ([f"(local.set $rs {get('je')}) (local.set $m (i32.sub {i32(m)} {get('je')}))"]
                + _tiled_update(f, "(local.get $P)", f"(i32.sub {get('je')} {get('j0')})",
                                coeff=lambda r, d: f.load(f.at2(LU, r, f"(i32.add {get('j0')} {d})", n)),
                                c_at=at, b_at=lambda d, col: at(f"(i32.add {get('j0')} {d})", col),
                                cols=(get("je"), right), b_stride=i32(n * sz), what="the block's rows of U"))
    block = ([f"(local.set $je (select {i32(k)} (i32.add {get('j0')} {i32(nb)}) "
              f"(i32.gt_s (i32.add {get('j0')} {i32(nb)}) {i32(k)})))"]
             + f.loop("j", get("j0"), get("je"), step, "column j of the block: pivot, swap, eliminate below")
             + [f"(if (i32.lt_s {get('je')} {i32(n)}) (then"] + [f"  {line}" for line in u12]
             + (([f"  {line}" for line in trailing]) if nb < k else []) + ["))"])
    body = ([f"(local.set $ROW (i32.add (local.get $scratch) {i32(lay.offsets['row'])}))",
             f"(local.set $P (i32.add (local.get $scratch) {i32(lay.offsets['panel'])}))",
             ";; lu <- a; perm <- the identity",
             f"(memory.copy {LU} (local.get $in0) {i32(m * n * sz)})"]
            + f.loop("r", i32(0), i32(m), [f"(i32.store {int_at(PERM, get('r'))} {get('r')})"], "rows")
            + [f"(local.set $j0 (i32.const 0))",
               f"(block $blocks_done (loop $blocks  ;; {nb} columns a block",
               f"  (br_if $blocks_done (i32.ge_s {get('j0')} {i32(k)}))"]
            + [f"  {line}" for line in block]
            + [f"  (local.set $j0 (i32.add {get('j0')} {i32(nb)}))", "  (br $blocks)))"])
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $out2 i32) (param $in0 i32) "
                "(param $scratch i32)", body,
                f"LU with partial pivoting of one {m}x{n} matrix, {nb} columns a block")
    notes = {"algorithm": ("LU with partial pivoting (right-looking, blocked)",
                           "the panel's rank-1 updates are axpy over contiguous rows (SIMD); rows "
                           "swap with memory.copy; the trailing rows lose L21 U12 in register tiles"),
             "block": (nb, "columns a block: the tiles' depth")}
    flops = 2 * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3)
    return Body([fn] + ([tiles.update_tile(ft, n * sz)] if nb < k else []), ["out0", "out1", "out2", "in0"],
                lay, notes, max(flops, 0))


GENERATORS = {"cholesky": cholesky.generate, "triangular_solve": _triangular_solve, "lu": _lu}
