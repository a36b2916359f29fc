"""The compile cache of a device: kernels by structure, least recently used first out.

Its size comes from JAXLAB_CACHE_SIZE (compiled kernels and routines per device;
default 2048). An evicted executable is handed to the backend's `release`, which
frees what only it used (a wasm module, a webgpu pipeline); a jit program still
holding the executable keeps working.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Optional

DEFAULT_SIZE = 2048
ENV_VAR = "JAXLAB_CACHE_SIZE"


def size_from_env() -> int:
    raw = os.environ.get(ENV_VAR, "")
    try:
        return max(1, int(raw)) if raw else DEFAULT_SIZE
    except ValueError:
        raise ValueError(f"{ENV_VAR} must be a positive integer, got {raw!r}") from None


class CompileCache:
    """A bounded mapping program -> executable with LRU eviction."""

    def __init__(self, release: Callable[[Any], None], maxsize: Optional[int] = None) -> None:
        self._items: "OrderedDict[Any, Any]" = OrderedDict()
        self._lock = threading.Lock()   # threads share a device's cache
        self._release = release
        self.maxsize = maxsize or size_from_env()
        self.hits = self.misses = self.evictions = 0

    def get(self, key: Any) -> Any:
        with self._lock:
            exe = self._items.get(key)
            if exe is None:
                self.misses += 1
                return None
            self.hits += 1
            self._items.move_to_end(key)
            return exe

    def __setitem__(self, key: Any, exe: Any) -> None:
        evicted = []
        with self._lock:
            self._items[key] = exe
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                evicted.append(self._items.popitem(last=False)[1])
                self.evictions += 1
        for old in evicted:   # outside the lock: a backend may take its own
            self._release(old)

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def values(self):
        return self._items.values()

    def items(self):
        return self._items.items()

    def clear(self) -> None:
        """Forget (and release) everything."""
        with self._lock:
            evicted, self._items = list(self._items.values()), OrderedDict()
        for old in evicted:
            self._release(old)

    def stats(self) -> dict[str, int]:
        return {"entries": len(self._items), "maxsize": self.maxsize, "hits": self.hits,
                "misses": self.misses, "evictions": self.evictions}
