"""Prefix sums for the radix sort (radix.py): over a workgroup's threads (subgroup
scans where the adapter has them, else a Hillis-Steele scan in shared memory), and
over a buffer of counts (reduce-then-scan: block sums, then each block scanned from
its carry, the sums before it added up, or past SUMMED_BLOCKS scanned first)."""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxlab.backends.webgpu.codegen import MAIN, SUBGROUP_BUILTINS, HandWritten

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.routines import _Builder

THREADS = 256          # threads of every radix workgroup (WebGPU guarantees 256)
SCAN_ITEMS = 8         # counts per thread in a block of the prefix sum
SCAN_BLOCK = THREADS * SCAN_ITEMS
# up to this many blocks each adds up the block sums before it (reads grow as its
# square); past it the sums are scanned first, a pass more
SUMMED_BLOCKS = SCAN_BLOCK


@dataclass(frozen=True)
class _SubgroupShader(HandWritten):
    """A hand-written shader whose main also takes the subgroup builtins."""

    def source(self, threads: int, prologue: list[str]) -> str:
        return super().source(threads, prologue).replace(
            MAIN, MAIN[:-1] + SUBGROUP_BUILTINS + ")", 1)


@dataclass(frozen=True)
class ThreadScan:
    """An exclusive prefix sum of `width` values per thread over the workgroup, side by
    side (one barrier for all), as a WGSL function `scan_threads` returning the prefix
    and the total of each (all threads must call it). Its fields: `before` and `total`
    for the first value, `before1`, `total1`, ... for the others."""
    subgroups: bool
    wgsl_type: str
    width: int = 1

    @property
    def position(self) -> str:
        """This thread's place in the scan order (subgroups: lanes of a subgroup together)."""
        return "sg_id * sg_size + sg_lane" if self.subgroups else "lid"

    def call(self, *values: str) -> str:
        assert len(values) == self.width
        extra = ", sg_lane, sg_id, n_sg" if self.subgroups else ""
        return f"scan_threads({', '.join(values)}, pos{extra})"

    def shader(self, declarations: str, body: str) -> HandWritten:
        cls = _SubgroupShader if self.subgroups else HandWritten
        return cls(declarations + self.declarations(), f"  let pos = {self.position};\n" + body)

    def _each(self, line: str) -> str:
        """`line` once per value, {s} its suffix ('' for the first, then 1, 2, ...)."""
        return "\n".join(line.format(s=str(w) if w else "") for w in range(self.width))

    def declarations(self) -> str:
        t = self.wgsl_type
        suffixes = ["" if w == 0 else str(w) for w in range(self.width)]
        params = ", ".join(f"value{s}: {t}" for s in suffixes)
        totals = ", ".join(f"total{s}" for s in suffixes)
        head = f"""
struct Scanned {{
{self._each(f"  before{{s}}: {t},   // the sum over the threads before this one")}
{self._each(f"  total{{s}}: {t},    // the sum over all threads")}
}}
"""
        if self.subgroups:
            return head + f"""
{self._each(f"var<workgroup> subgroup_sums{{s}}: array<{t}, {THREADS}>;")}

fn scan_threads({params}, pos: u32, lane: u32, subgroup: u32, subgroups: u32) -> Scanned {{
  // within the subgroup in registers, then over the subgroups' sums in shared memory
{self._each("  let inclusive{s} = subgroupInclusiveAdd(value{s});")}
{self._each("  let sum{s} = subgroupAdd(value{s});")}
  if (lane == 0u) {{
{self._each("    subgroup_sums{s}[subgroup] = sum{s};")}
  }}
  workgroupBarrier();
  // the subgroups' sums: those before this one, then the rest (all of them)
{self._each(f"  var earlier{{s}} = {t}();")}
  for (var s = 0u; s < subgroup; s++) {{
{self._each("    earlier{s} += subgroup_sums{s}[s];")}
  }}
{self._each("  var total{s} = earlier{s};")}
  for (var s = subgroup; s < subgroups; s++) {{
{self._each("    total{s} += subgroup_sums{s}[s];")}
  }}
{self._each("  let before{s} = inclusive{s} - value{s} + earlier{s};")}
  workgroupBarrier();
  return Scanned({", ".join(f"before{s}" for s in suffixes)}, {totals});
}}
"""
        return head + f"""
{self._each(f"var<workgroup> partial_sums{{s}}: array<{t}, {THREADS}>;")}

fn scan_threads({params}, pos: u32) -> Scanned {{
  // Hillis-Steele: after the step at distance d each thread holds the sum of 2d values
{self._each("  var inclusive{s} = value{s};")}
{self._each("  partial_sums{s}[pos] = inclusive{s};")}
  workgroupBarrier();
  for (var d = 1u; d < {THREADS}u; d <<= 1u) {{
{self._each(f"    var earlier{{s}} = {t}();")}
    if (pos >= d) {{
{self._each("      earlier{s} = partial_sums{s}[pos - d];")}
    }}
    workgroupBarrier();
{self._each("    inclusive{s} += earlier{s};")}
{self._each("    partial_sums{s}[pos] = inclusive{s};")}
    workgroupBarrier();
  }}
{self._each(f"  let total{{s}} = partial_sums{{s}}[{THREADS - 1}u];")}
  workgroupBarrier();
  return Scanned({", ".join(f"inclusive{s} - value{s}" for s in suffixes)}, {totals});
}}
"""


def _read_values(places: list[str], length: int) -> str:
    """WGSL: value0, value1, ... read at `places` (0 past `length`), written out so that
    every read is issued before the first is used."""
    last = length - 1
    return "\n".join(f"  let value{i} = select(0u, values[min({e}, {last}u)], {e} < {length}u);"
                     for i, e in enumerate(places))


def _added(count: int) -> str:
    return " + ".join(f"value{i}" for i in range(count))


def _block_sums(length: int, scan: ThreadScan) -> HandWritten:
    return scan.shader(f"""@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
""", f"""  let base = group * {SCAN_BLOCK}u + pos;
  // neighbouring threads read neighbouring values, all reads issued before any is used
{_read_values([f"base + {i * THREADS}u" for i in range(SCAN_ITEMS)], length)}
  let scanned = {scan.call(_added(SCAN_ITEMS))};
  if (pos == 0u) {{ sums[group] = scanned.total; }}
""")


class _Carry(enum.Enum):
    """Where a block of the prefix sum gets the sum of the blocks before it."""
    NONE = "one block"
    SUMMED = "adds up the block sums before it"     # few blocks: one pass less
    SCANNED = "reads the block sums' prefix sum"    # many: the sums scanned first


def _block_scan(length: int, carry: _Carry, scan: ThreadScan) -> HandWritten:
    carry_binding = ("" if carry is _Carry.NONE else
                     "@group(0) @binding(2) var<storage, read> carries: array<u32>;\n")
    summed = "" if carry is not _Carry.SUMMED else f"""\
  // the block sums before this block, added up by all threads
  var earlier = 0u;
  for (var b = pos; b < group; b += {THREADS}u) {{ earlier += carries[b]; }}
  let carry = {scan.call("earlier")}.total;
"""
    start = {_Carry.NONE: "", _Carry.SUMMED: " + carry", _Carry.SCANNED: " + carries[group]"}
    return scan.shader(f"""@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> prefix: array<u32>;
{carry_binding}""", summed + f"""\
  // this thread's consecutive values, then its place among the threads
  let base = group * {SCAN_BLOCK}u + pos * {SCAN_ITEMS}u;
{_read_values([f"base + {i}u" for i in range(SCAN_ITEMS)], length)}
  let scanned = {scan.call(_added(SCAN_ITEMS))};
  var running = scanned.before{start[carry]};
  // each value's exclusive prefix
""" + "\n".join(f"""  if (base + {i}u < {length}u) {{ prefix[base + {i}u] = running; }}
  running += value{i};""" for i in range(SCAN_ITEMS)) + "\n")


def prefix_sum(b: "_Builder", values: int, prefix: int, length: int, scan: ThreadScan) -> None:
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
        prefix_sum(b, sums, carries, blocks, scan)
    b.shader(_block_scan(length, carry, scan), "radix_scan", blocks, THREADS,
             [values, prefix, carries], [prefix])
