"""eigh's refinement on A itself (Rayleigh-Ritz), spread over many workgroups.

The one-sided sweeps run on B = A + 2|A|_F I, whose eigenvalues are A's moved to one
scale: its orthogonalised rows V are A's eigenvectors only to eps |B| / gap. Here
C = V A V^T (two tiled products of rows) is diagonal but for entries of that order, and
block two-sided Jacobi removes them, rotating V's rows alike: vectors to eps |A| / gap
(LAPACK's accuracy), values C's diagonal.

A round pairs the blocks of `block` rows by the circle method. Pass one: a workgroup per
pair of blocks sweeps C's tile of their rows and columns once in workgroup memory
(parallel two-sided Jacobi, `block` pairs a round, a thread per 2x2 block of the tile),
writes the tile back and its accumulated rotation J. Pass two: every other tile of C
becomes J_P C[P, Q] J_Q^T and V's rows J_P V[P, :], a workgroup per tile. One sweep of
a tile is enough: C is nearly diagonal, and the next outer sweep meets its pairs again.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.jacobi import EPS, ROTATION, TINY, even_blocks
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

MAX_BLOCK = 16      # rows per block: a pair's tile is 32 x 32, three of them fit 16 KiB
THREADS = 256       # a thread per 2x2 block of a 32 x 32 tile
SWEEPS = 3          # C starts diagonal to eps |B|: one or two sweeps converge, one confirms
PRODUCT_TILE = 16   # the products' output tiles (16 x 16, a thread each)


@dataclass(frozen=True)
class RefinePlan:
    n: int          # order of A
    count: int      # matrices
    block: int      # rows per block

    @property
    def blocks(self) -> int:
        return even_blocks(self.n, self.block)

    @property
    def pairs(self) -> int:
        return self.blocks // 2

    @property
    def width(self) -> int:
        return 2 * self.block

    @property
    def chunks(self) -> int:
        """V's columns in tiles of `width`."""
        return math.ceil(self.n / self.width)


def plan_refine(n: int, count: int) -> RefinePlan:
    return RefinePlan(n, count, min(MAX_BLOCK, max(1, math.ceil(n / 2))))


def _rows_times_rows(n: int) -> HandWritten:
    """out = x y^T for n x n matrices of rows: out[r][c] = x_r . y_c, a thread per
    output of a 16 x 16 tile, the rows staged through workgroup memory 16 columns at
    a time."""
    t = PRODUCT_TILE
    tiles = math.ceil(n / t)
    declarations = f"""@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> xs: array<f32, {t * t}>;
var<workgroup> ys: array<f32, {t * t}>;
"""
    body = f"""  let base = (group / {tiles * tiles}u) * {n * n}u;
  let r0 = (group / {tiles}u % {tiles}u) * {t}u;
  let c0 = (group % {tiles}u) * {t}u;
  let i = lid / {t}u;
  let k = lid % {t}u;
  var total = 0.0;
  for (var k0 = 0u; k0 < {n}u; k0 += {t}u) {{
    // x's rows r0.. and y's rows c0.., columns k0..k0+{t - 1} (zero past the edge)
    let inside = k0 + k < {n}u;
    xs[lid] = select(0.0, x[base + min(r0 + i, {n - 1}u) * {n}u + min(k0 + k, {n - 1}u)],
                     inside && r0 + i < {n}u);
    ys[lid] = select(0.0, y[base + min(c0 + i, {n - 1}u) * {n}u + min(k0 + k, {n - 1}u)],
                     inside && c0 + i < {n}u);
    workgroupBarrier();
    for (var e = 0u; e < {t}u; e++) {{ total += xs[i * {t}u + e] * ys[k * {t}u + e]; }}
    workgroupBarrier();
  }}
  if (r0 + i < {n}u && c0 + k < {n}u) {{ out[base + (r0 + i) * {n}u + c0 + k] = total; }}
"""
    return HandWritten(declarations, body)


_CIRCLE = """
fn player(position: u32, round: u32, players: u32) -> u32 {
  // the circle method: position 0 stays, the others turn one place a round
  if (position == 0u) { return 0u; }
  return (position - 1u + round) % (players - 1u) + 1u;
}
"""


def _circle(p: RefinePlan) -> str:
    return _CIRCLE + f"""
fn global_row(local: u32, bi: u32, bj: u32) -> u32 {{
  // a pair's tile: its first {p.block} rows are block bi's, the others block bj's
  return select(bj * {p.block}u + local - {p.block}u, bi * {p.block}u + local, local < {p.block}u);
}}

fn pair_blocks(position: u32, round: u32) -> vec2<u32> {{
  return vec2<u32>(player(position, round, {p.blocks}u),
                   player({p.blocks - 1}u - position, round, {p.blocks}u));
}}
"""


_ROUND = """struct Round {
  sweep: u32,
  round: u32,
}
"""


def _rotations_source(p: RefinePlan) -> HandWritten:
    w, b, n = p.width, p.block, p.n
    declarations = f"""@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@group(0) @binding(1) var<storage, read_write> rots: array<f32>;
@group(0) @binding(2) var<storage, read_write> moved: array<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<u32>;
{_ROUND}@group(0) @binding(4) var<uniform> at: Round;

var<workgroup> s: array<f32, {w * w}>;
var<workgroup> j: array<f32, {w * w}>;
var<workgroup> cs: array<vec3<f32>, {b}>;
var<workgroup> rows: array<vec2<u32>, {b}>;
var<workgroup> go: u32;
var<workgroup> largest: atomic<u32>;
var<workgroup> rotated: atomic<u32>;

{ROTATION}{_circle(p)}"""
    body = f"""  let matrix = group / {p.pairs}u;
  let position = group % {p.pairs}u;
  let flag = matrix * {SWEEPS + 1}u + at.sweep;
  // a sweep after one that rotated nothing does nothing
  if (lid == 0u) {{
    go = select(flags[flag], 1u, at.sweep == 0u);
    atomicStore(&largest, 0u);
    atomicStore(&rotated, 0u);
  }}
  if (workgroupUniformLoad(&go) == 0u) {{ return; }}
  let blocks = pair_blocks(position, at.round);
  let base = matrix * {n * n}u;
  // the bound: eps max |c_kk| (non-negative floats order as their bits)
  for (var k = lid; k < {n}u; k += {THREADS}u) {{
    atomicMax(&largest, bitcast<u32>(abs(c[base + k * {n + 1}u])));
  }}
  // the tile of the pair's rows and columns (zero past n: never rotated); J <- I
  for (var e = lid; e < {w * w}u; e += {THREADS}u) {{
    let r = global_row(e / {w}u, blocks.x, blocks.y);
    let col = global_row(e % {w}u, blocks.x, blocks.y);
    s[e] = select(0.0, c[base + min(r, {n - 1}u) * {n}u + min(col, {n - 1}u)],
                  r < {n}u && col < {n}u);
    j[e] = select(0.0, 1.0, e / {w}u == e % {w}u);
  }}
  workgroupBarrier();
  let bound = {EPS!r} * bitcast<f32>(atomicLoad(&largest));
  // one sweep over the tile's pairs (the next outer sweep meets them again)
  for (var inner = 0u; inner < {w - 1}u; inner++) {{
    // each pair of this round: its rows and rotation (the identity if small enough)
    if (lid < {b}u) {{
      let lp = player(lid, inner, {w}u);
      let lq = player({w - 1}u - lid, inner, {w}u);
      let gamma = s[lp * {w}u + lq];
      var r = vec3<f32>(1.0, 0.0, 0.0);
      if (abs(gamma) > bound && abs(gamma) > {TINY!r}) {{
        r = rotation(s[lp * {w + 1}u], s[lq * {w + 1}u], gamma);
        atomicStore(&rotated, 1u);
      }}
      cs[lid] = r;
      rows[lid] = vec2<u32>(lp, lq);
    }}
    workgroupBarrier();
    // s <- G s G^T, a thread per 2x2 block (pairs P, Q): G_P s[P, Q] G_Q^T
    for (var e = lid; e < {b * b}u; e += {THREADS}u) {{
      let bp = e / {b}u;
      let bq = e % {b}u;
      let gp = cs[bp];
      let gq = cs[bq];
      let rp = rows[bp];
      let rq = rows[bq];
      let x = s[rp.x * {w}u + rq.x];
      let y = s[rp.x * {w}u + rq.y];
      let z = s[rp.y * {w}u + rq.x];
      let v = s[rp.y * {w}u + rq.y];
      // rows, then columns
      let left = turn(gp, x, z);
      let right = turn(gp, y, v);
      let top = turn(gq, left.x, right.x);
      let bottom = turn(gq, left.y, right.y);
      var off = 1.0;
      if (bp == bq && gp.y != 0.0) {{ off = 0.0; }}   // the block rotated diagonal: exactly
      s[rp.x * {w}u + rq.x] = top.x;
      s[rp.x * {w}u + rq.y] = off * top.y;
      s[rp.y * {w}u + rq.x] = off * bottom.x;
      s[rp.y * {w}u + rq.y] = bottom.y;
    }}
    // J <- G J: rows p and q of J, a thread per column of a pair
    for (var e = lid; e < {b * w}u; e += {THREADS}u) {{
      let g = cs[e / {w}u];
      let r = rows[e / {w}u];
      let k = e % {w}u;
      let turned = turn(g, j[r.x * {w}u + k], j[r.y * {w}u + k]);
      j[r.x * {w}u + k] = turned.x;
      j[r.y * {w}u + k] = turned.y;
    }}
    workgroupBarrier();
  }}
  // the tile back into C (no other workgroup reads it this round), J for the next pass
  for (var e = lid; e < {w * w}u; e += {THREADS}u) {{
    let r = global_row(e / {w}u, blocks.x, blocks.y);
    let col = global_row(e % {w}u, blocks.x, blocks.y);
    if (r < {n}u && col < {n}u) {{ c[base + r * {n}u + col] = s[e]; }}
    rots[group * {w * w}u + e] = j[e];
  }}
  if (lid == 0u) {{
    let any = atomicLoad(&rotated);
    moved[group] = any;
    if (any != 0u) {{ flags[flag + 1u] = 1u; }}
  }}
"""
    return HandWritten(declarations, body)


def _apply_source(p: RefinePlan) -> HandWritten:
    """C's other tiles <- J_P C[P, Q] J_Q^T and V's rows <- J_P V[P, :]: first
    pairs x (pairs - 1) workgroups for C, then pairs x chunks for V."""
    w, n = p.width, p.n
    c_tiles = p.pairs * (p.pairs - 1)
    declarations = f"""@group(0) @binding(0) var<storage, read_write> c: array<f32>;
@group(0) @binding(1) var<storage, read_write> v: array<f32>;
@group(0) @binding(2) var<storage, read> rots: array<f32>;
@group(0) @binding(3) var<storage, read> moved: array<u32>;
@group(0) @binding(4) var<storage, read> flags: array<u32>;
{_ROUND}@group(0) @binding(5) var<uniform> at: Round;

var<workgroup> go: u32;
var<workgroup> tile: array<f32, {w * w}>;
var<workgroup> left: array<f32, {w * w}>;
var<workgroup> right: array<f32, {w * w}>;
{_circle(p)}"""
    each = math.ceil(w * w / THREADS)
    body = f"""  let matrix = group / {c_tiles + p.pairs * p.chunks}u;
  let item = group % {c_tiles + p.pairs * p.chunks}u;
  let flag = matrix * {SWEEPS + 1}u + at.sweep;
  let is_c = item < {c_tiles}u;
  // C's tile (P, Q), Q != P; or V's rows of pair P, columns chunk * {w}..
  var pp = item / {max(p.pairs - 1, 1)}u;
  var pq = item % {max(p.pairs - 1, 1)}u;
  pq += select(0u, 1u, pq >= pp);
  let chunk = (item - {c_tiles}u) % {p.chunks}u;
  if (!is_c) {{ pp = (item - {c_tiles}u) / {p.chunks}u; }}
  let first = matrix * {p.pairs}u;
  // nothing to do after a sweep that rotated nothing, or where J_P = J_Q = I
  if (lid == 0u) {{
    let moved_q = is_c && moved[first + pq] != 0u;
    go = select(0u, 1u, (at.sweep == 0u || flags[flag] != 0u) && (moved[first + pp] != 0u || moved_q));
  }}
  if (workgroupUniformLoad(&go) == 0u) {{ return; }}
  let bp = pair_blocks(pp, at.round);
  let bq = pair_blocks(pq, at.round);
  let base = matrix * {n * n}u;
  for (var e = lid; e < {w * w}u; e += {THREADS}u) {{
    let r = global_row(e / {w}u, bp.x, bp.y);
    var col = chunk * {w}u + e % {w}u;
    if (is_c) {{ col = global_row(e % {w}u, bq.x, bq.y); }}
    let inside = r < {n}u && col < {n}u;
    let at_ = base + min(r, {n - 1}u) * {n}u + min(col, {n - 1}u);
    tile[e] = select(0.0, select(v[at_], c[at_], is_c), inside);
    left[e] = rots[(first + pp) * {w * w}u + e];
    right[e] = select(0.0, rots[(first + pq) * {w * w}u + e], is_c);
  }}
  workgroupBarrier();
  // tile <- J_P tile (each thread {each} entries, kept until every read is done)
  var done: array<f32, {each}>;
  for (var t = 0u; t < {each}u; t++) {{
    let e = min(lid + t * {THREADS}u, {w * w - 1}u);
    var total = 0.0;
    for (var k = 0u; k < {w}u; k++) {{ total += left[(e / {w}u) * {w}u + k] * tile[k * {w}u + e % {w}u]; }}
    done[t] = total;
  }}
  workgroupBarrier();
  for (var t = 0u; t < {each}u; t++) {{ if (lid + t * {THREADS}u < {w * w}u) {{ tile[lid + t * {THREADS}u] = done[t]; }} }}
  workgroupBarrier();
  if (is_c) {{
    // tile <- tile J_Q^T
    for (var t = 0u; t < {each}u; t++) {{
      let e = min(lid + t * {THREADS}u, {w * w - 1}u);
      var total = 0.0;
      for (var k = 0u; k < {w}u; k++) {{ total += tile[(e / {w}u) * {w}u + k] * right[(e % {w}u) * {w}u + k]; }}
      done[t] = total;
    }}
  }}
  for (var t = 0u; t < {each}u; t++) {{
    let e = lid + t * {THREADS}u;
    if (e >= {w * w}u) {{ continue; }}
    let r = global_row(e / {w}u, bp.x, bp.y);
    if (is_c) {{
      let col = global_row(e % {w}u, bq.x, bq.y);
      if (r < {n}u && col < {n}u) {{ c[base + r * {n}u + col] = done[t]; }}
    }} else {{
      let col = chunk * {w}u + e % {w}u;
      if (r < {n}u && col < {n}u) {{ v[base + r * {n}u + col] = done[t]; }}
    }}
  }}
"""
    return HandWritten(declarations, body)


def refine(b: "_Builder", p: RefinePlan, sym: int, v: int, c: int) -> None:
    """The passes that take V's orthonormal rows (at v) to A's eigenvectors (A at sym,
    symmetric), leaving C = V A V^T diagonal (at c)."""
    tiles = math.ceil(p.n / PRODUCT_TILE) ** 2
    t = b.temp(4 * p.count * p.n * p.n)
    product = _rows_times_rows(p.n)
    b.shader(product, "eigh_times_a", p.count * tiles, PRODUCT_TILE ** 2, [v, sym, t], [t])
    b.shader(product, "eigh_project", p.count * tiles, PRODUCT_TILE ** 2, [v, t, c], [c])
    rots = b.temp(4 * p.count * p.pairs * p.width * p.width)
    moved = b.temp(4 * p.count * p.pairs)
    flags = b.temp(4 * p.count * (SWEEPS + 1))
    b.kernel(Kernel((p.count * (SWEEPS + 1),), (), AluExp.const(0, DType.uint32),
                    label="refine_flags"), [], flags)
    rotations, apply_ = _rotations_source(p), _apply_source(p)
    applies = p.count * (p.pairs * (p.pairs - 1) + p.pairs * p.chunks)
    for sweep in range(SWEEPS):
        for r in range(p.blocks - 1):
            params = struct.pack("<2I", sweep, r)
            args = [c, rots, moved, flags]
            b.shader(rotations, "eigh_refine_tiles", p.count * p.pairs, THREADS, args, args,
                     params)
            args = [c, v, rots, moved, flags]
            b.shader(apply_, "eigh_refine_apply", applies, THREADS, args, [c, v], params)


def notes(p: RefinePlan) -> dict:
    return {
        "refinement": ("Rayleigh-Ritz: block two-sided Jacobi on V A V^T",
                       "the shift compresses A's eigenvalue gaps, so the one-sided sweeps "
                       "leave vectors to eps |B| / gap; rotating them on A itself gives "
                       "eps |A| / gap, as LAPACK"),
        "refine_block": (p.block, f"rows per block: a pair's {p.width}x{p.width} tile of C, "
                                  "its rotation and a tile of V fit workgroup memory"),
        "refine_dispatches": (2 * SWEEPS * (p.blocks - 1),
                              f"{p.blocks - 1} rounds of two passes a sweep, {SWEEPS} sweeps "
                              "planned (C starts nearly diagonal); a sweep after one that "
                              "rotated nothing returns at once"),
    }
