"""Cholesky, triangular solve and LU with partial pivoting as WebAssembly text, with
the semantics of jax.lax.linalg (and backends/numpy_routines.py): a failed Cholesky is
NaN in its lower triangle, a zero on a triangular diagonal gives inf/NaN, an LU pivot
of zero or NaN leaves its multipliers as they are.

Each is row-oriented, so that its inner loops are vector_loops' SIMD runs over
contiguous rows: Cholesky-Crout's dot products of row prefixes, substitution's axpy
of solved rows into the next one, LU's rank-1 update of each row below the pivot.
"""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import Body, Fn, get, i32, layout, matrix_row, transposed_copy
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.kernel import Routine


def _cholesky(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    n = shape[-1]
    f = Fn(ft)
    L, A = "(local.get $out0)", "(local.get $in0)"
    f.var("failed"), f.fvar("pivot")
    row_i, row_j = matrix_row(f, L, get("i"), n), matrix_row(f, L, get("j"), n)
    lower = f"(i32.le_u {get('c')} {get('r')})"
    copy = f.loop("r", i32(0), i32(n), f.loop("c", i32(0), i32(n), [
        f.store(f.at2(L, get("r"), get("c"), n),
                f"(select {f.load(f.at2(A, get('r'), get('c'), n))} {f.const(0.0)} {lower})")],
        "columns"), "rows")
    column = f.loop("i", get("j"), i32(n), [f.store(
        f.at2(L, get("i"), get("j"), n),
        f.op("sub", f.load(f.at2(L, get("i"), get("j"), n)),
             f"(call $dot {row_i} {row_j} {get('j')})"))],
        "rows i >= j: minus row i . row j over the columns before j")
    scale = f.loop("i", f"(i32.add {get('j')} {i32(1)})", i32(n), [f.store(
        f.at2(L, get("i"), get("j"), n),
        f.op("div", f.load(f.at2(L, get("i"), get("j"), n)), get("pivot")))],
        "the column below the diagonal over the pivot")
    step = column + [
        f"(local.set $pivot {f.load(f.at2(L, get('j'), get('j'), n))})",
        ";; not positive definite: a pivot <= 0 (a NaN pivot is no failure: it propagates)",
        f"(local.set $failed (i32.or {get('failed')} {f.op('le', get('pivot'), f.const(0.0))}))",
        f"(local.set $pivot {f.op('sqrt', get('pivot'))})",
        f.store(f.at2(L, get("j"), get("j"), n), get("pivot"))] + scale
    nan = f.loop("r", i32(0), i32(n), f.loop("c", i32(0), f"(i32.add {get('r')} {i32(1)})", [
        f.store(f.at2(L, get("r"), get("c"), n), f.const(float("nan")))], "columns <= r"), "rows")
    body = ([";; l <- the lower triangle of a, zeros above", "(local.set $failed (i32.const 0))"]
            + copy + f.loop("j", i32(0), i32(n), step, "column j (Cholesky-Crout)")
            + [";; as jax.lax.linalg: a failed matrix is NaN on and below the diagonal",
               f"(if {get('failed')} (then"] + [f"  {line}" for line in nan] + ["))"])
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)", body,
                f"Cholesky of one {n}x{n} matrix, row by row")
    notes = {"algorithm": ("Cholesky-Crout", "each entry is a dot product of two row prefixes "
                           "(contiguous: SIMD)")}
    return Body([fn], ["out0", "in0"], layout(), notes, n ** 3 // 3)


def _triangular_solve(routine: Routine, ft: FloatType) -> Body:
    (a_shape, _), (b_shape, _) = routine.inputs
    p = routine.param
    n, left = a_shape[-1], p["left_side"]
    rhs = b_shape[-1] if left else b_shape[-2]     # right-hand sides per matrix
    flipped = p["transpose_a"] == left              # t = a^T (see numpy_routines)
    forward = p["lower"] != flipped                 # t is lower triangular
    sz = ft.size
    lay = layout(x=0 if left else n * rhs * sz)
    f = Fn(ft)
    A, OUT, B = "(local.get $in0)", "(local.get $out0)", "(local.get $in1)"
    X = OUT if left else "(local.get $X)"
    if not left:
        f.var("X")

    def t(r: str, c: str) -> str:
        return f.load(f.at2(A, c, r, n) if flipped else f.at2(A, r, c, n))
    f.var("row")
    x_i, x_j = matrix_row(f, X, get("row"), rhs), matrix_row(f, X, get("j"), rhs)
    known = (i32(0), get("row")) if forward else (f"(i32.add {get('row')} {i32(1)})", i32(n))
    step = get("s") if forward else f"(i32.sub {i32(n - 1)} {get('s')})"
    solve_row = ([f"(local.set $row {step})"]
                 + f.loop("j", *known, [f"(call $axpy {x_j} {x_i} {i32(rhs)} {f.op('neg', t(get('row'), get('j')))})"],
                          "minus each solved row times its coefficient")
                 + ([] if p["unit_diagonal"] else
                    [f"(call $scale {x_i} {i32(rhs)} {f.op('div', f.const(1.0), t(get('row'), get('row')))})"]))
    if left:
        setup = [f"(memory.copy {X} {B} {i32(n * rhs * sz)})"]
        finish: list[str] = []
    else:
        setup = [f"(local.set $X (i32.add (local.get $scratch) {i32(lay.offsets['x'])}))"] + \
            transposed_copy(f, B, X, rhs, n)
        finish = transposed_copy(f, X, OUT, n, rhs)
    body = ([";; x <- the right-hand sides, one row per unknown (b transposed for the right side)"]
            + setup + f.loop("s", i32(0), i32(n), solve_row,
                             f"{'forward' if forward else 'back'} substitution, a row at a time")
            + finish)
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $in1 i32) (param $scratch i32)",
                body, f"triangular solve with one {n}x{n} matrix and {rhs} right-hand sides")
    notes = {"algorithm": (f"{'forward' if forward else 'back'} substitution",
                           "each unknown's row of solutions (one per right-hand side) loses the "
                           "solved rows times their coefficients: axpy over contiguous rows"),
             "orientation": ("a transposed" if flipped else "a as stored",
                             "x op(a) = b is solved as op(a)^T x^T = b^T")}
    return Body([fn], ["out0", "in0", "in1"], lay, notes, n * n * rhs)


def _lu(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    sz = ft.size
    lay = layout(row=n * sz)
    f = Fn(ft)
    LU, PIV, PERM, ROW = "(local.get $out0)", "(local.get $out1)", "(local.get $out2)", "(local.get $ROW)"
    f.var("ROW"), f.var("best"), f.fvar("top"), f.fvar("v"), f.fvar("pivot"), f.var("moved")
    is_nan = lambda x: f.op("ne", x, x)  # noqa: E731
    search = f.loop("r", f"(i32.add {get('j')} {i32(1)})", i32(m), [
        f"(local.set $v {f.op('abs', f.load(f.at2(LU, get('r'), get('j'), n)))})",
        f"(if (i32.and (i32.eqz {is_nan(get('top'))}) (i32.or {f.op('gt', get('v'), get('top'))} {is_nan(get('v'))}))",
        "  (then (local.set $best (local.get $r)) (local.set $top (local.get $v))))"],
        "rows below: the first largest |value| (a NaN wins, as argmax)")
    int_at = lambda base, idx: f"(i32.add {base} (i32.shl {idx} (i32.const 2)))"  # noqa: E731
    row_j, row_best = matrix_row(f, LU, get("j"), n), matrix_row(f, LU, get("best"), n)
    tail = lambda r: f"(i32.add {matrix_row(f, LU, r, n)} (i32.shl (i32.add {get('j')} {i32(1)}) {i32(ft.shift)}))"  # noqa: E731
    eliminate = f.loop("r", f"(i32.add {get('j')} {i32(1)})", i32(m), [
        f"(if {get('usable')} (then {f.store(f.at2(LU, get('r'), get('j'), n), f.op('div', f.load(f.at2(LU, get('r'), get('j'), n)), get('pivot')))}))",
        f"(call $axpy {tail(get('j'))} {tail(get('r'))} (i32.sub {i32(n - 1)} {get('j')}) "
        f"{f.op('neg', f.load(f.at2(LU, get('r'), get('j'), n)))})"],
        "each row below: its multiplier, then minus multiplier times the pivot row")
    f.var("usable")
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
    body = ([f"(local.set $ROW (i32.add (local.get $scratch) {i32(lay.offsets['row'])}))",
             ";; lu <- a; perm <- the identity",
             f"(memory.copy {LU} (local.get $in0) {i32(m * n * sz)})"]
            + f.loop("r", i32(0), i32(m), [f"(i32.store {int_at(PERM, get('r'))} {get('r')})"], "rows")
            + f.loop("j", i32(0), i32(k), step, "column j: pivot, swap, eliminate below"))
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $out2 i32) (param $in0 i32) "
                "(param $scratch i32)", body,
                f"LU with partial pivoting of one {m}x{n} matrix, row by row")
    notes = {"algorithm": ("LU with partial pivoting (right-looking)",
                           "the rank-1 update of each row below the pivot is an axpy over "
                           "contiguous memory (SIMD); rows swap with memory.copy")}
    flops = 2 * (m * n * k - (m + n) * k * k // 2 + k ** 3 // 3)
    return Body([fn], ["out0", "out1", "out2", "in0"], lay, notes, max(flops, 0))


GENERATORS = {"cholesky": _cholesky, "triangular_solve": _triangular_solve, "lu": _lu}
