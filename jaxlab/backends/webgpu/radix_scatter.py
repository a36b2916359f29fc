"""The radix sort's scatters (radix.py): a workgroup sorts a tile of keys by one
digit in shared memory, ranked by subgroup ballots or by 2-bit splits (Ranking), and
writes each key to where its digit's keys from the tile go, found by decoupled
look-back or read from a prefix sum (Offsets)."""
from __future__ import annotations

import enum
import math

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.radix_scan import THREADS, ThreadScan
from jaxlab.backends.webgpu.tune import Limits

DIGIT_BITS = 8
DIGITS = 1 << DIGIT_BITS
MAX_ITEMS = 8          # keys per thread in a tile, at most (shared memory may allow fewer)
NIBBLE_KEYS = 8        # NIBBLES: at most, so that a count of a thread's keys fits 4 bits
# BALLOTS: a digit's running count per slot of the tile. A slot is one subgroup
# (several, taking turns, where subgroups are small): NVIDIA's 32 lanes make 8
# subgroups of 256 threads, lavapipe's 8 lanes 32 subgroups, two to a slot
SLOTS = 16
SPINS = 64   # LOOKBACK: reads of an unfinished tile's state before counting its keys here
_AGGREGATE, _INCLUSIVE = 1 << 30, 2 << 30   # a tile state's flag: its own counts / with all before


class Ranking(enum.Enum):
    """How a scatter sorts its tile by the digit (radix.py says more)."""
    BALLOTS = "subgroup ballots"
    SPLITS = "stable splits"
    NIBBLES = "two 4-bit rounds counted in registers"


class Offsets(enum.Enum):
    """How a scatter learns where its tile's keys of each digit go."""
    SCANNED = "histogram pass, prefix sum over (digit, tile)"
    LOOKBACK = "one histogram of every digit up front, decoupled look-back per tile"


PASS_PARAMS = """struct Pass {
  shift: u32,      // the digit is (key >> shift) & 0xff
  first: u32,      // 1: the payload is each key's position in its row
  number: u32,     // which pass (LOOKBACK: its ticket counter, counts and tile states)
  unused: u32,
}
"""


def _fixed_shared(how: Ranking) -> int:
    """Shared bytes of a scatter besides its tile (tables of digits, the thread scan)."""
    tables = 4 * DIGITS * 3 + 16 * THREADS   # offsets, run starts, buckets, thread scan
    extra = {Ranking.BALLOTS: 4 * SLOTS * DIGITS // 2,   # the slots' counts
             Ranking.SPLITS: 0,
             Ranking.NIBBLES: 16 * THREADS}              # its scan's second vec4
    return tables + extra[how]


def items_per_thread(limits: Limits, how: Ranking = Ranking.SPLITS) -> int:
    """Keys per thread in a tile: as many as shared memory holds (keys and payloads)."""
    def shared_bytes(items: int) -> int:   # keys and payloads, padded (slot() in WGSL)
        return 8 * THREADS * items * 33 // 32 + _fixed_shared(how)

    items = min(MAX_ITEMS, NIBBLE_KEYS) if how is Ranking.NIBBLES else MAX_ITEMS
    while items > 1 and shared_bytes(items) > limits.max_shared_bytes:
        items //= 2
    return items


def state_words(rows: int, tiles: int, passes: int) -> tuple[int, int, int]:
    """LOOKBACK's state buffer: (where the digit counts start, where the tile states
    start, its length in words); the ticket counters come first."""
    counts = DIGITS
    states = counts + rows * passes * DIGITS
    return counts, states, states + passes * rows * tiles * DIGITS


def tile_declarations(tile: int, words: str = "u32") -> str:
    """A scatter's bindings (keys and payloads read as `words`, offsets from the prefix
    sum) and shared memory: the tile's keys and payloads (padded: slot()), each
    digit's offset and run start."""
    return f"""{PASS_PARAMS}
@group(0) @binding(0) var<storage, read> keys: array<{words}>;
@group(0) @binding(1) var<storage, read> payload: array<{words}>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> payload_out: array<u32>;
@group(0) @binding(5) var<uniform> params: Pass;

var<workgroup> tile_keys: array<u32, {tile + tile // 32}>;
var<workgroup> tile_payload: array<u32, {tile + tile // 32}>;
var<workgroup> digit_offset: array<u32, {DIGITS}>;   // where the tile's digit d goes
var<workgroup> digit_start: array<u32, {DIGITS}>;    // where its run starts in the tile

fn slot(e: u32) -> u32 {{
  // a word of padding after every 32: a thread's consecutive keys start on different
  // banks, so reading them thread by thread does not conflict
  return e + (e >> 5u);
}}

fn digit_of(key: u32) -> u32 {{
  return (key >> params.shift) & {DIGITS - 1}u;
}}
"""


def tile_place(n: int, tiles: int, items: int) -> str:
    """WGSL: where this workgroup's tile is (row, tile, start, count), and its digits'
    offsets into shared memory."""
    tile = THREADS * items
    return f"""  let row = group / {tiles}u;
  let tile = group % {tiles}u;
  let start = row * {n}u + tile * {tile}u;
  let count = min({tile}u, {n}u - tile * {tile}u);
  digit_offset[lid] = offsets[(row * {DIGITS}u + lid) * {tiles}u + tile];
"""


def tile_load(n: int, tiles: int, items: int) -> str:
    """WGSL: the tile and its digits' offsets into shared memory (tile_declarations)."""
    tile = THREADS * items
    places = [f"{i * THREADS}u + lid" for i in range(items)]   # where a thread's keys are
    reads = "\n".join(f"""  let key{i} = keys[min(start + {e}, last)];
  let value{i} = payload[min(start + {e}, last)];""" for i, e in enumerate(places))
    stores = "\n".join(f"""  tile_keys[slot({e})] = select(0xffffffffu, key{i}, {e} < count);
  tile_payload[slot({e})] = select(value{i}, tile * {tile}u + {e}, params.first == 1u);"""
                       for i, e in enumerate(places))
    return tile_place(n, tiles, items) + f"""\
  // the tile into shared memory, neighbouring threads reading neighbouring keys, every
  // read of a thread issued before the first is used (written out: no loop to unroll);
  // past the row's end (reads kept at its last key) keys that sort last, never
  // written back
  let last = start + count - 1u;
{reads}
{stores}
  workgroupBarrier();
"""


def tile_write_back(items: int) -> str:
    """WGSL: the tile, sorted by the digit in shared memory, written where its digits'
    keys go (the barrier after its last writes to the tile comes first)."""
    places = [f"{i * THREADS}u + lid" for i in range(items)]
    starts = "\n".join(f"""  let sorted{i} = tile_keys[slot({e})];
  if ({e} == 0u || digit_of(tile_keys[slot({e} - 1u)]) != digit_of(sorted{i})) {{
    digit_start[digit_of(sorted{i})] = {e};
  }}""" for i, e in enumerate(places))
    writes = "\n".join(f"""  if ({e} < count) {{
    let to = digit_offset[digit_of(sorted{i})] + {e} - digit_start[digit_of(sorted{i})];
    keys_out[to] = sorted{i};
    payload_out[to] = tile_payload[slot({e})];
  }}""" for i, e in enumerate(places))
    return f"""  // where each digit's run starts in the sorted tile
{starts}
  workgroupBarrier();
  // write back: a key's place is its digit's offset plus its rank in the digit's run
{writes}
"""


def split_scatter(n: int, tiles: int, items: int, split_bits: int,
                   scan: ThreadScan) -> HandWritten:
    tile = THREADS * items
    buckets = 1 << split_bits
    # a thread's counts of the buckets, 16 bits each, packed in vec4s: 8 buckets a vec4
    parts = [f"counts{q}" for q in range(math.ceil(buckets / 8))]

    def per_part(line: str) -> str:   # a line for each vec4 of counts
        return "\n".join(line.format(part=part, q=q) for q, part in enumerate(parts))
    return scan.shader(tile_declarations(tile) + f"""// where a split's bucket starts
var<workgroup> bucket_start: array<u32, {buckets}>;

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
""", tile_load(n, tiles, items) + f"""\
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
""" + tile_write_back(items))


def ballot_scatter(n: int, tiles: int, items: int, scan: ThreadScan, how: Offsets,
                    rows: int = 1, passes: int = 1) -> HandWritten:
    tile = THREADS * items
    words = DIGITS // 2   # a slot's counts: two 16-bit counts a word
    counts_at, states_at, _ = state_words(rows, tiles, passes)
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
    if (lid == 0u) {{
      step = vec2<u32>(atomicExchange(&walking, 0u), atomicExchange(&missing, 0u));
    }}
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
    return scan.shader(f"""{PASS_PARAMS}
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
  return select(vec4<u32>(), vec4<u32>(0xffffffffu), full) |
         select(vec4<u32>(), vec4<u32>(bits), part);
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
