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
from jaxlab.tree_util import tree_leaves, tree_map

Params = Any   # a pytree of arrays (grads and updates have the same structure)

__all__ = ["GradientTransformation", "sgd", "momentum", "adam", "adamw", "apply_updates",
           "chain", "clip_by_global_norm", "global_norm"]


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


def _adam_steps(grads: Params, state: AdamState, b1: float, b2: float,
                eps: float) -> tuple[Params, AdamState]:
    """Adam's direction mu_hat / (sqrt(nu_hat) + eps) from bias-corrected averages."""
    mu = tree_map(lambda g, m: (1 - b1) * g + b1 * m, grads, state.mu)
    nu = tree_map(lambda g, v: (1 - b2) * (g * g) + b2 * v, grads, state.nu)
    count = state.count + 1
    mu_correction = 1 - jnp.power(b1, count)
    nu_correction = 1 - jnp.power(b2, count)
    step = tree_map(lambda m, v: (m / mu_correction) / (jnp.sqrt(v / nu_correction) + eps),
                    mu, nu)
    return step, AdamState(count, mu, nu)


def _adam_init(params: Params) -> AdamState:
    return AdamState(jnp.zeros((), DType.int32), _zeros_like(params), _zeros_like(params))


def adam(learning_rate: float, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> GradientTransformation:
    """Adam (Kingma & Ba): bias-corrected moving averages of g and g^2;
    step = -learning_rate * mu_hat / (sqrt(nu_hat) + eps)."""
    def update(grads: Params, state: AdamState, params: Params = None) -> tuple:
        step, state = _adam_steps(grads, state, b1, b2, eps)
        return _scale(step, -learning_rate), state
    return GradientTransformation(_adam_init, update)


def adamw(learning_rate: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          weight_decay: float = 1e-4) -> GradientTransformation:
    """Adam with decoupled weight decay (Loshchilov & Hutter), as optax.adamw:
    step = -learning_rate * (adam's direction + weight_decay * params)."""
    def update(grads: Params, state: AdamState, params: Params = None) -> tuple:
        if params is None:
            raise ValueError("adamw: update needs params (for the weight decay)")
        step, state = _adam_steps(grads, state, b1, b2, eps)
        step = tree_map(lambda s, p: s + weight_decay * p, step, params)
        return _scale(step, -learning_rate), state
    return GradientTransformation(_adam_init, update)


def global_norm(tree: Params) -> Any:
    """The L2 norm of all leaves together."""
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in tree_leaves(tree)))


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Scale the updates down to global norm max_norm when they exceed it."""
    def update(grads: Params, state: EmptyState, params: Params = None) -> tuple:
        norm = global_norm(grads)
        keep = norm < max_norm
        return tree_map(lambda g: jnp.where(keep, g, (g / norm) * max_norm), grads), state
    return GradientTransformation(lambda params: EmptyState(), update)


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """The transformations applied in order, each to the previous one's updates."""
    def init(params: Params) -> tuple:
        return tuple(t.init(params) for t in transforms)

    def update(grads: Params, state: tuple, params: Params = None) -> tuple:
        states = []
        for t, s in zip(transforms, state):
            grads, s = t.update(grads, s, params)
            states.append(s)
        return grads, tuple(states)
    return GradientTransformation(init, update)


def apply_updates(params: Params, updates: Params) -> Params:
    """params + updates, leaf by leaf, keeping each parameter's dtype."""
    return tree_map(lambda p, u: jnp.asarray(p + u, dtype=jnp.asarray(p).dtype), params, updates)
