"""Triangular solve and LU with partial pivoting as WebAssembly text (Cholesky: in
cholesky.py), with the semantics of jax.lax.linalg (and backends/numpy_routines.py): a
zero on a triangular diagonal gives inf/NaN, an LU pivot of zero or NaN leaves its
multipliers as they are.

Each runs its inner loops as vector_loops' SIMD runs over contiguous rows:
substitution's axpy of solved rows into the next one; LU's panel, kept transposed,
loses each pivot's multipliers times a pivot-row value by one axpy over all the rows
below (4.0 -> 3.3 ms for 512 here, with the tiles' lane spreads). Both are blocked (a triangular solve when it has
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
    L21 U12 in register tiles. The panel is worked on transposed (a row per column of
    the block, PT): the pivot search reads a contiguous row and each elimination is an
    axpy over all the rows below at once, not a short one per row."""
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    sz = ft.size
    nb = LU_BLOCK if k > LU_BLOCK else k
    lay = layout(row=n * sz, panel=nb * m * sz if nb < k else 0, pt=nb * m * sz)
    f = Fn(ft)
    LU, PIV, PERM, ROW, PT = ("(local.get $out0)", "(local.get $out1)", "(local.get $out2)", "(local.get $ROW)",
                              "(local.get $PT)")
    for name in ("ROW", "P", "PT", "pstride", "best", "moved", "j0", "je", "rs", "m", "row", "usable", "stop"):
        f.var(name)
    f.fvar("top"), f.fvar("v"), f.fvar("pivot")
    is_nan = lambda x: f.op("ne", x, x)  # noqa: E731
    # PT[c - j0][r - j0]: the panel's value at row r, column c
    pt = lambda r, c: (f"(i32.add (i32.add {PT} (i32.mul (i32.sub {c} {get('j0')}) {get('pstride')})) "  # noqa: E731
                       f"(i32.shl (i32.sub {r} {get('j0')}) {i32(ft.shift)}))")
    search = f.loop("r", f"(i32.add {get('j')} {i32(1)})", i32(m), [
        f"(local.set $v {f.op('abs', f.load(pt(get('r'), get('j'))))})",
        f"(if (i32.and (i32.eqz {is_nan(get('top'))}) (i32.or {f.op('gt', get('v'), get('top'))} {is_nan(get('v'))}))",
        "  (then (local.set $best (local.get $r)) (local.set $top (local.get $v))))"],
        "rows below: the first largest |value| (a NaN wins, as argmax)")
    int_at = lambda base, idx: f"(i32.add {base} (i32.shl {idx} (i32.const 2)))"  # noqa: E731
    row_j, row_best = matrix_row(f, LU, get("j"), n), matrix_row(f, LU, get("best"), n)
    at = lambda r, c: f"(i32.add {matrix_row(f, LU, r, n)} (i32.shl {c} {i32(ft.shift)}))"  # noqa: E731
    after_j = f"(i32.add {get('j')} {i32(1)})"
    below = f"(i32.sub {i32(m)} {after_j})"
    multipliers = _over_run(f, pt(after_j, get("j")), below, lambda x: f"({ft.vec}.div {x} ({ft.vec}.splat {get('pivot')}))",
                            lambda x: f.op("div", x, get("pivot")), "the multipliers: the column below over the pivot")
    eliminate = ([f"(if {get('usable')} (then"] + [f"  {line}" for line in multipliers] + ["))"]
                 + f.loop("c", after_j, get("je"), [
                     f"(call $axpy {pt(after_j, get('j'))} {pt(after_j, get('c'))} {below} "
                     f"{f.op('neg', f.load(pt(get('j'), get('c'))))})"],
                     "each later column of the block loses the multipliers times its pivot-row value"))
    swap = f.loop("c", get("j0"), get("je"), [
        f"(local.set $v {f.load(pt(get('j'), get('c')))})",
        f.store(pt(get("j"), get("c")), f.load(pt(get("best"), get("c")))),
        f.store(pt(get("best"), get("c")), get("v"))], "the block's columns, in the panel")
    step = ([f"(local.set $best {get('j')})",
             f"(local.set $top {f.op('abs', f.load(pt(get('j'), get('j'))))})"]
            + search
            + [f"(i32.store {int_at(PIV, get('j'))} {get('best')})",
               f"(local.set $moved (i32.load {int_at(PERM, get('j'))}))",
               f"(i32.store {int_at(PERM, get('j'))} (i32.load {int_at(PERM, get('best'))}))",
               f"(i32.store {int_at(PERM, get('best'))} {get('moved')})",
               f"(if (i32.ne {get('best')} {get('j')}) (then  ;; swap rows j and best (the panel's columns "
               "of the matrix are put back from the panel after it)",
               f"  (memory.copy {ROW} {row_j} {i32(n * sz)})",
               f"  (memory.copy {row_j} {row_best} {i32(n * sz)})",
               f"  (memory.copy {row_best} {ROW} {i32(n * sz)})"]
            + [f"  {line}" for line in swap] + ["))",
               f"(local.set $pivot {f.load(pt(get('j'), get('j')))})",
               ";; a zero or NaN pivot leaves the multipliers as they are (as JAX)",
               f"(local.set $usable (i32.and {f.op('ne', get('pivot'), f.const(0.0))} "
               f"(i32.eqz {is_nan(get('pivot'))})))"]
            + eliminate)
    panel_rows = lambda body: f.loop("r", get("j0"), i32(m), f.loop("c", get("j0"), get("je"), body, "the block's columns"),  # noqa: E731
                                     "rows from the block's first")
    pack = ([f"(local.set $pstride (i32.shl (i32.sub {i32(m)} {get('j0')}) {i32(ft.shift)}))"]
            + panel_rows([f.store(pt(get("r"), get("c")), f.load(at(get("r"), get("c"))))]))
    unpack = panel_rows([f.store(at(get("r"), get("c")), f.load(pt(get("r"), get("c"))))])
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
             + pack
             + f.loop("j", get("j0"), get("je"), step, "column j of the block: pivot, swap, eliminate below")
             + unpack
             + [f"(if (i32.lt_s {get('je')} {i32(n)}) (then"] + [f"  {line}" for line in u12]
             + (([f"  {line}" for line in trailing]) if nb < k else []) + ["))"])
    body = ([f"(local.set $ROW (i32.add (local.get $scratch) {i32(lay.offsets['row'])}))",
             f"(local.set $P (i32.add (local.get $scratch) {i32(lay.offsets['panel'])}))",
             f"(local.set $PT (i32.add (local.get $scratch) {i32(lay.offsets['pt'])}))",
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
                           "the panel, transposed, is eliminated by axpy over all the rows below "
                           "(SIMD); rows swap with memory.copy; the trailing rows lose L21 U12 in "
                           "register tiles"),
             "block": (nb, "columns a block: the tiles' depth")}
    flops = 2 * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3)
    return Body([fn] + ([tiles.update_tile(ft, n * sz)] if nb < k else []), ["out0", "out1", "out2", "in0"],
                lay, notes, max(flops, 0))


def _over_run(f: Fn, start: str, count: str, vector_op: Callable[[str], str],
              scalar_op: Callable[[str], str], what: str) -> list[str]:
    """x <- op(x) over `count` values from byte address `start`: whole vectors, then
    one at a time (the same IEEE operation in every lane)."""
    ft, here = f.ft, f.var("p")
    f.var("p_end")
    return ([f"(local.set $p {start})",
             f"(local.set $p_end (i32.add {get('p')} (i32.shl (i32.and {count} {i32(-ft.lanes)}) {i32(ft.shift)})))"]
            + _pointer_loop(f, 16, [f"(v128.store {here} {vector_op(f'(v128.load {here})')})"],
                            f"{what}, {ft.lanes} at a time")
            + [f"(local.set $p_end (i32.add {get('p')} (i32.shl (i32.and {count} {i32(ft.lanes - 1)}) {i32(ft.shift)})))"]
            + _pointer_loop(f, ft.size, [f.store(here, scalar_op(f.load(here)))], "the rest one at a time"))


def _pointer_loop(f: Fn, step: int, body: list[str], what: str) -> list[str]:
    f.labels += 1
    label = f"run{f.labels}"
    return ([f"(block ${label}_done (loop ${label}  ;; {what}",
             f"  (br_if ${label}_done (i32.ge_u {get('p')} {get('p_end')}))"]
            + [f"  {line}" for line in body]
            + [f"  (local.set $p (i32.add {get('p')} {i32(step)}))", f"  (br ${label})))"])


GENERATORS = {"cholesky": cholesky.generate, "triangular_solve": _triangular_solve, "lu": _lu}
