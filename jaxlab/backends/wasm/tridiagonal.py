"""eigh as WebAssembly text, as LAPACK's syev does it: Householder reduction to a
symmetric tridiagonal matrix T = Q^T A Q, then implicit QL steps with Wilkinson's
shift on T, each step's plane rotations applied to the rows of Q^T.

Why not Jacobi sweeps here: a sweep over n^2/2 pairs costs ~6n^3 flops and float32
needs 7-10 of them, where the reduction costs ~10n^3/3 and the QL steps ~1.7n^2
rotations of rows. Every inner loop is a SIMD run over a contiguous row: the matrix is
kept in full (both triangles), so column k below the diagonal is row k beside it, and
the eigenvectors are built as the rows of (Q Z)^T."""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import (Body, Fn, get, i32, identity, layout, perm_at,
                                               sort_order)
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.kernel import Routine

MAX_STEPS_PER_VALUE = 30   # QL steps allowed per eigenvalue (LAPACK's steqr: 30)


def _hypot(ft: FloatType) -> str:
    """$hypot (x, y): sqrt(x^2 + y^2) without overflow or underflow on the way."""
    f = Fn(ft)
    f.fvar("m")
    scaled = lambda v: f.op("div", get(v), get("m"))  # noqa: E731
    body = [f"(local.set $m {f.op('max', f.op('abs', get('x')), f.op('abs', get('y')))})",
            f"(if (result {ft.name}) {f.op('eq', get('m'), f.const(0.0))}",
            f"  (then {f.const(0.0)})",
            f"  (else {f.op('mul', get('m'), f.op('sqrt', f.op('add', f.op('mul', scaled('x'), scaled('x')), f.op('mul', scaled('y'), scaled('y')))))}))"]
    return f.text(f"(func $hypot (param $x {ft.name}) (param $y {ft.name}) (result {ft.name})",
                  body, "the length of (x, y), scaled by the larger part")


def _symmetric_copy(f: Fn, dst: str, n: int, lower: bool) -> list[str]:
    """dst <- the symmetric matrix of in0's lower (or upper) triangle."""
    big = "(select (local.get $tr) (local.get $tc) (i32.gt_u (local.get $tr) (local.get $tc)))"
    small = "(select (local.get $tc) (local.get $tr) (i32.gt_u (local.get $tr) (local.get $tc)))"
    src_r, src_c = (big, small) if lower else (small, big)
    element = f.load(f.at2("(local.get $in0)", src_r, src_c, n))
    return f.loop("tr", i32(0), i32(n), f.loop("tc", i32(0), i32(n), [
        f.store(f.at2(dst, get("tr"), get("tc"), n), element)], "columns"), "rows")


def _tridiagonalize(f: Fn, A: str, D: str, E: str, TAU: str, P: str, n: int) -> list[str]:
    """A <- Q^T A Q tridiagonal (sytrd, both triangles kept): step k reflects row k's
    part right of the diagonal, x = A[k, k+1:], onto beta e_1 with H = I - tau v v^T
    (v[0] = 1, LAPACK's signs), then A22 <- H A22 H as a rank-2 update
    A22 -= v w^T + w v^T with p = tau A22 v, w = p - (tau/2)(p.v) v. v stays in row k
    for forming Q; d, e and tau go to D, E and TAU."""
    sz = f.ft.size
    f.var("x0"), f.var("row"), f.fvar("alpha"), f.fvar("xn"), f.fvar("beta"), f.fvar("tk")
    f.var("len")   # L = n - 1 - k, the length of x
    x0 = f"(i32.add {f.at2(A, get('k'), get('k'), n)} {i32(sz)})"
    tail = f"(i32.add {get('x0')} {i32(sz)})"
    tail_len = f"(i32.sub {get('len')} {i32(1)})"
    below_k = f"(i32.add {get('k')} (i32.add {get('i')} {i32(1)}))"   # row k + 1 + i
    row_i = f"(i32.add {f.at2(A, below_k, get('k'), n)} {i32(sz)})"
    v_i = f.load(f.at(get("x0"), get("i")))
    p_i = f.at(P, get("i"))
    update = [
        f"(local.set $beta {f.op('neg', f.op('copysign', f.op('sqrt', f.op('add', f.op('mul', get('alpha'), get('alpha')), get('xn'))), get('alpha')))})",
        f"(local.set $tk {f.op('div', f.op('sub', get('beta'), get('alpha')), get('beta'))})",
        f"(call $scale {tail} {tail_len} {f.op('div', f.const(1.0), f.op('sub', get('alpha'), get('beta')))})",
        f.store(f.at(E, get("k")), get("beta")),
        f.store(get("x0"), f.const(1.0)),
        ";; p = tau A22 v, a row of A22 at a time"]
    update += f.loop("i", i32(0), get("len"), [
        f"(local.set $row {row_i})",
        f.store(p_i, f.op("mul", get("tk"), f"(call $dot {get('row')} {get('x0')} {get('len')})"))],
        "rows of A22")
    p_dot_v = f"(call $dot {P} {get('x0')} {get('len')})"
    update += [";; w = p - (tau/2)(p.v) v, in place of p",
               f"(call $axpy {get('x0')} {P} {get('len')} "
               f"{f.op('mul', f.const(-0.5), f.op('mul', get('tk'), p_dot_v))})",
               ";; A22 -= v w^T + w v^T, row by row"]
    update += f.loop("i", i32(0), get("len"), [
        f"(local.set $row {row_i})",
        f"(call $axpy {get('x0')} {get('row')} {get('len')} {f.op('neg', f.load(p_i))})",
        f"(call $axpy {P} {get('row')} {get('len')} {f.op('neg', v_i)})"], "rows of A22")
    step = [
        f"(local.set $len (i32.sub {i32(n - 1)} {get('k')}))",
        f"(local.set $x0 {x0})",
        f"(local.set $alpha {f.load(get('x0'))})",
        f"(local.set $xn (call $dot {tail} {tail} {tail_len}))",
        f"(local.set $tk {f.const(0.0)})",
        f.store(f.at(E, get("k")), get("alpha")),
        f"(if {f.op('ne', get('xn'), f.const(0.0))} (then  ;; else H = I (tau 0), as LAPACK"]
    step += [f"  {line}" for line in update] + ["))"]
    step += [f.store(get("x0"), f.const(1.0)),
             f.store(f.at(TAU, get("k")), get("tk")),
             f.store(f.at(D, get("k")), f.load(f.at2(A, get("k"), get("k"), n)))]
    last = [f.store(f.at(D, i32(n - 1)), f.load(f.at2(A, i32(n - 1), i32(n - 1), n)))]
    if n >= 2:
        last += [f.store(f.at(D, i32(n - 2)), f.load(f.at2(A, i32(n - 2), i32(n - 2), n))),
                 f.store(f.at(E, i32(n - 2)), f.load(f.at2(A, i32(n - 2), i32(n - 1), n)))]
    return f.loop("k", i32(0), i32(n - 2), step, "reflector k") + last


def _form_qt(f: Fn, A: str, TAU: str, ZT: str, n: int) -> list[str]:
    """ZT <- Q^T = H_{n-3} ... H_0, as I H_{n-3} ... H_0: right-multiplying by H_k
    changes columns k+1: of rows k+1: only (the product so far is the identity
    elsewhere), each row by a dot product and an axpy with v_k."""
    sz = f.ft.size
    f.var("kk"), f.fvar("tk"), f.var("x0"), f.var("row"), f.var("len")
    row = f"(i32.add {f.at2(ZT, get('i'), get('k'), n)} {i32(sz)})"
    row_dot_v = f"(call $dot {get('row')} {get('x0')} {get('len')})"
    reflect = [f"(local.set $row {row})",
               f"(call $axpy {get('x0')} {get('row')} {get('len')} "
               f"{f.op('neg', f.op('mul', get('tk'), row_dot_v))})"]
    step = [f"(local.set $k (i32.sub {i32(n - 3)} {get('kk')}))",
            f"(local.set $len (i32.sub {i32(n - 1)} {get('k')}))",
            f"(local.set $x0 (i32.add {f.at2(A, get('k'), get('k'), n)} {i32(sz)}))",
            f"(local.set $tk {f.load(f.at(TAU, get('k')))})",
            f"(if {f.op('ne', get('tk'), f.const(0.0))} (then"]
    step += [f"  {line}" for line in f.loop("i", f"(i32.add {get('k')} {i32(1)})", i32(n), reflect,
                                            "rows i > k")] + ["))"]
    return identity(f, ZT, n, n) + f.loop("kk", i32(0), i32(n - 2), step, "reflectors, last first")


def _negligible(f: Fn, D: str, E: str, i: str) -> str:
    """e_i is negligible beside d_i and d_i+1 (LAPACK's test, and below the smallest
    normal; NaN counts as negligible so that a NaN matrix ends instead of iterating)."""
    ft = f.ft
    bound = f.op("max", f.op("mul", f.const(ft.eps),
                             f.op("add", f.op("abs", f.load(f.at(D, i))),
                                  f.op("abs", f.load(f.at(D, f"(i32.add {i} {i32(1)})"))))),
                 f.const(ft.tiny))
    return f"(i32.eqz {f.op('gt', f.op('abs', f.load(f.at(E, i))), bound)})"


def _ql_steps(f: Fn, D: str, E: str, ZT: str, n: int) -> list[str]:
    """Implicit QL on (d, e) with Wilkinson's shift, in the rotation-chasing form of
    EISPACK's tql2 (LAPACK's steqr has the same accuracy): for each l, until e[l] is
    negligible, find the unreduced block [l, m], then chase from m up to l with plane
    rotations, each also turning rows i, i+1 of ZT. The update keeps d through the
    differences g and p; the textbook form T <- R T R^T cancels badly in float32."""
    for name in ("l", "m", "i", "steps", "early"):
        f.var(name)
    for name in ("g", "r", "s", "c", "p", "ff", "b"):
        f.fvar(name)
    op, load, store, one = f.op, f.load, f.store, f.const(1.0)
    d_at, e_at = (lambda i: f.at(D, i)), (lambda i: f.at(E, i))  # noqa: E731
    i1, l1 = f"(i32.add {get('i')} {i32(1)})", f"(i32.add {get('l')} {i32(1)})"
    find_m = [f"(local.set $m {get('l')})",
              "(block $m_found (loop $m_up  ;; the first negligible e[m], m >= l",
              f"  (br_if $m_found (i32.ge_s {get('m')} {i32(n - 1)}))",
              f"  (br_if $m_found {_negligible(f, D, E, get('m'))})",
              f"  (local.set $m (i32.add {get('m')} {i32(1)}))",
              "  (br $m_up)))"]
    shift = [  # g = d[m] - mu, mu the eigenvalue of T[l:l+2, l:l+2] nearer d[l]
        f"(local.set $g {op('div', op('sub', load(d_at(l1)), load(d_at(get('l')))), op('mul', f.const(2.0), load(e_at(get('l')))))})",
        f"(local.set $r (call $hypot {get('g')} {one}))",
        f"(local.set $g {op('add', op('sub', load(d_at(get('m'))), load(d_at(get('l')))), op('div', load(e_at(get('l'))), op('add', get('g'), op('copysign', get('r'), get('g')))))})",
        f"(local.set $s {one})", f"(local.set $c {one})", f"(local.set $p {f.const(0.0)})",
        "(local.set $early (i32.const 0))",
        f"(local.set $i (i32.sub {get('m')} {i32(1)}))"]
    chase = [
        f"(br_if $chase_done (i32.lt_s {get('i')} {get('l')}))",
        f"(local.set $ff {op('mul', get('s'), load(e_at(get('i'))))})",
        f"(local.set $b {op('mul', get('c'), load(e_at(get('i'))))})",
        f"(local.set $r (call $hypot {get('ff')} {get('g')}))",
        store(e_at(i1), get("r")),
        f"(if {op('eq', get('r'), f.const(0.0))} (then  ;; the block split: start again",
        f"  {store(d_at(i1), op('sub', load(d_at(i1)), get('p')))}",
        f"  {store(e_at(get('m')), f.const(0.0))}",
        "  (local.set $early (i32.const 1))",
        "  (br $chase_done)))",
        f"(local.set $s {op('div', get('ff'), get('r'))})",
        f"(local.set $c {op('div', get('g'), get('r'))})",
        f"(local.set $g {op('sub', load(d_at(i1)), get('p'))})",
        f"(local.set $r {op('add', op('mul', op('sub', load(d_at(get('i'))), get('g')), get('s')), op('mul', op('mul', f.const(2.0), get('c')), get('b')))})",
        f"(local.set $p {op('mul', get('s'), get('r'))})",
        store(d_at(i1), op("add", get("g"), get("p"))),
        f"(local.set $g {op('sub', op('mul', get('c'), get('r')), get('b'))})",
        f"(call $rot {f.at2(ZT, get('i'), i32(0), n)} {f.at2(ZT, i1, i32(0), n)} {i32(n)} "
        f"{get('c')} {get('s')})",
        f"(local.set $i (i32.sub {get('i')} {i32(1)}))",
        "(br $chase)"]
    step = (shift + ["(block $chase_done (loop $chase  ;; rotations (i, i+1), i = m-1 down to l"]
            + [f"  {line}" for line in chase] + ["))",
               "(if (i32.eqz (local.get $early)) (then",
               f"  {store(d_at(get('l')), op('sub', load(d_at(get('l'))), get('p')))}",
               f"  {store(e_at(get('l')), get('g'))}",
               f"  {store(e_at(get('m')), f.const(0.0))}))"])
    per_l = (["(loop $again  ;; QL steps until e[l] is negligible (or the step budget ends)"]
             + [f"  {line}" for line in find_m]
             + [f"  (if (i32.and (i32.ne {get('m')} {get('l')}) "
                f"(i32.lt_u {get('steps')} {i32(MAX_STEPS_PER_VALUE * n)})) (then",
                f"    (local.set $steps (i32.add {get('steps')} {i32(1)}))"]
             + [f"    {line}" for line in step] + ["    (br $again))))"])
    # the steps count a NaN as negligible (to end); its neighbours become NaN first
    nan = f.const(float("nan"))
    poison = [f"(if {op('ne', load(e_at(get('i'))), load(e_at(get('i'))))} (then",
              f"  {store(d_at(get('i')), nan)}", f"  {store(d_at(i1), nan)}))"]
    return (f.loop("i", i32(0), i32(n - 1), poison, "a NaN in e makes its two d's NaN")
            + ["(local.set $steps (i32.const 0))"]
            + f.loop("l", i32(0), i32(n), per_l, "eigenvalue l"))


# the arrays of $symmetric_eigen, by name (pw: the vector p, then w, of a reflection)
EIGEN_ARRAYS = ("a", "zt", "d", "e", "tau", "pw")


def eigen_sizes(n: int, size: int) -> dict[str, int]:
    """Byte sizes of $symmetric_eigen's arrays, for a routine's scratch layout."""
    return {"a": n * n * size, "zt": n * n * size, "d": n * size, "e": n * size,
            "tau": n * size, "pw": n * size}


def symmetric_eigen_fn(ft: FloatType, n: int) -> list[str]:
    """$symmetric_eigen (a, zt, d, e, tau, pw): the eigenvalues of the full symmetric
    n x n matrix at a (destroyed) into d, unsorted, and its eigenvectors as zt's rows;
    with $hypot, which it calls."""
    f = Fn(ft)
    A, ZT, D, E, TAU, P = (f"(local.get ${k})" for k in EIGEN_ARRAYS)
    body = ([";; T = Q^T A Q: d on the diagonal, e beside it"]
            + _tridiagonalize(f, A, D, E, TAU, P, n)
            + [";; ZT <- Q^T (its rows become the eigenvectors)"]
            + _form_qt(f, A, TAU, ZT, n)
            + [";; T's eigenvalues into d, its rotations into ZT's rows"]
            + _ql_steps(f, D, E, ZT, n))
    params = " ".join(f"(param ${k} i32)" for k in EIGEN_ARRAYS)
    fn = f.text(f"(func $symmetric_eigen {params}", body,
                f"eigenvalues and vectors of a symmetric {n}x{n} matrix: Householder to "
                "tridiagonal, then implicit QL")
    return [fn, _hypot(ft)]


def eigh(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    n = shape[-1]
    lay = layout(**eigen_sizes(n, ft.size), perm=n * 4)
    f = Fn(ft)
    for k in lay.offsets:
        f.var(k.upper())
    A, ZT, D, PERM = (f"(local.get ${k.upper()})" for k in ("a", "zt", "d", "perm"))
    f.var("key"), f.fvar("value")
    out = lambda r, c: f.at2("(local.get $out0)", r, c, n)  # noqa: E731
    # a NaN eigenvalue's vector is NaN too (as LAPACK's, JAX's)
    vector = (f"(select {f.const(float('nan'))} {f.load(f.at2(ZT, get('key'), get('tr'), n))} "
              f"{f.op('ne', get('value'), get('value'))})")
    arrays = " ".join(f"(local.get ${k.upper()})" for k in EIGEN_ARRAYS)
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))"
             for k, v in lay.offsets.items()]
            + [";; A <- the symmetric matrix of the " + ("lower" if routine.param["lower"] else "upper")
               + " triangle"]
            + _symmetric_copy(f, A, n, routine.param["lower"])
            + [f"(call $symmetric_eigen {arrays})",
               ";; ascending eigenvalues, the vectors as columns"]
            + sort_order(f, D, PERM, n, descending=False)
            + f.loop("k", i32(0), i32(n), [
                f"(local.set $key (i32.load {perm_at(PERM, get('k'))}))",
                f"(local.set $value {f.load(f.at(D, get('key')))})",
                f.store(f.at("(local.get $out1)", get("k")), get("value"))]
                + f.loop("tr", i32(0), i32(n), [f.store(out(get("tr"), get("k")), vector)],
                         "rows of column k"), "output column k"))
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $in0 i32) (param $scratch i32)",
                body, f"eigh of one {n}x{n} matrix: tridiagonal reduction, then implicit QL")
    notes = {"algorithm": ("Householder tridiagonalization + implicit QL (Wilkinson shift)",
                           "LAPACK's syev: ~10n^3/3 flops to reduce and form Q, then ~1.7 n^2 "
                           "row rotations; Jacobi would need 7-10 sweeps of ~6n^3"),
             "layout": ("full matrix, vectors as rows", "column k below the diagonal is row k "
                        "beside it, and a rotation turns two rows: every inner loop is a SIMD run"),
             "max_steps": (MAX_STEPS_PER_VALUE * n, "QL steps in all before giving up (LAPACK: 30 "
                           "per eigenvalue)")}
    return Body([fn] + symmetric_eigen_fn(ft, n), ["out0", "out1", "in0"], lay, notes, None)
