"""The kernel browser: a capture's kernels stage by stage, retuned and re-timed live.

`browse(log)` (and `%%kernel --widget`) returns a KernelBrowser: a kernel list,
one tab per stage (the Report's own per-kernel HTML), and tuning knobs whose
"recompile & time" button prepares the selected kernel again through its
backend with those overrides and times the old and new executables side by side.
Its MIME bundle also carries the static HTML report, so a saved notebook shows
the report where no widget manager runs (nbconvert, GitHub, nbviewer).
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import time
from typing import Any, Callable, Iterable, Optional

import ipywidgets as w

from jaxlab import events
from jaxlab.backends.base import Backend, Executable
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device, get_device
from jaxlab.engine.dispatch import output_buffers
from jaxlab.events import KernelEvent
from jaxlab.ir.kernel import Kernel
from jaxlab.lab.report import Html, KernelGroup, Report, fmt_ms, join, markup, page

# The browser's tabs: (title, Report stage)
TABS = (("jaxpr", "jaxpr"), ("IR", "ir"), ("tuned IR", "tuned"), ("tuning", "tuning"),
        ("source", "source"), ("timings", "timings"))
# knob -> (choices, the keyword names a backend's prepare_kernel may give it)
KNOBS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "upcast": ((1, 2, 4, 8), ("upcast",)),
    "unroll": ((1, 2, 4, 8, 16), ("unroll",)),
    "workgroup": ((32, 64, 128, 256, 512), ("workgroup", "workgroup_size")),
    "vector_width": ((1, 2, 4, 8), ("vector_width",)),
}
AUTO = 0          # a knob left to the backend's tuner (no knob takes 0)
TIMING_RUNS = 5
NO_KNOBS = "this backend has no tuning knobs"

Overrides = dict[str, int]
Prepare = Callable[[Kernel, Overrides], Executable]


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


def tuning_prepare(backend: Backend) -> Optional[Prepare]:
    """How `backend.prepare_kernel` takes tuning overrides, or None when it takes
    none: one `tuning` dict (webgpu), or a keyword per knob."""
    params = inspect.signature(backend.prepare_kernel).parameters
    if "tuning" in params:
        return lambda kernel, overrides: backend.prepare_kernel(kernel, tuning=overrides)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    keyword = {knob: next((a for a in aliases if takes_any or a in params), None)
               for knob, (_, aliases) in KNOBS.items()}
    keyword = {knob: name for knob, name in keyword.items() if name is not None}
    if not keyword:
        return None

    def prepare(kernel: Kernel, overrides: Overrides) -> Executable:
        missing = sorted(set(overrides) - set(keyword))
        if missing:
            raise ValueError(f"the {backend.name} backend has no {', '.join(missing)} knob; "
                             f"it takes {', '.join(sorted(keyword))}")
        return backend.prepare_kernel(kernel, **{keyword[k]: v for k, v in overrides.items()})
    return prepare


def recompile(device: Device, kernel: Kernel, overrides: Overrides) -> tuple[Executable, float]:
    """A fresh executable for `kernel` with `overrides` (bypassing the cache), and
    its compile milliseconds."""
    prepare = tuning_prepare(device.backend)
    if prepare is None and overrides:
        raise ValueError(f"{NO_KNOBS} ({device.platform})")
    t0 = time.perf_counter()
    exe = prepare(kernel, overrides) if prepare else device.backend.prepare_kernel(kernel)
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
    return dataclasses.replace(
        event, source=exe.source, source_language=exe.language, tuning=exe.tuning,
        tuned_ir=exe.tuned_ir or event.ir, compile_ms=compile_ms, cache_hit=not compile_ms,
        dispatch_ms=timing.host_ms, device_ms=timing.device_ms)


# --- HTML pieces ---------------------------------------------------------------------

def stage_body(report: Report, group: KernelGroup, stage: str) -> Html:
    """One stage of one kernel, as the Report renders it (empty where it has none)."""
    return report._stage_html(group, stage)   # noqa: SLF001  (the Report's per-kernel HTML)


def stage_html(report: Report, group: KernelGroup, stage: str) -> Html:
    return page(stage_body(report, group, stage) or
                markup('<div class="jl-muted">no {s} for this kernel</div>', s=stage))


def side_by_side(panes: Iterable[tuple[str, KernelEvent]]) -> Html:
    """Executables of one kernel next to each other: time, tuning and source."""
    cells = []
    for label, event in panes:
        report = Report([event], stages=("timings", "tuning", "source"))
        group = report.groups[0]
        cells.append(markup('<td><div class="jl-title">{label}: {ms}</div>{stages}</td>',
                            label=label, ms=fmt_ms(group.ms),
                            stages=join(stage_body(report, group, s) for s in report.stages)))
    return page(markup('<table class="jl-compare"><tbody><tr>{cells}</tr></tbody></table>',
                       cells=join(cells)))


def note(text: str) -> Html:
    return page(markup('<div class="jl-muted">{t}</div>', t=text))


# --- the widget ----------------------------------------------------------------------

class KernelBrowser(w.VBox):
    """Kernel list, stage tabs and tuning knobs over one capture's events."""

    def __init__(self, events_: Iterable[KernelEvent], program: Any = None,
                 title: str = "") -> None:
        self.report = Report(events_, program=program, title=title)
        # the tabs show one stage each, unfolded: a report asked for those stages
        self.stages = Report(self.report.events, stages=[stage for _, stage in TABS])
        self.groups = self.stages.groups
        self.picker = w.Select(options=[(self._label(i, g), i) for i, g in enumerate(self.groups)],
                               rows=min(10, max(2, len(self.groups))),
                               layout=w.Layout(width="30%"))
        self.tabs = w.Tab(children=[w.HTML() for _ in TABS], layout=w.Layout(width="70%"))
        for i, (name, _) in enumerate(TABS):
            self.tabs.set_title(i, name)
        self.knobs = {name: w.Dropdown(options=[("auto", AUTO)] + [(str(c), c) for c in choices],
                                       value=AUTO, description=name,
                                       style={"description_width": "initial"},
                                       layout=w.Layout(width="auto"))
                      for name, (choices, _) in KNOBS.items()}
        self.button = w.Button(description="recompile & time", icon="refresh",
                               button_style="primary", layout=w.Layout(width="auto"))
        self.message = w.HTML()
        self.result = w.HTML()
        self.picker.observe(lambda _: self.show(), names="value")
        self.button.on_click(lambda _: self.retune())
        header = w.HTML(page(markup('<div class="jl-title">{t}</div>',
                                    t=title or f"jaxlab: {len(self.groups)} kernels")))
        super().__init__([header, w.HBox([self.picker, self.tabs]),
                          w.HBox([*self.knobs.values(), self.button]), self.message, self.result])
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
        """Fill the tabs for the selected kernel and enable the knobs it has."""
        group = self.group
        self.result.value = ""
        if group is None:
            self.message.value = note("no kernels ran")
            self.button.disabled = True
            return
        for child, (_, stage) in zip(self.tabs.children, TABS):
            child.value = stage_html(self.stages, group, stage)
        if not group.first.equations and self.tabs.selected_index == 0:
            self.tabs.selected_index = 1   # eager code is not traced: open on the IR
        found = find_kernel(group.first)
        prepare = found and tuning_prepare(found[0].backend)
        for knob in self.knobs.values():
            knob.disabled = not prepare
        self.button.disabled = found is None
        self.message.value = note(
            f"{group.first.name} is a {group.first.kind} that cannot be recompiled here "
            "(routines have no knobs; or the kernel cache was cleared)" if found is None
            else "" if prepare else f"{NO_KNOBS}: recompile & time re-times it as it is")

    def overrides(self) -> Overrides:
        return {name: knob.value for name, knob in self.knobs.items()
                if knob.value != AUTO and not knob.disabled}

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
        self.result.value = side_by_side([
            ("before (cached)", as_event(group.first, cached, old)),
            ("after", as_event(group.first, exe, new, compile_ms))])

    def _repr_mimebundle_(self, **kwargs: Any) -> Optional[dict[str, Any]]:
        """The widget view plus the static report, for wherever widgets do not run."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            bundle["text/plain"] = self.report.text()
            bundle["text/html"] = self.report.html()
        return bundle


def browse(log: Iterable[KernelEvent], program: Any = None, title: str = "") -> KernelBrowser:
    """An interactive browser of the kernels in `log` (a `jaxlab.capture()` log)."""
    return KernelBrowser(log, program=program, title=title)
