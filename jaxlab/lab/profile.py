"""KernelEvents as a Chrome / Perfetto trace (the traceEvents JSON format).

Each dispatch becomes one complete event ("ph": "X") on its backend's
dispatch track, ending when the event was made; a compile that preceded it
gets its own event on a compile track just before. Open the file in
https://ui.perfetto.dev or chrome://tracing.
"""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

from jaxlab.events import KernelEvent
from jaxlab.lab.report import jsonable

_PID = 1


def trace(events: Sequence[KernelEvent]) -> dict[str, Any]:
    """The trace as a dict: {"traceEvents": [...], "displayTimeUnit": "ms"}."""
    tracks: dict[str, int] = {}     # track name -> tid, in order of first use
    spans = []
    for e in events:
        start_us = (e.timestamp * 1e3 - e.dispatch_ms) * 1e3
        args = {"backend": e.backend, "kind": e.kind, "cache_hit": e.cache_hit,
                "device_ms": e.device_ms, "dispatch_ms": e.dispatch_ms, "flops": e.flops,
                "bytes": e.bytes, "output_shapes": [list(s) for s in e.output_shapes],
                "reason": e.reason, "key": e.key}
        if not e.cache_hit and e.compile_ms:
            spans.append(_span(tracks, f"{e.backend} compile", f"compile {e.name}", "compile",
                               start_us - e.compile_ms * 1e3, e.compile_ms * 1e3,
                               {"compile_ms": e.compile_ms}))
        spans.append(_span(tracks, f"{e.backend} dispatch", e.name, e.kind, start_us,
                           e.dispatch_ms * 1e3, args))
    origin = min((s["ts"] for s in spans), default=0.0)
    for s in spans:    # the trace starts at zero
        s["ts"] = round(s["ts"] - origin, 3)
    names = [{"name": "process_name", "ph": "M", "pid": _PID, "args": {"name": "jaxlab"}}]
    names += [{"name": "thread_name", "ph": "M", "pid": _PID, "tid": tid, "args": {"name": track}}
              for track, tid in tracks.items()]
    return {"traceEvents": names + spans, "displayTimeUnit": "ms"}


def _span(tracks: dict[str, int], track: str, name: str, cat: str, ts: float, dur: float,
          args: dict[str, Any]) -> dict[str, Any]:
    tid = tracks.setdefault(track, len(tracks) + 1)
    return {"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": round(dur, 3),
            "pid": _PID, "tid": tid, "args": args}


def write_trace(events: Sequence[KernelEvent], path: str | os.PathLike) -> str:
    """Write the trace of `events` as JSON to `path`; returns the path written."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(jsonable(trace(events)), f)
    return os.fspath(path)
