"""The pieces routines are written with: a WAT function being built (its locals,
loops, loads and stores for one float type), and the loops several routines share
(transposed copies, identities, a stable ordering of keys)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from jaxlab.backends.wasm.vector_loops import FloatType


def i32(value: int) -> str:
    return f"(i32.const {value})"


def get(name: str) -> str:
    return f"(local.get ${name})"


class Fn:
    """One WAT function being written: its locals, loops and memory accesses."""

    def __init__(self, ft: FloatType) -> None:
        self.ft = ft
        self.locals: dict[str, str] = {}
        self.labels = 0

    def var(self, name: str, kind: str = "i32") -> str:
        self.locals[name] = kind
        return f"(local.get ${name})"

    def fvar(self, name: str) -> str:
        return self.var(name, self.ft.name)

    def loop(self, var: str, start: str, stop: str, body: list[str], what: str) -> list[str]:
        """for var = start; var < stop (signed); var++."""
        self.var(var)
        self.labels += 1
        label = f"{var}{self.labels}"
        return ([f"(local.set ${var} {start})", f"(block ${label}_done (loop ${label}  ;; {what}",
                 f"  (br_if ${label}_done (i32.ge_s (local.get ${var}) {stop}))"]
                + [f"  {line}" for line in body]
                + [f"  (local.set ${var} (i32.add (local.get ${var}) (i32.const 1)))",
                   f"  (br ${label})))"])

    def at(self, base: str, index: str) -> str:
        """The byte address of element `index` of the array at `base`."""
        return f"(i32.add {base} (i32.shl {index} (i32.const {self.ft.shift})))"

    def at2(self, base: str, row: str, col: str, cols: int) -> str:
        return self.at(base, f"(i32.add (i32.mul {row} (i32.const {cols})) {col})")

    def load(self, addr: str) -> str:
        return f"({self.ft.name}.load {addr})"

    def store(self, addr: str, value: str) -> str:
        return f"({self.ft.name}.store {addr} {value})"

    def const(self, value: float) -> str:
        return f"({self.ft.name}.const {value!r})"

    def op(self, name: str, *args: str) -> str:
        return f"({self.ft.name}.{name} {' '.join(args)})"

    def text(self, head: str, body: list[str], comment: str) -> str:
        decls = [f"(local ${n} {t})" for n, t in self.locals.items()]
        decls = [" ".join(decls[i:i + 8]) for i in range(0, len(decls), 8)]
        return "\n".join([head, f"  ;; {comment}"] + [f"  {d}" for d in decls]
                         + [f"  {line}" for line in body] + [")"])


@dataclass(frozen=True)
class Layout:
    """Scratch arrays of one thread, 16-byte aligned, by name: byte offset."""
    offsets: dict[str, int]
    nbytes: int


@dataclass(frozen=True)
class Body:
    """What a routine's generator writes: functions, among them `$matrix` computing one
    item of the batch from its buffers (`args`, outputs first) and its scratch."""
    functions: list[str]
    args: list[str]
    layout: Layout
    notes: dict[str, tuple[Any, str]]   # tuning choices: name -> (value, reason)
    flops: Optional[int]                # per item; None where the data decide
    item_dims: int = 2                  # trailing axes of an item: a matrix, or 1 (a row)
    team: Optional["Team"] = None       # how threads share one item, where they can


@dataclass(frozen=True)
class Team:
    """Functions among them `$team(outputs..., inputs..., scratch, t, T)`: thread t of
    T's part of one item, for T up to `threads`, all with one scratch (`layout`), through
    a work list (`work_list`): thread 0 can finish alone."""
    functions: list[str]
    layout: Layout
    threads: int


def layout(**sizes: int) -> Layout:
    offsets, at = {}, 0
    for name, nbytes in sizes.items():
        offsets[name] = at
        at += -(-nbytes // 16) * 16
    return Layout(offsets, at)


def matrix_row(f: "Fn", base: str, row: str, cols: int) -> str:
    """The byte address of row `row` of a matrix of `cols` columns at `base`."""
    return f"(i32.add {base} (i32.mul {row} (i32.const {cols * f.ft.size})))"


def transposed_copy(f: Fn, src: str, dst: str, rows: int, cols: int) -> list[str]:
    """dst (cols x rows) <- src (rows x cols) transposed."""
    inner = f.loop("tc", i32(0), i32(cols), [f.store(f.at2(dst, get("tc"), get("tr"), rows),
                                                    f.load(f.at2(src, get("tr"), get("tc"), cols)))],
                   "columns")
    return f.loop("tr", i32(0), i32(rows), inner, "rows")


def identity(f: Fn, dst: str, rows: int, cols: int) -> list[str]:
    one = f.op("convert_i32_u", "(i32.eq (local.get $ir) (local.get $ic))")
    inner = f.loop("ic", i32(0), i32(cols), [f.store(f.at2(dst, get("ir"), get("ic"), cols), one)],
                   "columns")
    return f.loop("ir", i32(0), i32(rows), inner, "rows")


def sort_order(f: Fn, keys: str, perm: str, n: int, descending: bool) -> list[str]:
    """perm <- the indices of keys[0:n] in (stable) ascending or descending order:
    an insertion sort, n^2/4 compares for n of a few hundred."""
    key_of = lambda idx: f.load(f.at(keys, f"(i32.load {perm_at(perm, idx)})"))  # noqa: E731
    before = "lt" if descending else "gt"
    f.var("key"), f.fvar("kv"), f.var("sj")
    fill = f.loop("si", i32(0), i32(n), [f"(i32.store {perm_at(perm, get('si'))} {get('si')})"],
                  "the identity order")
    insert = [
        f"(local.set $key {get('si')})",
        f"(local.set $kv {f.load(f.at(keys, get('key')))})",
        f"(local.set $sj (i32.sub {get('si')} {i32(1)}))",
        "(block $placed (loop $shift  ;; move larger (smaller) keys up one place",
        f"  (br_if $placed (i32.lt_s {get('sj')} {i32(0)}))",
        f"  (br_if $placed (i32.eqz {f.op(before, key_of(get('sj')), get('kv'))}))",
        f"  (i32.store {perm_at(perm, '(i32.add (local.get $sj) (i32.const 1))')} "
        f"(i32.load {perm_at(perm, get('sj'))}))",
        f"  (local.set $sj (i32.sub {get('sj')} {i32(1)}))",
        "  (br $shift)))",
        f"(i32.store {perm_at(perm, '(i32.add (local.get $sj) (i32.const 1))')} {get('key')})",
    ]
    return fill + f.loop("si", i32(1), i32(n), insert, "insert key si among the sorted ones")


def perm_at(perm: str, index: str) -> str:
    return f"(i32.add {perm} (i32.shl {index} (i32.const 2)))"


# A team's work list, for routines whose steps depend on each other: thread 0 publishes a
# phase (`count` items, numbered) in one 64-bit word at $sync (phase << 44 | count << 22
# | the next index), every thread takes items by compare-and-swap until none is left, and
# thread 0 waits until the items taken by the others are done (the word at $sync + 12
# counts them). A thread that takes nothing is never waited for. The word at $sync + 8 is
# the host's mark that a thread trapped: every wait then traps too, rather than wait for
# ever.
WORK_SPINS = 1 << 18     # loads a helper looks for the next phase before it sleeps (a few hundred us)
_INDEX, _COUNT, _PHASE = "(i64.const 4194303)", "(i64.const 22)", "(i64.const 44)"
WORK_ENDED = (1 << 20) - 1   # the phase that sends the helpers home


def _index(v: str) -> str:
    return f"(i64.and {v} {_INDEX})"


def _count(v: str) -> str:
    return f"(i64.and (i64.shr_u {v} {_COUNT}) {_INDEX})"


def _phase(v: str) -> str:
    return f"(i64.shr_u {v} {_PHASE})"


def work_list(args: list[str]) -> str:
    """The work list's functions for a routine whose `$item(args..., scratch, phase,
    index)` does one item."""
    params = " ".join(f"(param ${a} i32)" for a in args)
    passed = " ".join(f"(local.get ${a})" for a in args)
    v = "(local.get $v)"
    return f"""(func $publish (param $sync i32) (param $phase i32) (param $count i32)
  ;; a new phase of $count items: none taken, none done; sleeping helpers woken
  (i32.atomic.store offset=12 (local.get $sync) (i32.const 0))
  (i64.atomic.store (local.get $sync) (i64.or (i64.shl (i64.extend_i32_u (local.get $phase)) {_PHASE})
    (i64.shl (i64.extend_i32_u (local.get $count)) {_COUNT})))
  (drop (memory.atomic.notify (local.get $sync) (i32.const -1))))
(func $claim (param $sync i32) (result i64)
  ;; the word as it was when this thread took an item (its index is below its count), or
  ;; as it is when none is left
  (local $v i64)
  (loop $again
    (local.set $v (i64.atomic.load (local.get $sync)))
    (if (i64.ge_u {_index(v)} {_count(v)}) (then (return {v})))
    (br_if $again (i64.ne (i64.atomic.rmw.cmpxchg (local.get $sync) {v} (i64.add {v} (i64.const 1))) {v})))
  {v})
(func $take_phase {params} (param $scratch i32) (param $sync i32) (result i64)
  ;; items of the phase now published until none is left; the word then
  (local $v i64)
  (loop $items
    (local.set $v (call $claim (local.get $sync)))
    (if (i64.lt_u {_index(v)} {_count(v)}) (then
      (call $item {passed} (local.get $scratch) (i32.wrap_i64 {_phase(v)}) (i32.wrap_i64 {_index(v)}))
      (drop (i32.atomic.rmw.add offset=12 (local.get $sync) (i32.const 1)))
      (br $items))))
  {v})
(func $finished (param $sync i32) (param $count i32)
  ;; thread 0: wait until the phase's $count items are done, by whichever thread took them
  (loop $waiting
    (if (i32.atomic.load offset=8 (local.get $sync)) (then unreachable))  ;; another thread trapped
    (br_if $waiting (i32.ne (i32.atomic.load offset=12 (local.get $sync)) (local.get $count)))))
(func $take_items {params} (param $scratch i32) (param $sync i32)
  ;; a helper: items of every phase, until thread 0 ends the list
  (local $v i64) (local $spins i32)
  (loop $phases
    (local.set $v (call $take_phase {passed} (local.get $scratch) (local.get $sync)))
    (if (i64.eq {_phase(v)} (i64.const {WORK_ENDED})) (then (return)))
    (local.set $spins (i32.const 0))
    (block $changed (loop $waiting  ;; for the next phase: a while looking, then asleep
      (br_if $changed (i64.ne (i64.atomic.load (local.get $sync)) {v}))
      (if (i32.atomic.load offset=8 (local.get $sync)) (then unreachable))  ;; another thread trapped
      (local.set $spins (i32.add (local.get $spins) (i32.const 1)))
      (br_if $waiting (i32.lt_u (local.get $spins) (i32.const {WORK_SPINS})))
      (drop (memory.atomic.wait64 (local.get $sync) {v} (i64.const 1000000)))
      (br $waiting)))
    (br $phases)))
(func $work_done (param $sync i32)
  ;; thread 0: the helpers go home
  (call $publish (local.get $sync) (i32.const {WORK_ENDED}) (i32.const 0)))"""


def work_phase(args: list[str], phase: str, count: str, own: list[str]) -> list[str]:
    """Thread 0's lines for one phase: publish it, do `own` (work no item does) while
    others take items, take items, wait for those taken by others."""
    passed = " ".join(f"(local.get ${a})" for a in args)
    return ([f"(call $publish (local.get $SYNC) {phase} {count})"] + own
            + [f"(drop (call $take_phase {passed} (local.get $scratch) (local.get $SYNC)))",
               f"(call $finished (local.get $SYNC) {count})"])
