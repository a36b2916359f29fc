"""svd and qr as WebAssembly text (eigh: tridiagonal.py): Hestenes' one-sided Jacobi
sweeps and Householder reflections over rows kept contiguous (a matrix whose columns an
algorithm walks is stored transposed), so that every inner loop is one of
vector_loops' SIMD runs: a rotation of two rows, a dot product, an axpy."""
from __future__ import annotations

import math

from jaxlab.backends.wasm import tridiagonal
from jaxlab.backends.wasm.routine_text import (Body, Fn, get, i32, identity, layout, perm_at,
                                               sort_order, transposed_copy)
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.kernel import Routine

MAX_SWEEPS = 40   # Jacobi converges quadratically: 7-10 sweeps in float32 at n = 256


def _rotation(f: Fn, diff: str, off: str) -> list[str]:
    """c, s of the Jacobi rotation that zeroes `off` between diagonal entries whose
    difference (q minus p) is `diff`: t = sign(theta) / (|theta| + sqrt(1 + theta^2)),
    written so that a huge theta cannot overflow."""
    f.fvar("theta"), f.fvar("r"), f.fvar("t"), f.fvar("c"), f.fvar("s")
    one = f.const(1.0)
    return [
        f"(local.set $theta {f.op('div', diff, f.op('mul', f.const(2.0), off))})",
        f"(local.set $r {f.op('abs', get('theta'))})",
        f"(local.set $t (if (result {f.ft.name}) {f.op('gt', get('r'), one)}",
        f"  (then {f.op('div', one, f.op('mul', get('r'), f.op('add', one, f.op('sqrt', f.op('add', one, f.op('div', one, f.op('mul', get('r'), get('r'))))))))})",
        f"  (else {f.op('div', one, f.op('add', get('r'), f.op('sqrt', f.op('add', one, f.op('mul', get('r'), get('r'))))))})))",
        f"(local.set $t {f.op('copysign', get('t'), get('theta'))})",
        f"(local.set $c {f.op('div', one, f.op('sqrt', f.op('add', one, f.op('mul', get('t'), get('t')))))})",
        f"(local.set $s {f.op('mul', get('t'), get('c'))})",
    ]


def _worth_rotating(f: Fn, off: str, a: str, b: str, length: int) -> str:
    """|off| above sqrt(length) eps sqrt(|a| |b|) (relative: Jacobi's accuracy, with
    LAPACK gesvj's sqrt(m) for the rounding of a dot product of m terms: a tighter test
    keeps rotating pairs whose products are rounding noise, sweep after sweep) and
    above the smallest normal (so underflowing values stop the sweeps)."""
    ft = f.ft
    bound = f.op("mul", f.const(ft.eps * math.sqrt(length)),
                 f.op("mul", f.op("sqrt", f.op("abs", a)), f.op("sqrt", f.op("abs", b))))
    return (f"(i32.and {f.op('gt', f.op('abs', off), bound)} "
            f"{f.op('gt', f.op('abs', off), f.const(ft.tiny))})")


def _householder_fns(ft: FloatType, rows: int, length: int, reflectors: int,
                     q_rows: int) -> list[str]:
    """$householder (t, tau): QR of the matrix whose columns are t's `rows` rows (each
    `length` long), as LAPACK's geqrf: r on and above the diagonal of the transposed
    layout, the reflectors' tails below it, tau beside. $form_q (t, tau, qt): the first
    `q_rows` columns of Q = H_0 ... H_k-1, as the rows of qt (orgqr)."""
    f = Fn(ft)
    row_bytes = length * ft.size
    tail_len = f"(i32.sub {i32(length - 1)} {get('j')})"
    x0 = f"(i32.add (i32.add (local.get $t) (i32.mul {get('j')} {i32(row_bytes)})) " \
         f"(i32.shl {get('j')} {i32(ft.shift)}))"
    f.var("x0"), f.var("xl"), f.fvar("alpha"), f.fvar("xn"), f.fvar("beta"), f.fvar("tj"), f.fvar("w")
    tail = f"(i32.add {get('x0')} {i32(ft.size)})"
    xl_tail = f"(i32.add {get('xl')} {i32(ft.size)})"

    def reflect(fn: Fn) -> list[str]:
        """The row at $xl (from position j) loses its part along v (1 at j, the tail
        after): w = tau (x[j] + v_tail . x[j+1:]), x -= w v."""
        v_dot = f"(call $dot {tail} {xl_tail} {tail_len})"
        return [f"(local.set $w {fn.op('mul', get('tj'), fn.op('add', fn.load(get('xl')), v_dot))})",
                fn.store(get("xl"), fn.op("sub", fn.load(get("xl")), get("w"))),
                f"(call $axpy {tail} {xl_tail} {tail_len} {fn.op('neg', get('w'))})"]
    apply_ = [f"(local.set $xl (i32.add {get('x0')} (i32.mul (i32.sub {get('l')} {get('j')}) "
              f"{i32(row_bytes)})))"] + reflect(f)
    step = [
        f"(local.set $x0 {x0})",
        f"(local.set $alpha {f.load(get('x0'))})",
        f"(local.set $xn (call $dot {tail} {tail} {tail_len}))",
        f"(local.set $tj {f.const(0.0)})",
        f"(if {f.op('ne', get('xn'), f.const(0.0))} (then  ;; else H_j = I (tau 0), as LAPACK",
        f"  (local.set $beta {f.op('neg', f.op('copysign', f.op('sqrt', f.op('add', f.op('mul', get('alpha'), get('alpha')), get('xn'))), get('alpha')))})",
        f"  (local.set $tj {f.op('div', f.op('sub', get('beta'), get('alpha')), get('beta'))})",
        f"  (call $scale {tail} {tail_len} {f.op('div', f.const(1.0), f.op('sub', get('alpha'), get('beta')))})",
        f"  {f.store(get('x0'), get('beta'))}",
        ";; the columns to the right lose their component along v",
    ] + [f"  {line}" for line in f.loop("l", f"(i32.add {get('j')} {i32(1)})", i32(rows), apply_,
                                        "each later column l")] + ["))",
        f.store(f.at("(local.get $tau)", get("j")), get("tj"))]
    factor = f.text("(func $householder (param $t i32) (param $tau i32)",
                    f.loop("j", i32(0), i32(reflectors), step, "reflector j"),
                    f"Householder QR of {rows} columns of length {length} (stored as rows)")

    g = Fn(ft)
    g.var("j"), g.var("x0"), g.var("xl"), g.fvar("tj"), g.fvar("w")
    apply_q = [f"(local.set $xl (i32.add (i32.add (local.get $qt) (i32.mul {get('l')} "
               f"{i32(row_bytes)})) (i32.shl {get('j')} {i32(ft.shift)})))"] + reflect(g)
    back = [
        f"(local.set $j (i32.sub {i32(reflectors - 1)} {get('jj')}))",
        f"(local.set $x0 {x0})",
        f"(local.set $tj {g.load(g.at('(local.get $tau)', get('j')))})",
        f"(if {g.op('ne', get('tj'), g.const(0.0))} (then",
    ] + [f"  {line}" for line in g.loop("l", get("j"), i32(q_rows), apply_q,
                                        "columns l >= j of Q (the others are e_l)")] + ["))"]
    body = identity(g, "(local.get $qt)", q_rows, length) + \
        g.loop("jj", i32(0), i32(reflectors), back, "reflectors, last first")
    form = g.text("(func $form_q (param $t i32) (param $tau i32) (param $qt i32)", body,
                  f"the first {q_rows} columns of Q, as rows of {length}")
    return [factor, form]


def _one_sided_sweeps(f: Fn, W: str, VT: str, NRM: str, n: int, m: int,
                      vectors: bool) -> list[str]:
    """Hestenes' one-sided Jacobi: rotate pairs of W's n rows (each m long; VT's rows
    alike when `vectors`) until every pair is orthogonal to working precision. The rows'
    squared norms (NRM) are computed at each sweep's start and updated with each
    rotation (as LAPACK's gesvj does), so a pair costs one dot product, not three."""
    sz = f.ft.size
    row = lambda base, r, bytes_: f"(i32.add {base} (i32.mul {r} {i32(bytes_)}))"  # noqa: E731
    f.fvar("alpha"), f.fvar("beta"), f.fvar("gamma"), f.var("rotated"), f.var("sweep")
    w_p, w_q = row(W, get("p"), m * sz), row(W, get("q"), m * sz)
    norm_p, norm_q = f.at(NRM, get("p")), f.at(NRM, get("q"))
    rotate = _rotation(f, f.op("sub", get("beta"), get("alpha")), get("gamma")) + [
        f"(call $rot {w_p} {w_q} {i32(m)} (local.get $c) (local.get $s))"] + (
        [f"(call $rot {row(VT, get('p'), n * sz)} {row(VT, get('q'), n * sz)} {i32(n)} (local.get $c) (local.get $s))"]
        if vectors else []) + [
        f.store(norm_p, f.op("sub", get("alpha"), f.op("mul", get("t"), get("gamma")))),
        f.store(norm_q, f.op("add", get("beta"), f.op("mul", get("t"), get("gamma")))),
        "(local.set $rotated (i32.const 1))"]
    pair = [f"(local.set $alpha {f.load(norm_p)})", f"(local.set $beta {f.load(norm_q)})",
            f"(local.set $gamma (call $dot {w_p} {w_q} {i32(m)}))",
            f"(if {_worth_rotating(f, get('gamma'), get('alpha'), get('beta'), m)} (then"] + \
        [f"  {line}" for line in rotate] + ["))"]
    w_k = row(W, get("k"), m * sz)
    sweep = (["(local.set $rotated (i32.const 0))"]
             + f.loop("k", i32(0), i32(n), [f.store(f.at(NRM, get("k")), f"(call $dot {w_k} {w_k} {i32(m)})")],
                      "the rows' squared norms, afresh")
             + f.loop("p", i32(0), i32(n - 1), f.loop("q", f"(i32.add {get('p')} {i32(1)})", i32(n),
                                                    pair, "pairs (p, q), q > p"), "rows p")
             + ["(local.set $sweep (i32.add (local.get $sweep) (i32.const 1)))"])
    return (["(local.set $sweep (i32.const 0))",
             "(loop $sweeps  ;; one-sided Jacobi: rotate row pairs until all are orthogonal"]
            + [f"  {line}" for line in sweep]
            + [f"  (br_if $sweeps (i32.and (local.get $rotated) (i32.lt_u (local.get $sweep) "
               f"{i32(MAX_SWEEPS)}))))"])


def _precondition(f: Fn, W: str, VT: str, T: str, n: int, m: int) -> list[str]:
    """W <- VT W and VT <- V^T with V the eigenvectors of the Gram matrix G = W W^T
    (a^T a): W's rows become nearly orthogonal, so the Jacobi sweeps that follow
    rotate few pairs; they still run to convergence, so s keeps Jacobi's relative
    accuracy (the Gram matrix's squared condition only touches V, not the answer)."""
    sz = f.ft.size
    G = "(local.get $EIG_A)"
    row = lambda base, r, bytes_: f"(i32.add {base} (i32.mul {r} {i32(bytes_)}))"  # noqa: E731
    w_i, w_j = row(W, get("gi"), m * sz), row(W, get("gj"), m * sz)
    gram = f.loop("gi", i32(0), i32(n), f.loop("gj", get("gi"), i32(n), [
        f"(local.set $gram (call $dot {w_i} {w_j} {i32(m)}))",
        f.store(f.at2(G, get("gi"), get("gj"), n), get("gram")),
        f.store(f.at2(G, get("gj"), get("gi"), n), get("gram"))], "columns j >= i"), "rows i")
    f.fvar("gram")
    arrays = " ".join(VT if k == "zt" else f"(local.get $EIG_{k.upper()})"
                      for k in tridiagonal.EIGEN_ARRAYS)
    t_k = row(T, get("gi"), m * sz)
    combine = f.loop("gi", i32(0), i32(n), [f"(memory.fill {t_k} (i32.const 0) {i32(m * sz)})"]
                     + f.loop("gj", i32(0), i32(n), [
                         f"(call $axpy {w_j} {t_k} {i32(m)} {f.load(f.at2(VT, get('gi'), get('gj'), n))})"],
                         "rows j of W"), "rows i of VT W")
    return ([";; G = W W^T; VT <- its eigenvectors as rows; W <- VT W"] + gram
            + [f"(call $symmetric_eigen {arrays})"]
            + combine + [f"(memory.copy {W} {T} {i32(n * m * sz)})"])


def _sweep_flops(n: int, m: int, vectors: bool) -> int:
    """A sweep's count: the norms (2nm), then per pair a dot product (2m) and the
    rotations (6m, and 6n for the vectors)."""
    return 2 * n * m + n * (n - 1) // 2 * (8 * m + (6 * n if vectors else 0))


def _svd(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    uv = routine.param["compute_uv"]
    ucols = m if routine.param["full_matrices"] else n
    sz = ft.size
    eigen = {f"eig_{k}": v for k, v in tridiagonal.eigen_sizes(n, sz).items() if k != "zt"}
    lay = layout(w=n * m * sz, vt=n * n * sz, d=n * sz, perm=n * 4, t=n * m * sz, tau=n * sz,
                  qt=ucols * m * sz, nrm=n * sz, **eigen)
    f = Fn(ft)
    for k in lay.offsets:
        f.var(k.upper())
    W, VT, D, PERM, T, TAU, QT, NRM = (f"(local.get ${k})" for k in
                                       ("W", "VT", "D", "PERM", "T", "TAU", "QT", "NRM"))
    row = lambda base, r, bytes_: f"(i32.add {base} (i32.mul {r} {i32(bytes_)}))"  # noqa: E731
    f.var("key"), f.fvar("norm")
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))"
             for k, v in lay.offsets.items()]
            + [";; W <- a transposed: its rows are a's columns"]
            + transposed_copy(f, "(local.get $in0)", W, m, n)
            + _precondition(f, W, VT, T, n, m)
            + _one_sided_sweeps(f, W, VT, NRM, n, m, vectors=uv)
            + [";; singular values: the columns' norms, descending"]
            + f.loop("k", i32(0), i32(n), [
                f.store(f.at(D, get("k")), f.op("sqrt", f"(call $dot {row(W, get('k'), m * sz)} {row(W, get('k'), m * sz)} {i32(m)})"))],
                "norms")
            + sort_order(f, D, PERM, n, descending=True)
            + f.loop("k", i32(0), i32(n), [
                f"(local.set $key (i32.load {perm_at(PERM, get('k'))}))",
                f.store(f.at("(local.get $out0)", get("k")), f.load(f.at(D, get("key"))))],
                "s in order"))
    args = ["out0", "in0"]
    if uv:
        normalize = [
            f"(local.set $key (i32.load {perm_at(PERM, get('k'))}))",
            f"(local.set $norm {f.load(f.at(D, get('key')))})",
            f"(memory.copy {row('(local.get $out2)', get('k'), n * sz)} {row(VT, get('key'), n * sz)} {i32(n * sz)})",
            f"(memory.copy {row(T, get('k'), m * sz)} {row(W, get('key'), m * sz)} {i32(m * sz)})",
            f"(call $scale {row(T, get('k'), m * sz)} {i32(m)} (select {f.op('div', f.const(1.0), get('norm'))} {f.const(0.0)} {f.op('gt', get('norm'), f.const(0.0))}))"]
        sign = f"(select {f.const(-1.0)} {f.const(1.0)} {f.op('lt', f.load(f.at2(T, get('k'), get('k'), m)), f.const(0.0))})"
        write_u = f.loop("k", i32(0), i32(ucols), [
            f"(local.set $norm (if (result {ft.name}) (i32.lt_s {get('k')} {i32(n)}) (then {sign}) (else {f.const(1.0)})))"]
            + f.loop("tr", i32(0), i32(m), [
                f.store(f.at2("(local.get $out1)", get("tr"), get("k"), ucols),
                        f.op("mul", get("norm"), f.load(f.at2(QT, get("k"), get("tr"), m))))],
                "rows of column k"), "columns k of u")
        body += ([";; vt's rows and u's columns (normalised, as rows of T) in the values' order"]
                 + f.loop("k", i32(0), i32(n), normalize, "each singular triple")
                 + [";; u <- Q of T's QR times sign(R's diagonal): orthonormal even where s is 0,",
                    ";; and completed to a square u for full_matrices",
                    f"(call $householder {T} {TAU})", f"(call $form_q {T} {TAU} {QT})"]
                 + write_u)
        args = ["out0", "out1", "out2", "in0"]
    fn = f.text(f"(func $matrix {' '.join(f'(param ${a} i32)' for a in args)} (param $scratch i32)",
                body, f"svd of one {m}x{n} matrix: one-sided Jacobi on its columns (rows of W)")
    notes = {"algorithm": ("one-sided (Hestenes) Jacobi, preconditioned by eigh(a^T a)",
                           "rotates column pairs of a V until orthogonal: s to relative "
                           "accuracy; V, the eigenvectors of a^T a, leaves 2-3 sweeps that "
                           "mostly only test pairs"),
             "layout": ("columns as rows", "a's columns and V's are stored as rows: each "
                        "rotation and dot product runs over contiguous memory (SIMD)"),
             "max_sweeps": (MAX_SWEEPS, "until every pair satisfies |a_p.a_q| <= sqrt(m) eps |a_p| |a_q|"),
             "flops_per_sweep": (_sweep_flops(n, m, uv), "a dot product and the rotations "
                                 "per pair, the norms updated")}
    fns = [fn] + tridiagonal.symmetric_eigen_fn(ft, n)
    if uv:
        fns += _householder_fns(ft, n, m, n, ucols)
        notes["u"] = ("Householder QR of the normalised columns",
                      "makes u orthonormal where singular values vanish, and completes it")
    return Body(fns, args, lay, notes, None)


def _qr(routine: Routine, ft: FloatType) -> Body:
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    qcols = m if routine.param["full_matrices"] else k
    sz = ft.size
    lay = layout(t=n * m * sz, tau=max(k, 1) * sz, qt=qcols * m * sz)
    f = Fn(ft)
    for key in lay.offsets:
        f.var(key.upper())
    T, TAU, QT = "(local.get $T)", "(local.get $TAU)", "(local.get $QT)"
    upper = f"(select {f.load(f.at2(T, get('tc'), get('tr'), m))} {f.const(0.0)} (i32.le_s {get('tr')} {get('tc')}))"
    body = ([f"(local.set ${key.upper()} (i32.add (local.get $scratch) {i32(v)}))"
             for key, v in lay.offsets.items()]
            + [";; T <- a transposed: each column of a is a contiguous row"]
            + transposed_copy(f, "(local.get $in0)", T, m, n)
            + [f"(call $householder {T} {TAU})", ";; r: on and above the diagonal"]
            + f.loop("tr", i32(0), i32(qcols), f.loop("tc", i32(0), i32(n), [
                f.store(f.at2("(local.get $out1)", get("tr"), get("tc"), n), upper)], "columns"),
                "rows of r")
            + [f"(call $form_q {T} {TAU} {QT})", ";; q <- QT transposed"]
            + transposed_copy(f, QT, "(local.get $out0)", qcols, m))
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $in0 i32) (param $scratch i32)",
                body, f"qr of one {m}x{n} matrix: Householder reflections, then Q from them")
    # LAPACK's counts: geqrf 2mnk - (m+n)k^2 + 2k^3/3, orgqr 4m qcols k - 2(m+qcols)k^2 + 4k^3/3
    flops = (2 * m * n * k - (m + n) * k * k + 2 * k ** 3 // 3
             + 4 * m * qcols * k - 2 * (m + qcols) * k * k + 4 * k ** 3 // 3)
    notes = {"algorithm": ("Householder QR (geqrf + orgqr)",
                           "LAPACK's reflectors: the same signs as NumPy's and JAX's q and r"),
             "layout": ("columns as rows", "a reflection updates columns: stored as rows, its "
                        "dot product and axpy run over contiguous memory (SIMD)")}
    return Body([fn] + _householder_fns(ft, n, m, k, qcols), ["out0", "out1", "in0"], lay, notes,
                max(flops, 0))


GENERATORS = {"eigh": tridiagonal.eigh, "svd": _svd, "qr": _qr}
