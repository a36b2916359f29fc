"""Tracing scopes: names for parts of a program, and compile-time evaluation."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Optional

from jaxlab.core.trace import new_dynamic


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A name for the operations inside (in JAX, a label in the compiled program's
    metadata; jaxlab checks it and labels nothing)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def named_call(fun: Callable[..., Any], *, name: Optional[str] = None) -> Callable[..., Any]:
    """fun, its calls named `name` (fun's own name by default); the name is a label only."""
    scope = name if name is not None else getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside jit, operations on values known while tracing (constants, arrays closed
    over) run now instead of being staged into the program; operations on the traced
    arguments are staged as before."""
    with new_dynamic(None):
        yield
