"""Autotuning: time candidate tunings of each new kernel on the device, keep the
fastest, and remember it on disk per (adapter, kernel key).

    with autotune():
        y = f(x)        # each kernel compiled here is tuned by measurement
    jaxlab.autotune_cache().winners()   # what is remembered; .clear() forgets it

The winner's Executable.tuning lists every candidate with its time, the winner
marked, so the lab can show them.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import tempfile
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


def autotune_cache() -> "TuneCache":
    """The webgpu autotune cache on disk: `.entries()` and `.winners()` show it,
    `.clear()` empties it (the next autotune() measures again)."""
    return TuneCache()


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


Results = list[dict[str, Any]]   # one dict per candidate: its choices, "ms", "overrides", "winner"


def valid_results(results: Any) -> bool:
    """A cache entry as _measure writes it: candidates with times and override dicts,
    exactly one of them the winner. Anything else (a hand edit, another version's
    format, a poisoned file) is dropped and measured again."""
    return isinstance(results, list) and bool(results) and all(
        isinstance(r, dict) and isinstance(r.get("winner"), bool)
        and isinstance(r.get("overrides"), dict)
        and isinstance(r.get("ms"), (int, float)) and not isinstance(r.get("ms"), bool)
        for r in results) and sum(r["winner"] for r in results) == 1


class TuneCache:
    """Winners and their candidate times, one JSON file (under XDG_CACHE_HOME) mapping
    `adapter|backend|f16|kernel key` to a candidate list. Entries are validated when
    read; the file is replaced atomically, never written through a symlink."""

    def __init__(self, path: Optional[Path] = None) -> None:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.path = path or root / "jaxlab" / "webgpu-autotune.json"

    def entries(self) -> dict[str, Results]:
        """The valid entries on disk (a missing, unreadable or malformed file has none)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and valid_results(v)}

    def __repr__(self) -> str:
        return f"TuneCache({str(self.path)!r}, {len(self.entries())} entries)"

    def winners(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, the winning candidate without its overrides) per entry, for display."""
        return [(key, {k: v for k, v in next(r for r in results if r["winner"]).items()
                       if k not in ("overrides", "winner")})
                for key, results in sorted(self.entries().items())]

    def get(self, key: str) -> Optional[Results]:
        return self.entries().get(key)

    def put(self, key: str, results: Results) -> None:
        data = self.entries()   # what was malformed is dropped from the rewritten file
        data[key] = results
        self._write(data)

    def clear(self) -> int:
        """Forget every entry; returns how many there were."""
        n = len(self.entries())
        try:
            os.unlink(self.path)
        except OSError:
            pass
        return n

    def _write(self, data: dict[str, Results]) -> None:
        """A new file beside the old one (mkstemp: O_EXCL, so a planted name or symlink
        is never opened), then os.replace, which swaps a symlink itself, never its
        target: concurrent readers see the old file or the new one, never half."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                       dir=self.path.parent)
        except OSError:
            return   # a read-only home: tuning still works, it is just not remembered
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
