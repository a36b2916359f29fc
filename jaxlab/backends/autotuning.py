"""Autotuning, for any backend with knobs: inside `autotune()`, each new kernel's
candidate tunings are compiled and timed on the device, the fastest is kept,
and the measurements are remembered on disk per (device, kernel key).

    with jaxlab.autotune():
        y = f(x)        # each kernel compiled here is tuned by measurement

The cache is one JSON file per backend under $XDG_CACHE_HOME/jaxlab (default
~/.cache/jaxlab): `<backend>-autotune.json`. A kernel tuned once is not timed
again; its record says so (from_cache) and when it was measured. Entries are
validated when read (a malformed one is measured again); the file is replaced
atomically, never written through a symlink. `jaxlab.autotune_cache("webgpu")`
shows it (`.winners()`) and forgets it (`.clear()`), as `%jaxlab autotune [clear]`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from jaxlab import state
from jaxlab.backends.base import Autotuned, Candidate, Executable

Overrides = Mapping[str, Any]


@contextlib.contextmanager
def autotune(enabled: bool = True) -> Iterator[None]:
    """Kernels compiled inside are tuned by timing candidates on the device."""
    with state.autotuning.scoped(enabled):
        yield


def active() -> bool:
    return state.autotuning.get()


@dataclass(frozen=True)
class Progress:
    """Where a measurement stands: for a progress bar while it runs."""
    kernel: str
    done: int
    total: int
    best_ms: Optional[float]


@contextlib.contextmanager
def progress_to(listener: Callable[[Progress], None]) -> Iterator[None]:
    """Call listener (the lab's progress bar) after each candidate measured inside."""
    with state.tuning_listeners.added(listener):
        yield


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
        for listener in state.tuning_listeners.snapshot():
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


def valid_entry(entry: Any) -> bool:
    """An entry as `measure` writes it: dated, candidates with their settings, times and
    override dicts, exactly one the winner. Anything else (a hand edit, an older
    jaxlab's format, a poisoned file) is dropped and measured again."""
    if not (isinstance(entry, dict) and isinstance(entry.get("measured_at"), str)
            and _number(entry.get("tuning_ms")) and isinstance(entry.get("results"), list)
            and entry["results"]):
        return False
    results = entry["results"]
    return all(isinstance(r, dict) and isinstance(r.get("overrides"), dict)
               and isinstance(r.get("winner"), bool)
               and _number(r.get("compile_ms")) and _number(r.get("run_ms"))
               and isinstance(r.get("settings"), list)
               and all(isinstance(s, list) and len(s) == 2 and isinstance(s[0], str)
                       for s in r["settings"])
               for r in results) and sum(r["winner"] for r in results) == 1


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def cached_or_measured(cache: "TuneCache", key: str, measure: Callable[[], dict[str, Any]],
                       build: Callable[[Overrides], Executable]) -> Executable:
    """The kernel built with its remembered winner; measured now (and remembered) when
    nothing valid is remembered or the remembered winner no longer builds."""
    entry = cache.get(key)
    if entry is not None:
        try:
            return _built(entry, True, build)
        except (ValueError, TypeError, KeyError, RuntimeError):
            pass   # a winner this kernel cannot take (an edited file): measure again
    entry = measure()
    cache.put(key, entry)
    return _built(entry, False, build)


def _built(entry: Mapping[str, Any], from_cache: bool,
           build: Callable[[Overrides], Executable]) -> Executable:
    exe = build(winner(entry))
    exe.tuning = dataclasses.replace(exe.tuning, autotuned=autotuned(entry, from_cache))
    return exe


class TuneCache:
    """Measurements per key, one JSON file per backend and `kind` (autotune results; the
    device's roofline peaks). Entries are validated when read (`valid`); the file is
    replaced atomically and never written through a symlink."""

    def __init__(self, backend: str, path: Optional[Path] = None, kind: str = "autotune",
                 valid: Callable[[Any], bool] = valid_entry) -> None:
        self.backend, self._path, self.kind, self.valid = backend, path, kind, valid

    @property
    def path(self) -> Path:
        """The file, where $XDG_CACHE_HOME says now (unless given)."""
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        return self._path or root / "jaxlab" / f"{self.backend}-{self.kind}.json"

    def entries(self) -> dict[str, Any]:
        """The valid entries on disk (a missing, unreadable or malformed file has none;
        a symlink in the cache's place is not followed)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and self.valid(v)}

    def __repr__(self) -> str:
        return f"TuneCache({str(self.path)!r}, {len(self.entries())} entries)"

    def winners(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, the winner's settings and run_ms) per entry, for display."""
        out = []
        for key, entry in sorted(self.entries().items()):
            best = next(r for r in entry["results"] if r["winner"])
            out.append((key, {**dict(best["settings"]), "run_ms": best["run_ms"]}))
        return out

    def get(self, key: str) -> Optional[dict[str, Any]]:
        return self.entries().get(key)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        data = self.entries()   # what was malformed is dropped from the rewritten file
        data[key] = entry
        self._write(data)

    def clear(self) -> int:
        """Forget every measurement; returns how many there were."""
        n = len(self.entries())
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        return n

    def _write(self, data: dict[str, Any]) -> None:
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


def autotune_cache(backend: str) -> TuneCache:
    """The autotune cache of a backend ("wasm", "webgpu"): `.winners()` and
    `.entries()` show it, `.clear()` empties it (the next autotune() measures again)."""
    return TuneCache(backend)
