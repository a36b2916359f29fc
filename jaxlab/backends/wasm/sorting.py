"""sort and argsort along the last axis as WebAssembly text: a stable LSD radix sort
of (key, index) pairs, 8 bits a pass, on 32- or 64-bit keys whose unsigned order is
NumPy's sort order (floats: sign-flipped bits, -0 as +0, every NaN last)."""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import Body, Fn, get, i32, layout
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

# one key per value, as wide as the value: 4 or 8 radix passes
KEYED = (DType.float32, DType.int32, DType.uint32, DType.float64, DType.int64, DType.uint64)


def _key(dtype: DType) -> str:
    """The key of the bits in $bits (an i32 or i64 as wide as the value)."""
    t, bits = ("i64", 64) if dtype.itemsize == 8 else ("i32", 32)
    b, sign = "(local.get $bits)", f"({t}.const {-(1 << (bits - 1))})"
    if dtype.is_signed:
        return f"({t}.xor {b} {sign})"
    if dtype.is_int:
        return b
    inf = f"({t}.const {0x7ff << 52 if bits == 64 else 0x7f800000})"
    magnitude = f"({t}.and {b} ({t}.const {(1 << (bits - 1)) - 1}))"
    ordered = f"(select ({t}.xor {b} ({t}.const -1)) ({t}.or {b} {sign}) ({t}.lt_s {b} ({t}.const 0)))"
    signed_zero = f"(select {sign} {ordered} ({t}.eqz {magnitude}))"
    return f"(select ({t}.const -1) {signed_zero} ({t}.gt_u {magnitude} {inf}))"


def _sort(routine: Routine, ft: FloatType, indices: bool) -> Body:
    (shape, dtype), = routine.inputs
    n, width = shape[-1], dtype.itemsize
    t = "i64" if width == 8 else "i32"
    shift_of = width.bit_length() - 1
    digits = range(0, 8 * width, 8)
    lay = layout(keys=width * n, order=4 * n, keys2=width * n, order2=4 * n,
                 counts=4 * width * 256)
    f = Fn(ft)
    for name in lay.offsets:
        f.var(name.upper())
    for name in ("digit", "total", "count", "skip", "swap", "table"):
        f.var(name)
    f.var("bits", t)
    f.var("key", t)
    at = lambda base, idx: f"(i32.add (local.get ${base}) (i32.shl {idx} (i32.const 2)))"  # noqa: E731
    key_at = lambda base, idx: f"(i32.add {base} (i32.shl {idx} (i32.const {shift_of})))"  # noqa: E731

    def digit_of(shift: int) -> str:
        low = f"({t}.shr_u (local.get $key) ({t}.const {shift}))"
        return f"(i32.and {low if t == 'i32' else f'(i32.wrap_i64 {low})'} (i32.const 255))"

    def count(shift: int) -> list[str]:
        """counts[shift / 8][digit of key]++"""
        slot = at("COUNTS", f"(i32.add {i32(shift * 32)} {digit_of(shift)})")
        return [f"(local.set $digit {slot})",
                "(i32.store (local.get $digit) (i32.add (i32.load (local.get $digit)) (i32.const 1)))"]
    src = "(local.get $in0)"
    fill = f.loop("i", i32(0), i32(n), [
        f"(local.set $bits ({t}.load {key_at(src, get('i'))}))",
        f"(local.set $key {_key(dtype)})",
        f"({t}.store {key_at('(local.get $KEYS)', get('i'))} (local.get $key))",
        f"(i32.store {at('ORDER', get('i'))} (local.get $i))"]
        + [line for shift in digits for line in count(shift)],
        f"keys, the identity order, and the {len(digits)} digits' histograms in one pass")

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
            f"(local.set $key ({t}.load {key_at('(local.get $KEYS)', get('i'))}))",
            f"(local.set $digit {slot(digit_of(shift))})",
            "(local.set $count (i32.load (local.get $digit)))",
            "(i32.store (local.get $digit) (i32.add (local.get $count) (i32.const 1)))",
            f"({t}.store {key_at('(local.get $KEYS2)', get('count'))} (local.get $key))",
            f"(i32.store {at('ORDER2', get('count'))} (i32.load {at('ORDER', get('i'))}))"],
            "each pair to its digit's next place (in order: stable)")
        swap = [f"(local.set $swap (local.get ${a})) (local.set ${a} (local.get ${b})) "
                f"(local.set ${b} (local.get $swap))" for a, b in (("KEYS", "KEYS2"), ("ORDER", "ORDER2"))]
        return ([f";; digit {shift // 8}: bits {shift}..{shift + 7}", table,
                 "(local.set $total (i32.const 0)) (local.set $skip (i32.const 0))"] + prefix
                + ["(if (i32.eqz (local.get $skip)) (then  ;; a digit all keys share moves nothing"]
                + [f"  {line}" for line in scatter + swap] + ["))"])
    out = "(local.get $out0)"
    order = f"(i32.load {at('ORDER', get('i'))})"
    write = f.loop("i", i32(0), i32(n), [
        f"(i32.store (i32.add {out} (i32.shl (local.get $i) (i32.const 2))) {order})" if indices
        else f"({t}.store {key_at(out, get('i'))} ({t}.load {key_at(src, order)}))"],
        "the indices" if indices else "the values in their order")
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))"
             for k, v in lay.offsets.items()]
            + [f"(memory.fill (local.get $COUNTS) (i32.const 0) {i32(4 * width * 256)})"] + fill
            + [line for shift in digits for line in one_pass(shift)] + write)
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)", body,
                f"{'argsort' if indices else 'sort'} of one row of {n}: LSD radix sort")
    notes = {"algorithm": (f"LSD radix sort of ({8 * width}-bit key, index) pairs, 8 bits a pass",
                           "stable by construction; keys order floats as NumPy (NaN last, "
                           f"-0 equal to +0); the {len(digits)} histograms come from one read, "
                           "and a pass whose digit every key shares is skipped"),
             "rows": ("one after another", "threads take ranges of rows")}
    return Body([fn], ["out0", "in0"], lay, notes, None, item_dims=1)


GENERATORS = {"sort": lambda r, ft: _sort(r, ft, indices=False),
              "argsort": lambda r, ft: _sort(r, ft, indices=True)}
