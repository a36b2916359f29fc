"""A progress line for long work in a cell (autotuning, `--repeat`): a bar in the
notebook, tqdm-style text in a terminal, updated in place through one display."""
from __future__ import annotations

from typing import Any, Optional

from IPython.display import display

from jaxlab.backends.autotuning import Progress
from jaxlab.lab.report import fmt_ms
from jaxlab.lab.view import markup, page

_WIDTH = 24     # characters of the text bar


class ProgressLine:
    """One line that `update()` redraws in place."""

    def __init__(self) -> None:
        self.handle: Optional[Any] = None
        self.text = ""
        self.done, self.total = 0, 0

    def update(self, what: str, done: int, total: int, detail: str = "") -> None:
        self.done, self.total = done, total
        self.text = f"{what}: {done}/{total}" + (f", {detail}" if detail else "")
        if self.handle is None:
            self.handle = display(self, display_id=True)
        else:
            self.handle.update(self)

    def autotune(self, p: Progress) -> None:
        """An autotuning listener: candidate i of n, the best time so far."""
        best = f"best {fmt_ms(p.best_ms)}" if p.best_ms is not None else ""
        self.update(f"autotuning {p.kernel}", p.done, p.total, best)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        filled = round(_WIDTH * self.done / self.total) if self.total else 0
        bar = "█" * filled + "░" * (_WIDTH - filled)
        return {"text/plain": f"{bar} {self.text}",
                "text/html": page(markup('<progress value="{d}" max="{t}"></progress> '
                                         '<span class="jl-muted">{text}</span>',
                                         d=self.done, t=max(self.total, 1), text=self.text))}
