"""checkpoint (remat) and its saving policies.

JAX's checkpoint recomputes the function's intermediates in the backward pass
instead of storing them, to save memory; the policy says which it may store.
jaxlab's reverse mode keeps what linearization stored either way: checkpoint
runs the function as it is (no recomputation) and its gradients are identical.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Sequence

Policy = Callable[..., bool]


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool = True,
               policy: Optional[Policy] = None,
               static_argnums: int | Sequence[int] = ()) -> Callable[..., Any]:
    """fun with JAX's checkpoint signature; jaxlab stores the residuals (it does not
    recompute), so values and gradients are fun's own."""
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint policy must be callable, got {type(policy).__name__}")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        for n in nums:
            if not -len(args) <= n < len(args):
                raise ValueError(f"jax.checkpoint static_argnums {static_argnums} out of range "
                                 f"for {len(args)} positional arguments")
        return fun(*args, **kwargs)
    return checkpointed


remat = checkpoint


class checkpoint_policies:
    """The policies JAX names (each `policy(primitive, *avals, **params) -> bool`: may
    this result be saved). jaxlab saves every residual whatever the policy says."""

    @staticmethod
    def everything_saveable(*_: Any, **__: Any) -> bool:
        return True

    @staticmethod
    def nothing_saveable(*_: Any, **__: Any) -> bool:
        return False

    @staticmethod
    def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
        return getattr(prim, "name", "") == "dot_general"

    checkpoint_dots = dots_saveable

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
        dims = params.get("dimension_numbers")
        return getattr(prim, "name", "") == "dot_general" and \
            (dims is None or not any(dims[1]))

    checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable

    @staticmethod
    def save_only_these_names(*names: str) -> Policy:
        return lambda prim, *_, **params: params.get("name") in names

    @staticmethod
    def save_any_names_but_these(*names: str) -> Policy:
        return lambda prim, *_, **params: "name" in params and params["name"] not in names

    @staticmethod
    def save_from_both_policies(first: Policy, second: Policy) -> Policy:
        return lambda *a, **kw: first(*a, **kw) or second(*a, **kw)
