"""Householder QR as passes (LAPACK's geqrf then orgqr, a panel of reflectors at a time).

A matrix's columns are T's rows (`length` long each). One workgroup per matrix makes a
panel's reflectors and applies each to the panel's later columns; then a workgroup per
later column applies the whole panel to it, so the trailing matrix is updated by as
many workgroups as it has columns. Q starts as the identity's first columns (qt's
rows) and takes the panels last first, a workgroup per column. Norms and dot products
are workgroup sums. A thread keeps the elements i = lid (mod threads) of every column
it touches, so it reads back only its own writes and the updates need no barriers.

Panels are as wide as the loop budget allows (loop_budget.py): on a software adapter,
no invocation may loop more than its shared loop counter allows.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.loop_budget import fits
from jaxlab.backends.webgpu.tune import Limits
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

F32 = DType.float32
MAX_THREADS = 256   # threads sharing one column's sums
MAX_PANEL = 32      # reflectors made by one workgroup before the trailing update
SOFTWARE_THREADS = 32   # at least, on a software adapter


@dataclass(frozen=True)
class QrShape:
    """QR of `count` matrices held as T: `rows` rows (the matrix's columns), each
    `length` long; `reflectors` of them; Q's first `q_rows` columns as qt's rows."""
    count: int
    rows: int
    length: int
    reflectors: int
    q_rows: int


@dataclass(frozen=True)
class QrPlan:
    threads: int
    panel: int

    def notes(self) -> dict[str, tuple[object, str]]:
        return {"workgroup": (self.threads, "threads share each column's norms and dot "
                                            "products (a power of two covering the column; "
                                            "fewer on a CPU, where barriers cost)"),
                "panel": (self.panel, "reflectors one workgroup makes before a workgroup per "
                                      "later column applies them (within the loop budget)")}


def _reflect_trips(length: int, threads: int) -> int:
    """Loop iterations of one reflection of a column: dot, sum tree, update."""
    return 2 * math.ceil(length / threads) + threads.bit_length() + 1


def _panel_trips(panel: int, length: int, threads: int) -> int:
    """A panel pass: per reflector its norm and scaling, then the panel's later columns."""
    one = _reflect_trips(length, threads) + 1
    return panel * one + panel * (panel - 1) // 2 * one


def plan_qr(shape: QrShape, limits: Limits) -> QrPlan:
    cap = 1 << (min(MAX_THREADS, limits.max_threads).bit_length() - 1)
    threads = min(cap, 1 << max(0, (shape.length - 1).bit_length()))
    panel = min(MAX_PANEL, shape.reflectors)
    if not limits.hardware:
        # a CPU pays for every barrier per 8 threads: the fewest threads whose loops a
        # full panel keeps within the budget
        threads = min(threads, SOFTWARE_THREADS)
        while threads < cap and not fits(_panel_trips(panel, shape.length, threads), limits):
            threads *= 2
    while panel > 1 and not fits(_panel_trips(panel, shape.length, threads), limits):
        panel -= 1
    if not fits(_panel_trips(panel, shape.length, threads), limits):
        raise NotImplementedError(
            f"qr: columns of {shape.length} elements are longer than this adapter's loop "
            f"limit allows ({threads} threads per column)")
    return QrPlan(threads, panel)


def _declarations(threads: int, buffers: list[str], needed: bool) -> str:
    lines = [f"@group(0) @binding({i}) var<storage, read_write> {name}: array<f32>;"
             for i, name in enumerate(buffers)]
    if needed:
        lines.append(f"@group(0) @binding({len(buffers)}) var<storage, read> needed: array<u32>;")
    binding = len(buffers) + int(needed)
    return "\n".join(lines) + f"""
struct Span {{
  first: u32,    // the reflectors this pass applies: first..last-1
  last: u32,
  unused0: u32,
  unused1: u32,
}}
@group(0) @binding({binding}) var<uniform> span: Span;

var<workgroup> partial: array<f32, {threads}>;
var<workgroup> skip_matrix: u32;

fn workgroup_sum(x: f32, lid: u32) -> f32 {{
  partial[lid] = x;
  workgroupBarrier();
  for (var s = {threads // 2}u; s > 0u; s >>= 1u) {{
    if (lid < s) {{ partial[lid] += partial[lid + s]; }}
    workgroupBarrier();
  }}
  let total = partial[0];
  workgroupBarrier();   // read by all before the next sum overwrites it
  return total;
}}
"""


def _skip(matrix: str) -> str:
    """Leave matrices whose `needed` flag is 0 as they are (svd's full-rank ones)."""
    return f"""  if (lid == 0u) {{ skip_matrix = u32(needed[{matrix}] == 0u); }}
  if (workgroupUniformLoad(&skip_matrix) == 1u) {{ return; }}
"""


def _reflect(column: str, length: int, threads: int) -> str:
    """column[cb..] -= tau (v . column) v, where v is reflector j (t's row at vb): 1 at
    j, t's elements below it, 0 above."""
    return f"""
    var dot = 0.0;
    for (var i = start + lid; i < {length}u; i += {threads}u) {{
      if (i >= j) {{ dot += select(t[vb + i], 1.0, i == j) * {column}[cb + i]; }}
    }}
    let d = tau * workgroup_sum(dot, lid);
    for (var i = start + lid; i < {length}u; i += {threads}u) {{
      if (i >= j) {{ {column}[cb + i] -= d * select(t[vb + i], 1.0, i == j); }}
    }}"""


def _panel_body(s: QrShape, threads: int) -> str:
    m = s.length
    return f"""  let tb = group * {s.rows * m}u;
  let ab = group * {s.reflectors}u;
  for (var j = span.first; j < span.last; j++) {{
    storageBarrier();   // the diagonal below was written by the thread that keeps it
    let vb = tb + j * {m}u;
    let start = j - j % {threads}u;
    // reflector j, LAPACK's convention (beta = -sign(alpha) |x|)
    let alpha = t[vb + j];
    var squares = 0.0;
    for (var i = start + lid; i < {m}u; i += {threads}u) {{
      if (i > j) {{ squares += t[vb + i] * t[vb + i]; }}
    }}
    let xn = workgroup_sum(squares, lid);
    var tau = 0.0;
    var scale = 1.0;
    var beta = alpha;
    if (xn != 0.0) {{
      let norm = sqrt(alpha * alpha + xn);
      beta = select(-norm, norm, alpha < 0.0);
      tau = (beta - alpha) / beta;
      scale = 1.0 / (alpha - beta);
    }}
    for (var i = start + lid; i < {m}u; i += {threads}u) {{
      if (i > j) {{ t[vb + i] *= scale; }}
    }}
    if (lid == j % {threads}u) {{ t[vb + j] = beta; }}
    if (lid == 0u) {{ taus[ab + j] = tau; }}
    // the panel's later columns
    for (var l = j + 1u; l < span.last; l++) {{
      let cb = tb + l * {m}u;{_reflect("t", m, threads)}
    }}
  }}
"""


def _update_body(s: QrShape, threads: int, q: bool, needed: bool) -> str:
    """A workgroup per (matrix, column): the trailing columns after a panel, or Q's
    columns from the panel's first on (Q's reflectors go last first)."""
    m = s.length
    if q:
        columns, first, base = f"{s.q_rows}u - span.first", "span.first", f"{s.q_rows * m}u"
        order = "span.last - 1u - (step - span.first)"
    else:
        columns, first, base = f"{s.rows}u - span.last", "span.last", f"{s.rows * m}u"
        order = "step"
    return f"""  let columns = {columns};
  let matrix = group / columns;
  let l = {first} + group % columns;
{_skip("matrix") if needed else ""}  let tb = matrix * {s.rows * m}u;
  let ab = matrix * {s.reflectors}u;
  let cb = matrix * {base} + l * {m}u;
  for (var step = span.first; step < span.last; step++) {{
    let j = {order};
    let vb = tb + j * {m}u;
    let start = j - j % {threads}u;
    let tau = taus[ab + j];{_reflect("qt" if q else "t", m, threads)}
  }}
"""


def plan_householder(b: "_Builder", s: QrShape, t: int, taus: int, qt: int,
                     needed: Optional[int] = None) -> QrPlan:
    """Passes that factor T (at buffer t) in place, reflectors' taus to `taus`, and
    write Q's first q_rows columns as qt's rows; with `needed` (a u32 per matrix),
    only the matrices flagged 1."""
    plan = plan_qr(s, b.limits)
    threads, flag = plan.threads, needed is not None
    extra = [needed] if flag else []
    panels = [(j, min(j + plan.panel, s.reflectors)) for j in range(0, s.reflectors, plan.panel)]
    factor = [t, taus, *extra]
    head = _declarations(threads, ["t", "taus"], flag)
    panel_src = HandWritten(head, (_skip("group") if flag else "") + _panel_body(s, threads))
    trailing_src = HandWritten(head, _update_body(s, threads, q=False, needed=flag))
    for first, last in panels:
        span = struct.pack("<4I", first, last, 0, 0)
        b.shader(panel_src, "qr_panel", s.count, threads, factor, [t, taus], span)
        if last < s.rows:
            b.shader(trailing_src, "qr_trailing", s.count * (s.rows - last), threads, factor,
                     [t, taus], span)
    size = s.count * s.q_rows * s.length
    e = AluExp.special(GIDX, size) % (s.q_rows * s.length)
    identity = (e // s.length).ne(e % s.length).where(AluExp.const(0.0, F32),
                                                     AluExp.const(1.0, F32))
    b.kernel(Kernel((size,), (), identity.simplify(), label="qr_identity"), [], qt)
    q_src = HandWritten(_declarations(threads, ["t", "taus", "qt"], flag),
                        _update_body(s, threads, q=True, needed=flag))
    for first, last in reversed(panels):
        span = struct.pack("<4I", first, last, 0, 0)
        b.shader(q_src, "qr_q", s.count * (s.q_rows - first), threads, [t, taus, qt, *extra],
                 [t, taus, qt], span)
    return plan


def transpose_kernel(count: int, rows: int, cols: int, x_row: int, label: str,
                     upper: bool = False) -> Kernel:
    """out[k, r, c] = x[k, c, r] for `count` rows x cols matrices out of x's, whose
    `cols` rows are `x_row` long (at least `rows`); with `upper`, 0 below the diagonal."""
    size, block = count * rows * cols, cols * x_row
    g = AluExp.special(GIDX, size)
    e = g % (rows * cols)
    r, c = e // cols, e % cols
    value = AluExp.load(0, (g // (rows * cols)) * block + c * x_row + r, F32)
    if upper:
        value = c.lt(r).where(AluExp.const(0.0, F32), value)
    return Kernel((size,), ((F32, count * block),), value.simplify(), label=label)
