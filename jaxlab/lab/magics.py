"""IPython magics: `%%kernel` runs a cell and shows what the engine did;
`%jaxlab` looks at and sets the engine (status, backend, kernels, debug, clear).

The magics only run cells and choose what to display: reports come from
report.py, traces from profile.py, the interactive browser from widgets.py.
"""
from __future__ import annotations

import ast
import contextlib
import os
import sys
import time
from typing import Any, Callable, ContextManager, Optional

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from IPython.utils.capture import capture_output

import jaxlab
from jaxlab import events
from jaxlab.api import JittedFunction
from jaxlab.core.jit import Step
from jaxlab.array import Array
from jaxlab.engine import devices
from jaxlab.events import EventLog, KernelEvent
from jaxlab.backends import autotuning
from jaxlab.engine import roofline
from jaxlab.engine.roofline import Roof
from jaxlab.lab.diff import ReportDiff
from jaxlab.lab.placement import Placement
from jaxlab.lab.progress import ProgressLine, compiling
from jaxlab.lab.tracebacks import filter_exception
from jaxlab.lab.profile import write_trace
from jaxlab.lab.report import (STAGES, Comparison, ErrorReport, FileLink, Report, Table, flatten,
                               fmt_ms, fmt_si, indent)
from jaxlab.tree_util import tree_leaves

_COMMANDS = ("status", "backend", "kernels", "debug", "clear", "autotune", "diff")
_VALUE_NEEDED = ("backend", "debug")
_VALUE_ALLOWED = _VALUE_NEEDED + ("autotune",)


class _Run:
    """One execution of the cell on one device: its events, filled as it runs."""

    def __init__(self, device: devices.Device) -> None:
        self.device = device
        self.log = EventLog()
        self.notes: list[str] = []     # arrays moved to the device for the run


class _KernelCell:
    """One %%kernel invocation: its options (checked before the cell runs), the
    runs it made, and what it displays afterwards (even after an exception)."""

    def __init__(self, shell: Any, args: Any, header: str,
                 remember: Callable[[list[Report]], None] = lambda reports: None) -> None:
        if args.repeat < 0:
            raise UsageError("--repeat takes a number of runs >= 0")
        self.shell, self.repeat = shell, args.repeat
        self.header = header.rstrip()     # the magic's line, above the body in tracebacks
        self.trace = _writable(_filename(args.trace)) if args.trace else None
        self.stages = _parse_stages(args.show)
        self.device = _device(args.backend) if args.backend else devices.current_device()
        self.other = _device(args.compare) if args.compare else None
        if self.other is self.device:
            raise UsageError(f"--compare {args.compare}: the cell already runs there")
        self.browse = _widget_browser() if args.widget else None
        self.tuning = _autotune_context(args.autotune)
        # long work shows one progress line while it runs: autotuning (candidate i of n,
        # best so far), compiling many kernels, the --repeat runs
        self.progress = ProgressLine()
        self.tuning_progress = autotuning.progress_to(self.progress.autotune) \
            if args.autotune else contextlib.nullcontext()
        self.runs: list[_Run] = []      # the main run ends up first
        self.wall_ms: list[float] = []
        self.remember = remember        # keeps the reports for `%jaxlab diff`

    def execute(self, cell: str) -> Any:
        __tracebackhide__ = True
        try:
            with self.tuning, self.tuning_progress, compiling(self.progress):
                if self.other is not None:
                    with capture_output():      # the compare run's output stays hidden
                        self._run(cell, self.other)
                value = self._run(cell, self.device)
                self.wall_ms = self._time(cell)
        finally:
            self.progress.close()
        return value

    def _run(self, cell: str, device: devices.Device) -> Any:
        __tracebackhide__ = True
        run = _Run(device)
        try:
            placement = Placement(self.shell.user_ns, cell, device)
        except RuntimeError as exc:
            raise UsageError(str(exc)) from None
        run.notes = placement.notes()
        self.runs.insert(0, run)
        # a trace is a timeline: every loop iteration's dispatches, not one per kernel
        timeline = events.per_iteration() if self.trace else contextlib.nullcontext()
        with devices.default_device(device), placement, jaxlab.capture() as log, timeline:
            run.log = log     # the live log: what ran before an exception is kept
            return run_cell_body(self.shell, cell, self.header)

    def _time(self, cell: str) -> list[float]:
        """Wall milliseconds of the repeated runs (output hidden, no capture)."""
        times: list[float] = []
        if not self.repeat:
            return times
        with devices.default_device(self.device), \
                Placement(self.shell.user_ns, cell, self.device):
            for i in range(self.repeat):
                self.progress.update("--repeat", i + 1, self.repeat)
                with capture_output():      # outside it, the progress line shows
                    t0 = time.perf_counter()
                    run_cell_body(self.shell, cell, self.header)
                    times.append((time.perf_counter() - t0) * 1e3)
        return times

    def show(self, error: Optional[BaseException]) -> None:
        if self.runs:
            reports = [Report(r.log, programs_in(self.shell.user_ns, r.log), r.device.platform,
                              self.stages, self.wall_ms if r.device is self.device else (),
                              notes=r.notes, origins=jit_origins(self.shell.user_ns, r.log),
                              peaks=roofs_of(r))
                       for r in self.runs]
            self.remember(reports)
            if self.browse is not None:
                # two outputs: static renders (nbconvert, nbviewer, GitHub) show the
                # report even where the saved widget state hides the widget's fallback
                display(reports[0])
                display(self.browse(self.runs[0].log, fallback=False))
            elif len(reports) == 2:
                display(Comparison(*reports))
            else:
                display(reports[0])
            if self.trace:
                self._write_trace()
        if error is not None and getattr(error, "source", None):
            display(ErrorReport(error))

    def _write_trace(self) -> None:
        """The trace file, or a warning: never an exception that would replace the
        cell's own result or exception."""
        try:
            path = write_trace([e for r in reversed(self.runs) for e in r.log], self.trace)
        except OSError as exc:
            print(f"%%kernel --trace: could not write {self.trace}: {exc}", file=sys.stderr)
            return
        display(FileLink(path, "Perfetto trace", "(open it at https://ui.perfetto.dev)"))


@magics_class
class JaxlabMagics(Magics):
    """%%kernel and %jaxlab (registered by `%load_ext jaxlab`)."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.debug_level = 0
        self.history: list[list[Report]] = []   # the last two %%kernel runs' reports

    # --- %%kernel ---------------------------------------------------------------------
    @magic_arguments("%kernel")   # the usage line reads %%kernel
    @argument("--backend", "-b", metavar="B",
              help="run the cell on device B (cpu, wasm, webgpu, ...) instead of the default")
    @argument("--show", metavar="STAGES",
              help=f"comma-separated stages to show, unfolded: {','.join(STAGES)} "
                   "(default: all, folded)")
    @argument("--repeat", "-r", type=int, default=0, metavar="N",
              help="after the first (warm-up) run, run the cell N more times, output hidden, "
                   "and report the best and median wall time, like %%timeit")
    @argument("--autotune", action="store_true",
              help="run under jaxlab.autotune(): time candidate kernel configurations and "
                   "keep the fastest; the report lists every candidate")
    @argument("--compare", metavar="BACKEND",
              help="also run the cell on BACKEND (first, output hidden) and show both "
                   "reports side by side with per-kernel times")
    @argument("--trace", metavar="FILE",
              help="write a Chrome/Perfetto trace (traceEvents JSON) of the dispatches to "
                   "FILE and link it; open it at https://ui.perfetto.dev")
    @argument("--widget", action="store_true",
              help="show the interactive kernel browser (jaxlab.lab.widgets) instead of "
                   "the static report")
    @cell_magic
    def kernel(self, line: str, cell: str) -> Any:
        """Run the cell with a jaxlab capture active and show a report of every
        kernel it compiled or dispatched. The cell's output, value and exceptions
        are as without the magic; after an exception the report of what ran
        before it is still shown (and the traceback leaves jaxlab's own frames
        out: JAXLAB_TRACEBACK_FILTERING=off keeps them). Arrays the cell assigns
        are computed inside the capture, so lazy results show up too.

        Examples, one per option::

            %%kernel --backend wasm            # run on wasm; other devices' arrays are copied
            %%kernel --show ir,source,timings  # only these stages, unfolded
            %%kernel --repeat 10               # best and median wall time of 10 more runs
            %%kernel --autotune                # time every candidate tuning, keep the fastest
            %%kernel --compare cpu             # the same cell on cpu, side by side
            %%kernel --trace run.json          # a Perfetto trace of the dispatches
            %%kernel --widget                  # the report, then the interactive kernel browser
        """
        __tracebackhide__ = True   # IPython shows the cell's frames, not these
        job = _KernelCell(self.shell, parse_argstring(self.kernel, line), f"%%kernel {line}",
                          self._remember)
        error: Optional[BaseException] = None
        try:
            return job.execute(cell)
        except BaseException as exc:
            error = exc
            filter_exception(exc)      # the user's frames, as JAX shows its errors
            raise
        finally:
            job.show(error)

    def _remember(self, reports: list[Report]) -> None:
        self.history = (self.history + [reports])[-2:]

    def diff(self) -> ReportDiff:
        """The last %%kernel run against the one before (or its two --compare devices)."""
        if self.history and len(self.history[-1]) == 2:
            other, main = self.history[-1][1], self.history[-1][0]
            return ReportDiff(other, main, (other.title, main.title))
        if len(self.history) < 2:
            raise UsageError("%jaxlab diff compares the last two %%kernel runs (or the two "
                             "devices of one %%kernel --compare): run a cell with %%kernel first")
        return ReportDiff(self.history[-2][0], self.history[-1][0], ("last run", "this run"))

    # --- %jaxlab ----------------------------------------------------------------------
    @magic_arguments()
    @argument("command", choices=_COMMANDS,
              help="status: devices, backend info, adapter, features, limits, unavailable "
                   "backends; backend B: make B the default device; kernels: the current "
                   "device's kernel cache; debug LEVEL: print each kernel event as it "
                   "happens (0 off, 1 summaries, 2 also IR and source); clear: empty the "
                   "current device's kernel cache; autotune [clear]: the webgpu autotune "
                   "cache's winners (jaxlab.autotune_cache()), or forget them; diff: the "
                   "last %%kernel run against the one before (or its two --compare "
                   "devices), kernel by kernel")
    @argument("value", nargs="?", help="the device for `backend`, the level for `debug`, "
                                       "`clear` for `autotune`")
    @line_magic
    def jaxlab(self, line: str) -> None:
        """Look at and set the jaxlab engine."""
        args = parse_argstring(self.jaxlab, line)
        if args.command in _VALUE_NEEDED and args.value is None:
            raise UsageError(f"%jaxlab {args.command} needs a value")
        if args.command not in _VALUE_ALLOWED and args.value is not None:
            raise UsageError(f"%jaxlab {args.command} takes no value")
        if args.command == "status":
            display(*status_tables())
        elif args.command == "backend":
            dev = _device(args.value)
            devices.set_default_device(dev)
            print(f"default device: {dev.platform}")
        elif args.command == "kernels":
            display(kernels_table(devices.current_device()))
        elif args.command == "debug":
            self.set_debug(_debug_level(args.value))
        elif args.command == "autotune":
            _autotune_command(args.value)
        elif args.command == "diff":
            display(self.diff())
        else:
            dev = devices.current_device()
            n = len(dev.cache)
            dev.cache.clear()
            print(f"cleared {n} kernels from the {dev.platform} cache")

    def set_debug(self, level: int) -> None:
        """0: quiet; 1: print each KernelEvent's summary as it happens; 2: also its
        IR and source."""
        events.unsubscribe(self._print_event)
        self.debug_level = level
        if level >= 1:
            events.subscribe(self._print_event)

    def _print_event(self, event: KernelEvent) -> None:
        print(event.summary())
        if self.debug_level >= 2:
            print(indent(event.ir, "    "), indent(event.source, "    "), sep="\n")

    def close(self) -> None:
        """Stop listening to the engine (on %unload_ext)."""
        self.set_debug(0)


# --- running a cell -------------------------------------------------------------------

def run_cell_body(shell: Any, cell: str, header: str = "") -> Any:
    """Run `cell` in the user namespace as IPython would and return the value of a
    final expression for IPython to display (None after a trailing ';');
    exceptions propagate. Arrays the cell (re)assigns, and the value, are
    computed before returning. `header` is the magic's line above the body: a
    traceback then numbers the body's lines as the notebook cell does."""
    __tracebackhide__ = True
    namespace = shell.user_ns
    before = dict(namespace)      # references, so ids cannot be reused meanwhile
    source = shell.transform_cell(cell)
    shown = f"{header}\n{source}" if header else source
    filename = shell.compile.cache(shown, shell.execution_count)   # tracebacks show lines
    tree = shell.transform_ast(shell.compile.ast_parse(source, filename=filename))
    ast.increment_lineno(tree, shown.count("\n") - source.count("\n"))
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(shell.compile(tree, filename, "exec"), namespace)
    value = None if last is None else \
        eval(shell.compile(ast.Expression(last.value), filename, "eval"), namespace)
    changed = [v for k, v in namespace.items() if before.get(k) is not v]
    for leaf in tree_leaves([value, changed]):
        if isinstance(leaf, Array):
            leaf.block_until_ready()
    # IPython checks for a trailing ';' on the magic's line, not the cell's: check here
    return None if shell.displayhook.semicolon_at_end_of_expression(source) else value


def programs_in(namespace: dict[str, Any], log: list[KernelEvent]) -> list[Any]:
    """Programs of the namespace's jitted functions whose every top-level kernel step ran
    in `log`, and at least one kernel at all (a loop's or a branch's may be the only)."""
    keys = {e.key for e in log}
    found: dict[int, Any] = {}
    for value in list(namespace.values()):
        if isinstance(value, JittedFunction):
            for program, _ in value.cache.values():
                top = [st for st in program.steps if isinstance(st, Step)]
                if all(st.program.key in keys for st in top) and \
                        any(st.program.key in keys for st in program.kernel_steps()):
                    found[id(program)] = program
    return list(found.values())


def jit_origins(namespace: dict[str, Any], log: list[KernelEvent]) -> dict[str, str]:
    """Kernel key -> "jit NAME at FILE:LINE" for the kernels of the namespace's jitted
    functions that ran in `log` (a kernel two functions share goes to the first)."""
    keys = {e.key for e in log}
    found: dict[str, str] = {}
    for value in list(namespace.values()):
        if isinstance(value, JittedFunction):
            code = getattr(value.fun, "__code__", None)
            site = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
            origin = f"jit {getattr(value.fun, '__qualname__', repr(value.fun))}{site}"
            for program, _ in value.cache.values():
                for step in program.kernel_steps():
                    if step.program.key in keys:
                        found.setdefault(step.program.key, origin)
    return found


def roofs_of(run: _Run) -> dict[str, Roof]:
    """The roofs of the device a run used, measured the first time (then remembered)."""
    if not run.log:
        return {}
    return {run.device.platform: roofline.peaks(run.device)}


def _autotune_context(on: bool) -> ContextManager[Any]:
    if not on:
        return contextlib.nullcontext()
    autotune = getattr(jaxlab, "autotune", None)
    if autotune is None:
        raise UsageError("--autotune needs jaxlab.autotune(), which this jaxlab lacks: "
                         "autotuning needs a backend that supports it")
    return autotune()


def _widget_browser() -> Callable[[EventLog], Any]:
    try:
        from jaxlab.lab.widgets import browse
    except ImportError as exc:
        raise UsageError(f"--widget needs jaxlab.lab.widgets and ipywidgets: {exc}") from None
    return browse


# --- %jaxlab pieces -------------------------------------------------------------------

def status_tables() -> list[Table]:
    """Devices (the default marked), each one's backend info, unavailable backends."""
    current = devices.current_device()
    tables = [Table(["device", "backend", "default", "cached kernels (JAXLAB_CACHE_SIZE)",
                     "evicted"],
                    [[repr(d), d.backend.name, "yes" if d is current else "",
                      f"{len(d.cache)} of {d.cache.maxsize}", str(d.cache.evictions)]
                     for d in devices.devices()], title="jaxlab devices")]
    tables.append(Table(["device", "live", "pooled", "peak"],
                        [[repr(d)] + [fmt_si(d.backend.memory_stats()[k], "B")
                                      for k in ("live_bytes", "pooled_bytes", "peak_bytes")]
                         for d in devices.devices()], align="lrrr", title="device memory"))
    tables += [Table(["key", "value"], flatten(d.backend.info()), title=f"{d.platform} backend")
               for d in devices.devices()]
    missing = devices.unavailable()
    if missing:
        tables.append(Table(["backend", "why it is unavailable"], list(missing.items()),
                            title="unavailable"))
    return tables


def _autotune_command(value: Optional[str]) -> None:
    caches = [jaxlab.autotune_cache(d.platform) for d in devices.devices()]
    if value is None:
        display(autotune_table(caches))
    elif value == "clear":
        for cache in caches:
            print(f"cleared {cache.clear()} autotuned kernels from {cache.path}")
    else:
        raise UsageError(f"%jaxlab autotune takes nothing or `clear`, got {value!r}")


def autotune_table(caches: list[Any]) -> Table:
    """One row per remembered kernel: the device, its winning settings and time."""
    rows = []
    for cache in caches:
        for key, winner in cache.winners():
            *where, kernel = key.split("|")   # what the backend measured on, the kernel key
            settings = ", ".join(f"{k}={v}" for k, v in winner.items() if k != "run_ms")
            rows.append([kernel, cache.backend, " / ".join(where), settings,
                         fmt_ms(winner["run_ms"])])
    return Table(["kernel", "backend", "measured on", "winner", "time"], rows, align="llllr",
                 title=f"{len(rows)} autotuned kernels (under {caches[0].path.parent})"
                 if caches else "no autotune caches")


def kernels_table(device: devices.Device) -> Table:
    rows = [[p.name, type(p).__name__.lower(), p.key, device.platform, exe.language,
             fmt_ms(exe.compile_ms or None)] for p, exe in device.cache.items()]
    return Table(["kernel", "kind", "key", "backend", "language", "compile"], rows,
                 align="lllllr", title=f"{len(rows)} kernels cached on {device.platform}")


def _device(name: str) -> devices.Device:
    try:
        return devices.get_device(name)
    except (ValueError, RuntimeError) as exc:
        raise UsageError(str(exc)) from None


def _writable(path: str) -> str:
    """`path` if a file can be written there (checked before the cell runs), else a
    UsageError: an unwritable --trace must not cost the user the cell's run."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise UsageError(f"--trace {path}: cannot write there ({exc.strerror})") from None
    if not existed:
        os.unlink(path)
    return path


def _filename(arg: str) -> str:
    """A path as %%writefile takes one: quotes (around spaces) removed, ~ expanded."""
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        arg = arg[1:-1]
    return os.path.expanduser(arg)


def _parse_stages(show: Optional[str]) -> Optional[list[str]]:
    if show is None:
        return None
    stages = [s.strip() for s in show.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise UsageError(f"--show {show!r}: choose from {','.join(STAGES)}")
    return stages


def _debug_level(value: str) -> int:
    try:
        level = int(value)
    except ValueError:
        level = -1
    if level < 0:
        raise UsageError(f"%jaxlab debug takes a level >= 0, got {value!r}")
    return level


def load_ipython_extension(ip: Any) -> None:
    ip.register_magics(JaxlabMagics)


def unload_ipython_extension(ip: Any) -> None:
    magics = ip.magics_manager.registry.pop(JaxlabMagics.__name__, None)
    if magics is not None:
        magics.close()
    for kind, names in JaxlabMagics.magics.items():
        for name in names:
            ip.magics_manager.magics[kind].pop(name, None)
