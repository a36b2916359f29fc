"""sort and argsort along the last axis as WebAssembly text: a stable LSD radix sort on
32- or 64-bit keys whose unsigned order is NumPy's sort order (floats: sign-flipped
bits, -0 as +0, every NaN last).

One read of the row makes every digit's histogram; a digit every key shares is
skipped; the first pass computes keys from the values as it scatters them, the last
writes the result (values, or only the indices for argsort). A sort moves keys alone
and turns the last pass's keys back into values: the only values a key does not give
back exactly (-0.0, a NaN other than the canonical one) are put back in their places
by one more read, only when the row holds one.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlab.backends.wasm.routine_text import Body, Fn, get, i32, layout
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

# one key per value, as wide as the value
KEYED = (DType.float32, DType.int32, DType.uint32, DType.float64, DType.int64, DType.uint64)

# rows this long sort with 11-bit digits (3 passes for 32-bit keys, 2048-entry histograms
# that stay in L1); shorter rows with 8-bit ones, whose 256-entry prefix sums cost less
WIDE_DIGITS_FROM = 1 << 16


@dataclass(frozen=True)
class Keys:
    """How the values of one dtype become keys (as Wasm integers of their width)."""
    dtype: DType

    @property
    def t(self) -> str:
        return "i64" if self.dtype.itemsize == 8 else "i32"

    @property
    def bits(self) -> int:
        return 8 * self.dtype.itemsize

    def c(self, value: int) -> str:
        """A constant of the key type, written as its signed value."""
        value &= (1 << self.bits) - 1
        if value >= 1 << (self.bits - 1):
            value -= 1 << self.bits
        return f"({self.t}.const {value})"

    @property
    def sign(self) -> str:
        return self.c(1 << (self.bits - 1))

    @property
    def inf(self) -> int:
        return 0x7ff << 52 if self.bits == 64 else 0x7f800000

    @property
    def quiet_nan(self) -> int:
        """The NaN every NaN's key turns back into."""
        return 0x7ff8 << 48 if self.bits == 64 else 0x7fc00000

    def magnitude(self, b: str) -> str:
        return f"({self.t}.and {b} {self.c((1 << (self.bits - 1)) - 1)})"

    def key(self, b: str) -> str:
        """The key of the bits `b` (a local.get: read more than once)."""
        t = self.t
        if self.dtype.is_signed:
            return f"({t}.xor {b} {self.sign})"
        if self.dtype.is_int:
            return b
        ordered = f"(select ({t}.xor {b} {self.c(-1)}) ({t}.or {b} {self.sign}) ({t}.lt_s {b} {self.c(0)}))"
        signed_zero = f"(select {self.sign} {ordered} ({t}.eqz {self.magnitude(b)}))"
        nan_key = self.c(self.quiet_nan | (1 << (self.bits - 1)))
        return f"(select {nan_key} {signed_zero} ({t}.gt_u {self.magnitude(b)} {self.c(self.inf)}))"

    def value(self, k: str) -> str:
        """The bits whose key is `k` (a local.get): the inverse of `key` on the values
        it maps one to one."""
        t = self.t
        if self.dtype.is_signed:
            return f"({t}.xor {k} {self.sign})"
        if self.dtype.is_int:
            return k
        return f"(select ({t}.xor {k} {self.sign}) ({t}.xor {k} {self.c(-1)}) ({t}.lt_s {k} {self.c(0)}))"

    def odd(self, b: str) -> str:
        """Whether the value `b` is one its key does not give back: -0.0 or a NaN
        other than the canonical one (floats only)."""
        t = self.t
        nan = f"({t}.gt_u {self.magnitude(b)} {self.c(self.inf)})"
        return (f"(i32.or ({t}.eq {b} {self.sign}) "
                f"(i32.and {nan} ({t}.ne {b} {self.c(self.quiet_nan)})))")


def _plan(dtype: DType, n: int) -> tuple[int, list[int]]:
    """Digit width and each pass's shift."""
    width = 11 if n >= WIDE_DIGITS_FROM else 8
    return width, list(range(0, 8 * dtype.itemsize, width))


def _pass(ft: FloatType, keys: Keys, n: int, width: int, first: bool, last: bool, indices: bool) -> str:
    """One scatter pass as a function: each (key, index) of src to its digit's next
    place in dst (in order: stable). The first pass reads values (keys computed here,
    indices the identity); the last writes values, or only the indices for argsort."""
    t, size = keys.t, keys.dtype.itemsize
    f = Fn(ft)
    for name in ("end", "slot", "at", "i"):
        f.var(name)
    f.var("key", t)
    if first:
        f.var("bits", t)
    step = lambda p, by: f"(local.set ${p} (i32.add (local.get ${p}) (i32.const {by})))"  # noqa: E731
    read = [f"(local.set $bits ({t}.load (local.get $src)))", f"(local.set $key {keys.key(get('bits'))})"] \
        if first else [f"(local.set $key ({t}.load (local.get $src)))"]
    digit = f"({t}.shr_u (local.get $key) (local.get $shift))"
    digit = digit if t == "i32" else f"(i32.wrap_i64 {digit})"
    place = [f"(local.set $slot (i32.add (local.get $table) (i32.shl (i32.and {digit} "
             f"(i32.const {(1 << width) - 1})) (i32.const 2))))",
             "(local.set $at (i32.load (local.get $slot)))",
             "(i32.store (local.get $slot) (i32.add (local.get $at) (i32.const 1)))"]
    index = get("i") if first else "(i32.load (local.get $srcidx))"
    if last and indices:
        write = [f"(i32.store (i32.add (local.get $dst) (i32.shl (local.get $at) (i32.const 2))) {index})"]
    elif last:
        write = [f"({t}.store (i32.add (local.get $dst) (i32.shl (local.get $at) (i32.const {size.bit_length() - 1}))) "
                 f"{get('bits') if first else keys.value(get('key'))})"]
    else:
        write = [f"({t}.store (i32.add (local.get $dst) (i32.shl (local.get $at) (i32.const {size.bit_length() - 1}))) "
                 "(local.get $key))"]
        if indices:
            write.append(f"(i32.store (i32.add (local.get $dstidx) (i32.shl (local.get $at) (i32.const 2))) {index})")
    advance = [step("src", size)] + ([step("srcidx", 4)] if indices and not first else []) \
        + ([step("i", 1)] if indices and first else [])
    body = ([f"(local.set $end (i32.add (local.get $src) (i32.const {n * size})))",
             "(local.set $i (i32.const 0))",
             "(block $done (loop $each",
             "  (br_if $done (i32.ge_u (local.get $src) (local.get $end)))"]
            + [f"  {line}" for line in read + place + write + advance]
            + ["  (br $each)))"])
    what = ("values in, " if first else "keys in, ") + (
        "indices out" if last and indices else "values out" if last else "keys out")
    return f.text(f"(func ${_pass_name(first, last)} (param $src i32) (param $srcidx i32) (param $dst i32) "
                  f"(param $dstidx i32) (param $table i32) (param $shift {t})", body,
                  f"one radix pass over {n} keys: {what}")


def _pass_name(first: bool, last: bool) -> str:
    return f"pass_{'values' if first else 'keys'}_to_{'out' if last else 'keys'}"


def _sort(routine: Routine, ft: FloatType, indices: bool) -> Body:
    (shape, dtype), = routine.inputs
    n, size = shape[-1], dtype.itemsize
    keys = Keys(dtype)
    t = keys.t
    width, shifts = _plan(dtype, n)
    buckets = 1 << width
    lay = layout(keys=size * n, keys2=size * n, order=4 * n if indices else 0,
                 order2=4 * n if indices else 0, counts=4 * buckets * len(shifts))
    f = Fn(ft)
    for name in lay.offsets:
        f.var(name.upper())
    for name in ("src", "end", "slot", "total", "count", "odd", "first", "last", "swap", "i"):
        f.var(name)
    f.var("bits", t)
    f.var("key", t)
    f.var("active")
    IN, OUT = "(local.get $in0)", "(local.get $out0)"
    table = lambda p: f"(i32.add (local.get $COUNTS) {i32(4 * buckets * p)})"  # noqa: E731
    bump = lambda shift, p: [  # noqa: E731
        f"(local.set $slot (i32.add {table(p)} (i32.shl (i32.and "
        + (f"({t}.shr_u (local.get $key) ({t}.const {shift}))" if t == "i32"
           else f"(i32.wrap_i64 (i64.shr_u (local.get $key) (i64.const {shift})))")
        + f" (i32.const {buckets - 1})) (i32.const 2))))",
        "(i32.store (local.get $slot) (i32.add (i32.load (local.get $slot)) (i32.const 1)))"]
    float_keys = not dtype.is_int and not indices
    histogram = ([f"(memory.fill (local.get $COUNTS) (i32.const 0) {i32(4 * buckets * len(shifts))})",
                  "(local.set $odd (i32.const 0))",
                  f"(local.set $src {IN}) (local.set $end (i32.add {IN} {i32(n * size)}))",
                  f"(block $counted (loop $count  ;; every digit's histogram from one read",
                  "  (br_if $counted (i32.ge_u (local.get $src) (local.get $end)))",
                  f"  (local.set $bits ({t}.load (local.get $src)))",
                  f"  (local.set $key {keys.key(get('bits'))})"]
                 + ([f"  (local.set $odd (i32.or (local.get $odd) {keys.odd(get('bits'))}))"] if float_keys else [])
                 + [f"  {line}" for shift, p in zip(shifts, range(len(shifts))) for line in bump(shift, p)]
                 + [f"  (local.set $src (i32.add (local.get $src) {i32(size)}))", "  (br $count)))"])

    def prefix(p: int) -> list[str]:
        """Counts to first places; bit p of $active when the digit varies."""
        slot = f"(i32.add {table(p)} (i32.shl (local.get $d) (i32.const 2)))"
        return (["(local.set $total (i32.const 0)) (local.set $swap (i32.const 0))"]
                + f.loop("d", i32(0), i32(buckets), [
                    f"(local.set $count (i32.load {slot}))",
                    f"(local.set $swap (i32.or (local.get $swap) (i32.eq (local.get $count) {i32(n)})))",
                    f"(i32.store {slot} (local.get $total))",
                    "(local.set $total (i32.add (local.get $total) (local.get $count)))"],
                    f"digit {p}: each value's first place")
                + [f"(if (i32.eqz (local.get $swap)) (then (local.set $active (i32.or (local.get $active) {i32(1 << p)}))))"])
    key_bufs = ("KEYS", "KEYS2") + (("ORDER", "ORDER2") if indices else ())

    def run(p: int, shift: int) -> list[str]:
        """Pass p when its digit varies: from the values or the keys, to the keys or out."""
        later = f"(i32.and (local.get $active) {i32(-(1 << (p + 1)) & ((1 << len(shifts)) - 1))})"
        src_idx = "(local.get $ORDER)" if indices else i32(0)
        dst_idx = "(local.get $ORDER2)" if indices else i32(0)
        call = lambda first, last: (  # noqa: E731
            f"(call ${_pass_name(first, last)} {IN if first else '(local.get $KEYS)'} {src_idx} "
            f"{OUT if last else '(local.get $KEYS2)'} {dst_idx} {table(p)} ({t}.const {shift}))")
        swap = [f"(local.set $swap (local.get ${a})) (local.set ${a} (local.get ${b})) (local.set ${b} (local.get $swap))"
                for a, b in zip(key_bufs[::2], key_bufs[1::2])]
        return ([f";; digit {p}: bits {shift}..{min(shift + width, 8 * size) - 1}",
                 f"(if (i32.and (local.get $active) {i32(1 << p)}) (then",
                 f"  (local.set $last (i32.eqz {later}))",
                 "  (if (local.get $first)",
                 f"    (then (if (local.get $last) (then {call(True, True)}) (else {call(True, False)})))",
                 f"    (else (if (local.get $last) (then {call(False, True)}) (else {call(False, False)}))))",
                 "  (local.set $first (i32.const 0))"]
                + [f"  {line}" for line in swap] + ["))"])
    unmoved = (f.loop("i", i32(0), i32(n), [
        f"(i32.store (i32.add {OUT} (i32.shl (local.get $i) (i32.const 2))) (local.get $i))"], "the identity")
        if indices else [f"(memory.copy {OUT} {IN} {i32(n * size)})"])
    body = ([f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))" for k, v in lay.offsets.items()]
            + histogram + ["(local.set $active (i32.const 0))"]
            + [line for p in range(len(shifts)) for line in prefix(p)]
            + [";; every key the same: the row is its own (stable) order",
               "(if (i32.eqz (local.get $active)) (then"] + [f"  {line}" for line in unmoved]
            + ["  (return)))", "(local.set $first (i32.const 1))"]
            + [line for p, shift in enumerate(shifts) for line in run(p, shift)]
            + ([";; values the keys did not give back, in their places",
                f"(if (local.get $odd) (then (call $put_back {OUT} {IN})))"] if float_keys else []))
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)", body,
                f"{'argsort' if indices else 'sort'} of one row of {n}: LSD radix sort")
    passes = [_pass(ft, keys, n, width, first, last, indices) for first in (True, False) for last in (True, False)]
    notes = {"algorithm": (f"LSD radix sort of {8 * size}-bit keys" + (", index pairs" if indices else "")
                           + f", {width} bits a pass",
                           "stable by construction; keys order floats as NumPy (NaN last, "
                           f"-0 equal to +0); the {len(shifts)} histograms come from one read, "
                           "a pass whose digit every key shares is skipped"
                           + ("" if indices else ", and a sort moves keys alone")),
             "digit_bits": (width, f"{'11 for rows of at least ' + str(WIDE_DIGITS_FROM) if width == 11 else '8 for rows under ' + str(WIDE_DIGITS_FROM)}: "
                            "fewer passes against a histogram per pass that stays in L1"),
             "rows": ("one after another", "threads take ranges of rows")}
    extra = [_put_back(ft, keys, n)] if float_keys else []
    return Body([fn] + passes + extra, ["out0", "in0"], lay, notes, None, item_dims=1)


def _put_back(ft: FloatType, keys: Keys, n: int) -> str:
    """-0.0 and odd NaNs as they were: the sorted row's zeros (from the first value
    that is not negative) and NaNs (the last ones) are the row's, in the row's order."""
    t, size = keys.t, keys.dtype.itemsize
    f = Fn(ft)
    for name in ("lo", "hi", "mid", "zero", "nan", "src", "end"):
        f.var(name)
    f.var("bits", t)
    f.var("v", t)
    at = lambda base, i: f"(i32.add {base} (i32.shl {i} (i32.const {size.bit_length() - 1})))"  # noqa: E731
    fl = "f64" if size == 8 else "f32"

    def search(result: str, found: str, what: str) -> list[str]:
        """The first index of the sorted row where `found` (monotone) holds."""
        return [f"(local.set $lo (i32.const 0)) (local.set $hi {i32(n)})  ;; {what}",
                "(block $searched (loop $halve",
                "  (br_if $searched (i32.ge_u (local.get $lo) (local.get $hi)))",
                "  (local.set $mid (i32.shr_u (i32.add (local.get $lo) (local.get $hi)) (i32.const 1)))",
                f"  (local.set $v ({t}.load {at('(local.get $out)', get('mid'))}))",
                f"  (if {found} (then (local.set $hi (local.get $mid))) "
                "(else (local.set $lo (i32.add (local.get $mid) (i32.const 1)))))",
                "  (br $halve)))", f"(local.set ${result} (local.get $lo))"]
    value = f"({fl}.reinterpret_{t} (local.get $v))"
    nan_bits = f"({t}.gt_u {keys.magnitude(get('bits'))} {keys.c(keys.inf)})"
    body = (search("zero", f"(i32.eqz ({fl}.lt {value} ({fl}.const 0)))", "the first value >= 0 (or NaN)")
            + search("nan", f"({fl}.ne {value} {value})", "the first NaN")
            + [f"(local.set $src (local.get $in)) (local.set $end (i32.add (local.get $in) {i32(n * size)}))",
               "(block $done (loop $each  ;; the row's zeros and NaNs, in order, to their places",
               "  (br_if $done (i32.ge_u (local.get $src) (local.get $end)))",
               f"  (local.set $bits ({t}.load (local.get $src)))",
               f"  (if ({t}.eqz {keys.magnitude(get('bits'))}) (then",
               f"    ({t}.store {at('(local.get $out)', get('zero'))} (local.get $bits))",
               "    (local.set $zero (i32.add (local.get $zero) (i32.const 1)))))",
               f"  (if {nan_bits} (then",
               f"    ({t}.store {at('(local.get $out)', get('nan'))} (local.get $bits))",
               "    (local.set $nan (i32.add (local.get $nan) (i32.const 1)))))",
               f"  (local.set $src (i32.add (local.get $src) {i32(size)}))",
               "  (br $each)))"])
    return f.text("(func $put_back (param $out i32) (param $in i32)", body,
                  "the zeros' signs and the NaNs' bits, which keys do not keep")


GENERATORS = {"sort": lambda r, ft: _sort(r, ft, indices=False),
              "argsort": lambda r, ft: _sort(r, ft, indices=True)}
