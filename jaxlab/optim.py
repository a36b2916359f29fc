"""jaxlab.optim: gradient-descent optimizers with optax's shape.

    opt = optim.adam(1e-3)
    state = opt.init(params)
    updates, state = opt.update(grads, state, params)
    params = optim.apply_updates(params, updates)

Params, grads and states are pytrees of arrays, so a whole training step can
be jitted; the optimizer object itself holds only Python numbers.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from jaxlab import numpy as jnp
from jaxlab.ir.dtypes import DType
from jaxlab.tree_util import tree_map

Params = Any   # a pytree of arrays (grads and updates have the same structure)

__all__ = ["GradientTransformation", "sgd", "momentum", "adam", "apply_updates"]


class GradientTransformation(NamedTuple):
    init: Callable[[Params], Any]
    update: Callable[..., tuple[Params, Any]]   # (grads, state, params=None)


class EmptyState(NamedTuple):
    pass


class TraceState(NamedTuple):
    trace: Params


class AdamState(NamedTuple):
    count: Any   # int32 scalar: steps taken, for the bias correction
    mu: Params
    nu: Params


def _zeros_like(params: Params) -> Params:
    return tree_map(jnp.zeros_like, params)


def _scale(tree: Params, factor: float) -> Params:
    return tree_map(lambda g: factor * g, tree)


def sgd(learning_rate: float) -> GradientTransformation:
    """updates = -learning_rate * grads."""
    def update(grads: Params, state: EmptyState, params: Params = None) -> tuple:
        return _scale(grads, -learning_rate), state
    return GradientTransformation(lambda params: EmptyState(), update)


def momentum(learning_rate: float, beta: float = 0.9,
             nesterov: bool = False) -> GradientTransformation:
    """Heavy-ball momentum (optax.sgd with momentum): trace = g + beta * trace;
    the step follows the trace, or g + beta * trace with Nesterov's look-ahead."""
    def update(grads: Params, state: TraceState, params: Params = None) -> tuple:
        trace = tree_map(lambda g, t: g + beta * t, grads, state.trace)
        step = tree_map(lambda g, t: g + beta * t, grads, trace) if nesterov else trace
        return _scale(step, -learning_rate), TraceState(trace)
    return GradientTransformation(lambda params: TraceState(_zeros_like(params)), update)


def adam(learning_rate: float, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> GradientTransformation:
    """Adam (Kingma & Ba): bias-corrected moving averages of g and g^2;
    step = -learning_rate * mu_hat / (sqrt(nu_hat) + eps)."""
    def init(params: Params) -> AdamState:
        return AdamState(jnp.zeros((), DType.int32), _zeros_like(params), _zeros_like(params))

    def update(grads: Params, state: AdamState, params: Params = None) -> tuple:
        mu = tree_map(lambda g, m: (1 - b1) * g + b1 * m, grads, state.mu)
        nu = tree_map(lambda g, v: (1 - b2) * (g * g) + b2 * v, grads, state.nu)
        count = state.count + 1
        mu_correction = 1 - jnp.power(b1, count)
        nu_correction = 1 - jnp.power(b2, count)
        step = tree_map(lambda m, v: (m / mu_correction) / (jnp.sqrt(v / nu_correction) + eps),
                        mu, nu)
        return _scale(step, -learning_rate), AdamState(count, mu, nu)
    return GradientTransformation(init, update)


def apply_updates(params: Params, updates: Params) -> Params:
    """params + updates, leaf by leaf, keeping each parameter's dtype."""
    return tree_map(lambda p, u: jnp.asarray(p + u, dtype=jnp.asarray(p).dtype), params, updates)
