"""The WebGPU tuner: how a Kernel is laid out over threads, with a reason for
every choice (Tuning.record() is what Executable.tuning and the lab show).

Strategies:
- elementwise   one thread per output (per u32 word for packed bool/f16 outputs)
- reduce        one thread per output loops over the reduction (unrolled)
- group_reduce  the threads of a workgroup share long reductions (one output, or a
                row of neighbouring outputs) and combine them in shared memory
- tiled         sum(a*b) with broadcast operands (matmul, conv): shared-memory
                tiles of a and b, a register block of outputs per thread
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

from jaxlab.backends.base import Choice, Knob, TuningRecord
from jaxlab.backends.webgpu.contraction import Contraction, find_contraction, operand_vectors
from jaxlab.backends.webgpu.loop_budget import fits
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.kernel import GIDX, RIDX, Kernel


class Strategy(enum.Enum):
    """How a kernel's threads share its outputs (codegen.py writes one body per member)."""
    ELEMENTWISE = "elementwise"     # one thread per output (or `upcast` of them)
    REDUCE = "reduce"               # one thread loops over an output's reduction
    GROUP_REDUCE = "group_reduce"   # a workgroup shares one reduction
    TILED = "tiled"                 # shared-memory tiles of a sum of products


GROUP_MIN_STEPS = 128      # shorter reductions are cheaper as one thread's loop
FEW_OUTPUTS = 2048         # below this, one thread per output leaves the GPU idle
BUSY_THREADS = 65536       # threads that keep a large GPU's memory system busy
LARGE_ELEMENTWISE = 1 << 20   # from here on a GPU thread takes two outputs
TILED_MIN_DIM = 8          # smaller M or N would waste most of a tile
UNROLL_MAX_NODES = 48      # bigger bodies are not copied (code size, registers)


@dataclass(frozen=True)
class Limits:
    """What the device allows (WebGPU's guaranteed minimums by default)."""
    max_threads: int = 256             # invocations per workgroup
    max_groups_per_dim: int = 65535
    max_shared_bytes: int = 16384
    hardware: bool = True              # a GPU, not a software rasteriser
    max_buffer_bytes: int = 1 << 27    # the largest storage buffer (split-K's partial sums)


SHARED_PAD = 1   # vectors of padding per staged row: rows start on different banks


@dataclass(frozen=True)
class Tile:
    m: int            # outputs per workgroup along M
    n: int            # ... along N
    k: int            # reduction steps staged per round
    reg_m: int        # outputs per thread along M (register block)
    reg_n: int
    split: int = 1    # workgroups sharing one output tile's reduction (split-K)
    double: bool = True   # prefetch the next K slice while computing this one
    vector_loads: bool = True   # read operands as vec4s where aligned and contiguous

    @property
    def threads(self) -> int:
        return (self.m // self.reg_m) * (self.n // self.reg_n)

    @property
    def vec_m(self) -> int:
        """Width of the vectors a thread reads from the staged slice of a."""
        return _vector_width(self.reg_m)

    @property
    def vec_n(self) -> int:
        return _vector_width(self.reg_n)

    def shared_bytes(self, itemsize: int) -> int:
        rows = self.m + self.vec_m * SHARED_PAD + self.n + self.vec_n * SHARED_PAD
        return (2 if self.double else 1) * rows * self.k * itemsize

    def knob(self) -> tuple:
        """As the `tile` override takes it."""
        return (self.m, self.n, self.k, self.reg_m, self.reg_n, self.split, self.double,
                self.vector_loads)

    def text(self) -> str:
        return f"{self.m}x{self.n}x{self.k}" + (f"/split{self.split}" if self.split > 1 else "")


def _vector_width(reg: int) -> int:
    return next(w for w in (4, 2, 1) if reg % w == 0)


@dataclass(frozen=True)
class Tuning:
    strategy: Strategy
    workgroup: int                     # threads per workgroup
    upcast: int = 1                    # consecutive outputs per thread
    unroll: int = 1                    # reduction steps per loop iteration
    group_outputs: int = 1             # group_reduce: outputs per workgroup (one per column)
    tile: Optional[Tile] = None
    contraction: Optional[Contraction] = field(default=None, compare=False)
    reasons: tuple[tuple[str, str], ...] = ()

    def record(self) -> TuningRecord:
        """Every decision with its reason."""
        why = dict(self.reasons)
        values: dict[str, Any] = {"strategy": self.strategy.value, "workgroup": self.workgroup,
                                  "upcast": self.upcast, "unroll": self.unroll}
        if self.strategy is Strategy.GROUP_REDUCE:
            values["group_outputs"] = self.group_outputs
        if self.tile is not None:
            values["tile"] = f"{self.tile.m}x{self.tile.n}x{self.tile.k}"
            values["register_block"] = f"{self.tile.reg_m}x{self.tile.reg_n}"
            values["split_k"] = self.tile.split
            values["double_buffer"] = self.tile.double
            values["vector_loads"] = self.tile.vector_loads
        return TuningRecord(tuple(Choice(k, v, why.get(k, "")) for k, v in values.items()))


def tune(kernel: Kernel, lang: Lang, limits: Limits,
         overrides: Optional[dict[str, Any]] = None) -> Tuning:
    """Choose a Tuning; `overrides` (strategy, workgroup, upcast, unroll, group_outputs,
    tile as (m, n, k, reg_m, reg_n)) replace the tuner's choices where they are valid."""
    t = _choose(kernel, lang, limits)
    for key, value in (overrides or {}).items():
        t = _override(t, key, value, kernel, lang, limits)
    return t


def _choose(kernel: Kernel, lang: Lang, limits: Limits) -> Tuning:
    pack = lang.packed(kernel.dtype)
    reasons = [("upcast", "bool outputs are bytes: a thread writes a whole u32 word of 4"
                if pack == 4 else "f16 without shader-f16 is stored 2 per u32 word"
                if pack == 2 else "one 32-bit output per thread: neighbouring threads "
                                  "touch neighbouring addresses")]
    red = kernel.reduction
    if red is None:
        wg = min(256, limits.max_threads)
        upcast = pack
        if pack == 1 and limits.hardware and kernel.size >= LARGE_ELEMENTWISE:
            upcast = 2
            reasons = [("upcast", "2 neighbouring outputs per thread: more loads in flight "
                                  "(measured faster than 1 and 4 on an H200)")]
        return Tuning(Strategy.ELEMENTWISE, wg, upcast, reasons=tuple(reasons + [
            ("strategy", "no reduction"),
            ("workgroup", f"{wg} threads: enough warps per group to hide memory latency")]))
    contraction = find_contraction(kernel) if pack == 1 and lang.native(kernel.exp.dtype) \
        else None
    tile = _tile_for(kernel, contraction, limits) \
        if _worth_tiling(kernel, contraction, limits) else None
    if tile is not None:
        return Tuning(Strategy.TILED, tile.threads, 1, tile=tile, contraction=contraction,
                      reasons=tuple(reasons + [
                          ("strategy", f"sum of a*b where a ignores {contraction.n} outputs "
                                       f"and b ignores {contraction.m}: each staged value is "
                                       "reused across a tile"),
                          ("tile", _tile_reason(tile, contraction, limits)),
                          ("register_block", f"{tile.reg_m}x{tile.reg_n} accumulators per "
                                             "thread with constant indices (dynamically "
                                             "indexed arrays would spill), read from shared "
                                             f"memory as vec{tile.vec_m}/vec{tile.vec_n}"),
                          ("split_k", f"{tile.split} workgroups share each output tile's "
                                      f"{red.size} reduction steps, a second pass adds their "
                                      "partial sums" if tile.split > 1 else
                                      "the output tiles alone fill the device" if
                                      limits.hardware else "no split on a CPU adapter"),
                          ("vector_loads", _vector_reason(kernel, contraction, tile)),
                          ("double_buffer", "the next K slice is loaded into registers while "
                                            "this one is multiplied; two shared buffers, one "
                                            "barrier per slice" if tile.double else
                                            "one shared buffer, two barriers per slice"),
                          ("workgroup", "one thread per register block of the tile"),
                          ("unroll", "the per-thread block is written out in full")]))
    steps = red.size
    contiguous = _reduction_is_contiguous(kernel)
    group = _group_for(kernel, steps, contiguous, pack, limits) \
        if steps >= GROUP_MIN_STEPS else None
    if group is not None:
        return replace(group, reasons=tuple(reasons) + group.reasons)
    unroll = _unroll_for(kernel)
    return Tuning(Strategy.REDUCE, min(64, limits.max_threads), pack, unroll,
                  reasons=tuple(reasons + [
        ("strategy", f"{steps} steps per output" + (
            ", and neighbouring outputs are neighbours in memory" if not contiguous else
            ", on a software adapter where barriers cost more than they save"
            if not limits.hardware and steps >= GROUP_MIN_STEPS else "")),
        ("workgroup", "64 threads: small groups keep more of them resident"),
        ("unroll", f"{unroll} steps per iteration" + (
            "" if unroll > 1 else ": the step count or body size does not allow more"))]))


def _group_for(kernel: Kernel, steps: int, contiguous: bool, pack: int,
               limits: Limits) -> Optional[Tuning]:
    """A group_reduce layout, or None where one thread per output does better."""
    cap = _pow2_floor(limits.max_threads)
    if not limits.hardware:   # a CPU runs few threads and pays for every barrier
        if kernel.size > 1 and fits(pack * steps, limits):
            return None
        threads, outputs = min(64, cap), 1
        while threads < cap and not fits(pack * math.ceil(steps / threads), limits):
            threads *= 2
        why = "a single output" if kernel.size == 1 else \
            "one thread per output would loop past the adapter's loop limit"
    elif contiguous:
        threads, outputs = min(64 if steps >= 512 else 32, cap), 1
        why = "the reduction runs along memory: a group's threads read neighbours"
    elif pack == 1 and kernel.size < BUSY_THREADS:
        # 32 neighbouring outputs per group keep loads coalesced; more threads per
        # output until the device has enough of them
        outputs = min(32, cap)
        share = max(2, min(32, cap // outputs, _pow2_floor(2 * BUSY_THREADS // kernel.size)))
        threads = outputs * share
        why = f"{kernel.size} outputs alone would leave the device idle"
    elif kernel.size < FEW_OUTPUTS:
        threads, outputs = min(128, cap), 1
        why = f"{kernel.size} outputs alone would leave the device idle"
    else:
        return None
    share = threads // outputs
    unroll = next((u for u in (8, 4, 2) if steps >= u * share), 1)
    return Tuning(Strategy.GROUP_REDUCE, threads, pack, unroll, group_outputs=outputs, reasons=(
        ("strategy", f"{steps} reduction steps and {why}"),
        ("workgroup", f"{share} threads share each reduction, combined by a tree in "
                      "shared memory"),
        ("group_outputs", f"{outputs} outputs per workgroup" + (
            ", side by side in memory" if outputs > 1 else "")),
        ("unroll", f"{unroll} independent loads in flight per thread and iteration")))


def _worth_tiling(kernel: Kernel, c: Optional[Contraction], limits: Limits) -> bool:
    """Smaller sides or reductions would waste most of a tile (on a CPU adapter, a side
    must fill the smallest tile)."""
    side = TILED_MIN_DIM if limits.hardware else min(min(t.m, t.n) for t in _TILES)
    slices = math.ceil(kernel.reduction.size / min(t.k for t in _TILES))
    return c is not None and min(c.m, c.n) >= side and kernel.reduction.size >= TILED_MIN_DIM \
        and fits(slices, limits)


def _tile_for(kernel: Kernel, c: Optional[Contraction], limits: Limits) -> Optional[Tile]:
    fits = _offered(limits)
    if c is None or not fits:
        return None
    if not limits.hardware:   # a CPU: the largest tile M and N fill, no split
        return next((t for t in fits if t.m <= c.m and t.n <= c.n),
                    min(fits, key=lambda t: _padding(t, c)))
    # Mostly-empty tiles waste the device: keep those covering at most 1.5x the outputs
    snug = [t for t in fits if _padding(t, c) <= 1.5] or \
        [min(fits, key=lambda t: _padding(t, c))]
    split = [_with_split(t, kernel, c, limits) for t in snug]
    # the most reuse first, as long as the grid fills the device
    return next((t for t in split if _groups(t, c) >= FILL_GROUPS),
                max(split, key=lambda t: _groups(t, c)))


def _with_split(t: Tile, kernel: Kernel, c: Contraction, limits: Limits) -> Tile:
    """`t`, its reduction split where its output tiles alone leave the device idle."""
    steps, groups = kernel.reduction.size, _groups(t, c)
    if groups >= FILL_GROUPS or not _can_split(kernel):
        return t
    split = max(1, min(MAX_SPLIT, math.ceil(FILL_GROUPS / groups), steps // SPLIT_MIN_STEPS))
    per_slice = math.ceil(steps / split / t.k) * t.k
    split = math.ceil(steps / per_slice)   # no empty slice
    return replace(t, split=split) if _partials_fit(split, c, limits) else t


def _partials_fit(split: int, c: Contraction, limits: Limits) -> bool:
    """Do split-K's float32 partial sums fit in one buffer?"""
    return 4 * split * c.batch * c.m * c.n <= limits.max_buffer_bytes


def _groups(t: Tile, c: Contraction) -> int:
    return c.batch * math.ceil(c.m / t.m) * math.ceil(c.n / t.n) * t.split


def tile_candidates(kernel: Kernel, limits: Limits) -> list[Tile]:
    """Every tile shape that fits the adapter, split as the tuner would split it: what
    autotuning times (the largest shapes only on a GPU, where they pay)."""
    c = find_contraction(kernel)
    if c is None:
        return []
    return [_with_split(t, kernel, c, limits) if limits.hardware else t for t in _offered(limits)]


def _vector_reason(kernel: Kernel, c: Contraction, t: Tile) -> str:
    found = operand_vectors(kernel, c, t.k)
    read = [f"{name} as vec4s along {'K' if v.axis == RIDX else axis}"
            for name, axis, v in zip("ab", "MN", found) if v]
    if not read:
        return "element by element: no operand is a plain contiguous, 16-byte aligned load"
    return "global loads of " + " and ".join(read) + " (contiguous, 16-byte aligned)"


def _tile_reason(t: Tile, c: Contraction, limits: Limits) -> str:
    if not limits.hardware:
        return (f"{t.m}x{t.n}: the largest tile (at most 64 on a CPU adapter) M and N "
                "fill, within the thread and shared memory limits")
    return (f"{t.m}x{t.n}: the most reuse per loaded value among tiles that cover at most "
            f"1.5x the {c.m}x{c.n} outputs, with {_groups(t, c)} workgroups "
            f"(a large GPU is filled from {FILL_GROUPS}), within the adapter's "
            f"{limits.max_threads} threads and {limits.max_shared_bytes} bytes of shared memory")


def _fits(t: Tile, limits: Limits) -> bool:
    return t.threads <= limits.max_threads and t.shared_bytes(4) <= limits.max_shared_bytes


def _offered(limits: Limits) -> list[Tile]:
    """The tiles the tuner picks from: at most 64x64 on a CPU adapter, where a big tile
    only makes fewer workgroups for its few threads."""
    return [t for t in _TILES if _fits(t, limits) and (limits.hardware or max(t.m, t.n) <= 64)]


def _padding(t: Tile, c: Contraction) -> float:
    """Outputs the tiles cover per output computed."""
    return math.ceil(c.m / t.m) * t.m * math.ceil(c.n / t.n) * t.n / (c.m * c.n)


def _can_split(kernel: Kernel) -> bool:
    """Split-K adds partial sums in a second pass: float32 partials, float32 outputs."""
    return kernel.dtype is DType.float32 and kernel.exp.dtype is DType.float32


FILL_GROUPS = 128       # workgroups that keep every core of a large GPU (132 on an H200) busy
MAX_SPLIT = 8
SPLIT_MIN_STEPS = 128   # reduction steps per slice worth a workgroup

# Most reuse first: 8x8 register blocks give 64 multiply-adds per 4 vector loads from
# shared memory, the reuse a GPU needs to approach its peak (128x64x16 with 8x8 per
# thread is the hand-written WGSL kernel that reached 0.48 of cuBLAS on an H200);
# smaller tiles waste less on small sides and make more workgroups; 64x16 and 16x64
# serve a side of 8-16 outputs.
_TILES = (Tile(128, 128, 8, 8, 8), Tile(128, 64, 16, 8, 8), Tile(64, 128, 16, 8, 8),
          Tile(64, 64, 16, 4, 4), Tile(32, 32, 16, 2, 2), Tile(64, 16, 16, 4, 2),
          Tile(16, 64, 16, 2, 4))


def _unroll_for(kernel: Kernel) -> int:
    steps = kernel.reduction.size
    if len(kernel.exp.toposort()) > UNROLL_MAX_NODES:
        return 1
    return next((u for u in (4, 2) if steps >= u and steps % u == 0), 1)


def _reduction_is_contiguous(kernel: Kernel) -> bool:
    """Do most loads step by one element per reduction step (not per output)?"""
    loads = [n for n in kernel.exp.toposort() if n.op is AluOp.GlobalIndex]
    if not loads:
        return False
    g = np.array([0, 0, 1], np.int32)
    r = np.array([0, 1, 0], np.int32)
    votes = 0
    for load in loads:
        if any(n.op is AluOp.GlobalIndex for n in load.src[0].toposort()):
            continue   # a gather: its stride is data
        idx = np.broadcast_to(evaluate(load.src[0], {GIDX: g, RIDX: r}), (3,)).astype(np.int64)
        along_r, along_g = abs(idx[1] - idx[0]), abs(idx[2] - idx[0])
        votes += 1 if along_r == 1 and along_g != 1 else -1 if along_g == 1 else 0
    return votes > 0


def _pow2_floor(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


_STRATEGY_NAMES = {s.value: s for s in Strategy}   # knobs and caches name strategies


def _override(t: Tuning, key: str, value: Any, kernel: Kernel, lang: Lang,
              limits: Limits) -> Tuning:
    why = dict(t.reasons)
    why[key] = "set by the caller"
    bad = ValueError(f"webgpu tuning: {key}={value!r} is not valid for {kernel.name} "
                     f"(strategy {t.strategy.value})")
    if key == "strategy":
        value = _STRATEGY_NAMES.get(value, value)   # a Strategy or its name
        if not isinstance(value, Strategy) or \
                (value is Strategy.ELEMENTWISE) != (kernel.reduction is None):
            raise bad
        if value is t.strategy:
            return t
        if value is Strategy.TILED:
            c = find_contraction(kernel) if lang.packed(kernel.dtype) == 1 and \
                lang.native(kernel.exp.dtype) else None
            tile = _tile_for(kernel, c, limits) if c else None
            if tile is None:
                raise bad
            return replace(t, strategy=value, workgroup=tile.threads, upcast=1, unroll=1,
                           tile=tile, contraction=c, reasons=tuple(why.items()))
        wg = 64 if value is Strategy.REDUCE else min(256, _pow2_floor(limits.max_threads))
        return replace(t, strategy=value, workgroup=wg, upcast=lang.packed(kernel.dtype),
                       unroll=_unroll_for(kernel) if value is Strategy.REDUCE else 1, tile=None,
                       group_outputs=1, contraction=None, reasons=tuple(why.items()))
    if key == "group_outputs":
        if t.strategy is not Strategy.GROUP_REDUCE or value < 1 or value & (value - 1) or \
                t.workgroup % value or t.workgroup // value < 2 or \
                (value > 1 and lang.packed(kernel.dtype) > 1):
            raise bad
        return replace(t, group_outputs=int(value), reasons=tuple(why.items()))
    if key == "workgroup":
        ok = 1 <= value <= limits.max_threads and t.strategy is not Strategy.TILED and \
            (t.strategy is not Strategy.GROUP_REDUCE or value & (value - 1) == 0 and
             value // t.group_outputs >= 2)
        if not ok:
            raise bad
        return replace(t, workgroup=int(value), reasons=tuple(why.items()))
    if key == "upcast":
        pack = lang.packed(kernel.dtype)
        if t.strategy not in (Strategy.ELEMENTWISE, Strategy.REDUCE) or value < 1 or value % pack:
            raise bad
        return replace(t, upcast=int(value), reasons=tuple(why.items()))
    if key == "unroll":
        fits = kernel.reduction is not None and (
            t.strategy is Strategy.GROUP_REDUCE or kernel.reduction.size % max(value, 1) == 0)
        if t.strategy not in (Strategy.REDUCE, Strategy.GROUP_REDUCE) or value < 1 or not fits:
            raise bad
        return replace(t, unroll=int(value), reasons=tuple(why.items()))
    if key == "tile":
        try:
            tile = Tile(*value)
        except TypeError:
            raise bad from None
        if t.strategy is not Strategy.TILED or min(tile.m, tile.n, tile.k, tile.reg_m,
                                                   tile.reg_n, tile.split) < 1 or \
                tile.m % tile.reg_m or tile.n % tile.reg_n or not _fits(tile, limits) or \
                (tile.split > 1 and (not _can_split(kernel) or
                                     tile.split > math.ceil(kernel.reduction.size / tile.k) or
                                     not _partials_fit(tile.split, t.contraction, limits))):
            raise bad
        return replace(t, tile=tile, workgroup=tile.threads, reasons=tuple(why.items()))
    raise ValueError(f"webgpu tuning: unknown setting {key!r}; known: strategy, workgroup, "
                     "upcast, unroll, group_outputs, tile")


# The values a caller may try per knob (knobs() keeps those valid for a kernel), and what
# each knob does.
_KNOB_VALUES: dict[str, tuple[Any, ...]] = {
    "strategy": tuple(s.value for s in Strategy),
    "workgroup": (32, 64, 128, 256, 512),
    "upcast": (1, 2, 4, 8),
    "unroll": (1, 2, 4, 8, 16),
    "group_outputs": (1, 2, 4, 8, 16, 32),
    "tile": tuple(t.knob() for t in _TILES) + tuple(t.knob() for t in (
        Tile(128, 128, 16, 8, 8), Tile(64, 64, 8, 4, 4), Tile(32, 64, 16, 2, 4),
        Tile(128, 64, 16, 8, 8, double=False), Tile(64, 64, 16, 4, 4, split=4))),
}
_KNOB_DOCS = {
    "strategy": "how threads share the work: one per output, a loop per output, a workgroup "
                "per reduction, or shared-memory tiles (sum of products)",
    "workgroup": "threads per workgroup",
    "upcast": "consecutive outputs each thread computes",
    "unroll": "reduction steps per loop iteration",
    "group_outputs": "group_reduce: outputs each workgroup reduces side by side",
    "tile": "tiled: (M, N, K) of a workgroup's tile and (M, N) of each thread's register block",
}


def knobs(kernel: Kernel, lang: Lang, limits: Limits) -> tuple[Knob, ...]:
    """Each setting tune() takes as an override, with the values valid for `kernel` on
    their own (the tuner's other choices kept) and the tuner's current value."""
    base = _choose(kernel, lang, limits)
    current = {"strategy": base.strategy.value, "workgroup": base.workgroup, "upcast": base.upcast,
               "unroll": base.unroll, "group_outputs": base.group_outputs,
               "tile": base.tile and base.tile.knob()}
    found = []
    for name, values in _KNOB_VALUES.items():
        valid = tuple(v for v in values if _allows(base, name, v, kernel, lang, limits))
        if len(valid) > 1:     # a single value is no choice
            found.append(Knob(name, valid, current[name], _KNOB_DOCS[name]))
    return tuple(found)


def _allows(t: Tuning, name: str, value: Any, kernel: Kernel, lang: Lang, limits: Limits) -> bool:
    try:
        _override(t, name, value, kernel, lang, limits)
    except ValueError:
        return False
    return True


def grid_for(groups: int, limits: Limits) -> tuple[int, int, int]:
    """Workgroup counts per dimension for `groups` groups: 2-D past the per-dimension
    limit, the shader folding (x, y) back into one index."""
    cap = limits.max_groups_per_dim
    if groups <= cap:
        return (max(groups, 1), 1, 1)
    rows = math.ceil(groups / cap)
    if rows > cap:
        raise ValueError(f"webgpu: {groups} workgroups exceed a {cap}x{cap} grid")
    return (math.ceil(groups / rows), rows, 1)
