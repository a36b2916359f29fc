"""Routines generated as WebAssembly text: the eigen, singular value and QR
decompositions (Jacobi sweeps, Householder reflections).

A routine module has the kernels' calling shape, `kernel(out..., in..., scratch,
lo, hi)`: byte offsets into the one linear memory, and the range [lo, hi) of the
batch's matrices this call computes (so threads can share a batch; each thread
brings scratch of its own). Sizes are constants in the text, as in kernels. The
inner loops are vector_loops' SIMD runs over rows kept contiguous: a Jacobi
rotation or a Householder reflection touches two rows (or one row and a vector),
so matrices whose columns the algorithm works on are stored transposed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from jaxlab.backends.wasm.codegen import MEMORY_PAGES
from jaxlab.backends.wasm.vector_loops import F32, F64, FloatType, functions
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

MAX_SWEEPS = 40   # Jacobi converges quadratically: 6-12 sweeps in float32 at n = 256
FLOAT_TYPES = {DType.float32: F32}
if hasattr(DType, "float64"):
    FLOAT_TYPES[DType.float64] = F64


@dataclass(frozen=True)
class RoutineCode:
    text: str                 # the module
    scratch_bytes: int        # per thread
    matrices: int             # the batch: calls take ranges [lo, hi) of it
    notes: dict[str, tuple[Any, str]]   # tuning choices: name -> (value, reason)
    flops: Optional[int]      # per call over the whole batch; None where the data decide
                              # (Jacobi: the notes give a sweep's count)


class _Fn:
    """One WAT function being written: its locals, loops and memory accesses."""

    def __init__(self, ft: FloatType) -> None:
        self.ft = ft
        self.locals: dict[str, str] = {}
        self.labels = 0

    def var(self, name: str, kind: str = "i32") -> str:
        self.locals[name] = kind
        return f"(local.get ${name})"

    def fvar(self, name: str) -> str:
        return self.var(name, self.ft.name)

    def loop(self, var: str, start: str, stop: str, body: list[str], what: str) -> list[str]:
        """for var = start; var < stop (signed); var++."""
        self.var(var)
        self.labels += 1
        label = f"{var}{self.labels}"
        return ([f"(local.set ${var} {start})", f"(block ${label}_done (loop ${label}  ;; {what}",
                 f"  (br_if ${label}_done (i32.ge_s (local.get ${var}) {stop}))"]
                + [f"  {line}" for line in body]
                + [f"  (local.set ${var} (i32.add (local.get ${var}) (i32.const 1)))",
                   f"  (br ${label})))"])

    def at(self, base: str, index: str) -> str:
        """The byte address of element `index` of the array at `base`."""
        return f"(i32.add {base} (i32.shl {index} (i32.const {self.ft.shift})))"

    def at2(self, base: str, row: str, col: str, cols: int) -> str:
        return self.at(base, f"(i32.add (i32.mul {row} (i32.const {cols})) {col})")

    def load(self, addr: str) -> str:
        return f"({self.ft.name}.load {addr})"

    def store(self, addr: str, value: str) -> str:
        return f"({self.ft.name}.store {addr} {value})"

    def const(self, value: float) -> str:
        return f"({self.ft.name}.const {value!r})"

    def op(self, name: str, *args: str) -> str:
        return f"({self.ft.name}.{name} {' '.join(args)})"

    def text(self, head: str, body: list[str], comment: str) -> str:
        decls = [f"(local ${n} {t})" for n, t in self.locals.items()]
        decls = [" ".join(decls[i:i + 8]) for i in range(0, len(decls), 8)]
        return "\n".join([head, f"  ;; {comment}"] + [f"  {d}" for d in decls]
                         + [f"  {line}" for line in body] + [")"])


def _i(value: int) -> str:
    return f"(i32.const {value})"


def _g(name: str) -> str:
    return f"(local.get ${name})"


# --- pieces the routines share ------------------------------------------------------

def _transposed_copy(f: _Fn, src: str, dst: str, rows: int, cols: int) -> list[str]:
    """dst (cols x rows) <- src (rows x cols) transposed."""
    inner = f.loop("tc", _i(0), _i(cols), [f.store(f.at2(dst, _g("tc"), _g("tr"), rows),
                                                    f.load(f.at2(src, _g("tr"), _g("tc"), cols)))],
                   "columns")
    return f.loop("tr", _i(0), _i(rows), inner, "rows")


def _identity(f: _Fn, dst: str, rows: int, cols: int) -> list[str]:
    one = f.op("convert_i32_u", "(i32.eq (local.get $ir) (local.get $ic))")
    inner = f.loop("ic", _i(0), _i(cols), [f.store(f.at2(dst, _g("ir"), _g("ic"), cols), one)],
                   "columns")
    return f.loop("ir", _i(0), _i(rows), inner, "rows")


def _rotation(f: _Fn, diff: str, off: str) -> list[str]:
    """c, s of the Jacobi rotation that zeroes `off` between diagonal entries whose
    difference (q minus p) is `diff`: t = sign(theta) / (|theta| + sqrt(1 + theta^2)),
    written so that a huge theta cannot overflow."""
    f.fvar("theta"), f.fvar("r"), f.fvar("t"), f.fvar("c"), f.fvar("s")
    one = f.const(1.0)
    return [
        f"(local.set $theta {f.op('div', diff, f.op('mul', f.const(2.0), off))})",
        f"(local.set $r {f.op('abs', _g('theta'))})",
        f"(local.set $t (if (result {f.ft.name}) {f.op('gt', _g('r'), one)}",
        f"  (then {f.op('div', one, f.op('mul', _g('r'), f.op('add', one, f.op('sqrt', f.op('add', one, f.op('div', one, f.op('mul', _g('r'), _g('r'))))))))})",
        f"  (else {f.op('div', one, f.op('add', _g('r'), f.op('sqrt', f.op('add', one, f.op('mul', _g('r'), _g('r'))))))})))",
        f"(local.set $t {f.op('copysign', _g('t'), _g('theta'))})",
        f"(local.set $c {f.op('div', one, f.op('sqrt', f.op('add', one, f.op('mul', _g('t'), _g('t')))))})",
        f"(local.set $s {f.op('mul', _g('t'), _g('c'))})",
    ]


def _worth_rotating(f: _Fn, off: str, a: str, b: str) -> str:
    """|off| above eps * sqrt(|a| |b|) (relative: Jacobi's accuracy) and above the
    smallest normal (so underflowing values stop the sweeps)."""
    ft = f.ft
    bound = f.op("mul", f.const(ft.eps),
                 f.op("mul", f.op("sqrt", f.op("abs", a)), f.op("sqrt", f.op("abs", b))))
    return (f"(i32.and {f.op('gt', f.op('abs', off), bound)} "
            f"{f.op('gt', f.op('abs', off), f.const(ft.tiny))})")


def _sort_order(f: _Fn, keys: str, perm: str, n: int, descending: bool) -> list[str]:
    """perm <- the indices of keys[0:n] in (stable) ascending or descending order:
    an insertion sort, n^2/4 compares for n of a few hundred."""
    key_of = lambda idx: f.load(f.at(keys, f"(i32.load {_perm_at(perm, idx)})"))  # noqa: E731
    before = "lt" if descending else "gt"
    f.var("key"), f.fvar("kv"), f.var("sj")
    fill = f.loop("si", _i(0), _i(n), [f"(i32.store {_perm_at(perm, _g('si'))} {_g('si')})"],
                  "the identity order")
    insert = [
        f"(local.set $key {_g('si')})",
        f"(local.set $kv {f.load(f.at(keys, _g('key')))})",
        f"(local.set $sj (i32.sub {_g('si')} {_i(1)}))",
        "(block $placed (loop $shift  ;; move larger (smaller) keys up one place",
        f"  (br_if $placed (i32.lt_s {_g('sj')} {_i(0)}))",
        f"  (br_if $placed (i32.eqz {f.op(before, key_of(_g('sj')), _g('kv'))}))",
        f"  (i32.store {_perm_at(perm, '(i32.add (local.get $sj) (i32.const 1))')} "
        f"(i32.load {_perm_at(perm, _g('sj'))}))",
        f"  (local.set $sj (i32.sub {_g('sj')} {_i(1)}))",
        "  (br $shift)))",
        f"(i32.store {_perm_at(perm, '(i32.add (local.get $sj) (i32.const 1))')} {_g('key')})",
    ]
    return fill + f.loop("si", _i(1), _i(n), insert, "insert key si among the sorted ones")


def _perm_at(perm: str, index: str) -> str:
    return f"(i32.add {perm} (i32.shl {index} (i32.const 2)))"


def _householder_fns(ft: FloatType, rows: int, length: int, reflectors: int,
                     q_rows: int) -> list[str]:
    """$householder (t, tau): QR of the matrix whose columns are t's `rows` rows (each
    `length` long), as LAPACK's geqrf: r on and above the diagonal of the transposed
    layout, the reflectors' tails below it, tau beside. $form_q (t, tau, qt): the first
    `q_rows` columns of Q = H_0 ... H_k-1, as the rows of qt (orgqr)."""
    f = _Fn(ft)
    row_bytes = length * ft.size
    tail_len = f"(i32.sub {_i(length - 1)} {_g('j')})"
    x0 = f"(i32.add (i32.add (local.get $t) (i32.mul {_g('j')} {_i(row_bytes)})) " \
         f"(i32.shl {_g('j')} {_i(ft.shift)}))"
    f.var("x0"), f.var("xl"), f.fvar("alpha"), f.fvar("xn"), f.fvar("beta"), f.fvar("tj"), f.fvar("w")
    tail = f"(i32.add {_g('x0')} {_i(ft.size)})"
    xl_tail = f"(i32.add {_g('xl')} {_i(ft.size)})"
    # w = tau (x_l[j] + v_tail . x_l[j+1:]); x_l -= w v
    v_dot = f"(call $dot {tail} {xl_tail} {tail_len})"
    apply_ = [
        f"(local.set $xl (i32.add {_g('x0')} (i32.mul (i32.sub {_g('l')} {_g('j')}) {_i(row_bytes)})))",
        f"(local.set $w {f.op('mul', _g('tj'), f.op('add', f.load(_g('xl')), v_dot))})",
        f.store(_g("xl"), f.op("sub", f.load(_g("xl")), _g("w"))),
        f"(call $axpy {tail} {xl_tail} {tail_len} {f.op('neg', _g('w'))})",
    ]
    step = [
        f"(local.set $x0 {x0})",
        f"(local.set $alpha {f.load(_g('x0'))})",
        f"(local.set $xn (call $dot {tail} {tail} {tail_len}))",
        f"(local.set $tj {f.const(0.0)})",
        f"(if {f.op('ne', _g('xn'), f.const(0.0))} (then  ;; else H_j = I (tau 0), as LAPACK",
        f"  (local.set $beta {f.op('neg', f.op('copysign', f.op('sqrt', f.op('add', f.op('mul', _g('alpha'), _g('alpha')), _g('xn'))), _g('alpha')))})",
        f"  (local.set $tj {f.op('div', f.op('sub', _g('beta'), _g('alpha')), _g('beta'))})",
        f"  (call $scale {tail} {tail_len} {f.op('div', f.const(1.0), f.op('sub', _g('alpha'), _g('beta')))})",
        f"  {f.store(_g('x0'), _g('beta'))}",
        ";; the columns to the right lose their component along v",
    ] + [f"  {line}" for line in f.loop("l", f"(i32.add {_g('j')} {_i(1)})", _i(rows), apply_,
                                        "each later column l")] + ["))",
        f.store(f.at("(local.get $tau)", _g("j")), _g("tj"))]
    factor = f.text("(func $householder (param $t i32) (param $tau i32)",
                    f.loop("j", _i(0), _i(reflectors), step, "reflector j"),
                    f"Householder QR of {rows} columns of length {length} (stored as rows)")

    g = _Fn(ft)
    g.var("j"), g.var("x0"), g.var("xl"), g.fvar("tj"), g.fvar("w")
    apply_q = [
        f"(local.set $xl (i32.add (i32.add (local.get $qt) (i32.mul {_g('l')} {_i(row_bytes)})) "
        f"(i32.shl {_g('j')} {_i(ft.shift)})))",
        f"(local.set $w {g.op('mul', _g('tj'), g.op('add', g.load(_g('xl')), v_dot))})",
        g.store(_g("xl"), g.op("sub", g.load(_g("xl")), _g("w"))),
        f"(call $axpy {tail} {xl_tail} {tail_len} {g.op('neg', _g('w'))})",
    ]
    back = [
        f"(local.set $j (i32.sub {_i(reflectors - 1)} {_g('jj')}))",
        f"(local.set $x0 {x0})",
        f"(local.set $tj {g.load(g.at('(local.get $tau)', _g('j')))})",
        f"(if {g.op('ne', _g('tj'), g.const(0.0))} (then",
    ] + [f"  {line}" for line in g.loop("l", _g("j"), _i(q_rows), apply_q,
                                        "columns l >= j of Q (the others are e_l)")] + ["))"]
    body = _identity(g, "(local.get $qt)", q_rows, length) + \
        g.loop("jj", _i(0), _i(reflectors), back, "reflectors, last first")
    form = g.text("(func $form_q (param $t i32) (param $tau i32) (param $qt i32)", body,
                  f"the first {q_rows} columns of Q, as rows of {length}")
    return [factor, form]


# --- the routines ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Layout:
    """Scratch arrays of one thread, 16-byte aligned, by name: byte offset."""
    offsets: dict[str, int]
    nbytes: int


def _layout(**sizes: int) -> _Layout:
    offsets, at = {}, 0
    for name, nbytes in sizes.items():
        offsets[name] = at
        at += -(-nbytes // 16) * 16
    return _Layout(offsets, at)


def _one_sided_sweeps(f: _Fn, W: str, VT: str, NRM: str, n: int, m: int,
                      vectors: bool) -> list[str]:
    """Hestenes' one-sided Jacobi: rotate pairs of W's n rows (each m long; VT's rows
    alike when `vectors`) until every pair is orthogonal to working precision. The rows'
    squared norms (NRM) are computed at each sweep's start and updated with each
    rotation (as LAPACK's gesvj does), so a pair costs one dot product, not three."""
    sz = f.ft.size
    row = lambda base, r, bytes_: f"(i32.add {base} (i32.mul {r} {_i(bytes_)}))"  # noqa: E731
    f.fvar("alpha"), f.fvar("beta"), f.fvar("gamma"), f.var("rotated"), f.var("sweep")
    w_p, w_q = row(W, _g("p"), m * sz), row(W, _g("q"), m * sz)
    norm_p, norm_q = f.at(NRM, _g("p")), f.at(NRM, _g("q"))
    rotate = _rotation(f, f.op("sub", _g("beta"), _g("alpha")), _g("gamma")) + [
        f"(call $rot {w_p} {w_q} {_i(m)} (local.get $c) (local.get $s))"] + (
        [f"(call $rot {row(VT, _g('p'), n * sz)} {row(VT, _g('q'), n * sz)} {_i(n)} (local.get $c) (local.get $s))"]
        if vectors else []) + [
        f.store(norm_p, f.op("sub", _g("alpha"), f.op("mul", _g("t"), _g("gamma")))),
        f.store(norm_q, f.op("add", _g("beta"), f.op("mul", _g("t"), _g("gamma")))),
        "(local.set $rotated (i32.const 1))"]
    pair = [f"(local.set $alpha {f.load(norm_p)})", f"(local.set $beta {f.load(norm_q)})",
            f"(local.set $gamma (call $dot {w_p} {w_q} {_i(m)}))",
            f"(if {_worth_rotating(f, _g('gamma'), _g('alpha'), _g('beta'))} (then"] + \
        [f"  {line}" for line in rotate] + ["))"]
    w_k = row(W, _g("k"), m * sz)
    sweep = (["(local.set $rotated (i32.const 0))"]
             + f.loop("k", _i(0), _i(n), [f.store(f.at(NRM, _g("k")), f"(call $dot {w_k} {w_k} {_i(m)})")],
                      "the rows' squared norms, afresh")
             + f.loop("p", _i(0), _i(n - 1), f.loop("q", f"(i32.add {_g('p')} {_i(1)})", _i(n),
                                                    pair, "pairs (p, q), q > p"), "rows p")
             + ["(local.set $sweep (i32.add (local.get $sweep) (i32.const 1)))"])
    return (["(local.set $sweep (i32.const 0))",
             "(loop $sweeps  ;; one-sided Jacobi: rotate row pairs until all are orthogonal"]
            + [f"  {line}" for line in sweep]
            + [f"  (br_if $sweeps (i32.and (local.get $rotated) (i32.lt_u (local.get $sweep) "
               f"{_i(MAX_SWEEPS)}))))"])


def _sweep_flops(n: int, m: int, vectors: bool) -> int:
    """A sweep's count: the norms (2nm), then per pair a dot product (2m) and the
    rotations (6m, and 6n for the vectors)."""
    return 2 * n * m + n * (n - 1) // 2 * (8 * m + (6 * n if vectors else 0))


def _eigh(routine: Routine, ft: FloatType) -> tuple[list[str], list[str], _Layout, dict, None]:
    (shape, _), = routine.inputs
    n = shape[-1]
    lower = routine.param["lower"]
    sz = ft.size
    lay = _layout(w=n * n * sz, a=n * n * sz, d=n * sz, perm=n * 4, nrm=n * sz)
    f = _Fn(ft)
    for k in lay.offsets:
        f.var(k.upper())
    W, A, D, PERM, NRM = (f"(local.get ${k})" for k in ("W", "A", "D", "PERM", "NRM"))
    f.fvar("shift"), f.var("key"), f.fvar("total")
    big = "(select (local.get $tr) (local.get $tc) (i32.gt_u (local.get $tr) (local.get $tc)))"
    small = "(select (local.get $tc) (local.get $tr) (i32.gt_u (local.get $tr) (local.get $tc)))"
    src_r, src_c = (big, small) if lower else (small, big)
    element = f.load(f.at2("(local.get $in0)", src_r, src_c, n))
    sym = f.loop("tr", _i(0), _i(n), f.loop("tc", _i(0), _i(n), [
        f.store(f.at2(A, _g("tr"), _g("tc"), n), element)], "columns"), "rows")
    row = lambda base, r: f"(i32.add {base} (i32.mul {r} {_i(n * sz)}))"  # noqa: E731
    frobenius = f.op("sqrt", f"(call $dot {A} {A} {_i(n * n)})")
    shift = f.loop("k", _i(0), _i(n), [
        f.store(f.at2(W, _g("k"), _g("k"), n),
                f.op("add", f.load(f.at2(W, _g("k"), _g("k"), n)), _g("shift")))], "the diagonal")
    w_k, a_i = row(W, _g("k")), row(A, _g("tr"))
    length = f.op("sqrt", f"(call $dot {w_k} {w_k} {_i(n)})")
    normalize = [f"(call $scale {w_k} {_i(n)} {f.op('div', f.const(1.0), length)})"]
    term = f.op("mul", f.load(f.at2(W, _g("k"), _g("tr"), n)), f"(call $dot {a_i} {w_k} {_i(n)})")
    rayleigh = f.loop("tr", _i(0), _i(n), [f"(local.set $total {f.op('add', _g('total'), term)})"],
                      "v_k . (A v_k), a row of A at a time")
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {_i(v)}))"
             for k, v in lay.offsets.items()]
            + [";; A <- the symmetric matrix of the " + ("lower" if lower else "upper")
               + " triangle; W <- B = A + shift I with shift = 2 |A|_F (1 for A = 0):",
               ";; B is positive definite with eigenvalues in [|A|_F, 3 |A|_F], so once W = B V",
               ";; has orthogonal rows, they are A's eigenvectors times values of one scale"]
            + sym
            + [f"(local.set $shift {f.op('mul', f.const(2.0), frobenius)})",
               f"(local.set $shift (select {_g('shift')} {f.const(1.0)} "
               f"{f.op('gt', _g('shift'), f.const(0.0))}))",
               f"(memory.copy {W} {A} {_i(n * n * sz)})"]
            + shift
            + _one_sided_sweeps(f, W, "", NRM, n, n, vectors=False)
            + [";; eigenvectors: W's rows normalised; eigenvalues: their Rayleigh quotients"]
            + f.loop("k", _i(0), _i(n), normalize + ["(local.set $total " + f.const(0.0) + ")"]
                     + rayleigh + [f.store(f.at(D, _g("k")), _g("total"))], "each row k of W")
            + _sort_order(f, D, PERM, n, descending=False)
            + f.loop("k", _i(0), _i(n), [
                f"(local.set $key (i32.load {_perm_at(PERM, _g('k'))}))",
                f.store(f.at("(local.get $out1)", _g("k")), f.load(f.at(D, _g("key"))))]
                + f.loop("tr", _i(0), _i(n), [f.store(f.at2("(local.get $out0)", _g("tr"), _g("k"), n),
                                                      f.load(f.at2(W, _g("key"), _g("tr"), n)))],
                         "rows of column k"), "output column k"))
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $in0 i32) (param $scratch i32)",
                body, f"eigh of one {n}x{n} matrix: one-sided Jacobi on the shifted matrix")
    notes = {"algorithm": ("one-sided (Hestenes) Jacobi on A + 2|A|_F I",
                           "the shifted matrix is positive definite with eigenvalues of one "
                           "scale: its orthogonalised rows are A's eigenvectors, no rotations "
                           "are accumulated; eigenvalues are Rayleigh quotients (error ~ eps |A|)"),
             "layout": ("rows", "each rotation and dot product runs over two contiguous rows "
                        "(SIMD)"),
             "max_sweeps": (MAX_SWEEPS, "until every pair satisfies |w_p.w_q| <= eps |w_p| |w_q|"),
             "flops_per_sweep": (_sweep_flops(n, n, False), "a dot product and a rotation per "
                                 "pair, the norms updated")}
    return [fn], ["out0", "out1", "in0"], lay, notes, None


def _svd(routine: Routine, ft: FloatType) -> tuple[list[str], list[str], _Layout, dict, None]:
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    uv = routine.param["compute_uv"]
    ucols = m if routine.param["full_matrices"] else n
    sz = ft.size
    lay = _layout(w=n * m * sz, vt=n * n * sz, d=n * sz, perm=n * 4, t=n * m * sz, tau=n * sz,
                  qt=ucols * m * sz, nrm=n * sz)
    f = _Fn(ft)
    for k in lay.offsets:
        f.var(k.upper())
    W, VT, D, PERM, T, TAU, QT, NRM = (f"(local.get ${k})" for k in
                                       ("W", "VT", "D", "PERM", "T", "TAU", "QT", "NRM"))
    row = lambda base, r, bytes_: f"(i32.add {base} (i32.mul {r} {_i(bytes_)}))"  # noqa: E731
    f.var("key"), f.fvar("norm")
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {_i(v)}))"
             for k, v in lay.offsets.items()]
            + [";; W <- a transposed: its rows are a's columns"]
            + _transposed_copy(f, "(local.get $in0)", W, m, n)
            + (_identity(f, VT, n, n) if uv else [])
            + _one_sided_sweeps(f, W, VT, NRM, n, m, vectors=uv)
            + [";; singular values: the columns' norms, descending"]
            + f.loop("k", _i(0), _i(n), [
                f.store(f.at(D, _g("k")), f.op("sqrt", f"(call $dot {row(W, _g('k'), m * sz)} {row(W, _g('k'), m * sz)} {_i(m)})"))],
                "norms")
            + _sort_order(f, D, PERM, n, descending=True)
            + f.loop("k", _i(0), _i(n), [
                f"(local.set $key (i32.load {_perm_at(PERM, _g('k'))}))",
                f.store(f.at("(local.get $out0)", _g("k")), f.load(f.at(D, _g("key"))))],
                "s in order"))
    args = ["out0", "in0"]
    if uv:
        normalize = [
            f"(local.set $key (i32.load {_perm_at(PERM, _g('k'))}))",
            f"(local.set $norm {f.load(f.at(D, _g('key')))})",
            f"(memory.copy {row('(local.get $out2)', _g('k'), n * sz)} {row(VT, _g('key'), n * sz)} {_i(n * sz)})",
            f"(memory.copy {row(T, _g('k'), m * sz)} {row(W, _g('key'), m * sz)} {_i(m * sz)})",
            f"(call $scale {row(T, _g('k'), m * sz)} {_i(m)} (select {f.op('div', f.const(1.0), _g('norm'))} {f.const(0.0)} {f.op('gt', _g('norm'), f.const(0.0))}))"]
        sign = f"(select {f.const(-1.0)} {f.const(1.0)} {f.op('lt', f.load(f.at2(T, _g('k'), _g('k'), m)), f.const(0.0))})"
        write_u = f.loop("k", _i(0), _i(ucols), [
            f"(local.set $norm (if (result {ft.name}) (i32.lt_s {_g('k')} {_i(n)}) (then {sign}) (else {f.const(1.0)})))"]
            + f.loop("tr", _i(0), _i(m), [
                f.store(f.at2("(local.get $out1)", _g("tr"), _g("k"), ucols),
                        f.op("mul", _g("norm"), f.load(f.at2(QT, _g("k"), _g("tr"), m))))],
                "rows of column k"), "columns k of u")
        body += ([";; vt's rows and u's columns (normalised, as rows of T) in the values' order"]
                 + f.loop("k", _i(0), _i(n), normalize, "each singular triple")
                 + [";; u <- Q of T's QR times sign(R's diagonal): orthonormal even where s is 0,",
                    ";; and completed to a square u for full_matrices",
                    f"(call $householder {T} {TAU})", f"(call $form_q {T} {TAU} {QT})"]
                 + write_u)
        args = ["out0", "out1", "out2", "in0"]
    fn = f.text(f"(func $matrix {' '.join(f'(param ${a} i32)' for a in args)} (param $scratch i32)",
                body, f"svd of one {m}x{n} matrix: one-sided Jacobi on its columns (rows of W)")
    notes = {"algorithm": ("one-sided (Hestenes) Jacobi",
                           "rotates column pairs of a until orthogonal: s to relative accuracy"),
             "layout": ("columns as rows", "a's columns and V's are stored as rows: each "
                        "rotation and dot product runs over contiguous memory (SIMD)"),
             "max_sweeps": (MAX_SWEEPS, "until every pair satisfies |a_p.a_q| <= eps |a_p| |a_q|"),
             "flops_per_sweep": (_sweep_flops(n, m, uv), "a dot product and the rotations "
                                 "per pair, the norms updated")}
    fns = [fn]
    if uv:
        fns += _householder_fns(ft, n, m, n, ucols)
        notes["u"] = ("Householder QR of the normalised columns",
                      "makes u orthonormal where singular values vanish, and completes it")
    return fns, args, lay, notes, None


def _qr(routine: Routine, ft: FloatType) -> tuple[list[str], list[str], _Layout, dict, int]:
    (shape, _), = routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    qcols = m if routine.param["full_matrices"] else k
    sz = ft.size
    lay = _layout(t=n * m * sz, tau=max(k, 1) * sz, qt=qcols * m * sz)
    f = _Fn(ft)
    for key in lay.offsets:
        f.var(key.upper())
    T, TAU, QT = "(local.get $T)", "(local.get $TAU)", "(local.get $QT)"
    upper = f"(select {f.load(f.at2(T, _g('tc'), _g('tr'), m))} {f.const(0.0)} (i32.le_s {_g('tr')} {_g('tc')}))"
    body = ([f"(local.set ${key.upper()} (i32.add (local.get $scratch) {_i(v)}))"
             for key, v in lay.offsets.items()]
            + [";; T <- a transposed: each column of a is a contiguous row"]
            + _transposed_copy(f, "(local.get $in0)", T, m, n)
            + [f"(call $householder {T} {TAU})", ";; r: on and above the diagonal"]
            + f.loop("tr", _i(0), _i(qcols), f.loop("tc", _i(0), _i(n), [
                f.store(f.at2("(local.get $out1)", _g("tr"), _g("tc"), n), upper)], "columns"),
                "rows of r")
            + [f"(call $form_q {T} {TAU} {QT})", ";; q <- QT transposed"]
            + _transposed_copy(f, QT, "(local.get $out0)", qcols, m))
    fn = f.text("(func $matrix (param $out0 i32) (param $out1 i32) (param $in0 i32) (param $scratch i32)",
                body, f"qr of one {m}x{n} matrix: Householder reflections, then Q from them")
    # LAPACK's counts: geqrf 2mnk - (m+n)k^2 + 2k^3/3, orgqr 4m qcols k - 2(m+qcols)k^2 + 4k^3/3
    flops = (2 * m * n * k - (m + n) * k * k + 2 * k ** 3 // 3
             + 4 * m * qcols * k - 2 * (m + qcols) * k * k + 4 * k ** 3 // 3)
    notes = {"algorithm": ("Householder QR (geqrf + orgqr)",
                           "LAPACK's reflectors: the same signs as NumPy's and JAX's q and r"),
             "layout": ("columns as rows", "a reflection updates columns: stored as rows, its "
                        "dot product and axpy run over contiguous memory (SIMD)")}
    return [fn] + _householder_fns(ft, n, m, k, qcols), ["out0", "out1", "in0"], lay, notes, max(flops, 0)


_GENERATORS: dict[str, Callable[[Routine, FloatType], tuple]] = {
    "eigh": _eigh, "svd": _svd, "qr": _qr,
}


def generated(routine: Routine) -> bool:
    """Whether this routine runs as generated WebAssembly (else NumPy on views)."""
    return routine.name in _GENERATORS and routine.inputs[0][1] in FLOAT_TYPES


def generate(routine: Routine) -> Optional[RoutineCode]:
    if not generated(routine):
        return None
    ft = FLOAT_TYPES[routine.inputs[0][1]]
    fns, args, lay, notes, flops = _GENERATORS[routine.name](routine, ft)
    shapes = {**{f"out{i}": s for i, (s, _) in enumerate(routine.outputs)},
              **{f"in{i}": s for i, (s, _) in enumerate(routine.inputs)}}
    batch = routine.inputs[0][0][:-2]
    matrices = math.prod(batch)
    stride = {a: math.prod(shapes[a][len(batch):]) * ft.size for a in shapes}
    buffers = [f"out{i}" for i in range(len(routine.outputs))] + \
        [f"in{i}" for i in range(len(routine.inputs))]
    empty = any(math.prod(s) == 0 for s, _ in (*routine.inputs, *routine.outputs))
    call = (f"(call $matrix {' '.join(f'(i32.add (local.get ${a}) (i32.mul (local.get $b) {_i(stride[a])}))' for a in args)} "
            "(local.get $scratch))")
    entry = "\n".join(
        [f"(func $kernel (export \"kernel\") {' '.join(f'(param ${a} i32)' for a in buffers)} "
         "(param $scratch i32) (param $lo i32) (param $hi i32)",
         "  ;; matrices b in [lo, hi) of the batch, one after another",
         "  (local $b i32)",
         "  (local.set $b (local.get $lo))",
         "  (block $done (loop $matrices",
         "    (br_if $done (i32.ge_u (local.get $b) (local.get $hi)))",
         f"    {call if not empty else ';; empty matrices: nothing to compute'}",
         "    (local.set $b (i32.add (local.get $b) (i32.const 1)))",
         "    (br $matrices)))", ")"])
    code = "\n".join(fns)
    head = [f";; {routine.text()}",
            f";; {matrices} matri{'x' if matrices == 1 else 'ces'}, {ft.name}; this call computes "
            "matrices [lo, hi)", f'(import "env" "memory" (memory 1 {MEMORY_PAGES} shared))']
    body = head + functions(code, ft) + (fns if not empty else []) + [entry]
    text = "\n".join(["(module"] + ["  " + line for part in body for line in part.splitlines()]
                     + [")"])
    return RoutineCode(text, max(16, lay.nbytes), matrices, notes,
                       None if flops is None else flops * matrices)
