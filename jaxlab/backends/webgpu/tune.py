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
from jaxlab.backends.webgpu.contraction import Contraction, find_contraction
from jaxlab.backends.webgpu.ops import Lang
from jaxlab.ir.alu import AluOp
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
TILED_MIN_DIM = 16         # smaller M or N would waste most of a tile
UNROLL_MAX_NODES = 48      # bigger bodies are not copied (code size, registers)


@dataclass(frozen=True)
class Limits:
    """What the device allows (WebGPU's guaranteed minimums by default)."""
    max_threads: int = 256             # invocations per workgroup
    max_groups_per_dim: int = 65535
    max_shared_bytes: int = 16384
    hardware: bool = True              # a GPU, not a software rasteriser


@dataclass(frozen=True)
class Tile:
    m: int            # outputs per workgroup along M
    n: int            # ... along N
    k: int            # reduction steps staged per round
    reg_m: int        # outputs per thread along M (register block)
    reg_n: int

    @property
    def threads(self) -> int:
        return (self.m // self.reg_m) * (self.n // self.reg_n)

    def shared_bytes(self, itemsize: int) -> int:
        return (self.m + self.n) * self.k * itemsize


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
    tile = _tile_for(kernel, contraction, limits)
    if tile is not None:
        return Tuning(Strategy.TILED, tile.threads, 1, tile=tile, contraction=contraction,
                      reasons=tuple(reasons + [
                          ("strategy", f"sum of a*b where a ignores {contraction.n} outputs "
                                       f"and b ignores {contraction.m}: each staged value is "
                                       "reused across a tile"),
                          ("tile", f"{tile.m}x{tile.n}: the largest tile M and N fill "
                                   "(128 only on a GPU), within the thread and shared "
                                   "memory limits"),
                          ("register_block", "register tiles with constant indices: "
                                             "dynamically indexed arrays would spill"),
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
        if kernel.size > 1:
            return None
        threads, outputs, why = min(64, cap), 1, "a single output"
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


def _tile_for(kernel: Kernel, c: Optional[Contraction], limits: Limits) -> Optional[Tile]:
    if c is None or min(c.m, c.n) < TILED_MIN_DIM or kernel.reduction.size < TILED_MIN_DIM:
        return None
    fits = [t for t in _TILES if (limits.hardware or t.m <= 64) and
            t.threads <= limits.max_threads and t.shared_bytes(4) <= limits.max_shared_bytes]
    side = min(c.m, c.n)
    return next((t for t in fits if t.m <= side), fits[-1] if fits else None)


# Largest first: 8x8 register blocks give 64 multiply-adds per 16 shared loads, the
# reuse a GPU needs to approach its peak; smaller tiles waste less on small sides.
_TILES = (Tile(128, 128, 8, 8, 8), Tile(64, 64, 16, 4, 4), Tile(32, 32, 16, 2, 2))


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
        tile = Tile(*value)
        if t.strategy is not Strategy.TILED or tile.m % tile.reg_m or tile.n % tile.reg_n or \
                tile.threads > limits.max_threads or \
                tile.shared_bytes(4) > limits.max_shared_bytes:
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
    "tile": tuple((t.m, t.n, t.k, t.reg_m, t.reg_n) for t in _TILES) + (
        (128, 128, 16, 8, 8), (64, 64, 8, 4, 4), (32, 64, 16, 2, 4)),
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
               "tile": base.tile and (base.tile.m, base.tile.n, base.tile.k, base.tile.reg_m,
                                      base.tile.reg_n)}
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
