"""Which tunings of a kernel are worth timing on WebGPU (the measuring itself,
and its cache, are in jaxlab/backends/autotuning.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.tune import Limits, Strategy, Tuning, tile_candidates, tune
from jaxlab.ir.kernel import Kernel

MAX_CANDIDATES = 20
SPLITS = (2, 4, 8)
# multiply-adds past which a contraction as one loop per output is not worth timing
LOOP_WORK = 1 << 26


def candidates(kernel: Kernel, lang: Lang, limits: Limits) -> list[dict[str, Any]]:
    """Override sets worth timing: the tuner's own choice first, then each other
    strategy and knob value the kernel allows (invalid ones are dropped)."""
    base = tune(kernel, lang, limits)
    tries: list[dict[str, Any]] = [{}]
    strategies = [s for s in Strategy if (s is Strategy.ELEMENTWISE) == (kernel.reduction is None)]
    if base.strategy is not Strategy.TILED or kernel.size * kernel.reduction.size < LOOP_WORK:
        tries += [{"strategy": s.value} for s in strategies if s is not base.strategy]
    if base.strategy is Strategy.TILED:
        # every tile shape the adapter allows (the large ones pay only on a GPU), the two
        # with the most reuse without prefetching or with 16 steps per slice, the chosen
        # one with scalar loads and split further
        tiles = tile_candidates(kernel, limits)
        tries += [{"tile": t.knob()} for t in tiles]
        tries += [{"tile": replace(t, double=False).knob()} for t in tiles[:2]]
        tries += [{"tile": replace(t, k=16).knob()} for t in tiles[:2]]
        tries += [{"tile": replace(base.tile, vector_loads=False).knob()}]
        tries += [{"tile": replace(base.tile, split=s).knob()} for s in SPLITS]
    else:
        tries += [{"workgroup": w} for w in (64, 128, 256) if w != base.workgroup]
    if base.strategy is Strategy.ELEMENTWISE:
        tries += [{"upcast": u} for u in (1, 2, 4) if u != base.upcast]
    if base.strategy in (Strategy.REDUCE, Strategy.GROUP_REDUCE):
        tries += [{"unroll": u} for u in (1, 2, 4, 8) if u != base.unroll]
    if base.strategy is Strategy.GROUP_REDUCE:
        tries += [{"group_outputs": n} for n in (1, 8, 32) if n != base.group_outputs]
    valid, seen = [], []
    for overrides in tries:
        try:
            chosen = configuration(tune(kernel, lang, limits, overrides))
        except ValueError:
            continue
        if chosen not in seen:
            valid.append(overrides)
            seen.append(chosen)
    return valid[:MAX_CANDIDATES]


def configuration(t: Tuning) -> dict[str, Any]:
    """The choices of a Tuning without their reasons."""
    return {c.name: c.value for c in t.record().choices}
