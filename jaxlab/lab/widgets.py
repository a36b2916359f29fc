"""The kernel browser: a capture's kernels stage by stage, retuned and re-timed live.

`browse(log)` (and `%%kernel --widget`) returns a KernelBrowser: a kernel list,
one tab per stage (the Report's own per-kernel views, sources in full), and the
tuning knobs the kernel's backend offers for it (`Backend.knobs`), each showing
its current value; "recompile & time" prepares the kernel again through
`Backend.prepare_kernel(kernel, overrides)` and times old and new side by side.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Iterable, Optional

import ipywidgets as w

from jaxlab import events
from jaxlab.backends.base import Executable, Knob
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device, get_device
from jaxlab.engine.dispatch import output_buffers, prepare_traced
from jaxlab.events import KernelEvent
from jaxlab.ir.kernel import Kernel
from jaxlab.ir.provenance import LineOrigins
from jaxlab.engine import roofline
from jaxlab.engine.roofline import Roof
from jaxlab.lab.diff import ReportDiff
from jaxlab.lab.report import KernelGroup, Report, fmt_ms, show_value
from jaxlab.lab.view import Block, Html, Line, Style, join, markup, page, to_html

# The browser's tabs: (title, Report stage)
TABS = (("jaxpr", "jaxpr"), ("IR", "ir"), ("tuned IR", "tuned"), ("tuning", "tuning"),
        ("pipeline", "pipeline"), ("source", "source"), ("timings", "timings"))
# and two of the whole capture: its rooflines, and the diff of the last recompile
ROOFLINE_TAB, DIFF_TAB = "roofline", "diff"
TIMING_RUNS = 5
NO_KNOBS = "this backend has no tuning knobs for this kernel"

Overrides = dict[str, Any]


# --- recompiling and timing (no widgets here) ----------------------------------------

def find_kernel(event: KernelEvent) -> Optional[tuple[Device, Kernel]]:
    """The Kernel an event came from: events carry only its key, while the
    device's kernel cache holds the Kernel objects themselves."""
    try:
        device = get_device(event.backend)
    except (ValueError, RuntimeError):
        return None
    for program in list(device.cache):
        if isinstance(program, Kernel) and program.key == event.key:
            return device, program
    return None


def recompile(device: Device, kernel: Kernel, overrides: Overrides) -> tuple[Executable, float]:
    """A fresh executable for `kernel` with `overrides` (bypassing the cache), and
    its compile milliseconds."""
    t0 = time.perf_counter()
    exe = prepare_traced(device.backend, kernel, overrides)
    return exe, exe.compile_ms or (time.perf_counter() - t0) * 1e3


@dataclasses.dataclass(frozen=True)
class Timing:
    host_ms: float                   # best of the runs, host clock, synchronized
    device_ms: Optional[float]       # best device time, where the backend measures it


def time_executable(device: Device, kernel: Kernel, exe: Executable,
                    runs: int = TIMING_RUNS) -> Timing:
    """Dispatch `exe` on freshly allocated buffers: one warm-up, then the best of `runs`."""
    backend = device.backend
    buffers = [Buffer(device, dtype, count) for dtype, count in kernel.inputs]
    outs = output_buffers(device, kernel)    # held here: a dropped Buffer frees its memory
    inputs, outputs = [b.handle for b in buffers], [b.handle for b in outs]
    host, dev = math.inf, math.inf
    # listening, backends that can read GPU timestamps do; dispatch() alone emits no event
    with events.capture():
        for run in range(runs + 1):
            t0 = time.perf_counter()
            device_ms = backend.dispatch(exe, inputs, outputs)
            backend.synchronize()
            if run:   # run 0 warms caches and pipelines
                host = min(host, (time.perf_counter() - t0) * 1e3)
                dev = min(dev, device_ms) if device_ms is not None else dev
    return Timing(host, None if math.isinf(dev) else dev)


def as_event(event: KernelEvent, exe: Executable, timing: Timing,
             compile_ms: float = 0.0) -> KernelEvent:
    """`event` as if `exe` had produced it: the Report then renders it like any other."""
    lines = event.line_origins   # (the same kernel's origins, through exe's own lines)
    return dataclasses.replace(
        event, line_origins=LineOrigins(exe.line_marks, lines.origins)
        if lines is not None and exe.line_marks else None,
        source=exe.source, source_language=exe.language, tuning=exe.tuning,
        tuned_ir=exe.tuned_ir or event.ir, compile_ms=compile_ms, cache_hit=not compile_ms,
        dispatch_ms=timing.host_ms, device_ms=timing.device_ms)


def measured_roofs(log: Iterable[KernelEvent]) -> dict[str, Roof]:
    """The roofs of every device in `log` (measured the first time, then remembered)."""
    found = {}
    for platform in dict.fromkeys(e.backend for e in log):
        try:
            found[platform] = roofline.peaks(get_device(platform))
        except (ValueError, RuntimeError):
            continue   # a device that is gone: its kernels get no fraction
    return found


# --- HTML pieces ---------------------------------------------------------------------

def stage_html(report: Report, group: KernelGroup, stage: str) -> Html:
    """One stage of one kernel, as the Report renders it, unfolded."""
    node = report.stage_node(group, stage)
    return page(to_html(node) if node else to_html(Line(f"no {stage} for this kernel",
                                                         Style.MUTED)))


def side_by_side(panes: Iterable[tuple[str, KernelEvent]]) -> Html:
    """Executables of one kernel next to each other: time, tuning and source."""
    cells = []
    for label, event in panes:
        report = Report([event], stages=("timings", "tuning", "source"))
        group = report.groups[0]
        stages = [report.stage_node(group, s) for s in report.stages]
        cells.append(markup('<div class="jl-column"><div class="jl-title">{label}: {ms}</div>'
                            '{stages}</div>', label=label, ms=fmt_ms(group.ms),
                            stages=join(to_html(n) for n in stages if n)))
    return page(markup('<div class="jl-columns">{cells}</div>', cells=join(cells)))


def note(text: str) -> Html:
    return page(to_html(Line(text, Style.MUTED)))


def knob_control(knob: Knob) -> w.Dropdown:
    """A dropdown of the values the backend offers, on the current one."""
    options = [(show_value(v) + (" (current)" if v == knob.current else ""), v)
               for v in knob.values]
    return w.Dropdown(options=options, value=knob.current if knob.current in knob.values
                      else knob.values[0], description=knob.name, tooltip=knob.doc,
                      style={"description_width": "initial"}, layout=w.Layout(width="auto"))


# --- the widget ----------------------------------------------------------------------

class KernelBrowser(w.VBox):
    """Kernel list, stage tabs and the backend's tuning knobs over one capture's events."""

    def __init__(self, events_: Iterable[KernelEvent], program: Any = None,
                 title: str = "", fallback: bool = True,
                 peaks: Optional[dict[str, Roof]] = None) -> None:
        events_ = list(events_)
        if peaks is None:
            peaks = measured_roofs(events_)
        self.report = Report(events_, program=program, title=title, peaks=peaks)
        self.fallback = fallback     # carry the static report for where widgets do not run
        # the tabs show one stage each, unfolded, sources in full
        self.stages = Report(self.report.events, stages=[stage for _, stage in TABS],
                             full_sources=True)
        self.groups = self.stages.groups
        self.picker = w.Select(options=[(self._label(i, g), i) for i, g in enumerate(self.groups)],
                               rows=min(10, max(2, len(self.groups))),
                               layout=w.Layout(width="30%"))
        self.tabs = w.Tab(children=[w.HTML() for _ in range(len(TABS) + 2)],
                          layout=w.Layout(width="70%"))
        for i, name in enumerate([name for name, _ in TABS] + [ROOFLINE_TAB, DIFF_TAB]):
            self.tabs.set_title(i, name)
        self.tabs.children[-2].value = page(to_html(Block(tuple(self.report.roofline_folds())))
                                            if self.report.roofline_folds() else
                                            to_html(Line("no kernel with a measured time on a "
                                                         "device with measured roofs",
                                                         Style.MUTED)))
        self.tabs.children[-1].value = note("recompile & time a kernel with other knob values: "
                                            "the diff of its two tunings shows here")
        self.knobs: dict[str, tuple[Knob, w.Dropdown]] = {}
        self.knob_box = w.HBox()
        self.button = w.Button(description="recompile & time", icon="refresh",
                               button_style="primary", layout=w.Layout(width="auto"))
        self.message = w.HTML()
        self.result = w.HTML()
        self.picker.observe(lambda _: self.show(), names="value")
        self.button.on_click(lambda _: self.retune())
        header = w.HTML(page(markup('<div class="jl-title">{t}</div>',
                                    t=title or f"jaxlab: {len(self.groups)} kernels")))
        super().__init__([header, w.HBox([self.picker, self.tabs]),
                          w.HBox([self.knob_box, self.button]), self.message, self.result])
        self.show()

    @staticmethod
    def _label(i: int, g: KernelGroup) -> str:
        calls = f" ×{g.calls}" if g.calls > 1 else ""
        return f"{i + 1}. {g.first.name} · {g.first.backend}{calls} · {fmt_ms(g.ms)}"

    @property
    def group(self) -> Optional[KernelGroup]:
        i = self.picker.value
        return None if i is None else self.groups[i]

    def show(self) -> None:
        """Fill the tabs for the selected kernel and offer its backend's knobs."""
        group = self.group
        self.result.value = ""
        self.knobs = {}
        if group is None:
            self.message.value = note("no kernels ran")
            self.button.disabled = True
            self.knob_box.children = ()
            return
        for child, (_, stage) in zip(self.tabs.children, TABS):
            child.value = stage_html(self.stages, group, stage)
        if not group.first.equations and self.tabs.selected_index == 0:
            self.tabs.selected_index = 1   # eager code is not traced: open on the IR
        found = find_kernel(group.first)
        offered = found[0].backend.knobs(found[1]) if found else ()
        self.knobs = {k.name: (k, knob_control(k)) for k in offered}
        self.knob_box.children = tuple(control for _, control in self.knobs.values())
        self.button.disabled = found is None
        self.message.value = note(
            f"{group.first.name} is a {group.first.kind} that cannot be recompiled here "
            "(routines have no knobs; or the kernel cache was cleared)" if found is None
            else "" if offered else f"{NO_KNOBS}: recompile & time re-times it as it is")

    def overrides(self) -> Overrides:
        """The knobs set away from the tuner's own choice."""
        return {name: control.value for name, (knob, control) in self.knobs.items()
                if control.value != knob.current}

    def retune(self) -> None:
        """Recompile the selected kernel with the knobs' values, time old and new."""
        group = self.group
        found = group and find_kernel(group.first)
        if not found:
            return
        device, kernel = found
        cached = device.cache[kernel]
        try:
            exe, compile_ms = recompile(device, kernel, self.overrides())
            old = time_executable(device, kernel, cached)
            new = time_executable(device, kernel, exe)
        except Exception as exc:   # an invalid setting must leave the browser usable
            self.result.value = note(f"{type(exc).__name__}: {exc}")
            return
        before = as_event(group.first, cached, old)
        after = as_event(group.first, exe, new, compile_ms)
        self.result.value = side_by_side([("before (cached)", before), ("after", after)])
        overrides = ", ".join(f"{k}={show_value(v)}" for k, v in self.overrides().items())
        self.tabs.children[-1].value = ReportDiff(
            Report([before]), Report([after]),
            ("tuner's choice", overrides or "the same choices")).html()

    def _repr_mimebundle_(self, **kwargs: Any) -> Optional[dict[str, Any]]:
        """The widget view plus the static report (unless shown as an output of its
        own, as `%%kernel --widget` does), for wherever widgets do not run."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = self.report.text()
            if self.fallback:
                bundle["text/html"] = self.report.html()
        return bundle


def browse(log: Iterable[KernelEvent], program: Any = None, title: str = "",
           fallback: bool = True) -> KernelBrowser:
    """An interactive browser of the kernels in `log` (a `jaxlab.capture()` log);
    `fallback`: its output carries the static report too."""
    return KernelBrowser(log, program=program, title=title, fallback=fallback)
