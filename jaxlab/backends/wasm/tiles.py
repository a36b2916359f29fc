"""A register tile for the blocked factorizations: C -= A B^T over a short depth, with
A and B read depth-major (a transposed panel, or rows already so laid), so that every step of the
depth loop is two vector loads of B, one splat load per row of A, and a multiply-add
per accumulator; the accumulators stay in registers across the whole depth."""
from __future__ import annotations

from jaxlab.backends.wasm.vector_loops import FloatType

TILE_ROWS = 4        # rows of C per tile: one splat each per step
TILE_VECTORS = 2     # vectors of C per tile row: 4 x 2 accumulators, 2 B vectors, 1 splat


def tile_columns(ft: FloatType) -> int:
    return TILE_VECTORS * ft.lanes


def update_tile(ft: FloatType, row_bytes: int) -> str:
    """`$update_tile(c, a, b, depth, a_stride, b_stride)`: C[r][0:tile_columns] -= sum
    over d < depth of a[d][r] * b[d][0:tile_columns], for r < TILE_ROWS, where C's rows
    are `row_bytes` apart and a and b step their strides (bytes) per d."""
    t, v, size = ft.name, ft.vec, ft.size
    splat = f"v128.load{8 * size}_splat"
    accs = [(r, c) for r in range(TILE_ROWS) for c in range(TILE_VECTORS)]
    acc = lambda r, c: f"$acc{r}{c}"  # noqa: E731
    step = ([f"(local.set $b{c} (v128.load offset={16 * c} (local.get $b)))" for c in range(TILE_VECTORS)]
            + [line for r in range(TILE_ROWS) for line in
               [f"(local.set $s ({splat} offset={size * r} (local.get $a)))"]
               + [f"(local.set {acc(r, c)} ({v}.relaxed_madd (local.get $s) (local.get $b{c}) "
                  f"(local.get {acc(r, c)})))" for c in range(TILE_VECTORS)]]
            + ["(local.set $a (i32.add (local.get $a) (local.get $a_stride)))",
               "(local.set $b (i32.add (local.get $b) (local.get $b_stride)))"])
    store = [f"(v128.store offset={r * row_bytes + 16 * c} (local.get $c) ({v}.sub "
             f"(v128.load offset={r * row_bytes + 16 * c} (local.get $c)) (local.get {acc(r, c)})))"
             for r, c in accs]
    decls = " ".join(f"(local {acc(r, c)} v128)" for r, c in accs)
    return "\n".join(
        ["(func $update_tile (param $c i32) (param $a i32) (param $b i32) (param $depth i32) (param $a_stride i32) (param $b_stride i32)",
         f"  ;; C ({TILE_ROWS} rows x {tile_columns(ft)} {t}) -= A B^T, the accumulators in registers "
         "(relaxed_madd: fused where the machine fuses)",
         f"  {decls}",
         "  (local $s v128) " + " ".join(f"(local $b{c} v128)" for c in range(TILE_VECTORS)) + " (local $end i32)",
         "  (local.set $end (i32.add (local.get $a) (i32.mul (local.get $depth) (local.get $a_stride))))",
         "  (block $done (loop $steps",
         "    (br_if $done (i32.ge_u (local.get $a) (local.get $end)))"]
        + [f"    {line}" for line in step]
        + ["    (br $steps)))"] + [f"  {line}" for line in store] + [")"])
