"""jaxlab.debug: print and callback from inside jit, grad and vmap (jax.debug).

Under jit the values are read and printed each time the compiled program runs
(jaxlab/core/host_callbacks.py); in order with the program's other steps."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxlab.api import _as_array
from jaxlab.core.host_callbacks import debug_callback_p
from jaxlab.core.trace import bind
from jaxlab.tree_util import tree_flatten

__all__ = ["breakpoint", "callback", "print"]


def _is_array(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call callback(*args, **kwargs) with the values of the arrays among them (as NumPy
    arrays), eagerly or each time a compiled program runs."""
    if not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    leaves, treedef = tree_flatten((args, kwargs))
    where = [i for i, x in enumerate(leaves) if _is_array(x)]

    def on_host(*values: np.ndarray) -> None:
        filled = list(leaves)
        for i, v in zip(where, values):
            filled[i] = v
        a, kw = treedef.unflatten(filled)
        callback(*a, **kw)
    bind(debug_callback_p, *(_as_array(leaves[i]) for i in where), callback=on_host)


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001
    """fmt.format(*args, **kwargs), printed with the values of the arrays among them."""
    if not isinstance(fmt, str):
        raise TypeError(f"expected str, got {type(fmt).__name__}")
    import builtins
    callback(lambda *a, **kw: builtins.print(fmt.format(*a, **kw)), *args, ordered=ordered,
             **kwargs)


def breakpoint(*, backend: Any = None, filter_frames: bool = True, num_frames: Any = None,
               ordered: bool = False, token: Any = None, **kwargs: Any) -> Any:  # noqa: A001
    raise NotImplementedError("jaxlab.debug.breakpoint is not supported: use "
                              "jaxlab.debug.callback or jaxlab.disable_jit() with pdb")
