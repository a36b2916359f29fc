"""A progress line for long work in a cell (autotuning, `--repeat`, compiling many
kernels): a bar in the notebook, tqdm-style text in a terminal, updated in place and
cleared when the cell ends, so it is never part of the saved output."""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator, Optional

from IPython import get_ipython
from IPython.display import display

from jaxlab import events
from jaxlab.backends.autotuning import Progress
from jaxlab.events import KernelEvent
from jaxlab.lab.report import fmt_ms
from jaxlab.lab.view import Html, markup, page

_WIDTH = 24     # characters of the text bar
HANDFUL = 5     # compilations in one cell before the line shows them


def _in_terminal() -> bool:
    """A terminal IPython (no kernel): the line is text redrawn with a carriage return."""
    return not hasattr(get_ipython(), "kernel")


class ProgressLine:
    """One line that `update()` redraws in place."""

    def __init__(self) -> None:
        self.handle: Optional[Any] = None
        self.text = ""
        self.done, self.total = 0, 0
        self.terminal = _in_terminal()
        self.drawn = 0      # characters of the terminal line to blank out

    def update(self, what: str, done: int, total: int = 0, detail: str = "") -> None:
        """`what: done/total, detail`; a total of 0 (not known) shows no bar."""
        self.done, self.total = done, total
        count = f"{done}/{total}" if total else f"{done}"
        self.text = f"{what}: {count}" + (f", {detail}" if detail else "")
        if self.terminal:
            self._draw(self._bar_text())
        elif self.handle is None:
            self.handle = display(self, display_id=True)
        else:
            self.handle.update(self)

    def close(self) -> None:
        """Clear the line: progress is for while the work runs, not for the notebook."""
        if self.terminal and self.drawn:
            self._draw("")
            sys.stderr.write("\r")
        elif self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)
        self.handle, self.drawn = None, 0

    def _draw(self, text: str) -> None:
        sys.stderr.write("\r" + text.ljust(self.drawn))
        sys.stderr.flush()
        self.drawn = len(text)

    def _bar_text(self) -> str:
        if not self.total:
            return self.text
        filled = round(_WIDTH * self.done / self.total)
        return "█" * filled + "░" * (_WIDTH - filled) + " " + self.text

    def autotune(self, p: Progress) -> None:
        """An autotuning listener: candidate i of n, the best time so far."""
        best = f"best {fmt_ms(p.best_ms)}" if p.best_ms is not None else ""
        self.update(f"autotuning {p.kernel}", p.done, p.total, best)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bar = markup('<progress value="{d}" max="{t}"></progress> ', d=self.done,
                     t=self.total) if self.total else Html("")
        return {"text/plain": self._bar_text(),
                "text/html": page(markup('{bar}<span class="jl-muted">{text}</span>',
                                         bar=bar, text=self.text))}


@contextlib.contextmanager
def compiling(line: ProgressLine) -> Iterator[None]:
    """While inside: once more than a handful of kernels compile, name each one."""
    compiled = 0

    def on_event(event: KernelEvent) -> None:
        nonlocal compiled
        if event.kind == "kernel" and not event.cache_hit:
            compiled += 1
            if compiled > HANDFUL:
                line.update("compiling kernel", compiled, detail=event.name)

    events.subscribe(on_event)
    try:
        yield
    finally:
        events.unsubscribe(on_event)
