"""How many loop iterations one shader invocation may run.

Mesa's gallivm, under lavapipe and llvmpipe, guards against hung shaders with one
counter per invocation shared by every loop in the shader: 65535 iterations in all
(LP_MAX_TGSI_LOOP_ITERATIONS). Past it each loop ends after its first iteration: no
error, just wrong numbers. Measured on lavapipe (Mesa 22.3.6): a loop of 70000
iterations counts to 65535; Householder QR from n = 120 and a sum of 300000 steps per
output came out wrong. A dispatch starts fresh counters, and so does every invocation:
code whose threads would loop longer is split into passes or spread over more threads.
GPUs have no such counter.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:   # tune.py asks this module too
    from jaxlab.backends.webgpu.tune import Limits

SOFTWARE_LOOP_LIMIT = 65535
# what planners count against: their counts are bounds, the margin covers the few
# loops they leave out (a prologue's, a tree reduction's)
SOFTWARE_BUDGET = 60000


def loop_budget(limits: "Limits") -> Optional[int]:
    """Loop iterations a planner may give one invocation, or None for no limit."""
    return None if limits.hardware else SOFTWARE_BUDGET


def fits(trips: int, limits: "Limits") -> bool:
    """Whether an invocation that runs `trips` loop iterations computes what it says."""
    budget = loop_budget(limits)
    return budget is None or trips <= budget
