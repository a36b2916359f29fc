"""Autotuning: time candidate tunings of each new kernel on the device, keep the
fastest, and remember it on disk per (adapter, kernel key).

    with autotune():
        y = f(x)        # each kernel compiled here is tuned by measurement

The winner's Executable.tuning lists every candidate with its time, the winner
marked, so the lab can show them.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
from pathlib import Path
from typing import Any, Iterator, Optional

from jaxlab.backends.webgpu.ops import Lang
from jaxlab.backends.webgpu.tune import Limits, Tuning, tune
from jaxlab.ir.kernel import Kernel

MAX_CANDIDATES = 8
_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("jaxlab_autotune", default=False)


@contextlib.contextmanager
def autotune(enabled: bool = True) -> Iterator[None]:
    """Kernels compiled inside are tuned by timing candidates on the device."""
    token = _ACTIVE.set(enabled)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    return _ACTIVE.get()


def candidates(kernel: Kernel, lang: Lang, limits: Limits) -> list[dict[str, Any]]:
    """Override sets worth timing: the tuner's own choice first, then each other
    strategy and knob value the kernel allows (invalid ones are dropped)."""
    base = tune(kernel, lang, limits)
    tries: list[dict[str, Any]] = [{}]
    strategies = ["elementwise"] if kernel.reduction is None else \
        ["reduce", "group_reduce", "tiled"]
    tries += [{"strategy": s} for s in strategies if s != base.strategy]
    if base.strategy == "tiled":
        tries += [{"tile": t} for t in ((128, 128, 8, 8, 8), (128, 128, 16, 8, 8),
                                        (64, 64, 16, 4, 4), (64, 64, 8, 4, 4),
                                        (32, 32, 16, 2, 2), (32, 64, 16, 2, 4))]
    else:
        tries += [{"workgroup": w} for w in (64, 128, 256) if w != base.workgroup]
    if base.strategy in ("reduce", "group_reduce"):
        tries += [{"unroll": u} for u in (1, 2, 4, 8) if u != base.unroll]
    if base.strategy == "group_reduce":
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
    return {k: v["value"] for k, v in t.record().items()}


class TuneCache:
    """Winners and their candidate times, one JSON file (under XDG_CACHE_HOME)."""

    def __init__(self, path: Optional[Path] = None) -> None:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.path = path or root / "jaxlab" / "webgpu-autotune.json"

    def _load(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}

    def get(self, key: str) -> Optional[list[dict[str, Any]]]:
        return self._load().get(key)

    def put(self, key: str, results: list[dict[str, Any]]) -> None:
        data = self._load()
        data[key] = results
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
            tmp.replace(self.path)   # atomic: concurrent processes never read half a file
        except OSError:
            pass   # a read-only home: tuning still works, it is just not remembered
