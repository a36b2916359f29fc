"""sort and argsort along the last axis as WebAssembly text: a stable LSD radix sort on
32- or 64-bit keys whose unsigned order is NumPy's sort order (floats: sign-flipped
bits, -0 as +0, every NaN last).

One read of the row makes the keys (in SIMD lanes), stores them for the first pass and
counts every digit's histogram; a digit every key shares is skipped; each pass keeps
its digits' next places as byte addresses and moves four keys a loop step; the last
writes the result (values, or only the indices for argsort). A sort moves keys alone
and turns the last pass's keys back into values: the only values a key does not give
back exactly (-0.0, a NaN other than the canonical one) are put back in their places
by one more read, only when the row holds one.

A long row alone in its batch is sorted in chunks that the device's threads take from
a work list (routine_text.work_list): per pass, every chunk's counts of the digit, then
every chunk scattered to its own places (after those of the chunks before it: stable).
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlab.backends.wasm.routine_text import Body, Fn, Team, get, i32, layout, work_list, work_phase
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

# one key per value, as wide as the value
KEYED = (DType.float32, DType.int32, DType.uint32, DType.float64, DType.int64, DType.uint64)

# a row this long, alone in its batch, is sorted in TEAM_CHUNKS chunks that up to
# TEAM_THREADS threads take from a work list (each pass costs two phases). From 2^19:
# below it a team of two was slower than one thread (benchmarks.wasm_teams on 2 quiet
# pinned cores of the GPU host, 08:08, load ~0.8, medians: 2^17 2.68 against 1.72 ms,
# 2^18 3.77 against 3.40; 2^19 5.86 against 6.60, 2^20 11.40 against 16.39)
TEAM_FROM = 1 << 19
TEAM_THREADS = 8
TEAM_CHUNKS = 8

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

    def signed(self, value: int) -> int:
        """`value` as the signed integer of the key's width with the same bits."""
        value &= (1 << self.bits) - 1
        return value - (1 << self.bits) if value >= 1 << (self.bits - 1) else value

    def c(self, value: int) -> str:
        """A constant of the key type, written as its signed value."""
        return f"({self.t}.const {self.signed(value)})"

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

    @property
    def lanes(self) -> str:
        """The SIMD shape of keys: i32x4 or i64x2."""
        return f"{self.t}x{16 // self.dtype.itemsize}"

    def splat(self, value: int) -> str:
        """A vector of the constant `value` in every key lane."""
        return f"(v128.const {self.lanes} {' '.join([str(self.signed(value))] * (16 // self.dtype.itemsize))})"

    @property
    def _floats(self) -> str:
        return "f64x2" if self.bits == 64 else "f32x4"

    def vector_key(self, v: str) -> str:
        """The keys of the lanes of `v` (a local.get), as `key` makes one: the sign
        spread into a mask flips the bits a sign asks for, then zeros and NaNs."""
        if self.dtype.is_signed:
            return f"(v128.xor {v} {self.splat(1 << (self.bits - 1))})"
        if self.dtype.is_int:
            return v
        sign, fl = self.splat(1 << (self.bits - 1)), self._floats
        ordered = f"(v128.xor {v} (v128.or ({self.lanes}.shr_s {v} (i32.const {self.bits - 1})) {sign}))"
        zeros = f"(v128.bitselect {sign} {ordered} ({fl}.eq {v} (v128.const {fl} 0 0{' 0 0' if fl == 'f32x4' else ''})))"
        nan_key = self.splat(self.quiet_nan | (1 << (self.bits - 1)))
        return f"(v128.bitselect {nan_key} {zeros} ({fl}.ne {v} {v}))"

    def vector_odd(self, v: str) -> str:
        """Lanes of `v` that `odd` would flag (floats only)."""
        return (f"(v128.or ({self.lanes}.eq {v} {self.splat(1 << (self.bits - 1))}) "
                f"(v128.andnot ({self._floats}.ne {v} {v}) ({self.lanes}.eq {v} {self.splat(self.quiet_nan)})))")

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


UNROLL = 4   # keys a step of a pass's loop: one loop test, one pointer bump for four


def _digit_slot(keys: Keys, table: str, key: str, rotation: str, mask: str) -> str:
    """The address of `key`'s digit's word in the table at `table`: the key rotated so
    that its digit's lowest bit lands on bit 2 (a word's byte offset), then masked."""
    rotated = f"({keys.t}.rotl {key} {rotation})"
    rotated = rotated if keys.t == "i32" else f"(i32.wrap_i64 {rotated})"
    return f"(i32.add {table} (i32.and {rotated} {mask}))"


def _rotation(keys: Keys, shift: int) -> str:
    """How far a key rotates left for `_digit_slot` to see the digit at bit `shift`."""
    return keys.c((2 - shift) % keys.bits)


def _mask(keys: Keys, shift: int, width: int) -> str:
    """The bits `_digit_slot` keeps of the digit at bit `shift` (the last may be narrower)."""
    return i32(((1 << min(width, keys.bits - shift)) - 1) << 2)


def _pass(ft: FloatType, keys: Keys, n: int, width: int, first: bool, last: bool, indices: bool) -> str:
    """One scatter pass as a function: each (key, index) of src to its digit's next
    place (in order: stable). $table holds each digit's next place as a byte address in
    the destination, and moves on as keys land there. The first pass of an argsort
    makes the indices (the identity); the last writes the values (a sort) or only the
    indices (an argsort)."""
    t, size = keys.t, keys.dtype.itemsize
    f = Fn(ft)
    for name in ("end", "whole", "slot", "at"):
        f.var(name)
    f.var("key", t)
    step = 4 if last and indices else size   # bytes a digit's place moves on per key
    index_at = f"(i32.add (i32.shr_u (local.get $at) {i32(size.bit_length() - 3)}) (local.get $delta))" \
        if size > 4 else "(i32.add (local.get $at) (local.get $delta))"

    def one(u: int) -> list[str]:
        index = f"(i32.add (local.get $first_index) {i32(u)})" if first else f"(i32.load offset={4 * u} (local.get $srcidx))"
        lines = [f"(local.set $key ({t}.load offset={size * u} (local.get $src)))",
                 f"(local.set $slot {_digit_slot(keys, '(local.get $table)', get('key'), '(local.get $rotation)', '(local.get $mask)')})",
                 "(local.set $at (i32.load (local.get $slot)))",
                 f"(i32.store (local.get $slot) (i32.add (local.get $at) {i32(step)}))"]
        if last and indices:
            return lines + [f"(i32.store (local.get $at) {index})"]
        lines.append(f"({t}.store (local.get $at) {keys.value(get('key')) if last else get('key')})")
        return lines + ([f"(i32.store {index_at} {index})"] if indices else [])

    def advance(count: int) -> list[str]:
        lines = [f"(local.set $src (i32.add (local.get $src) {i32(count * size)}))"]
        if indices:
            lines.append("(local.set $first_index (i32.add (local.get $first_index) "
                         f"{i32(count)}))" if first else
                         f"(local.set $srcidx (i32.add (local.get $srcidx) {i32(4 * count)}))")
        return lines
    shift = size.bit_length() - 1
    body = ([f"(local.set $end (i32.add (local.get $src) (i32.shl (local.get $count) {i32(shift)})))",
             f"(local.set $whole (i32.add (local.get $src) (i32.shl (i32.and (local.get $count) {i32(-UNROLL)}) {i32(shift)})))",
             f"(block $steps_done (loop $steps  ;; {UNROLL} keys a step, in order",
             "  (br_if $steps_done (i32.ge_u (local.get $src) (local.get $whole)))"]
            + [f"  {line}" for u in range(UNROLL) for line in one(u)]
            + [f"  {line}" for line in advance(UNROLL)] + ["  (br $steps)))",
               "(block $done (loop $each  ;; the last few one at a time",
               "  (br_if $done (i32.ge_u (local.get $src) (local.get $end)))"]
            + [f"  {line}" for line in one(0) + advance(1)] + ["  (br $each)))"])
    what = ("indices made, " if first and indices else "") + (
        "indices out" if last and indices else "values out" if last else "keys out")
    return f.text(f"(func ${_pass_name(first and indices, last)} (param $src i32) (param $srcidx i32) "
                  f"(param $delta i32) (param $table i32) (param $rotation {t}) (param $mask i32) (param $count i32) "
                  "(param $first_index i32)", body,
                  f"one radix pass over $count of {n} keys from $src, from index $first_index: {what}")


def _pass_name(first: bool, last: bool) -> str:
    return f"pass_{'made' if first else 'keys'}_to_{'out' if last else 'keys'}"


# the descriptor of the phase now published (written by thread 0 before it publishes):
# what an item does, and with what
_DESC = {"kind": 0, "src": 4, "srcidx": 8, "delta": 12, "mask": 16, "first": 20, "last": 24, "table": 28,
         "rotation": 32}   # rotation: 8 bytes
_KEYS_AND_COUNTS, _RECOUNT, _SCATTER = 0, 1, 2   # the kinds of items


def _layout(n: int, size: int, indices: bool, buckets: int, passes: int, chunks: int):
    """Scratch for sorting one row in `chunks` chunks: the work list's words, the phase's
    descriptor, the keys (and indices) twice, each chunk's histograms, next places and flag."""
    return layout(sync=16, desc=48, keys=size * n, keys2=size * n, order=4 * n if indices else 0,
                  order2=4 * n if indices else 0, counts=4 * buckets * passes * chunks,
                  places=4 * buckets * chunks, odd=4 * chunks)


class _Sorter:
    """The text of one row's sort in `chunks` chunks (items of the work list)."""

    def __init__(self, routine: Routine, ft: FloatType, indices: bool, chunks: int) -> None:
        (shape, dtype), = routine.inputs
        self.ft, self.indices, self.chunks = ft, indices, chunks
        self.n, self.size, self.keys = shape[-1], dtype.itemsize, Keys(dtype)
        self.width, self.shifts = _plan(dtype, self.n)
        self.buckets, self.passes = 1 << self.width, len(self.shifts)
        self.lay = _layout(self.n, self.size, indices, self.buckets, self.passes, chunks)
        self.float_keys = not dtype.is_int and not indices

    def declare(self, f: Fn) -> None:
        for name in self.lay.offsets:
            f.var(name.upper())
        for name in ("lo", "hi", "src", "dst", "end", "slot", "total", "before", "count", "odd", "mask", "u"):
            f.var(name)
        for name in ("bits", "key", "rot"):
            f.var(name, self.keys.t)

    def buffers(self) -> list[str]:
        return [f"(local.set ${k.upper()} (i32.add (local.get $scratch) {i32(v)}))"
                for k, v in self.lay.offsets.items()]

    def at(self, base: str, i: str, width: int = 0) -> str:
        return f"(i32.add {base} (i32.shl {i} (i32.const {(width or self.size).bit_length() - 1})))"

    def table(self, u: str, p: int) -> str:
        """Chunk u's histogram of digit p."""
        return (f"(i32.add (local.get $COUNTS) (i32.add (i32.mul {u} {i32(4 * self.buckets * self.passes)}) "
                f"{i32(4 * self.buckets * p)}))")

    def split(self, u: str) -> str:
        """The first index of chunk u (of `chunks`)."""
        return f"(i32.wrap_i64 (i64.div_u (i64.mul (i64.extend_i32_u {u}) (i64.const {self.n})) (i64.const {self.chunks})))"

    def bump(self, tables: list[tuple[str, str, str]]) -> list[str]:
        """counts[digit of $key] += 1 in each (table, rotation, mask)."""
        return [line for base, rotation, mask in tables for line in (
            f"(local.set $slot {_digit_slot(self.keys, base, get('key'), rotation, mask)})",
            "(i32.store (local.get $slot) (i32.add (i32.load (local.get $slot)) (i32.const 1)))")]

    def keys_and_counts(self, f: Fn) -> list[str]:
        """Chunk [lo, hi): keys made (SIMD), stored, and counted for every digit; its flag."""
        keys, size, t = self.keys, self.size, self.keys.t
        lanes = 16 // size
        for name in ("v", "k", "oddv"):
            f.var(name, "v128")
        every_digit = [(f"(i32.add (local.get $count) {i32(4 * self.buckets * p)})", _rotation(keys, shift),
                        _mask(keys, shift, self.width)) for p, shift in enumerate(self.shifts)]
        vector_step = (["(local.set $v (v128.load (local.get $src)))",
                        f"(local.set $k {keys.vector_key(get('v'))})"]
                       + ([f"(local.set $oddv (v128.or (local.get $oddv) {keys.vector_odd(get('v'))}))"]
                          if self.float_keys else [])
                       + ["(v128.store (local.get $dst) (local.get $k))"]
                       + [line for lane in range(lanes) for line in
                          [f"(local.set $key ({keys.lanes}.extract_lane {lane} (local.get $k)))"] + self.bump(every_digit)]
                       + ["(local.set $src (i32.add (local.get $src) (i32.const 16)))",
                          "(local.set $dst (i32.add (local.get $dst) (i32.const 16)))"])
        scalar_step = ([f"(local.set $bits ({t}.load (local.get $src)))", f"(local.set $key {keys.key(get('bits'))})"]
                       + ([f"(local.set $odd (i32.or (local.get $odd) {keys.odd(get('bits'))}))"] if self.float_keys else [])
                       + [f"({t}.store (local.get $dst) (local.get $key))"] + self.bump(every_digit)
                       + [f"(local.set $src (i32.add (local.get $src) {i32(size)}))",
                          f"(local.set $dst (i32.add (local.get $dst) {i32(size)}))"])
        whole = f"(i32.add {get('lo')} (i32.and (i32.sub {get('hi')} {get('lo')}) {i32(-lanes)}))"
        IN = "(local.get $in0)"
        return ([f"(local.set $count {self.table(get('index'), 0)})",
                 f"(memory.fill (local.get $count) (i32.const 0) {i32(4 * self.buckets * self.passes)})",
                 "(local.set $odd (i32.const 0))",
                 f"(local.set $src {self.at(IN, get('lo'))}) (local.set $dst {self.at('(local.get $KEYS)', get('lo'))})",
                 f"(local.set $end {self.at(IN, whole)})",
                 f"(block $keyed (loop $vectors  ;; keys made {lanes} at a time (SIMD), stored, and counted "
                 "for every digit's histogram",
                 "  (br_if $keyed (i32.ge_u (local.get $src) (local.get $end)))"]
                + [f"  {line}" for line in vector_step] + ["  (br $vectors)))",
                   f"(local.set $end {self.at(IN, get('hi'))})",
                   "(block $keyed_rest (loop $rest  ;; the last few one at a time",
                   "  (br_if $keyed_rest (i32.ge_u (local.get $src) (local.get $end)))"]
                + [f"  {line}" for line in scalar_step] + ["  (br $rest)))"]
                + (["(local.set $odd (i32.or (local.get $odd) (v128.any_true (local.get $oddv))))"]
                   if self.float_keys else [])
                + [f"(i32.store {self.at('(local.get $ODD)', get('index'), 4)} (local.get $odd))"])

    def desc(self, name: str, kind: str = "i32") -> str:
        return f"({kind}.load offset={_DESC[name]} (local.get $DESC))"

    def recount(self) -> list[str]:
        """Chunk [lo, hi) of the keys the last pass wrote: its histogram of this pass's digit."""
        t = self.keys.t
        rot = self.desc("rotation", "i64")
        return ([f"(local.set $count (i32.add {self.table(get('index'), 0)} {self.desc('table')}))",
                 f"(memory.fill (local.get $count) (i32.const 0) {i32(4 * self.buckets)})",
                 f"(local.set $rot {rot if t == 'i64' else f'(i32.wrap_i64 {rot})'})",
                 f"(local.set $mask {self.desc('mask')})",
                 f"(local.set $src {self.at(self.desc('src'), get('lo'))}) (local.set $end {self.at(self.desc('src'), get('hi'))})",
                 "(block $counted (loop $recount  ;; this chunk's digits",
                 "  (br_if $counted (i32.ge_u (local.get $src) (local.get $end)))",
                 f"  (local.set $key ({t}.load (local.get $src)))"]
                + [f"  {line}" for line in self.bump([("(local.get $count)", get("rot"), get("mask"))])]
                + [f"  (local.set $src (i32.add (local.get $src) {i32(self.size)}))", "  (br $recount)))"])

    def scatter(self) -> list[str]:
        """Chunk [lo, hi) to its digits' places (its table of them)."""
        rot = self.desc("rotation", "i64")
        rot = rot if self.keys.t == "i64" else f"(i32.wrap_i64 {rot})"
        args = (f"{self.at(self.desc('src'), get('lo'))} {self.at(self.desc('srcidx'), get('lo'), 4)} {self.desc('delta')} "
                f"(i32.add (local.get $PLACES) (i32.mul (local.get $index) {i32(4 * self.buckets)})) {rot} "
                f"{self.desc('mask')} (i32.sub (local.get $hi) (local.get $lo)) (local.get $lo)")
        by_last = lambda first: (f"(if {self.desc('last')} (then (call ${_pass_name(first, True)} {args})) "  # noqa: E731
                                 f"(else (call ${_pass_name(first, False)} {args})))")
        return ([f"(if {self.desc('first')} (then {by_last(True)}) (else {by_last(False)}))"] if self.indices
                else [by_last(False)])

    def item(self) -> str:
        f = Fn(self.ft)
        self.declare(f)
        kind = self.desc("kind")
        body = (self.buffers()
                + [f"(local.set $lo {self.split(get('index'))})",
                   f"(local.set $hi {self.split('(i32.add (local.get $index) (i32.const 1))')})",
                   f"(if (i32.eq {kind} {i32(_KEYS_AND_COUNTS)}) (then"]
                + [f"  {line}" for line in self.keys_and_counts(f)]
                + ["  (return)))", f"(if (i32.eq {kind} {i32(_RECOUNT)}) (then"]
                + [f"  {line}" for line in self.recount()] + ["  (return)))"] + self.scatter())
        return f.text("(func $item (param $out0 i32) (param $in0 i32) (param $scratch i32) (param $phase i32) "
                      "(param $index i32)", body, f"chunk $index of {self.chunks} of the row: the phase's part")

    def team(self) -> str:
        """`$team(out, in, scratch, t, T)`: thread 0 publishes the phases (its descriptor
        first), decides which passes run and where each chunk's keys go; every thread
        takes chunks."""
        f = Fn(self.ft)
        self.declare(f)
        for name in ("first", "last", "swap", "active", "phase", "to", "scale"):
            f.var(name)
        n, buckets, passes, chunks, size = self.n, self.buckets, self.passes, self.chunks, self.size
        keys, indices = self.keys, self.indices
        IN, OUT = "(local.get $in0)", "(local.get $out0)"
        slot_of = lambda base, d: f"(i32.add {base} (i32.shl {d} (i32.const 2)))"  # noqa: E731
        store = lambda name, value, kind="i32": f"({kind}.store offset={_DESC[name]} (local.get $DESC) {value})"  # noqa: E731

        def phase(kind: int, extra: list[str]) -> list[str]:
            return ([store("kind", i32(kind))] + extra
                    + work_phase(["out0", "in0"], "(local.get $phase)", i32(chunks), [])
                    + ["(local.set $phase (i32.add (local.get $phase) (i32.const 1)))"])

        def total(p: int, places: bool) -> list[str]:
            """$total: every chunk's count of digit $d in pass p; with `places`, each
            chunk's first place for it, after the chunks before it."""
            return (["(local.set $total (i32.const 0))"]
                    + f.loop("u", i32(0), i32(chunks), (
                        [f"(i32.store {slot_of(f'(i32.add (local.get $PLACES) (i32.mul (local.get $u) {i32(4 * buckets)}))', get('d'))} "
                         "(i32.add (local.get $to) (i32.shl (i32.add (local.get $slot) (local.get $total)) (local.get $scale))))"]
                        if places else [])
                        + [f"(local.set $total (i32.add (local.get $total) (i32.load {slot_of(self.table(get('u'), p), get('d'))})))"],
                        "every chunk's count"))
        varies = lambda p: f.loop("d", i32(0), i32(buckets), total(p, False) + [  # noqa: E731
            f"(if (i32.eq (local.get $total) {i32(n)}) (then (local.set $active (i32.and (local.get $active) {i32(~(1 << p))}))))"],
            f"digit {p}: a pass only if no digit value holds every key")
        key_bufs = ("KEYS", "KEYS2") + (("ORDER", "ORDER2") if indices else ())
        log_size = size.bit_length() - 1

        def run(p: int, shift: int) -> list[str]:
            later = f"(i32.and (local.get $active) {i32(-(1 << (p + 1)) & ((1 << passes) - 1))})"
            delta = (f"(i32.sub (local.get $ORDER2) (i32.shr_u (local.get $KEYS2) {i32(log_size - 2)}))"
                     if indices else i32(0))
            rotation = f"(i64.const {(2 - shift) % keys.bits})"   # as _rotation, for either key width
            common = [store("src", "(local.get $KEYS)"), store("srcidx", "(local.get $ORDER)" if indices else i32(0)),
                      store("rotation", rotation, "i64"), store("mask", _mask(keys, shift, self.width))]
            # a chunk's counts of this digit change as the keys move (one chunk's do not)
            recount = ["(if (i32.eqz (local.get $first)) (then  ;; every chunk's counts of this digit, anew"]
            recount += [f"  {line}" for line in phase(_RECOUNT, [store("table", i32(4 * buckets * p))])] + ["))"]
            recount = recount if chunks > 1 else []
            places = ([f"(local.set $last (i32.eqz {later}))",
                       f"(local.set $to (select {OUT} (local.get $KEYS2) (local.get $last)))",
                       f"(local.set $scale {f'(select {i32(2)} {i32(log_size)} (local.get $last))' if indices else i32(log_size)})",
                       "(local.set $slot (i32.const 0))  ;; the keys of smaller digits"]
                      + f.loop("d", i32(0), i32(buckets), total(p, True) + [
                          "(local.set $slot (i32.add (local.get $slot) (local.get $total)))"],
                          "each chunk's first place for each digit (a byte address in the destination): "
                          "after smaller digits' keys and the chunks' before it"))
            scatter = phase(_SCATTER, [store("delta", f"(select {i32(0)} {delta} (local.get $last))"),
                                       store("first", get("first")), store("last", get("last"))])
            swap = [f"(local.set $swap (local.get ${a})) (local.set ${a} (local.get ${b})) (local.set ${b} (local.get $swap))"
                    for a, b in zip(key_bufs[::2], key_bufs[1::2])]
            inner = common + recount + places + scatter + ["(local.set $first (i32.const 0))"] + swap
            return ([f";; digit {p}: bits {shift}..{min(shift + self.width, 8 * size) - 1}",
                     f"(if (i32.and (local.get $active) {i32(1 << p)}) (then"] + [f"  {line}" for line in inner] + ["))"])
        unmoved = (f.loop("i", i32(0), i32(n), [f"(i32.store {self.at(OUT, get('i'), 4)} (local.get $i))"], "the identity")
                   if indices else [f"(memory.copy {OUT} {IN} {i32(n * size)})"])
        put_back = ([";; values the keys did not give back, in their places",
                     "(local.set $odd (i32.const 0))"]
                    + f.loop("u", i32(0), i32(chunks), [
                        f"(local.set $odd (i32.or (local.get $odd) (i32.load {self.at('(local.get $ODD)', get('u'), 4)})))"],
                        "any chunk's flag")
                    + [f"(if (local.get $odd) (then (call $put_back {OUT} {IN})))"] if self.float_keys else [])
        main = (phase(_KEYS_AND_COUNTS, [])
                + [f"(local.set $active {i32((1 << passes) - 1)})"]
                + [line for p in range(passes) for line in varies(p)]
                + ["(if (local.get $active) (then  ;; else every key the same: the row is its own (stable) order",
                   "  (local.set $first (i32.const 1))"]
                + [f"  {line}" for p, shift in enumerate(self.shifts) for line in run(p, shift)]
                + ["  ) (else"] + [f"  {line}" for line in unmoved] + ["))", "(call $work_done (local.get $SYNC))"]
                + put_back)
        body = (self.buffers()
                + [";; a thread alone has scratch of its own, as it was left (a team's comes zeroed)",
                   "(if (i32.eq (local.get $T) (i32.const 1)) (then (memory.fill (local.get $SYNC) (i32.const 0) (i32.const 16))))",
                   "(if (i32.eqz (local.get $t)) (then"] + [f"  {line}" for line in main]
                + ["  (return)))", ";; another thread: chunks until thread 0 says the work is done",
                   "(call $take_items (local.get $out0) (local.get $in0) (local.get $scratch) (local.get $SYNC))"])
        what = "argsort" if indices else "sort"
        return f.text("(func $team (param $out0 i32) (param $in0 i32) (param $scratch i32) (param $t i32) (param $T i32)",
                      body, f"thread t of T: its part of the {what} of one row of {n} (LSD radix sort, "
                      f"{chunks} chunk{'s' if chunks > 1 else ''})")

    def functions(self) -> list[str]:
        return [self.team(), self.item(), work_list(["out0", "in0"])]


def _sort(routine: Routine, ft: FloatType, indices: bool) -> Body:
    (shape, dtype), = routine.inputs
    n, size = shape[-1], dtype.itemsize
    keys = Keys(dtype)
    width, shifts = _plan(dtype, n)
    serial = _Sorter(routine, ft, indices, 1)
    entry = ("(func $matrix (param $out0 i32) (param $in0 i32) (param $scratch i32)\n"
             f"  ;; {'argsort' if indices else 'sort'} of one row of {n}: a team of one thread\n"
             "  (call $team (local.get $out0) (local.get $in0) (local.get $scratch) (i32.const 0) (i32.const 1)))")
    passes = [_pass(ft, keys, n, width, first, last, indices)
              for first in ((True, False) if indices else (False,)) for last in (True, False)]
    float_keys = not dtype.is_int and not indices
    notes = {"algorithm": (f"LSD radix sort of {8 * size}-bit keys" + (", index pairs" if indices else "")
                           + f", {width} bits a pass",
                           "stable by construction; keys order floats as NumPy (NaN last, "
                           f"-0 equal to +0); the {len(shifts)} histograms come from one read, "
                           "a pass whose digit every key shares is skipped"
                           + ("" if indices else ", and a sort moves keys alone")),
             "digit_bits": (width, f"{'11 for rows of at least ' + str(WIDE_DIGITS_FROM) if width == 11 else '8 for rows under ' + str(WIDE_DIGITS_FROM)}: "
                            "fewer passes against a histogram per pass that stays in L1"),
             "rows": ("one after another", "threads take ranges of rows; a row of at least "
                      f"{TEAM_FROM} alone in its batch is sorted in {TEAM_CHUNKS} chunks, items of a "
                      "work list that the device's threads share (each pass: every chunk's counts, "
                      "then every chunk scattered to its own places)")}
    extra = [_put_back(ft, keys, n)] if float_keys else []
    team = None
    if n >= TEAM_FROM:
        shared = _Sorter(routine, ft, indices, TEAM_CHUNKS)
        team = Team(shared.functions() + passes + extra, shared.lay, TEAM_THREADS)
    return Body([entry] + serial.functions() + passes + extra, ["out0", "in0"], serial.lay, notes, None,
                item_dims=1, team=team)


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
