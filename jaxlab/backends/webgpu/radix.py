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
- NIBBLES (radix_nibbles.py): two stable rounds of 4 bits, each thread counting its
  keys' nibbles in registers before one prefix sum over the threads.
The payload of the first pass is the key's position in its row (the argsort order)
unless a payload is given (a later sort over an earlier one's order).
Prefix sums over the threads use subgroup scans where the adapter has them, else a
Hillis-Steele scan in shared memory.
"""
from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Optional

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.radix_nibbles import direct, nibble_scatter
from jaxlab.backends.webgpu.radix_scan import THREADS, ThreadScan, prefix_sum
from jaxlab.backends.webgpu.radix_scatter import (
    DIGIT_BITS, DIGITS, PASS_PARAMS, Offsets, Ranking, ballot_scatter, items_per_thread,
    split_scatter, state_words)
from jaxlab.backends.webgpu.tune import Limits

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

SPLIT_BITS = 2         # SPLITS: a tile sorts by a digit in stable splits of this many bits
# The scatter's choices. On an H200 (16M float32, benchmarks/sort_passes.py) with wgpu's
# loop counters in every shader, a scatter pass took 0.78 ms by SPLITS, 0.91 by BALLOTS,
# 1.14 by BALLOTS with LOOKBACK (which saves the histogram and prefix sum passes, 0.10
# ms) (02:45), 0.66 by NIBBLES (05:11); without the counters (shader_modules.py), 0.36
# by SPLITS and 0.39 by NIBBLES (05:11)
RANKING = Ranking.SPLITS
OFFSETS = Offsets.SCANNED


def ranking(subgroups: bool) -> Ranking:
    """RANKING where the adapter allows it (BALLOTS needs subgroups), else NIBBLES."""
    return Ranking.NIBBLES if RANKING is Ranking.BALLOTS and not subgroups else RANKING


def key_passes(key_bits: int) -> int:
    return math.ceil(key_bits / DIGIT_BITS)


def _histogram(n: int, tiles: int, items: int) -> HandWritten:
    tile = THREADS * items
    reads = "\n".join(f"  let key{i} = keys[min(start + {i * THREADS}u + lid, last)];"
                      for i in range(items))
    counts = "\n".join(f"""  if ({i * THREADS}u + lid < count) {{
    atomicAdd(&histogram[(key{i} >> params.shift) & {DIGITS - 1}u], 1u);
  }}""" for i in range(items))
    return HandWritten(f"""{PASS_PARAMS}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
@group(0) @binding(2) var<uniform> params: Pass;

var<workgroup> histogram: array<atomic<u32>, {DIGITS}>;
""", f"""  let row = group / {tiles}u;
  let tile = group % {tiles}u;
  let start = row * {n}u + tile * {tile}u;
  let count = min({tile}u, {n}u - tile * {tile}u);
  atomicStore(&histogram[lid], 0u);
  // neighbouring threads read neighbouring keys, every read issued before the first
  // is used (written out: no loop to unroll); past the row's end, its last key again
  let last = start + count - 1u;
{reads}
  workgroupBarrier();
{counts}
  workgroupBarrier();
  // laid out [row][digit][tile]: one prefix sum then gives every tile's offsets
  counts[(row * {DIGITS}u + lid) * {tiles}u + tile] = atomicLoad(&histogram[lid]);
""")


CLEAR_GROUPS = 256      # LOOKBACK: workgroups that zero its state buffer
COUNT_CHUNK = 1 << 14   # LOOKBACK: keys a workgroup counts the digits of, up front


# LOOKBACK on a software adapter only for rows of this many tiles: there workgroups
# run one after another on each CPU thread, a tile mostly finds the one before it
# unpublished and counts it itself, and every step back costs barriers
SOFTWARE_LOOKBACK_TILES = 8


def offsets(how: Ranking, limits: Limits, tiles: int) -> Offsets:
    """OFFSETS where it can run: LOOKBACK ranks by ballots, and on a software adapter
    only short rows walk back (the loop budget, the time)."""
    if how is not Ranking.BALLOTS or not (limits.hardware or tiles <= SOFTWARE_LOOKBACK_TILES):
        return Offsets.SCANNED
    return OFFSETS


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
""", f"""  for (var w = lid; w < {passes * DIGITS}u; w += {THREADS}u) {{
    atomicStore(&counts[w], 0u);
  }}
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
    packed_scan, count_scan = ThreadScan(subgroups, "vec4<u32>"), ThreadScan(subgroups, "u32")
    passes = key_passes(key_bits)
    where = offsets(how, b.limits, tiles)
    if where is Offsets.LOOKBACK:
        counts_at, _, words = state_words(rows, tiles, passes)
        state = b.temp(4 * words)
        b.shader(_clear(words), "radix_clear", CLEAR_GROUPS, THREADS, [state], [state])
        chunks = math.ceil(n / COUNT_CHUNK)
        b.shader(_all_digit_counts(n, chunks, passes, counts_at), "radix_digit_counts",
                 rows * chunks, THREADS, [keys, state], [state])
        scatter = ballot_scatter(n, tiles, items, count_scan, where, rows, passes)
    else:
        counts, offsets_ = b.temp(4 * rows * DIGITS * tiles), b.temp(4 * rows * DIGITS * tiles)
        histogram = _histogram(n, tiles, items)
        scatter = {
            Ranking.BALLOTS: lambda: ballot_scatter(n, tiles, items, count_scan, where),
            Ranking.SPLITS: lambda: split_scatter(n, tiles, items, SPLIT_BITS, packed_scan),
            Ranking.NIBBLES: lambda: nibble_scatter(
                n, tiles, items, ThreadScan(subgroups, "vec4<u32>", width=2)),
        }[how]()
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
        prefix_sum(b, counts, offsets_, rows * DIGITS * tiles, count_scan)
        b.shader(scatter, "radix_scatter", rows * tiles, THREADS,
                 [*source, offsets_, *target], list(target), params)
    b.notes.update({
        "algorithm": ("LSD radix sort, 8-bit digits", "a pass a digit, each a stable scatter "
                      "of tiles sorted in shared memory"),
        "offsets": (where.value, "where a tile's keys of each digit go"),
        "radix_passes": (passes, f"{key_bits} key bits that vary, 8 per pass"),
        "tile": (tile, f"{THREADS} threads x {items} keys: what shared memory holds"),
        "ranking": (how.value, "how a tile is sorted by the digit: " + {
            Ranking.BALLOTS: "lanes with the same digit found by ballots",
            Ranking.SPLITS: f"stable splits of {SPLIT_BITS} bits, each a prefix sum of "
                            "packed counts",
            Ranking.NIBBLES: "each round a prefix sum of the threads' counts of 16 values",
        }[how]),
        "reads": ("four keys a read into registers" if how is Ranking.NIBBLES and
                  direct(n, items) else "coalesced through shared memory",
                  "how a thread gets its keys of the tile"),
        "thread_scan": ("subgroup" if subgroups else "shared memory",
                        "prefix sums over a workgroup's threads"),
    })
