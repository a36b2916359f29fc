"""The radix sort's NIBBLES scatter (radix.py): a workgroup sorts its tile by the 8-bit
digit in two stable rounds of 4 bits, each ranked by counts in registers.

A thread holds consecutive keys of the tile (their order within the thread is the
tile's). In a round it counts its keys' nibbles in 4-bit fields of two words (at most
8 keys: no field overflows), which also gives each key its rank among the thread's
keys with that nibble; one prefix sum over the threads of those counts, widened to
16-bit fields, gives each nibble's count in the threads before; the totals give where
each nibble starts in the tile. A key goes to start + threads before + its rank.
Against SPLITS (four 2-bit rounds, radix_scatter.py) it has half the rounds and about
a third of the work per key, and the code is written out key by key (no arrays in a
thread, so nothing depends on the shader compiler unrolling loops).
"""
from __future__ import annotations

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.radix_scan import THREADS, ThreadScan
from jaxlab.backends.webgpu.radix_scatter import (
    DIGIT_BITS, NIBBLE_KEYS, tile_declarations, tile_load, tile_place, tile_write_back)

ROUND_BITS = 4
# rows of a multiple of 4 keys: a thread reads its keys four at a time straight into
# registers (else they go through shared memory, read coalesced)
DIRECT_READS = True

_HELPERS = """
fn widened(counts: u32) -> vec4<u32> {
  // 8 counts of 4 bits (nibble b in bits 4b) as 16-bit fields, two a word
  let bytes = (vec4<u32>(counts) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xffu);
  return (bytes & vec4<u32>(0xfu)) | ((bytes & vec4<u32>(0xf0u)) << vec4<u32>(12u));
}

fn fields_sum(words: vec4<u32>) -> u32 {
  let pairs = (words & vec4<u32>(0xffffu)) + (words >> vec4<u32>(16u));
  return pairs.x + pairs.y + pairs.z + pairs.w;
}

fn starts(totals: vec4<u32>, carry: u32) -> vec4<u32> {
  // where 8 nibbles' runs start in the tile, after `carry` keys of smaller nibbles,
  // packed as `totals` (their counts, 16-bit fields two a word)
  let low = totals & vec4<u32>(0xffffu);
  let pairs = low + (totals >> vec4<u32>(16u));
  let even = carry + vec4<u32>(0u, pairs.x, pairs.x + pairs.y, pairs.x + pairs.y + pairs.z);
  return even | ((even + low) << vec4<u32>(16u));
}

fn field(words: vec4<u32>, nibble: u32) -> u32 {
  // the 16-bit field of nibble % 8 in words packed as widened() packs them
  let high_pair = (nibble & 2u) != 0u;
  let word = select(select(words.x, words.y, high_pair), select(words.z, words.w, high_pair),
                    (nibble & 4u) != 0u);
  return (word >> (16u * (nibble & 1u))) & 0xffffu;
}
"""


def _round(shift: str, items: int, scan: ThreadScan, last: bool) -> str:
    """WGSL (a block): the thread's keys k0.. and payloads v0.. sorted stably by the
    nibble at `shift` into the tile in shared memory, and (unless last) read back."""
    keys = range(items)
    count = "\n".join(f"""    let nibble{i} = (k{i} >> shift) & 15u;
    let upper{i} = nibble{i} >= 8u;
    let at{i} = (nibble{i} & 7u) * 4u;
    let rank{i} = (select(low, high, upper{i}) >> at{i}) & 15u;
    low += select(1u << at{i}, 0u, upper{i});
    high += select(0u, 1u << at{i}, upper{i});""" for i in keys)
    place = "\n".join(f"""\
    let to{i} = field(select(base_low, base_high, upper{i}), nibble{i}) + rank{i};
    tile_keys[slot(to{i})] = k{i};
    tile_payload[slot(to{i})] = v{i};""" for i in keys)
    read = "" if last else "\n".join(
        f"""  k{i} = tile_keys[slot(pos * {items}u + {i}u)];
  v{i} = tile_payload[slot(pos * {items}u + {i}u)];""" for i in keys) + "\n"
    return f"""  {{
    let shift = {shift};
    // this thread's count of each nibble (4 bits each: 0-7 in low, 8-15 in high)
    // and each key's rank among its keys with the same nibble
    var low = 0u;
    var high = 0u;
{count}
    // the counts in the threads before this one, and in the tile
    let scanned = {scan.call("widened(low)", "widened(high)")};
    let base_low = scanned.before + starts(scanned.total, 0u);
    let base_high = scanned.before1 + starts(scanned.total1, fields_sum(scanned.total));
{place}
  }}
  workgroupBarrier();
{read}"""


def _held_via_shared(n: int, tiles: int, items: int) -> str:
    """WGSL: the thread's keys k0.. and payloads v0.. (consecutive in the tile), read
    coalesced into shared memory first."""
    return tile_load(n, tiles, items) + "\n".join(
        f"""  var k{i} = tile_keys[slot(pos * {items}u + {i}u)];
  var v{i} = tile_payload[slot(pos * {items}u + {i}u)];""" for i in range(items)) + "\n"


def _held_direct(n: int, tiles: int, items: int) -> str:
    """WGSL: the same read straight into registers, four keys a read (rows and tiles
    start at multiples of 4 keys; a vec4 is in the row or past its end)."""
    tile = THREADS * items
    reads = "\n".join(f"""  let keys{j} = keys[min(first + {j}u, last)];
  let values{j} = payload[min(first + {j}u, last)];""" for j in range(items // 4))
    held = "\n".join(f"""\
  var k{i} = select(0xffffffffu, keys{i // 4}[{i % 4}], pos * {items}u + {i}u < count);
  var v{i} = select(values{i // 4}[{i % 4}], tile * {tile}u + pos * {items}u + {i}u,
                    params.first == 1u);""" for i in range(items))
    return tile_place(n, tiles, items) + f"""\
  // this thread's consecutive keys straight from memory, four at a time; past the
  // row's end (reads kept at its last four) keys that sort last, never written back
  let first = (start + pos * {items}u) / 4u;
  let last = (start + count) / 4u - 1u;
{reads}
{held}
"""


def direct(n: int, items: int) -> bool:
    """Whether a thread reads its keys straight from memory, four at a time."""
    return DIRECT_READS and n % 4 == 0 and items % 4 == 0


def nibble_scatter(n: int, tiles: int, items: int, scan: ThreadScan) -> HandWritten:
    """The scatter of one radix pass, ranking by nibbles (`scan`: two vec4<u32>)."""
    assert items <= NIBBLE_KEYS and DIGIT_BITS % ROUND_BITS == 0 and scan.width == 2
    rounds = DIGIT_BITS // ROUND_BITS
    body = "".join(_round(f"params.shift + {ROUND_BITS * r}u", items, scan, r == rounds - 1)
                   for r in range(rounds))
    vectors = direct(n, items)
    held = (_held_direct if vectors else _held_via_shared)(n, tiles, items)
    return scan.shader(tile_declarations(THREADS * items, "vec4<u32>" if vectors else "u32") +
                       _HELPERS, held + body + tile_write_back(items))
