"""Tracebacks of failing `%%kernel` cells as JAX shows its own: the frames inside
jaxlab are left out, so the last frame shown is the user's line that called in.
JAXLAB_TRACEBACK_FILTERING=off (like JAX_TRACEBACK_FILTERING) shows every frame.
"""
from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Optional

import jaxlab

ENV = "JAXLAB_TRACEBACK_FILTERING"
_PACKAGE = str(Path(jaxlab.__file__).resolve().parent) + os.sep
NOTE = f"(jaxlab-internal frames are hidden; {ENV}=off shows them)"


def filtering() -> bool:
    return os.environ.get(ENV, "on").lower() not in ("off", "0", "false", "no")


def internal(tb: TracebackType) -> bool:
    return str(Path(tb.tb_frame.f_code.co_filename).resolve()).startswith(_PACKAGE)


def filter_exception(exc: BaseException) -> None:
    """Leave jaxlab's frames out of `exc`'s traceback (unless turned off), with a note."""
    if not filtering():
        return
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [tb for tb in frames if not internal(tb)]
    if len(kept) == len(frames):
        return
    for before, after in zip(kept, kept[1:] + [None]):
        before.tb_next = after
    exc.__traceback__ = kept[0] if kept else None
    if hasattr(exc, "add_note") and NOTE not in getattr(exc, "__notes__", ()):   # 3.11+
        exc.add_note(NOTE)
