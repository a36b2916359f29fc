"""The eigen, singular value and QR decompositions as WGSL.

Jacobi: Hestenes' one-sided sweeps (eigh runs them on A + 2|A|_F I, whose
orthogonalised rows are A's eigenvectors): block Jacobi over many workgroups, a
dispatch per round (jacobi.py), where two blocks of rows fit in workgroup memory;
else one workgroup per matrix in round-robin order, so that each round rotates n/2
disjoint pairs at once, one thread per pair, and only rounds need barriers. eigh
then refines the vectors on A itself (eigh_refine.py: two-sided Jacobi on V A V^T);
its eigenvalues are that matrix's diagonal; orders are rank sorts.
QR (and svd's u where a singular value vanishes): householder.py's passes. An svd
whose columns do not fit in workgroup memory starts with a QR and decomposes R.
Matrices whose columns an algorithm walks are stored transposed, as rows.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

from jaxlab.backends.webgpu import eigh_refine
from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.householder import QrShape, plan_householder, transpose_kernel
from jaxlab.backends.webgpu.jacobi import (EPS, ROTATION, TINY, JacobiPlan,
                                           notes as jacobi_notes, plan_jacobi, run_sweeps)
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

F32 = DType.float32
MAX_SWEEPS = 40
THREADS = 64


def _jacobi(n: int, m: int, vectors: bool) -> str:
    """Sweeps over W's n rows (m long, at `wb`) and VT's (n long, at `vb`) until every
    pair of W's rows is orthogonal to working precision."""
    players = n + n % 2
    rotate_v = f"""
          for (var k = 0u; k < {n}u; k++) {{
            let turned = turn(g, vt[vb + p * {n}u + k], vt[vb + q * {n}u + k]);
            vt[vb + p * {n}u + k] = turned.x;
            vt[vb + q * {n}u + k] = turned.y;
          }}""" if vectors else ""
    return f"""
  // one-sided Jacobi; round r pairs the players of a circle (player 0 fixed)
  for (var sweep = 0u; sweep < {MAX_SWEEPS}u; sweep++) {{
    if (lid == 0u) {{ atomicStore(&rotated, 0u); }}
    workgroupBarrier();
    for (var round = 0u; round < {players - 1}u; round++) {{
      // each thread takes pairs of this round
      for (var pair = lid; pair < {players // 2}u; pair += {THREADS}u) {{
        let p = player(pair, round);
        let q = player({players - 1}u - pair, round);
        if (p < {n}u && q < {n}u) {{
          var alpha = 0.0;
          var beta = 0.0;
          var gamma = 0.0;
          // the pair's norms and inner product
          for (var k = 0u; k < {m}u; k++) {{
            let x = w[wb + p * {m}u + k];
            let y = w[wb + q * {m}u + k];
            alpha += x * x;
            beta += y * y;
            gamma += x * y;
          }}
          if (abs(gamma) > {EPS!r} * sqrt(alpha) * sqrt(beta) && abs(gamma) > {TINY!r}) {{
            let g = rotation(alpha, beta, gamma);
            // rotate rows p and q
            for (var k = 0u; k < {m}u; k++) {{
              let turned = turn(g, w[wb + p * {m}u + k], w[wb + q * {m}u + k]);
              w[wb + p * {m}u + k] = turned.x;
              w[wb + q * {m}u + k] = turned.y;
            }}{rotate_v}
            atomicStore(&rotated, 1u);
          }}
        }}
      }}
      storageBarrier();
    }}
    workgroupBarrier();
    if (lid == 0u) {{ any_rotated = atomicLoad(&rotated); }}
    if (workgroupUniformLoad(&any_rotated) == 0u) {{ break; }}
  }}
"""


def _jacobi_decls(n: int) -> str:
    players = n + n % 2
    return f"""var<workgroup> rotated: atomic<u32>;
var<workgroup> any_rotated: u32;
{ROTATION}
fn player(position: u32, round: u32) -> u32 {{
  // the circle method: position 0 stays, the others turn one place a round
  if (position == 0u) {{ return 0u; }}
  return (position - 1u + round) % {max(players - 1, 1)}u + 1u;
}}
"""


def _sort(keys: str, n: int, descending: bool) -> str:
    """perm (at pb) <- the stable order of keys[kb..kb+n]: each thread places its keys
    at their rank (the keys compared as u32 in a total order, NaN last)."""
    before = ">" if descending else "<"
    return f"""
  // a rank sort: key i goes to the number of keys that sort before it
  for (var i = lid; i < {n}u; i += {THREADS}u) {{
    let ki = order_key({keys}[kb + i]);
    var rank = 0u;
    for (var j = 0u; j < {n}u; j++) {{
      let kj = order_key({keys}[kb + j]);
      if (kj {before} ki || (kj == ki && j < i)) {{ rank += 1u; }}
    }}
    perm[pb + rank] = i;
  }}
  storageBarrier();
"""


_ORDER_KEY = """fn order_key(x: f32) -> u32 {
  // float order as unsigned order: negatives reversed below the positives, NaN last
  let bits = bitcast<u32>(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}
"""


def _head(buffers: list[tuple[str, str, bool]]) -> str:
    return "\n".join(f"@group(0) @binding({i}) var<storage, {'read_write' if rw else 'read'}> "
                     f"{name}: array<{kind}>;" for i, (name, kind, rw) in enumerate(buffers))


def _eigh(b: "_Builder") -> None:
    (shape, dtype), = b.routine.inputs
    n = shape[-1]
    count = math.prod(shape[:-2])
    lower = b.routine.param["lower"]
    a = b.as_f32(0, dtype, count * n * n)
    v_out, finish_v = b.f32_output(0, dtype, count * n * n)
    w_out, finish_w = b.f32_output(1, dtype, count * n)
    w, d, perm = b.temp(4 * count * n * n), b.temp(4 * count * n), b.temp(4 * count * n)
    sym, c = b.temp(4 * count * n * n), b.temp(4 * count * n * n)
    src = ("max(r, c) * {n}u + min(r, c)" if lower else "min(r, c) * {n}u + max(r, c)").format(n=n)
    frame = f"""  let wb = group * {n * n}u;
  let kb = group * {n}u;
  let pb = kb;
"""
    prepare = f"""  // W <- B = A + shift I, A from its {'lower' if lower else 'upper'} triangle, shift = 2 |A|_F
  // (1 for A = 0): B is positive definite with eigenvalues of one scale, so once its
  // rows are orthogonal they are A's eigenvectors (no rotations accumulated)
  var squares = 0.0;
  for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
    let r = e / {n}u;
    let c = e % {n}u;
    let x = a[wb + {src}];
    w[wb + e] = x;
    sym[wb + e] = x;
    squares += x * x;
  }}
  partial[lid] = squares;
  storageBarrier();   // the diagonal below was written by other threads
  workgroupBarrier();
  if (lid == 0u) {{
    var total = 0.0;
    for (var t = 0u; t < {THREADS}u; t++) {{ total += partial[t]; }}
    shift = select(1.0, 2.0 * sqrt(total), total > 0.0);
  }}
  let added = workgroupUniformLoad(&shift);
  for (var k = lid; k < {n}u; k += {THREADS}u) {{ w[wb + k * {n + 1}u] += added; }}
  storageBarrier();
"""
    # a workgroup per row of W: its length, to normalise it
    normalize = f"""  let row = (group / {n}u) * {n * n}u + (group % {n}u) * {n}u;
  var squares = 0.0;
  for (var i = lid; i < {n}u; i += {THREADS}u) {{ squares += w[row + i] * w[row + i]; }}
  partial[lid] = squares;
  workgroupBarrier();
  if (lid == 0u) {{
    var total = 0.0;
    for (var t = 0u; t < {THREADS}u; t++) {{ total += partial[t]; }}
    inverse_length = 1.0 / sqrt(total);
  }}
  let scale = workgroupUniformLoad(&inverse_length);
  for (var i = lid; i < {n}u; i += {THREADS}u) {{ w[row + i] *= scale; }}
"""
    finish = f"""  // eigenvalues: C's diagonal, ascending; eigenvectors as columns in their order
  for (var k = lid; k < {n}u; k += {THREADS}u) {{ d[kb + k] = c[wb + k * {n + 1}u]; }}
  storageBarrier();
{_sort('d', n, descending=False)}
  for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
    let r = e / {n}u;
    let c = e % {n}u;
    v[wb + e] = w[wb + perm[pb + c] * {n}u + r];
  }}
  for (var k = lid; k < {n}u; k += {THREADS}u) {{ values[kb + k] = d[kb + perm[pb + k]]; }}
"""
    head = "\n".join([
        _head([("a", "f32", False), ("v", "f32", True), ("values", "f32", True), ("w", "f32", True),
               ("d", "f32", True), ("perm", "u32", True), ("sym", "f32", True), ("c", "f32", True)]),
        "var<workgroup> shift: f32;", "var<workgroup> inverse_length: f32;",
        f"var<workgroup> partial: array<f32, {THREADS}>;",
        _ORDER_KEY, _jacobi_decls(n)])
    args, writable = [a, v_out, w_out, w, d, perm, sym, c], [v_out, w_out, w, d, perm, sym, c]
    plan = plan_jacobi(n, n, count, False, b.limits)
    if plan is None:
        b.shader(HandWritten(head, frame + prepare + _jacobi(n, n, False)), "eigh_jacobi",
                 count, THREADS, args, writable)
    else:
        b.shader(HandWritten(head, frame + prepare), "eigh_prepare", count, THREADS, args,
                 writable)
        run_sweeps(b, plan, w, None)
    b.shader(HandWritten(head, normalize), "eigh_normalize", count * n, THREADS, args, writable)
    refine = eigh_refine.plan_refine(n, count)
    eigh_refine.refine(b, refine, sym, w, c)
    b.shader(HandWritten(head, frame + finish), "eigh_finish", count, THREADS, args, writable)
    finish_v()
    finish_w()
    b.notes = {"algorithm": ("one-sided Jacobi on A + 2|A|_F I, a workgroup per matrix",
                             "the shifted matrix is positive definite with eigenvalues of one "
                             "scale: its orthogonalised rows are A's eigenvectors; round-robin "
                             "pairs rotate in parallel"),
               "workgroup": (THREADS, "a thread per pair of a round"),
               "max_sweeps": (MAX_SWEEPS, "until every pair is orthogonal to working precision")}
    if plan is not None:
        b.notes = {"shift": ("A + 2|A|_F I", "positive definite with eigenvalues of one scale: "
                                             "its orthogonalised rows are A's eigenvectors"),
                   **jacobi_notes(plan)}
    b.notes.update(eigh_refine.notes(refine))


def _svd(b: "_Builder") -> None:
    (shape, dtype), = b.routine.inputs
    m, n = shape[-2:]
    count = math.prod(shape[:-2])
    uv = b.routine.param["compute_uv"]
    ucols = m if b.routine.param["full_matrices"] else n
    a = b.as_f32(0, dtype, count * m * n)
    s_out, finish_s = b.f32_output(0, dtype, count * n)
    finishes = [finish_s]
    u_out = vt_out = None
    if uv:
        u_out, finish_u = b.f32_output(1, dtype, count * m * ucols)
        vt_out, finish_vt = b.f32_output(2, dtype, count * n * n)
        finishes += [finish_u, finish_vt]
    if m > n and plan_jacobi(n, m, count, uv, b.limits) is None:
        # columns too long for workgroup memory would sweep in one workgroup, a thread
        # looping over whole columns: QR first, then the SVD of R, and u = Q u_R
        t, taus = b.temp(4 * count * n * m), b.temp(4 * count * n)
        qt = b.temp(4 * count * ucols * m)
        b.kernel(transpose_kernel(count, n, m, n, "svd_columns"), [a], t)
        plan_householder(b, QrShape(count, n, m, n, ucols), t, taus, qt)
        r, u_r = b.temp(4 * count * n * n), b.temp(4 * count * n * n)
        b.kernel(transpose_kernel(count, n, n, m, "svd_r", upper=True), [t], r)
        plan = _svd_passes(b, r, count, n, n, n, s_out, u_r if uv else None, vt_out)
        if uv:
            b.shader(_q_times(count, m, n, ucols), "svd_q_times_u", math.ceil(
                count * m * ucols / 256), 256, [qt, u_r, u_out], [u_out])
    else:
        plan = _svd_passes(b, a, count, m, n, ucols, s_out, u_out, vt_out)
    for finish in finishes:
        finish()
    b.notes = {"algorithm": ("one-sided Jacobi, a workgroup per matrix",
                             "round-robin pairs of columns rotate in parallel, a thread each"),
               "workgroup": (THREADS, "a thread per pair of a round"),
               "max_sweeps": (MAX_SWEEPS, "until every pair is orthogonal to working precision")}
    if plan is not None:
        b.notes = jacobi_notes(plan)


def _q_times(count: int, m: int, n: int, ucols: int) -> HandWritten:
    """u = Q [u_R 0; 0 I]: Q's first n columns times R's u, then Q's own columns."""
    return HandWritten(_head([("qt", "f32", False), ("u_r", "f32", False),
                              ("u_out", "f32", True)]), f"""  let e = group * 256u + lid;
  if (e >= {count * m * ucols}u) {{ return; }}
  let k = e / {m * ucols}u;
  let r = (e % {m * ucols}u) / {ucols}u;
  let c = e % {ucols}u;
  let qb = k * {ucols * m}u;
  var total = 0.0;
  if (c < {n}u) {{
    // row r of Q (qt's column r) times column c of u_R
    for (var i = 0u; i < {n}u; i++) {{
      total += qt[qb + i * {m}u + r] * u_r[k * {n * n}u + i * {n}u + c];
    }}
  }} else {{
    total = qt[qb + c * {m}u + r];
  }}
  u_out[e] = total;
""")


def _svd_passes(b: "_Builder", a: int, count: int, m: int, n: int, ucols: int, s_out: int,
                u_out: Optional[int], vt_out: Optional[int]) -> Optional[JacobiPlan]:
    """The SVD of `count` m x n matrices at buffer a: s to s_out and, where u_out is
    given, u (ucols columns) and vt; the block Jacobi plan, if one fits."""
    uv = u_out is not None
    buffers = [("a", "f32", False), ("s_out", "f32", True)]
    args = [a, s_out]
    if uv:
        buffers.append(("vt_out", "f32", True))
        args.append(vt_out)
    w, vt, d = b.temp(4 * count * n * m), b.temp(4 * count * n * n), b.temp(4 * count * n)
    perm = b.temp(4 * count * n)
    buffers += [("w", "f32", True), ("vt", "f32", True), ("d", "f32", True), ("perm", "u32", True)]
    args += [w, vt, d, perm]
    if uv:
        t, needed = b.temp(4 * count * n * m), b.temp(4 * count)
        buffers += [("t", "f32", True), ("needed", "u32", True)]
        args += [t, needed]
    frame = f"""  let wb = group * {n * m}u;
  let vb = group * {n * n}u;
  let kb = group * {n}u;
  let pb = kb;
"""
    prepare = f"""  // W <- a transposed (its rows are a's columns), VT <- I
  for (var e = lid; e < {n * m}u; e += {THREADS}u) {{
    w[wb + e] = a[wb + (e % {m}u) * {n}u + e / {m}u];
  }}
  for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
    vt[vb + e] = select(0.0, 1.0, e / {n}u == e % {n}u);
  }}
  storageBarrier();
"""
    body = f"""  // singular values: the rows' norms, descending
  for (var k = lid; k < {n}u; k += {THREADS}u) {{
    var total = 0.0;
    for (var i = 0u; i < {m}u; i++) {{ total += w[wb + k * {m}u + i] * w[wb + k * {m}u + i]; }}
    d[kb + k] = sqrt(total);
  }}
  storageBarrier();
{_sort('d', n, descending=True)}
  for (var k = lid; k < {n}u; k += {THREADS}u) {{ s_out[kb + k] = d[kb + perm[pb + k]]; }}
"""
    if uv:
        body += f"""  // vt's rows; u's columns normalised, as T's rows, in the values' order
  let tb = wb;
  let ab = kb;
  let qb = group * {ucols * m}u;
  for (var e = lid; e < {n * n}u; e += {THREADS}u) {{
    vt_out[vb + e] = vt[vb + perm[pb + e / {n}u] * {n}u + e % {n}u];
  }}
  for (var e = lid; e < {n * m}u; e += {THREADS}u) {{
    let k = perm[pb + e / {m}u];
    let norm = d[kb + k];
    t[tb + e] = select(0.0, w[wb + k * {m}u + e % {m}u] / norm, norm > 0.0);
  }}
  storageBarrier();
  // T's rows are orthonormal already (the sweeps made them orthogonal to working precision)
  // unless a singular value is numerically 0 or u has more columns than T rows: then
  // u is Q of T's QR times sign(R's diagonal), orthonormal where s vanishes, complete
  if (lid == 0u) {{
    var qr = {int(ucols > n)}u;
    let top = d[kb + perm[pb]];
    for (var k = 0u; k < {n}u; k++) {{
      if (!(d[kb + k] > {n * EPS!r} * top)) {{ qr = 1u; }}
    }}
    needed[group] = qr;
  }}
"""
    head = "\n".join([_head(buffers), _ORDER_KEY,
                      _jacobi_decls(n)])
    writable = args[1:]
    plan = plan_jacobi(n, m, count, uv, b.limits)
    if plan is None:
        b.shader(HandWritten(head, frame + prepare + _jacobi(n, m, uv) + body), "svd", count,
                 THREADS, args, writable)
    else:
        b.shader(HandWritten(head, frame + prepare), "svd_prepare", count, THREADS, args,
                 writable)
        run_sweeps(b, plan, w, vt)
        b.shader(HandWritten(head, frame + body), "svd_finish", count, THREADS, args, writable)
    if uv:
        taus, qt = b.temp(4 * count * n), b.temp(4 * count * ucols * m)
        plan_householder(b, QrShape(count, n, m, n, ucols), t, taus, qt, needed)
        b.kernel(_u_kernel(count, m, n, ucols), [t, qt, needed], u_out)
    return plan


def _u_kernel(count: int, m: int, n: int, ucols: int) -> Kernel:
    """svd's u: T's rows as columns, or where a matrix needed its QR, Q's columns with
    R's diagonal signs (columns past T's rows keep theirs)."""
    size = count * m * ucols
    g = AluExp.special(GIDX, size)
    k, e = g // (m * ucols), g % (m * ucols)
    r, c = e // ucols, e % ucols
    row = c.lt(n).where(c, 0)   # T has n rows
    t = AluExp.load(0, k * (n * m) + row * m + r, F32)
    diagonal = AluExp.load(0, k * (n * m) + row * m + row, F32)
    q = AluExp.load(1, k * (ucols * m) + c * m + r, F32)
    flipped = c.lt(n).where(diagonal, 0.0).lt(0.0).where(q * -1.0, q)
    value = AluExp.load(2, k, DType.uint32).ne(0).where(flipped, t)
    return Kernel((size,), ((F32, count * n * m), (F32, count * ucols * m),
                            (DType.uint32, count)), value.simplify(), label="svd_u")


def _qr(b: "_Builder") -> None:
    (shape, dtype), = b.routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    count = math.prod(shape[:-2])
    qcols = m if b.routine.param["full_matrices"] else k
    a = b.as_f32(0, dtype, count * m * n)
    q_out, finish_q = b.f32_output(0, dtype, count * m * qcols)
    r_out, finish_r = b.f32_output(1, dtype, count * qcols * n)
    t, taus, qt = b.temp(4 * count * n * m), b.temp(4 * count * k), b.temp(4 * count * qcols * m)
    # T's rows are a's columns; r is T's upper part transposed back, q is qt transposed
    b.kernel(transpose_kernel(count, n, m, n, "qr_columns"), [a], t)
    plan = plan_householder(b, QrShape(count, n, m, k, qcols), t, taus, qt)
    b.kernel(transpose_kernel(count, qcols, n, m, "qr_r", upper=True), [t], r_out)
    b.kernel(transpose_kernel(count, m, qcols, m, "qr_q"), [qt], q_out)
    finish_q()
    finish_r()
    b.notes = {"algorithm": ("Householder QR (geqrf + orgqr) by panels",
                             "LAPACK's reflectors: the same signs as NumPy's q and r; a "
                             "workgroup per column applies each panel"),
               **plan.notes()}


PLANNERS: dict[str, Callable[["_Builder"], None]] = {"eigh": _eigh, "svd": _svd, "qr": _qr}
