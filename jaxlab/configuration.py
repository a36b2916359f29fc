"""jaxlab.config: JAX's `jax.config.update(name, value)` for the options jaxlab has,
and `scoped(name, value)`: the option set in one thread's (or task's) `with` block
only, which JAX's context managers (jax.disable_jit, jax.numpy_rank_promotion...) use."""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, Optional

from jaxlab import state


def _enum(*allowed: Optional[str]) -> Callable[[Any], Any]:
    """A check that the value is one of `allowed`, with JAX's message."""
    def check(value: Any) -> Any:
        if value not in allowed:
            shown = [a for a in allowed if a is not None]
            raise ValueError(f"new enum value must be in {shown}, got {value} of type "
                             f"{type(value)}.")
        return value
    return check


# option -> (default, a check that returns the value to store); ir/dtypes reads
# jax_enable_x64 (64-bit types are stored only while it is on), engine/devices the platforms
_OPTIONS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "jax_enable_x64": (os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true", "yes", "on"),
                       bool),
    "jax_platform_name": ("", str),                                   # "" = the first available
    "jax_platforms": (None, lambda v: None if v is None else str(v)),  # None = JAXLAB_PLATFORMS
    # jit functions run op by op, as plain Python (api.JittedFunction)
    "jax_disable_jit": (False, bool),
    # binary jaxlab.numpy operations on arrays of different ranks (numpy/promotion_modes.py)
    "jax_numpy_rank_promotion": ("allow", _enum("allow", "warn", "raise")),
    "jax_numpy_dtype_promotion": ("standard", _enum("standard", "strict")),
    # accepted and kept: every jaxlab device computes float32 matmuls in float32
    "jax_default_matmul_precision": (None, _enum(None, "default", "high", "highest",
                                                 "bfloat16", "tensorfloat32", "float32",
                                                 "bfloat16_3x", "tensorfloat32_3x",
                                                 "fastest")),
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
        scoped = _scoped.get()
        if scoped and name in scoped:
            return scoped[name]
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)


config = Config()
_scoped = state.config_scoped


@contextlib.contextmanager
def scoped(name: str, value: Any) -> Iterator[Any]:
    """`with scoped("jax_disable_jit", True):` the option has the value inside (in
    this thread or task only), then what it had before. Options with watchers (the
    platforms) are set with update() only."""
    if name not in _OPTIONS or name in config._watchers:
        raise AttributeError(f"Unrecognized config option for a scoped setting: {name}")
    value = _OPTIONS[name][1](value)
    with _scoped.scoped({**_scoped.get(), name: value}):
        yield value
