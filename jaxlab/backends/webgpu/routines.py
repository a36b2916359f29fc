"""Routines as WGSL passes: sort (and stable argsort) along the last axis here,
bitonic or by radix.py for long rows; from blocked.py Cholesky and triangular
solve, from blocked_lu.py LU with partial pivoting, from decompositions.py eigh,
svd and qr, from fft.py fft.

Element-wise steps (sort keys, gathers, f16 <-> f32) are Kernels written in the
IR and compiled by codegen like any other; the rest is hand-written WGSL. The
linear algebra runs in f32 (f16 matrices are widened and rounded back), as the
cpu backend computes in float64 and rounds once.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Callable, Sequence

from jaxlab.backends.base import Choice, TuningRecord
from jaxlab.backends.webgpu.codegen import HandWritten, Program, generate, group_prologue
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.plan import Pass, Plan
from jaxlab.backends.webgpu.radix import radix_sort
from jaxlab.backends.webgpu.tune import Limits, tune
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, Kernel, Routine

F32, I32, U32 = DType.float32, DType.int32, DType.uint32
LOCAL_THREADS = 256   # threads of a workgroup that owns a sort block or a whole matrix
# rows this long sort by radix (radix.py), shorter ones bitonic: on an H200 (4M keys in
# rows) radix took 1.04 ms at every row length, bitonic 0.93 ms for rows of 64K and
# 1.22 ms for rows of 256K
RADIX_MIN_LENGTH = 1 << 17


class _Builder:
    """Passes over numbered buffers: the inputs, the outputs, then temporaries."""

    def __init__(self, routine: Routine, lang: Lang, limits: Limits) -> None:
        self.routine, self.lang, self.limits = routine, lang, limits
        self.passes: list[Pass] = []
        self.scratch: list[int] = []
        self.notes: dict[str, Any] = {}

    def output(self, i: int) -> int:
        return len(self.routine.inputs) + i

    def temp(self, nbytes: int) -> int:
        self.scratch.append(max(4, nbytes))
        return len(self.routine.inputs) + len(self.routine.outputs) + len(self.scratch) - 1

    def kernel(self, kernel: Kernel, args: Sequence[int], out: int) -> None:
        program = generate(kernel, tune(kernel, self.lang, self.limits), self.lang, self.limits)
        self.passes.append(Pass(program, (*args, out), frozenset({len(args)})))

    def shader(self, shader: HandWritten, label: str, groups: int, threads: int,
               args: Sequence[int], writable: Sequence[int], params: bytes = b"") -> None:
        """A hand-written pass of `groups` workgroups of `threads`."""
        grid, prologue = group_prologue(groups, self.limits)
        program = Program(shader.source(threads, prologue), grid, threads, label)
        positions = frozenset(args.index(w) for w in writable)
        self.passes.append(Pass(program, tuple(args), positions, params))

    def as_f32(self, buffer: int, dtype: DType, count: int) -> int:
        """`buffer` itself when it holds f32, else a widened f32 copy."""
        if dtype is F32:
            return buffer
        copy = self.temp(4 * count)
        gidx = AluExp.special(GIDX, count)
        self.kernel(Kernel((count,), ((dtype, count),), AluExp.load(0, gidx, dtype).cast(F32),
                           label="widen"), [buffer], copy)
        return copy

    def f32_output(self, i: int, dtype: DType, count: int) -> tuple[int, Callable[[], None]]:
        """Where to compute output i in f32, and what rounds it into place afterwards."""
        if dtype is F32:
            return self.output(i), lambda: None
        work = self.temp(4 * count)
        gidx = AluExp.special(GIDX, count)
        narrow = Kernel((count,), ((F32, count),), AluExp.load(0, gidx, F32).cast(dtype),
                        label="narrow")
        return work, lambda: self.kernel(narrow, [work], self.output(i))

    def plan(self) -> Plan:
        return Plan(tuple(self.passes), tuple(self.scratch))


def plan_routine(routine: Routine, lang: Lang, limits: Limits) -> tuple[Plan, TuningRecord]:
    """The passes that compute `routine`, and a record of how (for Executable.tuning)."""
    b = _Builder(routine, lang, limits)
    sizes = [math.prod(s) for s, _ in (*routine.inputs, *routine.outputs)]
    if 0 not in sizes:
        _PLANNERS[routine.name](b)
    record = TuningRecord(tuple(Choice(k, v, r) for k, (v, r) in b.notes.items()))
    return b.plan(), record


def _threads(work: int, limits: Limits) -> int:
    """A power of two of threads for `work` parallel items, within the device limit."""
    cap = min(LOCAL_THREADS, limits.max_threads)
    return min(cap, 1 << max(0, (work - 1).bit_length()))


# --- sort and argsort ----------------------------------------------------------

def _sort(b: _Builder, indices: bool) -> None:
    (shape, dtype), = b.routine.inputs
    n = shape[-1]
    rows = math.prod(shape[:-1])
    if n >= RADIX_MIN_LENGTH:
        _radix_sort(b, indices)
        return
    padded = 1 << max(1, (n - 1).bit_length())              # the network needs 2^k
    block = min(padded, 2 * _threads(padded // 2, b.limits))  # elements per workgroup
    keys, order = b.temp(4 * rows * padded), b.temp(4 * rows * padded)
    local, merge = _bitonic_local(block, padded), _bitonic_merge(rows * padded // 2, padded)

    def network(pairs: list[int]) -> None:
        """Sort (key, position) pairs along each row; the positions start as 0..padded-1."""
        def block_pass(k_lo: int, k_hi: int, j: int) -> None:
            b.shader(local, "bitonic_block", rows * padded // block, block // 2, pairs, pairs,
                     struct.pack("<4I", k_lo, k_hi, j, int(k_lo == 2)))

        block_pass(2, block, 1)            # sort every block completely
        k = 2 * block
        while k <= padded:                 # each larger stage: global steps, then a block pass
            j = k // 2
            while j >= block:
                b.shader(merge, "bitonic_merge", math.ceil(rows * padded // 2 / 256), 256,
                         pairs, pairs, struct.pack("<4I", k, k, j, 0))
                j //= 2
            block_pass(k, k, block // 2)
            k *= 2

    b.kernel(_key_kernel(dtype, n, padded, rows), [0], keys)
    network([keys, order])
    if dtype.itemsize == 8:
        # the keys were the low words; a second stable pass by the high words, over
        # the first pass's order, finishes the sort (least significant word first)
        high, then = b.temp(4 * rows * padded), b.temp(4 * rows * padded)
        b.kernel(_high_key_kernel(dtype, n, padded, rows), [0, order], high)
        network([high, then])
        b.kernel(_compose_kernel(padded, rows), [order, then], keys)
        order = keys
    sources = [order] if indices else [0, order]
    b.kernel(_gather_kernel(dtype, n, padded, rows, indices), sources, b.output(0))
    b.notes = {
        "algorithm": ("bitonic network on (key, index) pairs",
                      "index ties make it stable; keys make every dtype compare as u32, "
                      "NaN last as NumPy"),
        "padded_length": (padded, "the network sorts powers of two; padding keys sort last"),
        "block": (block, "elements a workgroup sorts in shared memory per pass"),
        "passes": (len(b.passes), "key pass, block passes, global merge steps, gather"),
        "why": (f"rows shorter than {RADIX_MIN_LENGTH}",
                "few passes (a row that fits a workgroup is one dispatch): on an H200 "
                "bitonic beat radix below this length"),
    }


def _radix_sort(b: _Builder, indices: bool) -> None:
    """Long rows: LSD radix sort of the keys (radix.py). Its payload is the positions
    for argsort and for 64-bit values (gathered afterwards), else the values' own words."""
    (shape, dtype), = b.routine.inputs
    n = shape[-1]
    rows = math.prod(shape[:-1])
    keys = b.temp(4 * rows * n)
    b.kernel(_key_kernel(dtype, n, n, rows), [0], keys)
    carried = not indices and dtype.itemsize == 4
    if dtype.itemsize == 8:
        # by the low words, then stably by the high words with the first order as payload
        order = b.temp(4 * rows * n)
        radix_sort(b, rows, n, keys, 32, order)
        b.kernel(_high_key_kernel(dtype, n, n, rows), [0, order], keys)
        then = b.output(0) if indices else b.temp(4 * rows * n)
        radix_sort(b, rows, n, keys, 32, then, payload=order)
        order = then
    else:
        order = b.output(0) if indices or carried else b.temp(4 * rows * n)
        radix_sort(b, rows, n, keys, _key_bits(dtype), order, payload=0 if carried else None)
    if not indices and not carried:
        b.kernel(_gather_kernel(dtype, n, n, rows, False), [0, order], b.output(0))
    b.notes["payload"] = ("the values" if carried else "positions",
                          "32-bit values travel with their keys; other sorts gather by position"
                          if not indices else "argsort's result")
    b.notes["why"] = (f"rows of {RADIX_MIN_LENGTH} or more",
                      "a bitonic network's passes grow as log(n)^2, the radix sort's not: "
                      "past this length radix was as fast or faster on an H200")
    b.notes["passes"] = (len(b.passes), "keys, radix passes, gather (if any)")


def _key_bits(dtype: DType) -> int:
    """How many low bits of _key_kernel's keys vary: the radix passes needed."""
    if dtype is DType.bool:
        return 1
    return 32 if dtype.itemsize == 8 else 8 * dtype.itemsize


# floats are read and moved as their bits: no conversion on a GPU may change a NaN
_FLOAT_BITS = {DType.float16: DType.uint16, DType.bfloat16: DType.uint16, F32: U32}
# a float's exponent bits all set: above them in magnitude, NaN
_INFINITY_BITS = {DType.float16: 0x7C00, DType.bfloat16: 0x7F80, F32: 0x7F800000}


def _key_kernel(dtype: DType, n: int, padded: int, rows: int) -> Kernel:
    """u32 keys whose unsigned order is NumPy's sort order; padding sorts last. Floats'
    keys come from their bits, as wide as they are (float16: 16-bit keys, 2 radix passes;
    no float arithmetic, so every NaN stays a NaN whatever the GPU's conversions)."""
    gidx = AluExp.special(GIDX, rows * padded)
    row, i = gidx // padded, gidx % padded
    inside = i.lt(n)
    index = inside.where(row * n + i, 0)
    last = AluExp.const(0xFFFFFFFF, U32)
    loaded = _FLOAT_BITS.get(dtype, dtype)
    x = AluExp.load(0, index, loaded)
    if dtype.is_float:
        width = 8 * dtype.itemsize
        bits = x.cast(U32)
        top, every = AluExp.const(1 << (width - 1), U32), AluExp.const((1 << width) - 1, U32)
        magnitude = bits & AluExp.const((1 << (width - 1)) - 1, U32)
        negative = bits.binary(AluOp.Shr, width - 1).ne(0)
        ordered = negative.where(bits ^ every, bits | top)
        # -0 and +0 are equal (stable order between them); every NaN sorts last
        nan = AluExp.const(_INFINITY_BITS[dtype], U32).lt(magnitude)
        key = nan.where(every, magnitude.ne(0).where(ordered, top))
    elif dtype.is_signed and dtype.itemsize < 8:
        # offset by 2^(bits-1): int8/int16 keys keep to their low 8/16 bits
        key = x.cast(I32).bitcast(U32) + AluExp.const(1 << (8 * dtype.itemsize - 1), U32)
    else:   # a 64-bit value's low word: unsigned order, whatever its sign
        key = x.cast(U32)
    return Kernel((rows * padded,), ((loaded, rows * n),), inside.where(key, last).simplify(),
                  label="sort_keys")


def _high_key_kernel(dtype: DType, n: int, padded: int, rows: int) -> Kernel:
    """u32 keys of the high words of 64-bit values, read in the order the sort by
    their low words left (positions past n are padding, which sorts last)."""
    gidx = AluExp.special(GIDX, rows * padded)
    row = gidx // padded
    source = AluExp.load(1, gidx, U32).cast(I32)
    inside = source.lt(n)
    x = AluExp.load(0, inside.where(row * n + source, 0), dtype)
    key = x.binary(AluOp.Shr, AluExp.const(32, dtype)).cast(U32)
    if dtype.is_signed:
        key = key ^ AluExp.const(0x80000000, U32)
    last = AluExp.const(0xFFFFFFFF, U32)
    return Kernel((rows * padded,), ((dtype, rows * n), (U32, rows * padded)),
                  inside.where(key, last).simplify(), label="sort_high_keys")


def _compose_kernel(padded: int, rows: int) -> Kernel:
    """first[then[p]] along each row: the positions of two sorts, one after the other."""
    gidx = AluExp.special(GIDX, rows * padded)
    then = AluExp.load(1, gidx, U32).cast(I32)
    first = AluExp.load(0, (gidx // padded) * padded + then, U32)
    return Kernel((rows * padded,), ((U32, rows * padded), (U32, rows * padded)),
                  first.simplify(), label="sort_compose")


def _gather_kernel(dtype: DType, n: int, padded: int, rows: int, indices: bool) -> Kernel:
    gidx = AluExp.special(GIDX, rows * n)
    row = gidx // n
    source = AluExp.load(1 if not indices else 0, row * padded + gidx % n, U32).cast(I32)
    if indices:
        return Kernel((rows * n,), ((U32, rows * padded),), source.simplify(), label="argsort")
    moved = _FLOAT_BITS.get(dtype, dtype)
    value = AluExp.load(0, row * n + source, moved)
    return Kernel((rows * n,), ((moved, rows * n), (U32, rows * padded)), value.simplify(),
                  label="sort_gather")



_BITONIC_COMMON = """struct Params {
  k_lo: u32,     // first stage (size of the bitonic sequences being merged)
  k_hi: u32,     // last stage
  j_first: u32,  // first compare distance within stage k_lo
  first: u32,    // 1: the indices are not written yet
}

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> order: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn after(ka: u32, ia: u32, kb: u32, ib: u32) -> bool {
  // (key, index) order: equal keys keep their original order
  return ka > kb || (ka == kb && ia > ib);
}
"""


def _bitonic_local(block: int, padded: int) -> HandWritten:
    threads = block // 2
    return HandWritten(_BITONIC_COMMON + f"""
var<workgroup> skey: array<u32, {block}>;
var<workgroup> sidx: array<u32, {block}>;
""", f"""  let base = group * {block}u;
  // a block lies inside one row; positions in the row set each compare's direction
  let offset = base % {padded}u;
  // load the block, two elements per thread
  for (var e = lid; e < {block}u; e += {threads}u) {{
    skey[e] = keys[base + e];
    sidx[e] = select(order[base + e], offset + e, params.first == 1u);
  }}
  workgroupBarrier();
  // stages k of the network, each a series of compares at halving distances j
  for (var k = params.k_lo; k <= params.k_hi; k *= 2u) {{
    // compare-and-swap at distance j, each thread one pair
    for (var j = select(k / 2u, params.j_first, k == params.k_lo); j > 0u; j /= 2u) {{
      let i = 2u * j * (lid / j) + lid % j;
      if (after(skey[i], sidx[i], skey[i + j], sidx[i + j]) == (((offset + i) & k) == 0u)) {{
        let key = skey[i];
        skey[i] = skey[i + j];
        skey[i + j] = key;
        let index = sidx[i];
        sidx[i] = sidx[i + j];
        sidx[i + j] = index;
      }}
      workgroupBarrier();
    }}
  }}
  // store the block back
  for (var e = lid; e < {block}u; e += {threads}u) {{
    keys[base + e] = skey[e];
    order[base + e] = sidx[e];
  }}
""")


def _bitonic_merge(pairs: int, padded: int) -> HandWritten:
    return HandWritten(_BITONIC_COMMON + f"""
""", f"""  let t = group * 256u + lid;
  if (t >= {pairs}u) {{ return; }}
  // one compare of stage k at distance j, within one row
  let k = params.k_lo;
  let j = params.j_first;
  let pair = t % {padded // 2}u;
  let i = 2u * j * (pair / j) + pair % j;
  let a = (t / {padded // 2}u) * {padded}u + i;
  if (after(keys[a], order[a], keys[a + j], order[a + j]) == ((i & k) == 0u)) {{
    let key = keys[a];
    keys[a] = keys[a + j];
    keys[a + j] = key;
    let index = order[a];
    order[a] = order[a + j];
    order[a + j] = index;
  }}
""")


_PLANNERS: dict[str, Callable[[_Builder], None]] = {
    "sort": lambda b: _sort(b, indices=False),
    "argsort": lambda b: _sort(b, indices=True),
}

from jaxlab.backends.webgpu.decompositions import PLANNERS as _DECOMPOSITIONS  # noqa: E402

_PLANNERS.update(_DECOMPOSITIONS)
from jaxlab.backends.webgpu.fft import plan_fft  # noqa: E402
from jaxlab.backends.webgpu.blocked import plan_cholesky, plan_triangular_solve  # noqa: E402
from jaxlab.backends.webgpu.blocked_lu import plan_lu  # noqa: E402

_PLANNERS["fft"] = plan_fft
_PLANNERS["cholesky"] = plan_cholesky
_PLANNERS["triangular_solve"] = plan_triangular_solve
_PLANNERS["lu"] = plan_lu
