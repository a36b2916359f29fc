"""Routines as WGSL passes: a bitonic sort (and stable argsort) along the last
axis, triangular solve, Cholesky, and LU with partial pivoting (and, from
decompositions.py, eigh, svd and qr).

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
# rows) bitonic took 0.93 ms for rows of 64K and radix 1.04 ms at every row length
RADIX_MIN_LENGTH = 1 << 16


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
    return 32 if dtype.is_float or dtype.itemsize == 8 else 8 * dtype.itemsize


def _key_kernel(dtype: DType, n: int, padded: int, rows: int) -> Kernel:
    """u32 keys whose unsigned order is NumPy's sort order; padding sorts last."""
    gidx = AluExp.special(GIDX, rows * padded)
    row, i = gidx // padded, gidx % padded
    inside = i.lt(n)
    x = AluExp.load(0, inside.where(row * n + i, 0), dtype)
    top, last = AluExp.const(0x80000000, U32), AluExp.const(0xFFFFFFFF, U32)
    if dtype.is_float:
        x = x.cast(F32)
        bits = x.bitcast(U32)
        negative = bits.binary(AluOp.Shr, 31).ne(0)
        ordered = negative.where(bits ^ last, bits | top)
        # -0 and +0 are equal (stable order between them); every NaN sorts last
        key = x.ne(x).where(last, x.ne(0.0).where(ordered, top))
    elif dtype.is_signed and dtype.itemsize < 8:
        # offset by 2^(bits-1): int8/int16 keys keep to their low 8/16 bits
        key = x.cast(I32).bitcast(U32) + AluExp.const(1 << (8 * dtype.itemsize - 1), U32)
    else:   # a 64-bit value's low word: unsigned order, whatever its sign
        key = x.cast(U32)
    return Kernel((rows * padded,), ((dtype, rows * n),), inside.where(key, last).simplify(),
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
    value = AluExp.load(0, row * n + source, dtype)
    return Kernel((rows * n,), ((dtype, rows * n), (U32, rows * padded)), value.simplify(),
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


# --- linear algebra: one workgroup per matrix ------------------------------------

def _matrices(shape: Sequence[int]) -> int:
    return math.prod(shape[:-2])


def _cholesky(b: _Builder) -> None:
    (shape, dtype), = b.routine.inputs
    n, count = shape[-1], math.prod(shape)
    a = b.as_f32(0, dtype, count)
    out, finish = b.f32_output(0, dtype, count)
    threads = _threads(n, b.limits)
    b.shader(HandWritten(f"""@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> l: array<f32>;

var<workgroup> diagonal: f32;
var<workgroup> failed: u32;
""", f"""  let base = group * {n * n}u;
  // the lower triangle of a; its upper triangle is never read
  for (var e = lid; e < {n * n}u; e += {threads}u) {{
    l[base + e] = select(0.0, a[base + e], e % {n}u <= e / {n}u);
  }}
  if (lid == 0u) {{ failed = 0u; }}
  storageBarrier();
  // Cholesky-Crout, one column j at a time
  for (var j = 0u; j < {n}u; j++) {{
    // rows i >= j: subtract row i . row j over the columns already done
    for (var i = j + lid; i < {n}u; i += {threads}u) {{
      var s = l[base + i * {n}u + j];
      // over the columns k < j
      for (var k = 0u; k < j; k++) {{
        s -= l[base + i * {n}u + k] * l[base + j * {n}u + k];
      }}
      l[base + i * {n}u + j] = s;
    }}
    storageBarrier();
    if (lid == 0u) {{
      let d = l[base + j * {n}u + j];
      // not positive definite; a NaN pivot is no failure, it propagates (as potrf)
      if ((bitcast<u32>(d) & 0x7fffffffu) <= 0x7f800000u && d <= 0.0) {{ failed = 1u; }}
      diagonal = sqrt(d);
      l[base + j * {n}u + j] = diagonal;
    }}
    workgroupBarrier();
    storageBarrier();
    // scale the column below the diagonal
    for (var i = j + 1u + lid; i < {n}u; i += {threads}u) {{
      l[base + i * {n}u + j] = l[base + i * {n}u + j] / diagonal;
    }}
    storageBarrier();
  }}
  // as jax.lax.linalg.cholesky: a failed factorization is NaN in its lower triangle
  if (workgroupUniformLoad(&failed) != 0u) {{
    let bits = 0x7fc00000u;
    // every element on or below the diagonal
    for (var e = lid; e < {n * n}u; e += {threads}u) {{
      if (e % {n}u <= e / {n}u) {{ l[base + e] = bitcast<f32>(bits); }}
    }}
  }}
"""), "cholesky", _matrices(shape), threads, [a, out], [out])
    finish()
    b.notes = {"algorithm": ("Cholesky-Crout, a workgroup per matrix",
                             "each column's rows are independent: threads take rows"),
               "workgroup": (threads, "a power of two covering the rows, within the limit")}


def _triangular_solve(b: _Builder) -> None:
    (a_shape, dtype), (b_shape, _) = b.routine.inputs
    p = b.routine.param
    n, left = a_shape[-1], p["left_side"]
    rhs = b_shape[-1] if left else b_shape[-2]   # independent systems per matrix
    systems = _matrices(a_shape) * rhs
    a = b.as_f32(0, dtype, math.prod(a_shape))
    rhs_in = b.as_f32(1, dtype, math.prod(b_shape))
    out, finish = b.f32_output(0, dtype, math.prod(b_shape))
    # solve t y = c per right-hand side c; x op(a) = b is op(a)^T x^T = b^T
    flipped = p["transpose_a"] if left else not p["transpose_a"]
    forward = p["lower"] != flipped    # t is lower triangular

    def t(row: str, col: str) -> str:
        return f"a[abase + {col} * {n}u + {row}]" if flipped else f"a[abase + {row} * {n}u + {col}]"

    def at(r: str) -> str:   # element r of this system's right-hand side (and solution)
        return f"cbase + {r} * {rhs}u" if left else f"cbase + {r}"
    divide = "" if p["unit_diagonal"] else f"\n    total = total / {t('r', 'r')};"
    b.shader(HandWritten(f"""@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;
""", f"""  let system = group * 64u + lid;
  if (system >= {systems}u) {{ return; }}
  let matrix = system / {rhs}u;
  let abase = matrix * {n * n}u;
  // a column of b (left side) or a row of b (right side)
  let cbase = matrix * {n * rhs}u + {'system % ' + str(rhs) + 'u' if left
                                      else f'(system % {rhs}u) * {n}u'};
  // {'forward' if forward else 'back'} substitution: each unknown from those found before
  for (var s = 0u; s < {n}u; s++) {{
    let r = {'s' if forward else f'{n - 1}u - s'};
    var total = rhs[{at('r')}];
    // minus the known unknowns times their coefficients
    for (var c = {'0u' if forward else 'r + 1u'}; c < {'r' if forward else f'{n}u'}; c++) {{
      total -= {t('r', 'c')} * x[{at('c')}];
    }}{divide}
    x[{at('r')}] = total;
  }}
"""), "triangular_solve", math.ceil(systems / 64), 64, [a, rhs_in, out], [out])
    finish()
    b.notes = {"algorithm": (f"{'forward' if forward else 'back'} substitution",
                             "one thread per right-hand side: the systems are independent"),
               "workgroup": (64, "small groups: often only a few systems")}


def _lu(b: _Builder) -> None:
    (shape, dtype), = b.routine.inputs
    m, n = shape[-2:]
    k = min(m, n)
    count = math.prod(shape)
    a = b.as_f32(0, dtype, count)
    lu, finish = b.f32_output(0, dtype, count)
    threads = _threads(max(m, n), b.limits)
    b.shader(HandWritten(f"""@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> lu: array<f32>;
@group(0) @binding(2) var<storage, read_write> pivots: array<i32>;
@group(0) @binding(3) var<storage, read_write> perm: array<i32>;

var<workgroup> pivot_row: u32;

fn isnan_f32(x: f32) -> bool {{
  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}}
""", f"""  let matrix = group;
  let base = matrix * {m * n}u;
  // lu starts as a copy of a
  for (var e = lid; e < {m * n}u; e += {threads}u) {{ lu[base + e] = a[base + e]; }}
  // the permutation as the identity
  for (var r = lid; r < {m}u; r += {threads}u) {{ perm[matrix * {m}u + r] = i32(r); }}
  storageBarrier();
  // one column j at a time: pivot, swap, eliminate below
  for (var j = 0u; j < {k}u; j++) {{
    if (lid == 0u) {{
      // the first largest |value| in column j at or below the diagonal (NaN wins, as argmax)
      var best = j;
      var top = abs(lu[base + j * {n}u + j]);
      // scan the rows below
      for (var r = j + 1u; r < {m}u; r++) {{
        let v = abs(lu[base + r * {n}u + j]);
        if (!isnan_f32(top) && (v > top || isnan_f32(v))) {{
          best = r;
          top = v;
        }}
      }}
      pivot_row = best;
      pivots[matrix * {k}u + j] = i32(best);
      let moved = perm[matrix * {m}u + j];
      perm[matrix * {m}u + j] = perm[matrix * {m}u + best];
      perm[matrix * {m}u + best] = moved;
    }}
    let p = workgroupUniformLoad(&pivot_row);
    // swap rows j and p, threads taking columns
    for (var c = lid; c < {n}u; c += {threads}u) {{
      let v = lu[base + j * {n}u + c];
      lu[base + j * {n}u + c] = lu[base + p * {n}u + c];
      lu[base + p * {n}u + c] = v;
    }}
    storageBarrier();
    let pivot = lu[base + j * {n}u + j];
    // multipliers below the pivot; a zero or NaN pivot leaves them as they are (as JAX)
    for (var r = j + 1u + lid; r < {m}u; r += {threads}u) {{
      let v = lu[base + r * {n}u + j];
      lu[base + r * {n}u + j] = select(v, v / pivot, pivot != 0.0 && !isnan_f32(pivot));
    }}
    storageBarrier();
    let width = {n}u - j - 1u;
    // the trailing submatrix loses multiplier * pivot row, one element per thread
    for (var e = lid; e < ({m}u - j - 1u) * width; e += {threads}u) {{
      let r = j + 1u + e / width;
      let c = j + 1u + e % width;
      lu[base + r * {n}u + c] -= lu[base + r * {n}u + j] * lu[base + j * {n}u + c];
    }}
    storageBarrier();
  }}
"""), "lu", _matrices(shape), threads, [a, lu, b.output(1), b.output(2)],
             [lu, b.output(1), b.output(2)])
    finish()
    b.notes = {"algorithm": ("LU with partial pivoting, a workgroup per matrix",
                             "pivot search by one thread, swaps and elimination by all"),
               "workgroup": (threads, "a power of two covering a row or column")}


_PLANNERS: dict[str, Callable[[_Builder], None]] = {
    "sort": lambda b: _sort(b, indices=False),
    "argsort": lambda b: _sort(b, indices=True),
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}

from jaxlab.backends.webgpu.decompositions import PLANNERS as _DECOMPOSITIONS  # noqa: E402

_PLANNERS.update(_DECOMPOSITIONS)
from jaxlab.backends.webgpu.fft import plan_fft  # noqa: E402

_PLANNERS["fft"] = plan_fft
