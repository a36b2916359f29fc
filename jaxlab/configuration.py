"""jaxlab.config: JAX's `jax.config.update(name, value)` for the options jaxlab has."""
from __future__ import annotations

import os
from typing import Any, Callable

# option -> (default, a check that returns the value to store); ir/dtypes reads
# jax_enable_x64 (64-bit types are stored only while it is on), engine/devices the platforms
_OPTIONS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "jax_enable_x64": (os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "yes", "on"),
                       bool),
    "jax_platform_name": ("", str),                                   # "" = the first available
    "jax_platforms": (None, lambda v: None if v is None else str(v)),  # None = JAXLAB_PLATFORMS
}


class Config:
    """Options read as attributes (`config.jax_enable_x64`) and set with update()."""

    def __init__(self) -> None:
        self._values = {name: default for name, (default, _) in _OPTIONS.items()}
        # a layer below this one that acts on an option checks a new value (raising leaves
        # the old one) and takes it into account: engine/devices for the platforms
        self._watchers: dict[str, list[Callable[[Any], None]]] = {}

    def update(self, name: str, value: Any) -> None:
        if name not in _OPTIONS:
            raise AttributeError(f"Unrecognized config option: {name}")
        value = _OPTIONS[name][1](value)
        for watcher in self._watchers.get(name, ()):
            watcher(value)
        self._values[name] = value

    def watch(self, name: str, watcher: Callable[[Any], None]) -> None:
        """Call `watcher(new value)` before each update of `name` is stored."""
        self._watchers.setdefault(name, []).append(watcher)

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)


config = Config()
