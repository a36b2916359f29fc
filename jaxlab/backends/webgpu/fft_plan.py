"""How the webgpu "fft" routine splits a power-of-two transform into passes over
global memory, each pass a batch of R-point DFTs done in workgroup memory.

A pass is one Stockham stage of radix R (R a power of two, up to the whole row):
after Ns points are combined, butterfly j < n/R (g = j / Ns, k = j % Ns) reads
    v_q = src[j + q n/R] * w^(q k n/(R Ns))          q < R, w = exp(-+2 pi i / n)
and writes the R-point DFT of v to dst[g R Ns + k + q Ns]. A workgroup takes
`span` consecutive butterflies (consecutive j: the reads of one q are contiguous,
and so are the writes once Ns >= span), stages their R * span values in
var<workgroup> and runs the R-point DFTs there as radix-4/8/16 sub-stages. Rows that
fit in workgroup memory take one pass; longer ones the fewest passes whose R,
with `span` columns beside it, still fit (a four-step FFT with the transposes in
the index math: 2^24 is three passes of 256 on a 48 KiB device).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import Optional

from jaxlab.backends.webgpu.tune import Limits

COMPLEX_BYTES = 8          # a complex64 value: two f32
ENV_TUNING = "JAXLAB_WEBGPU_FFT"   # e.g. "radix=8,threads=128,span=16": overrides, to measure


@dataclass(frozen=True)
class FftTuning:
    """The choices a plan is made from (the defaults, or ENV_TUNING's overrides)."""
    radix: Optional[int] = None   # the largest sub-stage radix (4, 8 or 16); None: by pass
    threads: int = 256      # the most threads per workgroup
    span: int = 16          # the fewest columns of a strided pass: 16 x 8 = 128-byte reads

    @staticmethod
    def from_env() -> "FftTuning":
        text = os.environ.get(ENV_TUNING, "")
        values = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            key, _, value = item.partition("=")
            if key not in {f.name for f in fields(FftTuning)} or not value.isdigit():
                raise ValueError(f"{ENV_TUNING}={text!r}: expected radix=, threads=, span= "
                                 "with integer values")
            values[key] = int(value)
        tuning = FftTuning(**values)
        if tuning.radix not in (None, 4, 8, 16) or tuning.threads < 1 or tuning.span < 1 or \
                tuning.threads & (tuning.threads - 1) or tuning.span & (tuning.span - 1):
            raise ValueError(f"{ENV_TUNING}={text!r}: radix 4, 8 or 16; threads and span "
                             "powers of two")
        return tuning

    @property
    def overridden(self) -> bool:
        return self != FftTuning()

    def largest_subradix(self, radix: int) -> int:
        """Values a thread holds per butterfly in a radix-point pass: 16 for passes of up
        to 256 points (two sub-stages, one exchange through workgroup memory), 8 beyond.
        Measured on the H200 (device ms, radix 4 / 8 / 16 at most): W8's 256-point
        passes 0.537 / 0.481 / 0.462, W9's 1024-point rows 0.147 / 0.146 / 0.167."""
        if self.radix is not None:
            return self.radix
        return 16 if radix <= 256 else 8


@dataclass(frozen=True)
class FftPass:
    """One pass: `radix`-point DFTs of `span` butterflies per workgroup, after
    `combined` points (Ns) are done, as sub-stages of `subradices`."""
    n: int
    rows: int
    radix: int
    combined: int
    span: int
    threads: int
    subradices: tuple[int, ...]

    @property
    def butterflies(self) -> int:
        """Butterflies of the whole batch (columns of R values)."""
        return self.rows * (self.n // self.radix)

    @property
    def groups(self) -> int:
        return math.ceil(self.butterflies / self.span)

    @property
    def pad(self) -> int:
        """Workgroup-memory padding per column: one value, so columns read side by side
        fall in different banks."""
        return 1 if self.span > 1 else 0

    @property
    def shared_values(self) -> int:
        return self.span * (self.radix + self.pad)

    @property
    def strided_reads(self) -> bool:
        """Reads of one q step n/R apart: threads take columns (span) fastest."""
        return self.radix < self.n

    @property
    def strided_writes(self) -> bool:
        return self.combined > 1


def subradices(radix: int, largest: int) -> tuple[int, ...]:
    """The sub-stages of a radix-point DFT: the fewest of at most `largest` points, as
    equal as possible (larger first), and no radix-2 stage but for a 2-point transform
    (radix 4 with an odd log2 takes one radix 8)."""
    bits, most = radix.bit_length() - 1, largest.bit_length() - 1
    count = math.ceil(bits / most)
    split = [bits // count + (i < bits % count) for i in range(count)]
    if count > 1 and split[-1] == 1:
        split = [split[0] + 1, *split[1:-1]]
    return tuple(1 << b for b in split)


def _span_for(radix: int, limits: Limits) -> int:
    """The most columns (a power of two) whose padded values fit in workgroup memory."""
    span = 1
    while (2 * span) * (radix + 1) * COMPLEX_BYTES <= limits.max_shared_bytes:
        span *= 2
    return span


def _largest_radix(n: int, limits: Limits, span: int) -> int:
    """The largest radix a pass of a length-n transform may take: the whole row when
    it fits, else one that leaves `span` columns beside it."""
    if n * COMPLEX_BYTES <= limits.max_shared_bytes:
        return n
    radix = 1
    while span * (2 * radix + 1) * COMPLEX_BYTES <= limits.max_shared_bytes:
        radix *= 2
    return max(radix, 16)


def plan_passes(n: int, rows: int, limits: Limits, tuning: FftTuning) -> list[FftPass]:
    """The passes of `rows` transforms of length n (a power of two >= 2): the fewest
    that the workgroup memory allows, their radices as equal as possible (larger first)."""
    bits = n.bit_length() - 1
    most = _largest_radix(n, limits, tuning.span).bit_length() - 1
    count = math.ceil(bits / most)
    split = [bits // count + (i < bits % count) for i in range(count)]
    passes, combined = [], 1
    for b in split:
        radix = 1 << b
        # no more columns than the batch has butterflies
        span = min(_span_for(radix, limits), 1 << (rows * (n // radix) - 1).bit_length())
        subs = subradices(radix, tuning.largest_subradix(radix))
        threads = max(1, min(tuning.threads, limits.max_threads, radix * span // max(subs)))
        passes.append(FftPass(n, rows, radix, combined, span, threads, subs))
        combined *= radix
    return passes


def bytes_moved(plan: list[FftPass]) -> int:
    """Global-memory traffic of the plan: each pass reads and writes every value once
    (the twiddle reads stay in cache: at most 2 sqrt(n) distinct values per pass)."""
    return sum(2 * p.rows * p.n * COMPLEX_BYTES for p in plan)
