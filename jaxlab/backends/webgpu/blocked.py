"""Blocked Cholesky and triangular solve: most of the work matmul-shaped, spread over
many workgroups, one dispatch per step covering every matrix of the batch.

Both walk the matrix in blocks of `nb` (logical) rows. A step k (rows k0..k0+bk):
  - block pass: each workgroup loads the bk x bk diagonal block into workgroup
    memory (Cholesky factors it there first, every workgroup redundantly, so no
    extra dispatch waits on one), then solves it for its 64 vectors, staged there
    too, 4 threads each and a barrier per column (Cholesky: the panel rows below the
    block, X L_kk^T = A; triangular solve: the right-hand sides);
  - update pass: C -= A B over everything after the block, tiled like a matmul
    (Cholesky: the trailing lower triangle, a SYRK; triangular solve: the later
    rows of every right-hand side, a GEMM).
A triangular solve going backwards runs the same steps on reversed indices: every
triangular system here is a lower one in logical order. Sizes are constants in
the shader text; the step (k0, bk, and how the groups split) is a uniform.
"""
from __future__ import annotations

import math
import os
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.tune import Limits
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

F32, U32 = DType.float32, DType.uint32
ENV_BLOCK = "JAXLAB_WEBGPU_LINALG_BLOCK"   # another block size, to measure
VECTORS = 64          # vectors (panel rows, right-hand sides) per block-pass workgroup
BLOCK_THREADS = 256   # threads of a block-pass workgroup: LANES per vector
LANES = BLOCK_THREADS // VECTORS
K_SLICE = 16          # block columns staged per round of the update
SIDE = 16             # the update's workgroup is SIDE x SIDE threads
# (largest n, block): small matrices in one block, larger ones in 32-row blocks. Each
# step costs a serial factor and solve of its block (a barrier per column) and two
# dispatches; measured on the H200 (benchmarks.gpu CHOL, CHOLB), 32-row blocks beat
# 64: 512x512 0.71 ms vs 0.86, (64, 256, 256) 0.48 ms vs 0.59
_BLOCKS = ((16, 16), (1 << 62, 32))

Address = Callable[[str, str], str]   # WGSL index expressions -> a WGSL element


@dataclass(frozen=True)
class BlockChoice:
    nb: int
    reason: str


def choose_block(n: int, limits: Limits) -> BlockChoice:
    """The block size for n x n matrices: from _BLOCKS (or ENV_BLOCK), a multiple of
    K_SLICE whose block and vectors fit workgroup memory."""
    text = os.environ.get(ENV_BLOCK, "")
    if text and not (text.isdigit() and int(text) % K_SLICE == 0 and int(text) > 0):
        raise ValueError(f"{ENV_BLOCK}={text!r}: expected a positive multiple of {K_SLICE}")
    nb = int(text) if text else next(b for top, b in _BLOCKS if n <= top)
    reason = f"{ENV_BLOCK}" if text else "table: one block up to 16, else 32-row blocks " \
        "(faster than 64 on the H200)"
    while _block_bytes(nb) > limits.max_shared_bytes and nb > K_SLICE:
        nb -= K_SLICE
        reason += f"; cut to {nb} to fit {limits.max_shared_bytes} bytes of workgroup memory"
    return BlockChoice(nb, reason)


def _block_bytes(nb: int) -> int:
    """Workgroup memory of a block pass: the block and its vectors, rows padded by one
    float (a column's elements then fall in different banks)."""
    return 4 * (nb + VECTORS) * (nb + 1)


PARAMS = """struct Params {
  k0: u32,       // the block's first (logical) row
  bk: u32,       // its rows
  groups: u32,   // workgroups per matrix
  tiles_n: u32,  // update tiles across
}
"""


def params(k0: int, bk: int, groups: int, tiles_n: int = 0) -> bytes:
    return struct.pack("<4I", k0, bk, groups, tiles_n)


def binding(i: int, name: str, writable: bool, kind: str = "f32") -> str:
    access = "read_write" if writable else "read"
    return f"@group(0) @binding({i}) var<storage, {access}> {name}: array<{kind}>;\n"


@dataclass(frozen=True)
class Operands:
    """How a pass finds its matrices: bindings, per-matrix bases (WGSL lines using
    `matrix`), the logical lower block M(row, col), and element e of vector v."""
    bindings: str
    bases: str
    lower: Address
    vector: Address


def block_solve(ops: Operands, nb: int, vectors: str, factor: str = "",
                unit: bool = False) -> HandWritten:
    """x_j = (c_j - sum_{c<j} M[j][c] x_c) / M[j][j] over the block's rows, for each of
    `vectors` (a WGSL expression) vectors, VECTORS a workgroup, staged in workgroup
    memory with LANES threads each; `factor` runs first on the block there (Cholesky's
    diagonal block)."""
    scale = "1.0" if unit else "1.0 / m[j * MS + j]"
    rescale = "" if unit else """
    if (j > 0u && lane == 0u) { tile[tv * MS + j - 1u] *= last_scale; }   // final now"""
    last = "" if unit else """
  if (lane == 0u) { tile[tv * MS + bk - 1u] *= last_scale; }
  workgroupBarrier();"""
    return HandWritten(f"""{ops.bindings}{PARAMS}
@group(0) @binding({ops.bindings.count('@binding')}) var<uniform> params: Params;
const NB = {nb}u;
const MS = {nb + 1}u;   // row stride of the block and of the vectors
const THREADS = {BLOCK_THREADS}u;
var<workgroup> m: array<f32, {nb * (nb + 1)}>;   // the diagonal block, lower
var<workgroup> tile: array<f32, {VECTORS * (nb + 1)}>;   // this workgroup's vectors, a row each
""", f"""  let matrix = group / params.groups;
  let part = group % params.groups;
  let k0 = params.k0;
  let bk = params.bk;
{ops.bases}
  // load the block's lower triangle (the rest is never used)
  for (var e = lid; e < bk * bk; e += THREADS) {{
    let r = e / bk;
    let c = e % bk;
    if (c <= r) {{ m[r * MS + c] = {ops.lower('k0 + r', 'k0 + c')}; }}
  }}
  workgroupBarrier();
{factor}
  let first = part * {VECTORS}u;
  let count = {vectors};
  // this workgroup's vectors, a row of tile each
  for (var e = lid; e < {VECTORS}u * bk; e += THREADS) {{
    let v = e / bk;
    if (first + v < count) {{ tile[v * MS + e % bk] = {ops.vector('first + v', 'k0 + e % bk')}; }}
  }}
  workgroupBarrier();
  let tv = lid / {LANES}u;     // this thread's vector
  let lane = lid % {LANES}u;   // and its share of the elements
  var last_scale = 1.0;
  // substitution by columns, one barrier each: element j, scaled as it is read,
  // leaves the later ones; it is scaled in place a column later, when none reads it
  for (var j = 0u; j < bk; j++) {{
    let scale = {scale};{rescale}
    let known = tile[tv * MS + j] * scale;
    // the later elements of the vector, a lane's share
    for (var c = j + 1u + lane; c < bk; c += {LANES}u) {{
      tile[tv * MS + c] -= known * m[c * MS + j];
    }}
    last_scale = scale;
    workgroupBarrier();
  }}{last}
  // the solved vectors back
  for (var e = lid; e < {VECTORS}u * bk; e += THREADS) {{
    let v = e / bk;
    if (first + v < count) {{ {ops.vector('first + v', 'k0 + e % bk')} = tile[v * MS + e % bk]; }}
  }}
""")


@dataclass(frozen=True)
class UpdateTile:
    reg_m: int   # rows per thread (strided by SIDE)
    reg_n: int   # columns per thread

    @property
    def m(self) -> int:
        return SIDE * self.reg_m

    @property
    def n(self) -> int:
        return SIDE * self.reg_n


def update_tile(cols: int) -> UpdateTile:
    """4 x 4 outputs a thread; a single column of them for few right-hand sides,
    where a wide tile would be mostly empty."""
    return UpdateTile(4, 4 if cols > SIDE else 1)


def update(bindings: str, bases: str, nb: int, tile: UpdateTile, a: Address, b: Address,
           c: Address, rows: str, cols: str, lower: bool) -> HandWritten:
    """C(i, j) -= sum_{k < nb} A(i, k) B(k, j) for i < rows, j < cols (and j <= i when
    `lower`), i and j counted from s, the first row after the block: a tile of C per
    workgroup, A's and B's slices staged in workgroup memory."""
    tm, tn = tile.m, tile.n
    cells = [(x, y) for x in range(tile.reg_m) for y in range(tile.reg_n)]
    fma = "\n".join(f"      acc[{x * tile.reg_n + y}] += sa[kk * {tm}u + ty + {SIDE * x}u] * "
                    f"sb[kk * {tn}u + tx + {SIDE * y}u];" for x, y in cells)
    above = "\n  if (ti * TM + TM <= tj * TN) { return; }   // above the diagonal" if lower else ""
    keep = " && j <= i" if lower else ""
    return HandWritten(f"""{bindings}{PARAMS}
@group(0) @binding({bindings.count('@binding')}) var<uniform> params: Params;
const TM = {tm}u;
const TN = {tn}u;
var<workgroup> sa: array<f32, {K_SLICE * tm}>;   // [k][i]
var<workgroup> sb: array<f32, {K_SLICE * tn}>;   // [k][j]
""", f"""  let matrix = group / params.groups;
  let tile = group % params.groups;
  let ti = tile / params.tiles_n;
  let tj = tile % params.tiles_n;
  let k0 = params.k0;
  let s = k0 + {nb}u;   // the first row after the block
{bases}
  let rows = {rows};
  let cols = {cols};{above}
  let tx = lid % {SIDE}u;
  let ty = lid / {SIDE}u;
  var acc: array<f32, {len(cells)}>;
  // the block's columns, a slice at a time
  for (var k = 0u; k < {nb}u; k += {K_SLICE}u) {{
    // stage A's rows and B's columns of this slice
    for (var e = lid; e < {K_SLICE * tm}u; e += {SIDE * SIDE}u) {{
      let i = ti * TM + e / {K_SLICE}u;
      var value = 0.0;
      if (i < rows) {{ value = {a('i', 'k + e % ' + str(K_SLICE) + 'u')}; }}
      sa[(e % {K_SLICE}u) * TM + e / {K_SLICE}u] = value;
    }}
    // ... and B's
    for (var e = lid; e < {K_SLICE * tn}u; e += {SIDE * SIDE}u) {{
      let j = tj * TN + e / {K_SLICE}u;
      var value = 0.0;
      if (j < cols) {{ value = {b('k + e % ' + str(K_SLICE) + 'u', 'j')}; }}
      sb[(e % {K_SLICE}u) * TN + e / {K_SLICE}u] = value;
    }}
    workgroupBarrier();
    // each thread's outer products over the slice
    for (var kk = 0u; kk < {K_SLICE}u; kk++) {{
{fma}
    }}
    workgroupBarrier();
  }}
  // each thread's outputs, strided so that neighbours write neighbours
  for (var down = 0u; down < {tile.reg_m}u; down++) {{
    // along the thread's columns
    for (var across = 0u; across < {tile.reg_n}u; across++) {{
      let i = ti * TM + ty + {SIDE}u * down;
      let j = tj * TN + tx + {SIDE}u * across;
      if (i < rows && j < cols{keep}) {{
        {c('i', 'j')} = {c('i', 'j')} - acc[down * {tile.reg_n}u + across];
      }}
    }}
  }}
""")


def _blocks(n: int, nb: int) -> list[tuple[int, int]]:
    """(k0, bk) of each step."""
    return [(k0, min(nb, n - k0)) for k0 in range(0, n, nb)]


@dataclass(frozen=True)
class Launch:
    shader: HandWritten
    label: str
    args: list[int]
    writable: list[int]


def _walk(b: "_Builder", n: int, nb: int, matrices: int, block: Launch,
          vectors: Callable[[int], int], rest: Launch, tile: UpdateTile,
          cols: Callable[[int], int]) -> None:
    """Each step's block pass (vectors(rows below) a matrix, at least one workgroup) and,
    while rows remain below it, its update pass (cols(rows below) wide)."""
    for k0, bk in _blocks(n, nb):
        below = n - k0 - bk
        groups = max(1, math.ceil(vectors(below) / VECTORS))
        b.shader(block.shader, block.label, matrices * groups, BLOCK_THREADS, block.args,
                 block.writable, params(k0, bk, groups))
        if below:
            tiles_m, tiles_n = math.ceil(below / tile.m), math.ceil(cols(below) / tile.n)
            b.shader(rest.shader, rest.label, matrices * tiles_m * tiles_n, SIDE * SIDE,
                     rest.args, rest.writable, params(k0, bk, tiles_m * tiles_n, tiles_n))


def notes(algorithm: str, how: str, block: BlockChoice, steps: int, tile: UpdateTile,
          ) -> dict[str, tuple[object, str]]:
    """The tuning record of a blocked routine."""
    return {
        "algorithm": (algorithm, how),
        "block": (block.nb, block.reason),
        "steps": (steps, "each a dispatch per pass for the whole batch"),
        "update_tile": (f"{tile.m}x{tile.n}", f"{SIDE}x{SIDE} threads, {tile.reg_m}x"
                        f"{tile.reg_n} outputs each, K staged {K_SLICE} at a time"),
    }


# --- Cholesky --------------------------------------------------------------------

_FACTOR = """  // factor the block in place, one barrier per column: column j's step scales
  // column j as it reads it (by 1 / sqrt of its pivot d) and writes the scaled
  // column j - 1, which nobody reads any more
  var previous = 1.0;
  var failed_here = false;
  let row_lane = lid / 16u;      // this thread's rows and columns of the block: 16 x 16
  let column_lane = lid % 16u;
  // the block's columns in order
  for (var j = 0u; j < bk; j++) {
    let d = m[j * MS + j];
    // a pivot <= 0 fails the matrix; a NaN one is no failure, it propagates (as potrf)
    failed_here = failed_here || ((bitcast<u32>(d) & 0x7fffffffu) <= 0x7f800000u && d <= 0.0);
    if (j > 0u) {
      let root = sqrt(previous);
      let inverse = 1.0 / root;
      // column j - 1 down from its diagonal
      for (var r = j - 1u + lid; r < bk; r += THREADS) {
        m[r * MS + j - 1u] = select(m[r * MS + j - 1u] * inverse, root, r == j - 1u);
      }
    }
    let inverse = 1.0 / sqrt(d);
    // the rest of the block loses column j's outer product, rows by row_lane
    for (var r = j + 1u + row_lane; r < bk; r += 16u) {
      let left = m[r * MS + j] * inverse;
      // along the row up to the diagonal, columns by column_lane
      for (var c = j + 1u + column_lane; c <= r; c += 16u) {
        m[r * MS + c] -= left * (m[c * MS + j] * inverse);
      }
    }
    previous = d;
    workgroupBarrier();
  }
  if (lid == 0u) { m[(bk - 1u) * MS + bk - 1u] = sqrt(previous); }
  workgroupBarrier();
  if (part == 0u) {
    // one workgroup per matrix writes the factored block (aside: the others may
    // still be reading the unfactored one) and the failure flag
    let at = (matrix * BLOCKS + k0 / NB) * NB * NB;
    // its lower triangle
    for (var e = lid; e < bk * bk; e += THREADS) {
      let r = e / bk;
      let c = e % bk;
      if (c <= r) { diagonal[at + r * NB + c] = m[r * MS + c]; }
    }
    if (lid == 0u) {
      failed[matrix] = select(0u, failed[matrix], k0 > 0u) | select(0u, 1u, failed_here);
    }
  }
"""


def plan_cholesky(b: "_Builder") -> None:
    (shape, dtype), = b.routine.inputs
    n, count = shape[-1], math.prod(shape)
    matrices = count // (n * n)
    block = choose_block(n, b.limits)
    nb = block.nb
    steps = _blocks(n, nb)
    work, failed = b.temp(4 * count), b.temp(4 * matrices)
    diagonal = b.temp(4 * matrices * len(steps) * nb * nb)   # the factored blocks
    gidx = AluExp.special(GIDX, count)
    row, col = gidx // n % n, gidx % n
    inside = col.lt(row + 1)   # on or below the diagonal
    value = AluExp.load(0, gidx, dtype)
    if b.routine.param.get("symmetrize", False):   # (a + a^T) / 2, in a's dtype as JAX's
        mirrored = AluExp.load(0, gidx // (n * n) * (n * n) + col * n + row, dtype)
        value = (value + mirrored) * AluExp.const(0.5, dtype)
    b.kernel(Kernel((count,), ((dtype, count),),
                    inside.where(value.cast(F32), 0.0).simplify(),
                    label="cholesky_lower"), [0], work)
    ops = Operands(binding(0, "l", True) + binding(1, "failed", True, "u32") +
                   binding(2, "diagonal", True),
                   f"  let base = matrix * {n * n}u;\n",
                   lambda r, c: f"l[base + ({r}) * N + {c}]",
                   lambda v, e: f"l[base + (k0 + bk + {v}) * N + {e}]")
    constants = f"const N = {n}u;\nconst BLOCKS = {len(steps)}u;\n"
    panel = block_solve(ops, nb, "N - k0 - bk", factor=_FACTOR)
    panel = HandWritten(constants + panel.declarations, panel.body)
    tile = update_tile(n)
    trailing = update(binding(0, "l", True), ops.bases, nb, tile,
                      a=lambda i, k: f"l[base + (s + {i}) * {n}u + k0 + {k}]",
                      b=lambda k, j: f"l[base + (s + {j}) * {n}u + k0 + {k}]",
                      c=lambda i, j: f"l[base + (s + {i}) * {n}u + s + {j}]",
                      rows=f"{n}u - s", cols=f"{n}u - s", lower=True)
    cells = [work, failed, diagonal]
    _walk(b, n, nb, matrices, Launch(panel, "cholesky_panel", cells, cells), lambda below: below,
          Launch(trailing, "cholesky_update", [work], [work]), tile, lambda below: below)
    # the diagonal blocks from their aside, the rest from work; as jax.lax.linalg.cholesky,
    # a failed factorization is NaN in its lower triangle
    matrix = gidx // (n * n)
    aside = ((matrix * len(steps) + row // nb) * nb + row % nb) * nb + col % nb
    factored = (row // nb).ne(col // nb).where(AluExp.load(0, gidx, F32),
                                               AluExp.load(2, aside, F32))
    value = AluExp.load(1, matrix, U32).ne(0).where(AluExp.const(math.nan, F32), factored)
    inputs = ((F32, count), (U32, matrices), (F32, matrices * len(steps) * nb * nb))
    b.kernel(Kernel((count,), inputs, inside.where(value, 0.0).cast(dtype).simplify(),
                    label="cholesky_factor"), [work, failed, diagonal], b.output(0))
    b.notes = notes("blocked right-looking Cholesky",
                     "per block: factor it and solve the panel below (many workgroups), "
                     "then a tiled SYRK update of the trailing matrix", block, len(steps), tile)


# --- triangular solve --------------------------------------------------------------

def plan_triangular_solve(b: "_Builder") -> None:
    (a_shape, dtype), (b_shape, _) = b.routine.inputs
    p = b.routine.param
    n, left = a_shape[-1], p["left_side"]
    rhs = b_shape[-1] if left else b_shape[-2]   # independent systems per matrix
    matrices, count = math.prod(a_shape[:-2]), math.prod(b_shape)
    a = b.as_f32(0, dtype, math.prod(a_shape))
    x, finish = b.f32_output(0, dtype, count)
    gidx = AluExp.special(GIDX, count)
    b.kernel(Kernel((count,), ((dtype, count),), AluExp.load(0, gidx, dtype).cast(F32),
                    label="solve_rhs"), [1], x)
    # solve t y = c per right-hand side c; x op(a) = b is op(a)^T x^T = b^T
    flipped = p["transpose_a"] if left else not p["transpose_a"]
    forward = p["lower"] != flipped    # t is lower triangular

    def phys(i: str) -> str:   # logical row i's row in memory
        return f"({i})" if forward else f"({n - 1}u - ({i}))"

    def t(row: str, col: str) -> str:
        r, c = (col, row) if flipped else (row, col)
        return f"a[abase + {phys(r)} * {n}u + {phys(c)}]"

    def element(i: str, r: str) -> str:   # logical row i of right-hand side r
        return f"x[cbase + {phys(i)} * {rhs}u + {r}]" if left else \
            f"x[cbase + ({r}) * {n}u + {phys(i)}]"

    ops = Operands(binding(0, "a", False) + binding(1, "x", True),
                   f"  let abase = matrix * {n * n}u;\n  let cbase = matrix * {n * rhs}u;\n",
                   t, lambda v, e: element(e, v))
    block = choose_block(n, b.limits)
    nb = block.nb
    solve = block_solve(ops, nb, f"{rhs}u", unit=p["unit_diagonal"])
    tile = update_tile(rhs)
    rest = update(ops.bindings, ops.bases, nb, tile, a=lambda i, k: t(f"s + {i}", f"k0 + {k}"),
                  b=lambda k, j: element(f"k0 + {k}", j),
                  c=lambda i, j: element(f"s + {i}", j),
                  rows=f"{n}u - s", cols=f"{rhs}u", lower=False)
    _walk(b, n, nb, matrices, Launch(solve, "solve_block", [a, x], [x]), lambda below: rhs,
          Launch(rest, "solve_update", [a, x], [x]), tile, lambda below: rhs)
    finish()
    b.notes = notes(f"blocked {'forward' if forward else 'back'} substitution",
                     "per block: its triangle solved for every right-hand side (a thread "
                     "each), then a tiled GEMM update of the later rows", block,
                    len(_blocks(n, nb)), tile)
