"""LSD radix sort of u32 keys with a u32 payload, along rows, as WGSL passes.

Each pass sorts stably by one 8-bit digit (least significant first) in a scatter: a
workgroup per tile of TILE keys of a row sorts its keys by the digit in shared memory
and writes each key to where its digit's keys from this tile go plus its rank among
them: runs of a digit are written together, and equal digits keep their order.

Where a tile's keys of each digit go (Offsets):
- LOOKBACK (with BALLOTS): one pass up front counts every digit of every pass in each
  row. A scatter takes a ticket (tiles in the order they started), publishes its
  tile's counts in a state word per digit (flag and count in one atomic), and walks
  back over the tiles before it, adding their counts until one says it includes all
  before it; then publishes that inclusive count. A tile whose state is not there
  after SPINS reads is counted by the walker itself (its keys are in the input), so
  no workgroup ever waits on another's progress (WebGPU promises none).
- SCANNED: per pass a histogram of each tile's digits (shared-memory atomics), then
  an exclusive prefix sum over the counts laid out [row][digit][tile]: entry
  (r, d, t) becomes where tile t's keys with digit d go in the whole array (row r's
  keys start at r * n). Reduce-then-scan: block sums, then each block scanned from
  its carry (the sums before it added up, or past SUMMED_BLOCKS scanned first).
How a tile is sorted by the digit (Ranking):
- BALLOTS (adapters with subgroups): each subgroup ranks its keys among the lanes
  with the same digit by eight ballots (one a bit of the digit), keeps running
  counts of each digit in shared memory, and one prefix sum over the digits' totals
  places every key: the tile is read once and written once into shared memory.
- SPLITS: four stable 2-bit splits, each a prefix sum over the threads of their
  packed counts, the tile rewritten into shared memory after each.
The payload of the first pass is the key's position in its row (the argsort order)
unless a payload is given (a later sort over an earlier one's order).
Prefix sums over the threads use subgroup scans where the adapter has them, else a
Hillis-Steele scan in shared memory.
"""
from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from jaxlab.backends.webgpu.codegen import MAIN, SUBGROUP_BUILTINS, HandWritten
from jaxlab.backends.webgpu.tune import Limits

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

DIGIT_BITS = 8
DIGITS = 1 << DIGIT_BITS
THREADS = 256          # threads of every radix workgroup (WebGPU guarantees 256)
MAX_ITEMS = 8          # keys per thread in a tile, at most (shared memory may allow fewer)
SPLIT_BITS = 2         # a tile sorts by a digit in stable splits of this many bits
SCAN_ITEMS = 8         # counts per thread in a block of the prefix sum
SCAN_BLOCK = THREADS * SCAN_ITEMS
# up to this many blocks each adds up the block sums before it (reads grow as its
# square); past it the sums are scanned first, a pass more
SUMMED_BLOCKS = SCAN_BLOCK
# BALLOTS: a digit's running count per slot of the tile. A slot is one subgroup
# (several, taking turns, where subgroups are small): NVIDIA's 32 lanes make 8
# subgroups of 256 threads, lavapipe's 8 lanes 32 subgroups, two to a slot
SLOTS = 16


class Ranking(enum.Enum):
    """How a scatter sorts its tile by the digit (module docstring)."""
    BALLOTS = "subgroup ballots"
    SPLITS = "2-bit splits"


RANKING: "Ranking | None" = None   # None: BALLOTS where the adapter has subgroups


@dataclass(frozen=True)
class _SubgroupShader(HandWritten):
    """A hand-written shader whose main also takes the subgroup builtins."""

    def source(self, threads: int, prologue: list[str]) -> str:
        return super().source(threads, prologue).replace(
            MAIN, MAIN[:-1] + SUBGROUP_BUILTINS + ")", 1)


@dataclass(frozen=True)
class _ThreadScan:
    """An exclusive prefix sum of one value per thread over the workgroup, as a WGSL
    function `scan_threads` returning the prefix and the total (all threads must call it)."""
    subgroups: bool
    wgsl_type: str

    @property
    def position(self) -> str:
        """This thread's place in the scan order (subgroups: lanes of a subgroup together)."""
        return "sg_id * sg_size + sg_lane" if self.subgroups else "lid"

    def call(self, value: str) -> str:
        extra = ", sg_lane, sg_id, n_sg" if self.subgroups else ""
        return f"scan_threads({value}, pos{extra})"

    def shader(self, declarations: str, body: str) -> HandWritten:
        cls = _SubgroupShader if self.subgroups else HandWritten
        return cls(declarations + self.declarations(), f"  let pos = {self.position};\n" + body)

    def declarations(self) -> str:
        t = self.wgsl_type
        head = f"""
struct Scanned {{
  before: {t},   // the sum over the threads before this one
  total: {t},    // the sum over all threads
}}
"""
        if self.subgroups:
            return head + f"""
var<workgroup> subgroup_sums: array<{t}, {THREADS}>;

fn scan_threads(value: {t}, pos: u32, lane: u32, subgroup: u32, subgroups: u32) -> Scanned {{
  // within the subgroup in registers, then over the subgroups' sums in shared memory
  let inclusive = subgroupInclusiveAdd(value);
  let sum = subgroupAdd(value);
  if (lane == 0u) {{ subgroup_sums[subgroup] = sum; }}
  workgroupBarrier();
  var before = inclusive - value;
  var total = {t}();
  // the subgroups' sums: those before this one, and all of them
  for (var s = 0u; s < subgroups; s++) {{
    let part = subgroup_sums[s];
    before += select({t}(), part, s < subgroup);
    total += part;
  }}
  workgroupBarrier();
  return Scanned(before, total);
}}
"""
        return head + f"""
var<workgroup> partial_sums: array<{t}, {THREADS}>;

fn scan_threads(value: {t}, pos: u32) -> Scanned {{
  // Hillis-Steele: after the step at distance d each thread holds the sum of 2d values
  var inclusive = value;
  partial_sums[pos] = inclusive;
  workgroupBarrier();
  for (var d = 1u; d < {THREADS}u; d <<= 1u) {{
    var earlier = {t}();
    if (pos >= d) {{ earlier = partial_sums[pos - d]; }}
    workgroupBarrier();
    inclusive += earlier;
    partial_sums[pos] = inclusive;
    workgroupBarrier();
  }}
  let total = partial_sums[{THREADS - 1}u];
  workgroupBarrier();
  return Scanned(inclusive - value, total);
}}
"""


def ranking(subgroups: bool) -> Ranking:
    """RANKING where the adapter allows it, else ballots where it has subgroups."""
    if RANKING is not None and (subgroups or RANKING is Ranking.SPLITS):
        return RANKING
    return Ranking.BALLOTS if subgroups else Ranking.SPLITS


def _fixed_shared(how: Ranking) -> int:
    """Shared bytes of a scatter besides its tile (tables of digits, the thread scan)."""
    tables = 4 * DIGITS * 3 + 16 * THREADS   # offsets, run starts, buckets, thread scan
    return tables + (4 * SLOTS * DIGITS // 2 if how is Ranking.BALLOTS else 0)


def items_per_thread(limits: Limits, how: Ranking = Ranking.SPLITS) -> int:
    """Keys per thread in a tile: as many as shared memory holds (keys and payloads)."""
    def shared_bytes(items: int) -> int:   # keys and payloads, padded (slot() in WGSL)
        return 8 * THREADS * items * 33 // 32 + _fixed_shared(how)

    items = MAX_ITEMS
    while items > 1 and shared_bytes(items) > limits.max_shared_bytes:
        items //= 2
    return items


def key_passes(key_bits: int) -> int:
    return math.ceil(key_bits / DIGIT_BITS)


_PASS_PARAMS = """struct Pass {
  shift: u32,      // the digit is (key >> shift) & 0xff
  first: u32,      // 1: the payload is each key's position in its row
  number: u32,     // which pass (LOOKBACK: its ticket counter, counts and tile states)
  unused: u32,
}
"""


def _histogram(n: int, tiles: int, items: int) -> HandWritten:
    tile = THREADS * items
    return HandWritten(f"""{_PASS_PARAMS}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<uniform> params: Pass;

var<workgroup> histogram: array<atomic<u32>, {DIGITS}>;
""", f"""  let row = group / {tiles}u;
  let tile = group % {tiles}u;
  let start = row * {n}u + tile * {tile}u;
  let count = min({tile}u, {n}u - tile * {tile}u);
  atomicStore(&histogram[lid], 0u);
  workgroupBarrier();
  // neighbouring threads read neighbouring keys
  for (var i = 0u; i < {items}u; i++) {{
    let e = i * {THREADS}u + lid;
    if (e < count) {{
      atomicAdd(&histogram[(keys[start + e] >> params.shift) & {DIGITS - 1}u], 1u);
    }}
  }}
  workgroupBarrier();
  // laid out [row][digit][tile]: one prefix sum then gives every tile's offsets
  counts[(row * {DIGITS}u + lid) * {tiles}u + tile] = atomicLoad(&histogram[lid]);
""")


def _block_sums(length: int, scan: _ThreadScan) -> HandWritten:
    return scan.shader(f"""@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
""", f"""  let base = group * {SCAN_BLOCK}u;
  var mine = 0u;
  // neighbouring threads read neighbouring values
  for (var i = 0u; i < {SCAN_ITEMS}u; i++) {{
    let e = base + i * {THREADS}u + pos;
    if (e < {length}u) {{ mine += values[e]; }}
  }}
  let scanned = {scan.call("mine")};
  if (pos == 0u) {{ sums[group] = scanned.total; }}
""")


class _Carry(enum.Enum):
    """Where a block of the prefix sum gets the sum of the blocks before it."""
    NONE = "one block"
    SUMMED = "adds up the block sums before it"     # few blocks: one pass less
    SCANNED = "reads the block sums' prefix sum"    # many: the sums scanned first


def _block_scan(length: int, carry: _Carry, scan: _ThreadScan) -> HandWritten:
    carry_binding = ("" if carry is _Carry.NONE else
                     "@group(0) @binding(2) var<storage, read> carries: array<u32>;\n")
    summed = f"""  // the block sums before this block, added up by all threads
  var earlier = 0u;
  for (var b = pos; b < group; b += {THREADS}u) {{ earlier += carries[b]; }}
  let carry = {scan.call("earlier")}.total;
"""
    start = {_Carry.NONE: "", _Carry.SUMMED: " + carry", _Carry.SCANNED: " + carries[group]"}
    return scan.shader(f"""@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> prefix: array<u32>;
{carry_binding}""", f"""{summed if carry is _Carry.SUMMED else ""}  // this thread's consecutive values, then its place among the threads
  let base = group * {SCAN_BLOCK}u + pos * {SCAN_ITEMS}u;
  var mine = 0u;
  for (var i = 0u; i < {SCAN_ITEMS}u; i++) {{
    if (base + i < {length}u) {{ mine += values[base + i]; }}
  }}
  let scanned = {scan.call("mine")};
  var running = scanned.before{start[carry]};
  // each value's exclusive prefix
  for (var i = 0u; i < {SCAN_ITEMS}u; i++) {{
    if (base + i < {length}u) {{
      let value = values[base + i];
      prefix[base + i] = running;
      running += value;
    }}
  }}
""")


def _split_scatter(n: int, tiles: int, items: int, split_bits: int,
                   scan: _ThreadScan) -> HandWritten:
    tile = THREADS * items
    buckets = 1 << split_bits
    # a thread's counts of the buckets, 16 bits each, packed in vec4s: 8 buckets a vec4
    parts = [f"counts{q}" for q in range(math.ceil(buckets / 8))]

    def per_part(line: str) -> str:   # a line for each vec4 of counts
        return "\n".join(line.format(part=part, q=q) for q, part in enumerate(parts))
    return scan.shader(f"""{_PASS_PARAMS}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> payload_out: array<u32>;
@group(0) @binding(5) var<uniform> params: Pass;

var<workgroup> tile_keys: array<u32, {tile + tile // 32}>;
var<workgroup> tile_payload: array<u32, {tile + tile // 32}>;
var<workgroup> digit_offset: array<u32, {DIGITS}>;   // where the tile's digit d goes
var<workgroup> digit_start: array<u32, {DIGITS}>;    // where its run starts in the tile
var<workgroup> bucket_start: array<u32, {buckets}>;   // where a split's bucket starts

fn slot(e: u32) -> u32 {{
  // a word of padding after every 32: a thread's consecutive keys start on different
  // banks, so reading them thread by thread does not conflict
  return e + (e >> 5u);
}}

fn digit_of(key: u32) -> u32 {{
  return (key >> params.shift) & {DIGITS - 1}u;
}}

fn one_of(bucket: u32, part: u32) -> vec4<u32> {{
  // bucket b counts in bits 16 (b % 2) of word (b / 2) % 4 of vec4 number b / 8
  let word = vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>((bucket >> 1u) & 3u);
  let unit = vec4<u32>(1u << (16u * (bucket & 1u)));
  return select(vec4<u32>(), unit, word & vec4<bool>(bucket >> 3u == part));
}}

fn count_of(counts: vec4<u32>, bucket: u32) -> u32 {{
  // (counts: the vec4 that holds this bucket)
  return (counts[(bucket >> 1u) & 3u] >> (16u * (bucket & 1u))) & 0xffffu;
}}
""", f"""  let row = group / {tiles}u;
  let tile = group % {tiles}u;
  let start = row * {n}u + tile * {tile}u;
  let count = min({tile}u, {n}u - tile * {tile}u);
  digit_offset[lid] = offsets[(row * {DIGITS}u + lid) * {tiles}u + tile];
  // the tile into shared memory, neighbouring threads reading neighbouring keys;
  // past the row's end, keys that sort last (never written back)
  for (var i = 0u; i < {items}u; i++) {{
    let e = i * {THREADS}u + lid;
    var key = 0xffffffffu;
    var value = 0u;
    if (e < count) {{
      key = keys[start + e];
      value = select(payload[start + e], tile * {tile}u + e, params.first == 1u);
    }}
    tile_keys[slot(e)] = key;
    tile_payload[slot(e)] = value;
  }}
  workgroupBarrier();
  // each thread takes consecutive keys: their order within a thread is the tile's
  var key: array<u32, {items}>;
  var value: array<u32, {items}>;
  for (var i = 0u; i < {items}u; i++) {{
    key[i] = tile_keys[slot(pos * {items}u + i)];
    value[i] = tile_payload[slot(pos * {items}u + i)];
  }}
  // sort the tile by the digit: stable splits by its {split_bits}-bit parts, low to high
  for (var bit = 0u; bit < {DIGIT_BITS}u; bit += {split_bits}u) {{
    let shift = params.shift + bit;
{per_part("    var {part} = vec4<u32>();")}
    for (var i = 0u; i < {items}u; i++) {{
      let bucket = (key[i] >> shift) & {buckets - 1}u;
{per_part("      {part} += one_of(bucket, {q}u);")}
    }}
    // the counts of the threads before this one, and of all
{per_part("    let scanned{q} = " + scan.call("{part}") + ";")}
    // where each bucket starts in the tile: the sizes of the buckets before it
    if (lid < {buckets}u) {{
      var before = 0u;
      for (var b = 0u; b < lid; b++) {{
{per_part("        if (b >> 3u == {q}u) {{ before += count_of(scanned{q}.total, b); }}")}
      }}
      bucket_start[lid] = before;
    }}
    workgroupBarrier();
{per_part("    var before{q} = scanned{q}.before;")}
    for (var i = 0u; i < {items}u; i++) {{
      let bucket = (key[i] >> shift) & {buckets - 1}u;
      var to = bucket_start[bucket];
{per_part("      if (bucket >> 3u == {q}u) {{ to += count_of(before{q}, bucket); }}")}
{per_part("      before{q} += one_of(bucket, {q}u);")}
      tile_keys[slot(to)] = key[i];
      tile_payload[slot(to)] = value[i];
    }}
    workgroupBarrier();
    for (var i = 0u; i < {items}u; i++) {{
      key[i] = tile_keys[slot(pos * {items}u + i)];
      value[i] = tile_payload[slot(pos * {items}u + i)];
    }}
  }}
  // where each digit's run starts in the sorted tile
  for (var i = 0u; i < {items}u; i++) {{
    let e = pos * {items}u + i;
    let digit = digit_of(key[i]);
    if (e == 0u || digit_of(tile_keys[slot(e - 1u)]) != digit) {{ digit_start[digit] = e; }}
  }}
  workgroupBarrier();
  // write back: a key's place is its digit's offset plus its rank in the digit's run
  for (var i = 0u; i < {items}u; i++) {{
    let e = i * {THREADS}u + lid;
    if (e < count) {{
      let digit = digit_of(tile_keys[slot(e)]);
      let to = digit_offset[digit] + e - digit_start[digit];
      keys_out[to] = tile_keys[slot(e)];
      payload_out[to] = tile_payload[slot(e)];
    }}
  }}
""")


class Offsets(enum.Enum):
    """How a scatter learns where its tile's keys of each digit go."""
    SCANNED = "histogram pass, prefix sum over (digit, tile)"
    LOOKBACK = "one histogram of every digit up front, decoupled look-back per tile"


OFFSETS: "Offsets | None" = None   # None: LOOKBACK with BALLOTS, where it fits (offsets())
SPINS = 64   # LOOKBACK: reads of an unfinished tile's state before counting its keys here
_AGGREGATE, _INCLUSIVE = 1 << 30, 2 << 30   # a tile state's flag: its own counts / with all before


CLEAR_GROUPS = 256      # LOOKBACK: workgroups that zero its state buffer
COUNT_CHUNK = 1 << 14   # LOOKBACK: keys a workgroup counts the digits of, up front


# LOOKBACK on a software adapter only for rows of this many tiles: there workgroups
# run one after another on each CPU thread, a tile mostly finds the one before it
# unpublished and counts it itself, and every step back costs barriers
SOFTWARE_LOOKBACK_TILES = 8


def offsets(how: Ranking, limits: Limits, tiles: int) -> Offsets:
    """OFFSETS (default LOOKBACK) where it can run: it ranks by ballots, and on a
    software adapter only short rows walk back (the loop budget, the time)."""
    if how is not Ranking.BALLOTS or not (limits.hardware or tiles <= SOFTWARE_LOOKBACK_TILES):
        return Offsets.SCANNED
    return OFFSETS or Offsets.LOOKBACK


def _state_words(rows: int, tiles: int, passes: int) -> tuple[int, int, int]:
    """LOOKBACK's state buffer: (where the digit counts start, where the tile states
    start, its length in words); the ticket counters come first."""
    counts = DIGITS
    states = counts + rows * passes * DIGITS
    return counts, states, states + passes * rows * tiles * DIGITS


def _ballot_scatter(n: int, tiles: int, items: int, scan: _ThreadScan, how: Offsets,
                    rows: int = 1, passes: int = 1) -> HandWritten:
    tile = THREADS * items
    words = DIGITS // 2   # a slot's counts: two 16-bit counts a word
    counts_at, states_at, _ = _state_words(rows, tiles, passes)
    bindings = ("@group(0) @binding(2) var<storage, read> offsets: array<u32>;"
                if how is Offsets.SCANNED else
                "@group(0) @binding(2) var<storage, read_write> state: array<atomic<u32>>;")
    if how is Offsets.SCANNED:
        which = "group"
        where = f"""  digit_offset[lid] = offsets[(row * {DIGITS}u + lid) * {tiles}u + tile];
"""
        publish = ""
    else:
        # tiles in the order they started (a ticket), so the tiles a tile waits on
        # have started; a tile that has not published yet is counted here instead
        which = "workgroupUniformLoad(&ticket)"
        where = ""
        publish = f"""  // where each digit starts in the row: the counts of the smaller digits
  let counts = {counts_at}u + (row * {passes}u + params.number) * {DIGITS}u;
  let digit_base = {scan.call(f"atomicLoad(&state[counts + pos])")}.before;
  // this tile's counts for the tiles after it, then the counts of the tiles before
  let states = {states_at}u + (params.number * {rows}u + row) * {tiles * DIGITS}u;
  let mine = digit_total[lid];
  atomicStore(&state[states + tile * {DIGITS}u + lid],
              select({_AGGREGATE}u, {_INCLUSIVE}u, tile == 0u) | mine);
  // walk back tile by tile, all threads together (a tile not published yet is
  // counted here by all of them), until every digit has found an inclusive count
  var before = 0u;
  var done = tile == 0u;
  for (var back = tile; back > 0u; back--) {{
    let other = states + (back - 1u) * {DIGITS}u + lid;
    var word = 0u;
    if (!done) {{
      atomicAdd(&walking, 1u);
      word = atomicLoad(&state[other]);
      for (var spin = 0u; spin < {SPINS}u && word == 0u; spin++) {{
        word = atomicLoad(&state[other]);
      }}
      if (word == 0u) {{ atomicAdd(&missing, 1u); }}
    }}
    workgroupBarrier();
    if (lid == 0u) {{ step = vec2<u32>(atomicExchange(&walking, 0u), atomicExchange(&missing, 0u)); }}
    let now = workgroupUniformLoad(&step);
    if (now.x == 0u) {{ break; }}
    if (now.y != 0u) {{
      atomicStore(&found[lid], 0u);
      workgroupBarrier();
      let begin = row * {n}u + (back - 1u) * {tile}u;
      for (var i = 0u; i < {items}u; i++) {{
        atomicAdd(&found[digit_of(keys[begin + i * {THREADS}u + lid])], 1u);
      }}
      workgroupBarrier();
      if (word == 0u) {{ word = {_AGGREGATE}u | atomicLoad(&found[lid]); }}
    }}
    if (!done) {{
      before += word & {_AGGREGATE - 1}u;
      done = word >= {_INCLUSIVE}u;
    }}
  }}
  if (tile > 0u) {{
    atomicStore(&state[states + tile * {DIGITS}u + lid], {_INCLUSIVE}u | (before + mine));
  }}
  digit_base_of[pos] = digit_base;
  workgroupBarrier();
  digit_offset[lid] = row * {n}u + digit_base_of[lid] + before;
"""
    ticket = ("" if how is Offsets.SCANNED else
              "    ticket = atomicAdd(&state[params.number], 1u);\n"
              "    atomicStore(&walking, 0u);\n    atomicStore(&missing, 0u);\n")
    lookback_shared = ("" if how is Offsets.SCANNED else f"""var<workgroup> ticket: u32;
var<workgroup> digit_base_of: array<u32, {DIGITS}>;
var<workgroup> walking: atomic<u32>;   // threads whose digit walks back a tile further
var<workgroup> missing: atomic<u32>;   // threads that found that tile's state unpublished
var<workgroup> step: vec2<u32>;        // the two, read by all
var<workgroup> found: array<atomic<u32>, {DIGITS}>;   // an unpublished tile's counts
""")
    return scan.shader(f"""{_PASS_PARAMS}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
{bindings}
@group(0) @binding(3) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> payload_out: array<u32>;
@group(0) @binding(5) var<uniform> params: Pass;

var<workgroup> tile_keys: array<u32, {tile}>;
var<workgroup> tile_payload: array<u32, {tile}>;
var<workgroup> digit_offset: array<u32, {DIGITS}>;   // where the tile's digit d goes
var<workgroup> digit_start: array<u32, {DIGITS}>;    // where its run starts in the tile
var<workgroup> digit_total: array<u32, {DIGITS}>;    // how many keys of the tile have it
// a slot's running count of digit d in bits 16 (d % 2) of word slot * {words} + d / 2;
// later the count in the slots before it
var<workgroup> slot_counts: array<atomic<u32>, {SLOTS * words}>;
var<workgroup> turns: u32;
{lookback_shared}
fn digit_of(key: u32) -> u32 {{
  return (key >> params.shift) & {DIGITS - 1}u;
}}

fn lanes_below(lane: u32) -> vec4<u32> {{
  // a ballot's mask of the lanes before this one
  let full = vec4<u32>(lane >> 5u) > vec4<u32>(0u, 1u, 2u, 3u);
  let part = vec4<u32>(lane >> 5u) == vec4<u32>(0u, 1u, 2u, 3u);
  let bits = (1u << (lane & 31u)) - 1u;
  return select(vec4<u32>(), vec4<u32>(0xffffffffu), full) | select(vec4<u32>(), vec4<u32>(bits), part);
}}

fn ones(mask: vec4<u32>) -> u32 {{
  let c = countOneBits(mask);
  return c.x + c.y + c.z + c.w;
}}

fn first_lane(mask: vec4<u32>) -> u32 {{
  // the lowest lane set (mask is not empty)
  let f = firstTrailingBit(mask);
  return select(select(select(96u + f.w, 64u + f.z, mask.z != 0u), 32u + f.y, mask.y != 0u),
                f.x, mask.x != 0u);
}}
""", f"""  // (workgroup memory is not zeroed here: wgpu may leave that out)
  for (var w = lid; w < {SLOTS * words}u; w += {THREADS}u) {{ atomicStore(&slot_counts[w], 0u); }}
  if (lid == 0u) {{
    turns = max(1u, n_sg / {SLOTS}u);
{ticket}  }}
  let place = {which};
  let row = place / {tiles}u;
  let tile = place % {tiles}u;
  let start = row * {n}u + tile * {tile}u;
  let count = min({tile}u, {n}u - tile * {tile}u);
{where}  // subgroups sharing a slot take turns; a slot holds a run of the tile, its keys
  // taken `lanes` at a time, subgroup by subgroup (tile order, for stability)
  let turn_count = workgroupUniformLoad(&turns);
  let slot = sg_id / turn_count;
  let turn = sg_id % turn_count;
  let lanes = sg_size * turn_count;
  let first = slot * lanes * {items}u + turn * sg_size + sg_lane;
  let below = lanes_below(sg_lane);
  let in_subgroup = lanes_below(sg_size) | select(vec4<u32>(), vec4<u32>(0xffffffffu),
                                                  vec4<bool>(sg_size >= 128u));
  // past the row's end, keys that sort last (never written back)
  var key: array<u32, {items}>;
  var value: array<u32, {items}>;
  var rank: array<u32, {items}>;   // among the keys of its slot with its digit
  for (var i = 0u; i < {items}u; i++) {{
    let e = first + i * lanes;
    key[i] = 0xffffffffu;
    value[i] = 0u;
    if (e < count) {{
      key[i] = keys[start + e];
      value[i] = select(payload[start + e], tile * {tile}u + e, params.first == 1u);
    }}
  }}
  for (var i = 0u; i < {items}u; i++) {{
    for (var t = 0u; t < turn_count; t++) {{
      if (turn == t) {{
        // the lanes whose keys have this digit: a ballot per bit
        let digit = digit_of(key[i]);
        var peers = in_subgroup;
        for (var bit = 0u; bit < {DIGIT_BITS}u; bit++) {{
          let one = ((digit >> bit) & 1u) == 1u;
          let voted = subgroupBallot(one);
          peers &= select(~voted, voted, one);
        }}
        // the first of them adds their number to the slot's count, and all learn
        // the count before
        let leader = first_lane(peers);
        let half = 16u * (digit & 1u);
        var before = 0u;
        if (sg_lane == leader) {{
          let word = slot * {words}u + digit / 2u;
          before = (atomicAdd(&slot_counts[word], ones(peers) << half) >> half) & 0xffffu;
        }}
        rank[i] = subgroupShuffle(before, leader) + ones(peers & below);
      }}
      workgroupBarrier();
    }}
  }}
  // each digit's count in the slots before each slot, and in the whole tile
  if (lid < {words}u) {{
    var running = 0u;   // two 16-bit sums
    for (var s = 0u; s < n_sg / turn_count; s++) {{
      running += atomicExchange(&slot_counts[s * {words}u + lid], running);
    }}
    // (past the row's end, keys that were never there: no tile after this one)
    digit_total[2u * lid] = running & 0xffffu;
    digit_total[2u * lid + 1u] = running >> 16u;
  }}
  workgroupBarrier();
  digit_start[pos] = {scan.call("digit_total[pos]")}.before;
{publish}  workgroupBarrier();
  // the tile sorted by the digit into shared memory
  for (var i = 0u; i < {items}u; i++) {{
    let digit = digit_of(key[i]);
    let half = 16u * (digit & 1u);
    let earlier = (atomicLoad(&slot_counts[slot * {words}u + digit / 2u]) >> half) & 0xffffu;
    let to = digit_start[digit] + earlier + rank[i];
    tile_keys[to] = key[i];
    tile_payload[to] = value[i];
  }}
  workgroupBarrier();
  // write back: a key's place is its digit's offset plus its rank in the digit's run
  for (var i = 0u; i < {items}u; i++) {{
    let e = i * {THREADS}u + lid;
    if (e < count) {{
      let digit = digit_of(tile_keys[e]);
      let to = digit_offset[digit] + e - digit_start[digit];
      keys_out[to] = tile_keys[e];
      payload_out[to] = tile_payload[e];
    }}
  }}
""")


def _clear(words: int) -> HandWritten:
    return HandWritten("""@group(0) @binding(0) var<storage, read_write> state: array<u32>;
""", f"""  // (each thread clears every {THREADS * CLEAR_GROUPS}th word)
  for (var w = group * {THREADS}u + lid; w < {words}u; w += {THREADS * CLEAR_GROUPS}u) {{
    state[w] = 0u;
  }}
""")


def _all_digit_counts(n: int, chunks: int, passes: int, counts_at: int) -> HandWritten:
    """Each row's count of every digit of every pass, a workgroup a chunk of a row."""
    chunk = math.ceil(n / chunks)
    return HandWritten(f"""@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;

var<workgroup> counts: array<atomic<u32>, {passes * DIGITS}>;
""", f"""  for (var w = lid; w < {passes * DIGITS}u; w += {THREADS}u) {{ atomicStore(&counts[w], 0u); }}
  workgroupBarrier();
  let row = group / {chunks}u;
  let begin = (group % {chunks}u) * {chunk}u;
  let end = min(begin + {chunk}u, {n}u);
  for (var e = begin + lid; e < end; e += {THREADS}u) {{
    let key = keys[row * {n}u + e];
    for (var p = 0u; p < {passes}u; p++) {{
      atomicAdd(&counts[p * {DIGITS}u + ((key >> ({DIGIT_BITS}u * p)) & {DIGITS - 1}u)], 1u);
    }}
  }}
  workgroupBarrier();
  for (var w = lid; w < {passes * DIGITS}u; w += {THREADS}u) {{
    let found = atomicLoad(&counts[w]);
    if (found != 0u) {{ atomicAdd(&state[{counts_at}u + row * {passes * DIGITS}u + w], found); }}
  }}
""")


def _prefix_sum(b: "_Builder", values: int, prefix: int, length: int, scan: _ThreadScan) -> None:
    """prefix = the exclusive prefix sum of `length` u32 values, reduce-then-scan."""
    blocks = math.ceil(length / SCAN_BLOCK)
    if blocks == 1:
        b.shader(_block_scan(length, _Carry.NONE, scan), "radix_scan", 1, THREADS,
                 [values, prefix], [prefix])
        return
    sums = b.temp(4 * blocks)
    b.shader(_block_sums(length, scan), "radix_block_sums", blocks, THREADS, [values, sums],
             [sums])
    if blocks <= SUMMED_BLOCKS:
        carries, carry = sums, _Carry.SUMMED
    else:
        carries, carry = b.temp(4 * blocks), _Carry.SCANNED
        _prefix_sum(b, sums, carries, blocks, scan)
    b.shader(_block_scan(length, carry, scan), "radix_scan", blocks, THREADS,
             [values, prefix, carries], [prefix])


def radix_sort(b: "_Builder", rows: int, n: int, keys: int, key_bits: int, result: int,
               payload: Optional[int] = None) -> None:
    """Sort `rows` rows of n u32 keys (buffer `keys`, overwritten; only their low
    `key_bits` bits vary) stably, and write their payload in sorted order to `result`:
    the u32 words of buffer `payload`, or each key's position in its row."""
    subgroups = b.lang.subgroups
    how = ranking(subgroups)
    items = items_per_thread(b.limits, how)
    tile = THREADS * items
    tiles = math.ceil(n / tile)
    packed_scan, count_scan = _ThreadScan(subgroups, "vec4<u32>"), _ThreadScan(subgroups, "u32")
    passes = key_passes(key_bits)
    where = offsets(how, b.limits, tiles)
    if where is Offsets.LOOKBACK:
        counts_at, _, words = _state_words(rows, tiles, passes)
        state = b.temp(4 * words)
        b.shader(_clear(words), "radix_clear", CLEAR_GROUPS, THREADS, [state], [state])
        chunks = math.ceil(n / COUNT_CHUNK)
        b.shader(_all_digit_counts(n, chunks, passes, counts_at), "radix_digit_counts",
                 rows * chunks, THREADS, [keys, state], [state])
        scatter = _ballot_scatter(n, tiles, items, count_scan, where, rows, passes)
    else:
        counts, offsets_ = b.temp(4 * rows * DIGITS * tiles), b.temp(4 * rows * DIGITS * tiles)
        histogram = _histogram(n, tiles, items)
        scatter = (_ballot_scatter(n, tiles, items, count_scan, where)
                   if how is Ranking.BALLOTS else
                   _split_scatter(n, tiles, items, SPLIT_BITS, packed_scan))
    # passes alternate between two buffers of keys and two of payloads; the first
    # reads `payload` (when it makes positions, it binds its keys in that place),
    # the last writes `result`
    key_buffers = (keys, b.temp(4 * rows * n))
    payloads = (b.temp(4 * rows * n), b.temp(4 * rows * n)) if passes > 1 else ()
    for p in range(passes):
        params = struct.pack("<4I", p * DIGIT_BITS, int(p == 0 and payload is None), p, 0)
        first_payload = keys if payload is None else payload
        source = (key_buffers[p % 2], first_payload if p == 0 else payloads[p % 2])
        target = (key_buffers[1 - p % 2], result if p == passes - 1 else payloads[1 - p % 2])
        if where is Offsets.LOOKBACK:
            b.shader(scatter, "radix_scatter", rows * tiles, THREADS,
                     [*source, state, *target], [state, *target], params)
            continue
        b.shader(histogram, "radix_histogram", rows * tiles, THREADS, [source[0], counts],
                 [counts], params)
        _prefix_sum(b, counts, offsets_, rows * DIGITS * tiles, count_scan)
        b.shader(scatter, "radix_scatter", rows * tiles, THREADS,
                 [*source, offsets_, *target], list(target), params)
    b.notes.update({
        "algorithm": ("LSD radix sort, 8-bit digits", "a pass a digit, each a stable scatter "
                      "of tiles sorted in shared memory"),
        "offsets": (where.value, "where a tile's keys of each digit go"),
        "radix_passes": (passes, f"{key_bits} key bits that vary, 8 per pass"),
        "tile": (tile, f"{THREADS} threads x {items} keys: what shared memory holds"),
        "ranking": (how.value, "how a tile is sorted by the digit: lanes with the same "
                               "digit found by ballots" if how is Ranking.BALLOTS else
                    f"stable splits of {SPLIT_BITS} bits, each a prefix sum of packed counts"),
        "thread_scan": ("subgroup" if subgroups else "shared memory",
                        "prefix sums over a workgroup's threads"),
    })
