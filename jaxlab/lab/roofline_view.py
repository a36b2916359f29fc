"""The roofline in a report: per kernel, what bounds it and how close it came to that
roof; and the plot (arithmetic intensity against achieved GFLOP/s, log-log, each kernel
a dot sized by its time, the device's memory and compute roofs).

Only measured times count: a kernel whose time the device did not measure (a webgpu
dispatch without timestamp queries: its host time is only the submission) gets no
fraction and no dot.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from jaxlab.engine.roofline import Judgement, Roof
from jaxlab.lab.view import Figure, Line, Mark, MarkKind, Node, Style

_W, _H = 420, 260                 # the plot's size in px
_LEFT, _BOTTOM, _PAD = 52, 34, 10  # margins for the axis labels


@dataclass(frozen=True)
class KernelPoint:
    """One kernel on the roofline."""
    number: int               # its row in the report (1-based)
    name: str
    judgement: Judgement
    gflops: float             # achieved
    gbps: float
    ms: float


def judge(number: int, name: str, flops: float, nbytes: float, device_ms: Optional[float],
          host_ms: float, calls: int, roof: Optional[Roof]) -> Optional[KernelPoint]:
    """A kernel's place under its device's roofs (None without a roof, a measured time,
    or bytes moved)."""
    ms = roof.measured_ms(device_ms, host_ms) if roof is not None else None
    if roof is None or not ms or ms <= 0 or not nbytes:
        return None
    return KernelPoint(number, name, roof.judge(flops, nbytes, ms, calls),
                       flops / ms / 1e6, nbytes / ms / 1e6, ms)


def bound_text(point: Optional[KernelPoint]) -> str:
    """`memory 63%`: the bound and the fraction of its roof, as every view writes it."""
    if point is None:
        return "-"
    return f"{point.judgement.bound.value} {100 * point.judgement.fraction:.0f}%"


def roofs_line(roof: Roof) -> Line:
    state = "remembered from" if roof.from_cache else "measured"
    return Line(f"{roof.platform} roofs ({state} {roof.measured_at}): copy "
                f"{roof.gbps:.3g} GB/s, FMA {roof.gflops:.3g} GFLOP/s, launch "
                f"{roof.launch_ms * 1e3:.0f} us; ridge at {roof.ridge:.3g} FLOP/B", Style.MUTED)


def roofline_nodes(roof: Roof, points: Sequence[KernelPoint]) -> list[Node]:
    """The roofs and the plot (each kernel's numbers are in the report's kernel table)."""
    return [roofs_line(roof), figure(roof, points)]


def _log_range(values: Sequence[float], low: float, high: float) -> tuple[float, float]:
    finite = [v for v in values if v > 0 and math.isfinite(v)] + [low, high]
    return math.floor(math.log10(min(finite))), math.ceil(math.log10(max(finite)))


def figure(roof: Roof, points: Sequence[KernelPoint]) -> Figure:
    """The plot, as marks in pixel coordinates (y grows downwards)."""
    ai = [p.judgement.intensity for p in points]
    x0, x1 = _log_range(ai, roof.ridge / 10, roof.ridge * 10)
    y0, y1 = _log_range([p.gflops for p in points] + [roof.gflops * 2],
                        roof.gbps * 10.0 ** x0, roof.gflops)
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)

    def px(v: float) -> float:
        return _LEFT + (math.log10(v) - x0) / (x1 - x0) * (_W - _LEFT - _PAD)

    def py(v: float) -> float:
        return _H - _BOTTOM - (math.log10(v) - y0) / (y1 - y0) * (_H - _BOTTOM - _PAD)

    marks = [Mark(MarkKind.RECT, _LEFT, _PAD, _W - _PAD, _H - _BOTTOM, cls="jl-frame")]
    for e in range(x0, x1 + 1):
        marks.append(Mark(MarkKind.TEXT, px(10.0 ** e), _H - _BOTTOM + 14, text=f"1e{e}",
                          cls="jl-axis"))
    for e in range(y0, y1 + 1):
        marks.append(Mark(MarkKind.TEXT, _LEFT - 4, py(10.0 ** e) + 4, text=f"1e{e}",
                          cls="jl-axis jl-right"))
    marks += [Mark(MarkKind.TEXT, (_LEFT + _W) / 2, _H - 4, text="arithmetic intensity (FLOP/B)",
                   cls="jl-axis"),
              Mark(MarkKind.TEXT, 4, _PAD + 8, text="GFLOP/s", cls="jl-axis jl-left")]
    # the memory roof rises to the ridge, then the compute roof is flat
    start = 10.0 ** x0
    marks += [Mark(MarkKind.LINE, px(start), py(max(start * roof.gbps, 10.0 ** y0)),
                   px(roof.ridge), py(roof.gflops), cls="jl-roof"),
              Mark(MarkKind.LINE, px(roof.ridge), py(roof.gflops), px(10.0 ** x1),
                   py(roof.gflops), cls="jl-roof")]
    longest = max((p.ms for p in points), default=1.0)
    for p in points:
        x = min(max(p.judgement.intensity, 10.0 ** x0), 10.0 ** x1)
        y = min(max(p.gflops, 10.0 ** y0), 10.0 ** y1)
        marks.append(Mark(MarkKind.CIRCLE, px(x), py(y), r=3 + 9 * math.sqrt(p.ms / longest),
                          text=f"#{p.number} {p.name}: {bound_text(p)}",
                          cls=f"jl-dot jl-{p.judgement.bound.value}"))
    return Figure(_W, _H, tuple(marks),
                  f"roofline of {roof.platform}: {len(points)} kernel(s) under the "
                  f"memory roof ({roof.gbps:.3g} GB/s) and compute roof ({roof.gflops:.3g} "
                  f"GFLOP/s)")
