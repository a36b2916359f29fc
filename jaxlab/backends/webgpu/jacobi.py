"""One-sided Jacobi sweeps spread over many workgroups: block Jacobi, a dispatch per round.

The n rows of W (m long) are cut into blocks of `block` rows; a round pairs the blocks
by the circle method, and each pair of blocks is one workgroup that loads its 2 x block
rows into var<workgroup>, runs a whole inner sweep over them there (round-robin pairs,
`per` threads sharing each pair's dot products and rotation), and writes them back. A
sweep is blocks - 1 rounds, so every pair of rows meets once. Rotations of VT's rows
(n long, for svd) follow in global memory. Sweeps stop on the device: a flag per matrix
and sweep says whether the sweep rotated anything, and the next sweep's workgroups return
at once where it did not. Dispatches are planned for `sweeps` sweeps.
"""
from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.tune import Limits
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

MAX_BLOCK = 16          # rows per block: 2 x 16 rows of 256 floats fill 32 KiB
ENV_BLOCK = "JAXLAB_WEBGPU_JACOBI_BLOCK"   # another largest block, to measure
MAX_THREADS = 256
SWEEPS = 20             # block sweeps converge in far fewer; the rest return at once
EPS, TINY = 2.0 ** -23, 2.0 ** -126   # float32's spacing of 1 and smallest normal
_RESERVED = 4160        # workgroup bytes kept for the partial sums and flags

ROTATION = """fn rotation(alpha: f32, beta: f32, gamma: f32) -> vec3<f32> {
  // (c, s, tau) of the rotation that makes rows of norms^2 alpha, beta and inner product
  // gamma orthogonal: t = sign(zeta) / (|zeta| + sqrt(1 + zeta^2)), without overflow;
  // tau = s / (1 + c) for turn()
  let zeta = (beta - alpha) / (2.0 * gamma);
  let r = abs(zeta);
  var t = select(1.0 / (r + sqrt(1.0 + r * r)),
                 1.0 / (r * (1.0 + sqrt(1.0 + 1.0 / (r * r)))), r > 1.0);
  t = select(t, -t, zeta < 0.0);
  let c = 1.0 / sqrt(1.0 + t * t);
  let s = t * c;
  return vec3<f32>(c, s, s / (1.0 + c));
}

fn turn(g: vec3<f32>, x: f32, y: f32) -> vec2<f32> {
  // (c x - s y, s x + c y) as x - s (y + tau x), y + s (x - tau y) (Rutishauser): c
  // rounded to 1 for a small angle would lengthen both by t^2 / 2 at every rotation
  return vec2<f32>(x - g.y * (y + g.z * x), y + g.y * (x - g.z * y));
}
"""


def even_blocks(n: int, block: int) -> int:
    """Blocks of `block` rows covering n, for the round-robin circle: an even number, a
    virtual block past the last when the count is odd."""
    blocks = math.ceil(n / block)
    return blocks + blocks % 2


@dataclass(frozen=True)
class JacobiPlan:
    n: int          # rows of W (the values / vectors)
    m: int          # their length
    count: int      # matrices
    block: int      # rows per block
    per: int        # threads per pair of rows
    vectors: bool   # VT's rows are rotated too

    @property
    def blocks(self) -> int:
        return even_blocks(self.n, self.block)

    @property
    def threads(self) -> int:
        return self.block * self.per

    @property
    def rounds(self) -> int:
        return self.blocks - 1


def _largest_block() -> int:
    """MAX_BLOCK, or ENV_BLOCK's value (to measure others)."""
    text = os.environ.get(ENV_BLOCK, "")
    if not text:
        return MAX_BLOCK
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{ENV_BLOCK}={text!r}: expected a positive number of rows")
    return int(text)


def plan_jacobi(n: int, m: int, count: int, vectors: bool,
                limits: Limits) -> Optional[JacobiPlan]:
    """The block plan, or None where two rows do not fit in workgroup memory."""
    room = (limits.max_shared_bytes - _RESERVED) // (2 * 4 * m)
    block = min(_largest_block(), math.ceil(n / 2), room)
    if block < 1 or n < 2:
        return None
    width = 1 << (block - 1).bit_length()
    per = max(1, min(min(MAX_THREADS, limits.max_threads) // width, 1 << (m - 1).bit_length()))
    return JacobiPlan(n, m, count, block, per, vectors)


def _round_source(p: JacobiPlan) -> HandWritten:
    rows, pairs = 2 * p.block, p.block
    vt_binding = ("@group(0) @binding(2) var<storage, read_write> vt: array<f32>;\n"
                  if p.vectors else "")
    uniform = 3 if p.vectors else 2
    rotate_vt = f"""
        // and VT's rows, in global memory
        let vp = matrix * {p.n * p.n}u + gp * {p.n}u;
        let vq = matrix * {p.n * p.n}u + gq * {p.n}u;
        for (var k = part; k < {p.n}u; k += {p.per}u) {{
          let turned = turn(g, vt[vp + k], vt[vq + k]);
          vt[vp + k] = turned.x;
          vt[vq + k] = turned.y;
        }}""" if p.vectors else ""
    declarations = f"""@group(0) @binding(0) var<storage, read_write> w: array<f32>;
@group(0) @binding(1) var<storage, read_write> flags: array<u32>;
{vt_binding}
struct Round {{
  sweep: u32,
  round: u32,
}}
@group(0) @binding({uniform}) var<uniform> at: Round;

var<workgroup> s_rows: array<f32, {rows * p.m}>;
var<workgroup> partial: array<vec3<f32>, {p.threads}>;
var<workgroup> go: u32;
var<workgroup> rotated: atomic<u32>;

{ROTATION}
fn player(position: u32, round: u32, players: u32) -> u32 {{
  // the circle method: position 0 stays, the others turn one place a round
  if (position == 0u) {{ return 0u; }}
  return (position - 1u + round) % (players - 1u) + 1u;
}}

fn global_row(local: u32, bi: u32, bj: u32) -> u32 {{
  // the first {p.block} local rows are block bi's, the others block bj's
  return select(bj * {p.block}u + local - {p.block}u, bi * {p.block}u + local, local < {p.block}u);
}}
"""
    body = f"""  let matrix = group / {p.blocks // 2}u;
  let flag = matrix * {SWEEPS + 1}u + at.sweep;
  // a sweep that rotated nothing ended the iteration: later ones do nothing
  if (lid == 0u) {{
    go = select(flags[flag], 1u, at.sweep == 0u);
    atomicStore(&rotated, 0u);
  }}
  if (workgroupUniformLoad(&go) == 0u) {{ return; }}
  let position = group % {p.blocks // 2}u;
  let bi = player(position, at.round, {p.blocks}u);
  let bj = player({p.blocks - 1}u - position, at.round, {p.blocks}u);
  let base = matrix * {p.n * p.m}u;
  // the two blocks' rows into workgroup memory (rows past n are zero: never rotated)
  for (var e = lid; e < {rows * p.m}u; e += {p.threads}u) {{
    let r = global_row(e / {p.m}u, bi, bj);
    s_rows[e] = select(0.0, w[base + min(r, {p.n - 1}u) * {p.m}u + e % {p.m}u], r < {p.n}u);
  }}
  workgroupBarrier();
  let pair = lid / {p.per}u;
  let part = lid % {p.per}u;
  // an inner sweep: every pair of the {rows} rows once, {pairs} pairs a round
  for (var inner = 0u; inner < {rows - 1}u; inner++) {{
    let lp = player(pair, inner, {rows}u);
    let lq = player({rows - 1}u - pair, inner, {rows}u);
    // this thread's share of the pair's norms and inner product
    var sums = vec3<f32>(0.0);
    for (var k = part; k < {p.m}u; k += {p.per}u) {{
      let x = s_rows[lp * {p.m}u + k];
      let y = s_rows[lq * {p.m}u + k];
      sums += vec3<f32>(x * x, y * y, x * y);
    }}
    partial[lid] = sums;
    workgroupBarrier();
    var total = vec3<f32>(0.0);
    for (var t = 0u; t < {p.per}u; t++) {{ total += partial[pair * {p.per}u + t]; }}
    let alpha = total.x;
    let beta = total.y;
    let gamma = total.z;
    if (abs(gamma) > {EPS!r} * sqrt(alpha) * sqrt(beta) && abs(gamma) > {TINY!r}) {{
      let g = rotation(alpha, beta, gamma);
      for (var k = part; k < {p.m}u; k += {p.per}u) {{
        let turned = turn(g, s_rows[lp * {p.m}u + k], s_rows[lq * {p.m}u + k]);
        s_rows[lp * {p.m}u + k] = turned.x;
        s_rows[lq * {p.m}u + k] = turned.y;
      }}
      let gp = global_row(lp, bi, bj);
      let gq = global_row(lq, bi, bj);{rotate_vt}
      if (part == 0u) {{ atomicStore(&rotated, 1u); }}
    }}
    {'storageBarrier();' if p.vectors else ''}
    workgroupBarrier();
  }}
  for (var e = lid; e < {rows * p.m}u; e += {p.threads}u) {{
    let r = global_row(e / {p.m}u, bi, bj);
    if (r < {p.n}u) {{ w[base + r * {p.m}u + e % {p.m}u] = s_rows[e]; }}
  }}
  if (lid == 0u && atomicLoad(&rotated) != 0u) {{ flags[flag + 1u] = 1u; }}
"""
    return HandWritten(declarations, body)


def run_sweeps(b: "_Builder", p: JacobiPlan, w: int, vt: Optional[int]) -> None:
    """The passes that orthogonalise W's rows (at buffer w; VT's at vt for svd)."""
    flags = b.temp(4 * p.count * (SWEEPS + 1))
    size = p.count * (SWEEPS + 1)
    b.kernel(Kernel((size,), (), AluExp.const(0, DType.uint32), label="jacobi_flags"), [],
             flags)
    source = _round_source(p)
    args = [w, flags] + ([vt] if p.vectors else [])
    for sweep in range(SWEEPS):
        for r in range(p.rounds):
            b.shader(source, "jacobi_round", p.count * (p.blocks // 2), p.threads, args, args,
                     struct.pack("<2I", sweep, r))


def notes(p: JacobiPlan) -> dict:
    return {
        "algorithm": ("block one-sided Jacobi, a workgroup per pair of blocks per round",
                      "the circle method pairs blocks; each workgroup sweeps its two blocks' "
                      "rows in workgroup memory"),
        "block": (p.block, f"rows per block: 2 blocks of {p.m} floats fit workgroup memory"
                           + (f" ({ENV_BLOCK} set)" if os.environ.get(ENV_BLOCK) else "")),
        "dispatches": (SWEEPS * p.rounds, f"{p.rounds} rounds a sweep, {SWEEPS} sweeps planned; "
                                          "a sweep after one that rotated nothing returns at "
                                          "once"),
        "workgroup": (p.threads, f"{p.per} threads share each pair's dot products"),
    }
