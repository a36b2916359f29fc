"""LU with partial pivoting in blocks of columns (getrf's order), as WGSL passes.

A step k (columns k0..k0+bk), every matrix of the batch in each dispatch:
  - panel: a workgroup per matrix factors the m - k0 rows of the block's columns,
    column by column: the pivot by a tree over the threads (the first largest |value|,
    a NaN first, as argmax), the swap within the block, the multipliers, and the
    block's later columns updated (the pivots and permutation recorded as it goes);
  - swaps: the block's row swaps applied, in order, to every other column (a thread each);
  - the rows of U right of the block: L11 (unit lower) solved for each column
    (blocked.block_solve);
  - the trailing matrix loses L21 U12, tiled like a matmul (blocked.update).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from jaxlab.backends.webgpu.blocked import (BLOCK_THREADS, PARAMS, SIDE, VECTORS, Operands,
                                            binding, block_solve, choose_block, notes,
                                            params, update, update_tile)
from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

F32 = DType.float32
PANEL_THREADS = 256
SWAP_THREADS = 64    # columns a workgroup of the swaps pass


def _panel(m: int, n: int, k: int) -> HandWritten:
    return HandWritten(f"""{binding(0, "lu", True)}{binding(1, "pivots", True, "i32")}\
{binding(2, "perm", True, "i32")}{PARAMS}
@group(0) @binding(3) var<uniform> params: Params;
const M = {m}u;
const N = {n}u;
const THREADS = {PANEL_THREADS}u;
var<workgroup> best_value: array<f32, {PANEL_THREADS}>;
var<workgroup> best_row: array<u32, {PANEL_THREADS}>;

fn isnan_f32(x: f32) -> bool {{
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}}

fn beats(v: f32, r: u32, w: f32, s: u32) -> bool {{
  // |value| v at row r before w at row s: a NaN first, then the larger, then the first row
  if (isnan_f32(v) != isnan_f32(w)) {{ return isnan_f32(v); }}
  if (!isnan_f32(v) && v != w) {{ return v > w; }}
  return r < s;
}}
""", f"""  let matrix = group;
  let base = matrix * M * N;
  let k0 = params.k0;
  let end = k0 + params.bk;
  if (k0 == 0u) {{
    // the permutation starts as the identity
    for (var r = lid; r < M; r += THREADS) {{ perm[matrix * M + r] = i32(r); }}
  }}
  // the block's columns in order
  for (var j = k0; j < end; j++) {{
    var value = abs(lu[base + j * N + j]);
    var row = j;
    // this thread's best row of column j at or below the diagonal
    for (var r = j + lid; r < M; r += THREADS) {{
      let v = abs(lu[base + r * N + j]);
      if (beats(v, r, value, row)) {{
        value = v;
        row = r;
      }}
    }}
    best_value[lid] = value;
    best_row[lid] = row;
    workgroupBarrier();
    // a tree: each half of the threads keeps the better of two
    for (var half = THREADS / 2u; half > 0u; half /= 2u) {{
      if (lid < half && beats(best_value[lid + half], best_row[lid + half], best_value[lid],
                              best_row[lid])) {{
        best_value[lid] = best_value[lid + half];
        best_row[lid] = best_row[lid + half];
      }}
      workgroupBarrier();
    }}
    let p = best_row[0];
    if (lid == 0u) {{
      pivots[matrix * {k}u + j] = i32(p);
      let moved = perm[matrix * M + j];
      perm[matrix * M + j] = perm[matrix * M + p];
      perm[matrix * M + p] = moved;
    }}
    // swap rows j and p in the block's columns (the swaps pass does the others)
    for (var c = k0 + lid; c < end; c += THREADS) {{
      let v = lu[base + j * N + c];
      lu[base + j * N + c] = lu[base + p * N + c];
      lu[base + p * N + c] = v;
    }}
    storageBarrier();
    let pivot = lu[base + j * N + j];
    // multipliers below the pivot; a zero or NaN pivot leaves them as they are (as JAX)
    for (var r = j + 1u + lid; r < M; r += THREADS) {{
      let v = lu[base + r * N + j];
      lu[base + r * N + j] = select(v, v / pivot, pivot != 0.0 && !isnan_f32(pivot));
    }}
    storageBarrier();
    let width = end - j - 1u;
    // the block's later columns lose multiplier * pivot row, an element a thread
    for (var e = lid; e < (M - j - 1u) * width; e += THREADS) {{
      let r = j + 1u + e / width;
      let c = j + 1u + e % width;
      lu[base + r * N + c] -= lu[base + r * N + j] * lu[base + j * N + c];
    }}
    storageBarrier();
  }}
""")


def _swaps(m: int, n: int, k: int) -> HandWritten:
    return HandWritten(f"""{binding(0, "lu", True)}{binding(1, "pivots", False, "i32")}{PARAMS}
@group(0) @binding(2) var<uniform> params: Params;
""", f"""  let matrix = group / params.groups;
  let v = (group % params.groups) * {SWAP_THREADS}u + lid;
  let k0 = params.k0;
  let bk = params.bk;
  if (v >= {n}u - bk) {{ return; }}
  let c = select(v + bk, v, v < k0);   // every column but the block's
  let base = matrix * {m * n}u;
  // the block's row swaps, in order
  for (var j = k0; j < k0 + bk; j++) {{
    let p = u32(pivots[matrix * {k}u + j]);
    let held = lu[base + j * {n}u + c];
    lu[base + j * {n}u + c] = lu[base + p * {n}u + c];
    lu[base + p * {n}u + c] = held;
  }}
""")


def plan_lu(b: "_Builder") -> None:
    (shape, dtype), = b.routine.inputs
    m, n = shape[-2:]
    k, count = min(m, n), math.prod(shape)
    matrices = count // (m * n)
    lu, finish = b.f32_output(0, dtype, count)
    gidx = AluExp.special(GIDX, count)
    b.kernel(Kernel((count,), ((dtype, count),), AluExp.load(0, gidx, dtype).cast(F32),
                    label="lu_copy"), [0], lu)
    block = choose_block(k, b.limits)
    nb = block.nb
    pivots, perm = b.output(1), b.output(2)
    ops = Operands(binding(0, "lu", True), f"  let base = matrix * {m * n}u;\n",
                   lambda r, c: f"lu[base + ({r}) * {n}u + {c}]",
                   lambda v, e: f"lu[base + ({e}) * {n}u + k0 + bk + {v}]")
    panel, swaps = _panel(m, n, k), _swaps(m, n, k)
    right_of = block_solve(ops, nb, f"{n}u - k0 - bk", unit=True)
    tile = update_tile(n)
    trailing = update(ops.bindings, ops.bases, nb, tile,
                      a=lambda i, c: f"lu[base + (s + {i}) * {n}u + k0 + {c}]",
                      b=lambda c, j: f"lu[base + (k0 + {c}) * {n}u + s + {j}]",
                      c=lambda i, j: f"lu[base + (s + {i}) * {n}u + s + {j}]",
                      rows=f"{m}u - s", cols=f"{n}u - s", lower=False)
    steps = [(k0, min(nb, k - k0)) for k0 in range(0, k, nb)]
    for k0, bk in steps:
        b.shader(panel, "lu_panel", matrices, PANEL_THREADS, [lu, pivots, perm],
                 [lu, pivots, perm], params(k0, bk, 1))
        below, right = m - k0 - bk, n - k0 - bk
        if n > bk:
            groups = math.ceil((n - bk) / SWAP_THREADS)
            b.shader(swaps, "lu_swaps", matrices * groups, SWAP_THREADS, [lu, pivots], [lu],
                     params(k0, bk, groups))
        if right:
            groups = math.ceil(right / VECTORS)
            b.shader(right_of, "lu_solve", matrices * groups, BLOCK_THREADS, [lu], [lu],
                     params(k0, bk, groups))
        if right and below:
            tiles_m, tiles_n = math.ceil(below / tile.m), math.ceil(right / tile.n)
            b.shader(trailing, "lu_update", matrices * tiles_m * tiles_n, SIDE * SIDE, [lu],
                     [lu], params(k0, bk, tiles_m * tiles_n, tiles_n))
    finish()
    b.notes = notes("blocked LU with partial pivoting",
                    "per block of columns: the panel (pivots found by a tree over the "
                    "threads), the swaps on the other columns, U's rows by a triangular "
                    "solve, and a tiled GEMM update of the trailing matrix", block,
                    len(steps), tile)
