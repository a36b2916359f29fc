"""A register tile for the blocked factorizations: C -= A B^T over a short depth, with
A and B read depth-major (a transposed panel, or rows already so laid), so that every step of the
depth loop is two vector loads of B, A's values for the tile's rows in whole vectors (each
spread over the lanes by a shuffle), and a multiply-add per accumulator; the accumulators
stay in registers across the whole depth."""
from __future__ import annotations

from jaxlab.backends.wasm.vector_loops import FloatType

TILE_ROWS = 4        # rows of C per tile: one vector of A a step (f32), a lane spread per row
TILE_VECTORS = 2     # vectors of C per tile row: 4 x 2 accumulators, 2 B vectors, A, 1 spread


def tile_columns(ft: FloatType) -> int:
    return TILE_VECTORS * ft.lanes


def update_tile(ft: FloatType, row_bytes: int) -> str:
    """`$update_tile(c, a, b, depth, a_stride, b_stride)`: C[r][0:tile_columns] -= sum
    over d < depth of a[d][r] * b[d][0:tile_columns], for r < TILE_ROWS, where C's rows
    are `row_bytes` apart and a and b step their strides (bytes) per d."""
    t, v, size = ft.name, ft.vec, ft.size
    a_vectors = TILE_ROWS // ft.lanes   # A's values of one step: contiguous, whole vectors
    accs = [(r, c) for r in range(TILE_ROWS) for c in range(TILE_VECTORS)]
    acc = lambda r, c: f"$acc{r}{c}"  # noqa: E731
    step = ([f"(local.set $b{c} (v128.load offset={16 * c} (local.get $b)))" for c in range(TILE_VECTORS)]
            + [f"(local.set $a{k} (v128.load offset={16 * k} (local.get $a)))" for k in range(a_vectors)]
            + [line for r in range(TILE_ROWS) for line in
               [f"(local.set $s {_lane_splat(ft, f'(local.get $a{r // ft.lanes})', r % ft.lanes)})"]
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
         "  (local $s v128) " + " ".join(f"(local $b{c} v128)" for c in range(TILE_VECTORS))
         + "".join(f" (local $a{k} v128)" for k in range(a_vectors)) + " (local $end i32)",
         "  (local.set $end (i32.add (local.get $a) (i32.mul (local.get $depth) (local.get $a_stride))))",
         "  (block $done (loop $steps",
         "    (br_if $done (i32.ge_u (local.get $a) (local.get $end)))"]
        + [f"    {line}" for line in step]
        + ["    (br $steps)))"] + [f"  {line}" for line in store] + [")"])


def _lane_splat(ft: FloatType, vector: str, lane: int) -> str:
    """Lane `lane` of `vector` in every lane: one shuffle (pshufd), where a splat load is
    a scalar load, a move to a vector register and a broadcast under Cranelift."""
    lane_bytes = [lane * ft.size + i for i in range(ft.size)] * ft.lanes
    return f"(i8x16.shuffle {' '.join(map(str, lane_bytes))} {vector} {vector})"
