"""Why a value was stored instead of fused into its consumer: the fuser's reasons.

Every place that makes a lazy value a buffer (engine/lazy.realize) says why, as a
`Reason`: one of the `Break` kinds (decided where the fuser decides, never guessed
afterwards) with its detail. The kernel that computes the value reports it, and with
the equation that produced the value and the one being lowered when the decision was
made, the lab shows the pair that did not fuse and what a user can change.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from jaxlab.ir.provenance import Origin, current


class Break(enum.Enum):
    """Why two adjacent equations did not fuse (or a value had to be stored)."""
    REDUCE_THEN_BROADCAST = "a reduction's result broadcast into a wider op"
    REDUCE_THEN_MOVE = "a reduction's result reshaped, sliced or padded"
    EXPENSIVE_BROADCAST = "an expensive value broadcast into a wider op"
    TWO_REDUCTIONS = "a second reduction"
    SECOND_EPILOGUE = "two reductions meet in one epilogue"
    CONSUMERS = "several consumers"
    SIZE_LIMIT = "kernel size or input-count limit"
    DEPTH_LIMIT = "backend nesting-depth limit"
    ROUTINE = "routine boundary"
    OUTPUT = "a jit output"
    CARRIED = "carried by a loop"
    READ = "its value is read"
    OTHER = "an op that needs its input in memory"


ADVICE: dict[Break, str] = {
    Break.REDUCE_THEN_BROADCAST: "a reduced value read back at full size (x - x.max(keepdims"
                                 "=True)) is one more kernel: normal for softmax and norms; "
                                 "fold the two passes into one where the math allows",
    Break.REDUCE_THEN_MOVE: "move the reshape/slice before the reduction, or keep the "
                            "work after it in the reduced shape, so it stays in the epilogue",
    Break.EXPENSIVE_BROADCAST: "recomputing the producer per copy would multiply its work: "
                               "broadcast its inputs instead, or accept one stored value",
    Break.TWO_REDUCTIONS: "a kernel folds one reduction: fuse the two by reducing once "
                          "(e.g. sum of x*y instead of sum then scale), or accept two kernels",
    Break.SECOND_EPILOGUE: "combine the reductions' inputs before reducing, so one fold "
                           "feeds the epilogue",
    Break.CONSUMERS: "under jit a value used by several equations is stored once when it "
                     "is a reduction or large; recompute a cheap one in each consumer",
    Break.SIZE_LIMIT: "split the expression, or pass fewer distinct arrays into it",
    Break.DEPTH_LIMIT: "the backend caps nested ops per kernel; a shorter chain fuses",
    Break.ROUTINE: "routines (sort, linalg) run on stored, contiguous arrays: nothing fuses "
                   "across them",
    Break.OUTPUT: "returned values are stored; return fewer intermediates",
    Break.CARRIED: "a loop's carry lives in memory between iterations",
    Break.READ: "reading a value (printing, .tolist(), a Python condition) computes it: "
                "jit the function so the whole step fuses",
    Break.OTHER: "-",
}


@dataclass(frozen=True)
class Reason:
    """Why a value is stored: the kind and its detail (what a kernel event says)."""
    kind: Break
    detail: str = ""

    def text(self) -> str:
        return self.detail or self.kind.value


def reason(why: "Reason | str") -> Reason:
    """A reason as given: a Reason, or free text from an op that needs its input stored."""
    if isinstance(why, Reason):
        return why
    return Reason(Break.READ if why == READ_TEXT else Break.OTHER, why)


READ_TEXT = "its value is read"


@dataclass(frozen=True)
class Unfused:
    """A value stored for `reason`: made by `producer`, wanted by `consumer` (the
    equation being lowered when the fuser decided; None when none was, or when it is
    the producer itself). Passed where a kernel's reason goes; its str() is the text."""
    reason: Reason
    producer: Optional[Origin]
    consumer: Optional[Origin]

    @property
    def advice(self) -> str:
        return ADVICE[self.reason.kind]

    def __str__(self) -> str:
        return self.reason.text()


def unfused(why: "Reason | str", origins: tuple, consumer: Optional[Origin] = None) -> Unfused:
    """The decision to store a value made by the equations `origins` (the last made it),
    taken while lowering `consumer` (by default the current equation)."""
    producer = origins[-1] if origins else None
    consumer = consumer or current()
    return Unfused(reason(why), producer, None if consumer in origins else consumer)
