"""jaxlab.config: JAX's `jax.config.update(name, value)` for the options jaxlab has."""
from __future__ import annotations

import os
from typing import Any

# option -> (default, a check that returns the value to store); ir/dtypes reads
# jax_enable_x64 (64-bit types are stored only while it is on)
_OPTIONS = {
    "jax_enable_x64": (os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "yes", "on"),
                       bool),
}


class Config:
    """Options read as attributes (`config.jax_enable_x64`) and set with update()."""

    def __init__(self) -> None:
        self._values = {name: default for name, (default, _) in _OPTIONS.items()}

    def update(self, name: str, value: Any) -> None:
        if name not in _OPTIONS:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._values[name] = _OPTIONS[name][1](value)

    def read(self, name: str) -> Any:
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)


config = Config()
