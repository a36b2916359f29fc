"""sort and argsort along the last axis as WebAssembly text: a stable LSD radix sort
of (key, index) pairs, 8 bits a pass, on 32-bit keys whose unsigned order is NumPy's
sort order (floats: sign-flipped bits, -0 as +0, every NaN last)."""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import Body, Fn, get, i32, layout
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

KEYED = (DType.float32, DType.int32, DType.uint32)   # 4-byte values: one 32-bit key each


def _key(dtype: DType) -> str:
    """The key of the bits in $bits."""
    b = "(local.get $bits)"
    if dtype is DType.int32:
        return f"(i32.xor {b} (i32.const 0x80000000))"
    if dtype is DType.uint32:
        return b
    magnitude = f"(i32.and {b} (i32.const 0x7fffffff))"
    ordered = f"(select (i32.xor {b} (i32.const -1)) (i32.or {b} (i32.const 0x80000000)) (i32.lt_s {b} (i32.const 0)))"
    signed_zero = f"(select (i32.const 0x80000000) {ordered} (i32.eqz {magnitude}))"
    return f"(select (i32.const -1) {signed_zero} (i32.gt_u {magnitude} (i32.const 0x7f800000)))"


def _sort(routine: Routine, ft: FloatType, indices: bool) -> Body:
    (shape, dtype), = routine.inputs
    n = shape[-1]
    lay = layout(keys=4 * n, order=4 * n, keys2=4 * n, order2=4 * n, counts=4 * 4 * 256)
    f = Fn(ft)
    for name in lay.offsets:
        f.var(name.upper())
    for name in ("bits", "key", "digit", "total", "count", "skip", "swap", "table"):
        f.var(name)
    at = lambda base, idx: f"(i32.add (local.get ${base}) (i32.shl {idx} (i32.const 2)))"  # noqa: E731

    def count(shift: int) -> list[str]:
        """counts[shift / 8][digit of key]++"""
        slot = at("COUNTS", f"(i32.add {i32(shift * 32)} (i32.and (i32.shr_u (local.get $key) "
                            f"{i32(shift)}) (i32.const 255)))")
        return [f"(local.set $digit {slot})",
                "(i32.store (local.get $digit) (i32.add (i32.load (local.get $digit)) (i32.const 1)))"]
    src = "(local.get $in0)"
    fill = f.loop("i", i32(0), i32(n), [
        f"(local.set $bits (i32.load (i32.add {src} (i32.shl (local.get $i) (i32.const 2)))))",
        f"(local.set $key {_key(dtype)})",
        f"(i32.store {at('KEYS', get('i'))} (local.get $key))",
        f"(i32.store {at('ORDER', get('i'))} (local.get $i))"]
        + [line for shift in (0, 8, 16, 24) for line in count(shift)],
        "keys, the identity order, and the four digits' histograms in one pass")

    def one_pass(shift: int) -> list[str]:
        table = f"(local.set $table (i32.add (local.get $COUNTS) {i32(shift * 32 * 4)}))"
        slot = lambda idx: f"(i32.add (local.get $table) (i32.shl {idx} (i32.const 2)))"  # noqa: E731
        prefix = f.loop("d", i32(0), i32(256), [
            f"(local.set $count (i32.load {slot(get('d'))}))",
            f"(local.set $skip (i32.or (local.get $skip) (i32.eq (local.get $count) {i32(n)})))",
            f"(i32.store {slot(get('d'))} (local.get $total))",
            "(local.set $total (i32.add (local.get $total) (local.get $count)))"],
            "each digit's first place")
        scatter = f.loop("i", i32(0), i32(n), [
            f"(local.set $key (i32.load {at('KEYS', get('i'))}))",
            f"(local.set $digit {slot(f'(i32.and (i32.shr_u (local.get $key) {i32(shift)}) (i32.const 255))')})",
            "(local.set $count (i32.load (local.get $digit)))",
            "(i32.store (local.get $digit) (i32.add (local.get $count) (i32.const 1)))",
            f"(i32.store {at('KEYS2', get('count'))} (local.get $key))",
            f"(i32.store {at('ORDER2', get('count'))} (i32.load {at('ORDER', get('i'))}))"],
            "each pair to its digit's next place (in order: stable)")
        swap = [f"(local.set $swap (local.get ${a})) (local.set ${a} (local.get ${b})) "
                f"(local.set ${b} (local.get $swap))" for a, b in (("KEYS", "KEYS2"), ("ORDER", "ORDER2"))]
        return ([f";; digit {shift // 8}: bits {shift}..{shift + 7}", table,
                 "(local.set $total (i32.const 0)) (local.set $skip (i32.const 0))"] + prefix
                + ["(if (i32.eqz (local.get $skip)) (then  ;; a digit all keys share moves nothing"]
                + [f"  {line}" for line in scatter + swap] + ["))"])
    out = "(local.get $out0)"
    value = f"(i32.load {at('ORDER', get('i'))})" if indices else \
        f"(i32.load (i32.add {src} (i32.shl (i32.load {at('ORDER', get('i'))}) (i32.const 2))))"
    write = f.loop("i", i32(0), i32(n), [
        f"(i32.store (i32.add {out} (i32.shl (local.get $i) (i32.const 2))) {value})"],
        "the indices" if indices else "the values in their order")
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))"
             for k, v in lay.offsets.items()]
            + [f"(memory.fill (local.get $COUNTS) (i32.const 0) {i32(4 * 4 * 256)})"] + fill
            + [line for shift in (0, 8, 16, 24) for line in one_pass(shift)] + write)
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)", body,
                f"{'argsort' if indices else 'sort'} of one row of {n}: LSD radix sort")
    notes = {"algorithm": ("LSD radix sort of (key, index) pairs, 8 bits a pass",
                           "stable by construction; keys order floats as NumPy (NaN last, "
                           "-0 equal to +0); the four histograms come from one read, and a "
                           "pass whose digit every key shares is skipped"),
             "rows": ("one after another", "threads take ranges of rows")}
    return Body([fn], ["out0", "in0"], lay, notes, None, item_dims=1)


GENERATORS = {"sort": lambda r, ft: _sort(r, ft, indices=False),
              "argsort": lambda r, ft: _sort(r, ft, indices=True)}
