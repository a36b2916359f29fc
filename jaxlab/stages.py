"""jaxlab.stages: what `jit(f).lower(*args)` and `.compile()` give, as jax.stages.

Lowered holds the program compiled for those arguments (its kernels, text and plan read
through, as the lab's reports read them); Compiled runs it, called with the dynamic
arguments only, and refuses arguments of other shapes, dtypes or structure."""
from __future__ import annotations

from typing import Any

from jaxlab.tree_util import LEAF, PyTreeDef, tree_flatten, tree_unflatten


class Lowered:
    """A jitted function traced and compiled for one signature of arguments."""

    def __init__(self, program: Any, in_tree: PyTreeDef, in_avals: tuple,
                 out_tree: PyTreeDef, as_array: Any) -> None:
        self.program = program
        self.in_tree, self.in_avals, self.out_tree = in_tree, in_avals, out_tree
        self._as_array = as_array

    def compile(self) -> "Compiled":
        return Compiled(self)

    def as_text(self) -> str:
        return self.program.text()

    def __getattr__(self, name: str) -> Any:   # the Program's steps, text(), plan, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.program, name)


class Compiled:
    """The compiled program, called as the function was, without its static arguments."""

    def __init__(self, lowered: Lowered) -> None:
        self.lowered = lowered

    def as_text(self) -> str:
        return self.lowered.as_text()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        low = self.lowered
        leaves, in_tree = tree_flatten((args, kwargs))
        leaves = [low._as_array(x) for x in leaves]
        avals = tuple((x.shape, x.jdtype) for x in leaves)
        if in_tree != low.in_tree or avals != tuple(a[:2] for a in low.in_avals):
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                f"compiled: got {[f'{d}{list(s)}' for s, d in avals]} in {in_tree}, compiled "
                f"for {[f'{a[1]}{list(a[0])}' for a in low.in_avals]} in {low.in_tree}")
        outs = low.program(leaves)
        return outs[0] if low.out_tree is LEAF else tree_unflatten(low.out_tree, outs)
