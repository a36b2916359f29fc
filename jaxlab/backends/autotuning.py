"""Autotuning, for any backend with knobs: inside `autotune()`, each new kernel's
candidate tunings are compiled and timed on the device, the fastest is kept,
and the measurements are remembered on disk per (device, kernel key).

    with jaxlab.autotune():
        y = f(x)        # each kernel compiled here is tuned by measurement

The cache is one JSON file per backend under $XDG_CACHE_HOME/jaxlab (default
~/.cache/jaxlab): `<backend>-autotune.json`. A kernel tuned once is not timed
again; its record says so (from_cache) and when it was measured. Delete the
file (or `TuneCache(name).clear()`) to measure again.
"""
from __future__ import annotations

import contextlib
import contextvars
import datetime
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from jaxlab.backends.base import Autotuned, Candidate, Executable

_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("jaxlab_autotune", default=False)

Overrides = Mapping[str, Any]


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


@dataclass(frozen=True)
class Progress:
    """Where a measurement stands: for a progress bar while it runs."""
    kernel: str
    done: int
    total: int
    best_ms: Optional[float]


# Who wants to hear about progress (the lab's progress bar); called after each candidate.
_listeners: list[Callable[[Progress], None]] = []


@contextlib.contextmanager
def progress_to(listener: Callable[[Progress], None]) -> Iterator[None]:
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def measure(kernel_name: str, candidates: Sequence[Overrides],
            compile_: Callable[[Overrides], Executable],
            time_: Callable[[Executable], float],
            settings: Callable[[Executable], tuple[tuple[str, Any], ...]]) -> dict[str, Any]:
    """Compile and time every candidate (one that fails to compile is skipped);
    the result as the cache stores it."""
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    for i, overrides in enumerate(candidates):
        try:
            exe = compile_(overrides)
        except (ValueError, RuntimeError):
            continue   # a candidate the compiler rejects is just not a candidate
        results.append({"overrides": dict(overrides), "settings": [list(s) for s in settings(exe)],
                        "compile_ms": exe.compile_ms, "run_ms": time_(exe), "winner": False})
        best = min(r["run_ms"] for r in results)
        for listener in list(_listeners):
            listener(Progress(kernel_name, i + 1, len(candidates), best))
    if not results:
        raise RuntimeError(f"autotuning {kernel_name}: no candidate compiled")
    min(results, key=lambda r: r["run_ms"])["winner"] = True
    return {"measured_at": datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds"),
            "tuning_ms": (time.perf_counter() - t0) * 1e3, "results": results}


def winner(entry: Mapping[str, Any]) -> Overrides:
    return next(r["overrides"] for r in entry["results"] if r["winner"])


def autotuned(entry: Mapping[str, Any], from_cache: bool) -> Autotuned:
    """A cache entry as the typed record an Executable carries."""
    return Autotuned(tuple(Candidate(tuple((k, _hashable(v)) for k, v in r["settings"]),
                                     r["compile_ms"], r["run_ms"], r["winner"])
                           for r in entry["results"]),
                     entry["tuning_ms"], from_cache, entry["measured_at"])


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class TuneCache:
    """Measurements per kernel key, one JSON file per backend."""

    def __init__(self, backend: str, path: Optional[Path] = None) -> None:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.path = path or root / "jaxlab" / f"{backend}-autotune.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        # entries from before measurements were dated are measured again
        return {k: v for k, v in data.items() if isinstance(v, dict) and "results" in v}

    def entries(self) -> dict[str, Any]:
        return self._load()

    def get(self, key: str) -> Optional[dict[str, Any]]:
        return self._load().get(key)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        data = self._load()
        data[key] = entry
        self._write(data)

    def clear(self) -> int:
        """Forget every measurement; returns how many there were."""
        n = len(self._load())
        self._write({})
        return n

    def _write(self, data: dict[str, Any]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
            tmp.replace(self.path)   # atomic: concurrent processes never read half a file
        except OSError:
            pass   # a read-only home: tuning still works, it is just not remembered
