"""jaxlab.optim: single updates against NumPy, and an MLP that learns."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import nn, optim, random
from tests.conftest import assert_close


def _tree(rng):
    return {"w": rng.normal(size=(3, 2)).astype(np.float32),
            "b": [rng.normal(size=(2,)).astype(np.float32)]}


def _leaves(tree):
    return [tree["b"][0], tree["w"]]   # sorted dict keys, as tree_flatten orders them


def _run(opt, params, grads_seq, jit):
    update = jaxlab.jit(opt.update) if jit else opt.update
    state = opt.init(params)
    for grads in grads_seq:
        updates, state = update(grads, state, params)
        params = optim.apply_updates(params, updates)
    return params, state


def _numpy_adam(params, grads_seq, lr, b1=0.9, b2=0.999, eps=1e-8):
    mu, nu = np.zeros_like(params), np.zeros_like(params)
    for t, g in enumerate(grads_seq, start=1):
        mu = (1 - b1) * g + b1 * mu
        nu = (1 - b2) * g * g + b2 * nu
        params = params - lr * (mu / (1 - b1 ** t)) / (np.sqrt(nu / (1 - b2 ** t)) + eps)
    return params


def _numpy_adamw(params, grads_seq, lr, weight_decay, b1=0.9, b2=0.999, eps=1e-8):
    mu, nu = np.zeros_like(params), np.zeros_like(params)
    for t, g in enumerate(grads_seq, start=1):
        mu = (1 - b1) * g + b1 * mu
        nu = (1 - b2) * g * g + b2 * nu
        step = (mu / (1 - b1 ** t)) / (np.sqrt(nu / (1 - b2 ** t)) + eps)
        params = params - lr * (step + weight_decay * params)
    return params


def _numpy_momentum(params, grads_seq, lr, beta, nesterov):
    trace = np.zeros_like(params)
    for g in grads_seq:
        trace = g + beta * trace
        params = params - lr * (g + beta * trace if nesterov else trace)
    return params


NUMPY_REFERENCES = {
    "sgd": (lambda: optim.sgd(0.1),
            lambda p, gs: p - 0.1 * sum(gs)),
    "momentum": (lambda: optim.momentum(0.1, beta=0.8),
                 lambda p, gs: _numpy_momentum(p, gs, 0.1, 0.8, False)),
    "nesterov": (lambda: optim.momentum(0.1, beta=0.8, nesterov=True),
                 lambda p, gs: _numpy_momentum(p, gs, 0.1, 0.8, True)),
    "adam": (lambda: optim.adam(0.05),
             lambda p, gs: _numpy_adam(p, gs, 0.05)),
    "adamw": (lambda: optim.adamw(0.05, weight_decay=0.1),
              lambda p, gs: _numpy_adamw(p, gs, 0.05, 0.1)),
}


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("name", NUMPY_REFERENCES)
def test_updates_match_numpy(backend, rng, name, jit):
    make_opt, reference = NUMPY_REFERENCES[name]
    params = _tree(rng)
    grads_seq = [_tree(rng) for _ in range(3)]
    out, _ = _run(make_opt(), params, grads_seq, jit)
    for actual, p, gs in zip(_leaves(out), _leaves(params),
                             zip(*(_leaves(g) for g in grads_seq))):
        assert_close(actual, reference(p.astype(np.float64), [g.astype(np.float64)
                                                               for g in gs]).astype(np.float32))


@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_by_global_norm_chained_with_sgd(backend, rng, max_norm):
    params, grads = _tree(rng), _tree(rng)
    opt = optim.chain(optim.clip_by_global_norm(max_norm), optim.sgd(1.0))
    out, _ = _run(opt, params, [grads], jit=True)
    norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in _leaves(grads)))
    scale = min(1.0, max_norm / norm)
    for actual, p, g in zip(_leaves(out), _leaves(params), _leaves(grads)):
        assert_close(actual, (p - scale * g).astype(np.float32))
    assert_close(optim.global_norm(grads), np.float32(norm))


def test_adam_state(rng):
    params = _tree(rng)
    _, state = _run(optim.adam(0.1), params, [_tree(rng) for _ in range(2)], jit=True)
    assert np.asarray(state.count).dtype == np.int32 and int(state.count) == 2
    assert np.asarray(state.mu["w"]).shape == (3, 2)


# --- training ------------------------------------------------------------------------------

def _blobs(n_classes=4, n_per_class=64, dim=20, seed=0):
    """Gaussian blobs around random centres: an easy but not trivial problem."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, dim)) * 1.5
    labels = np.repeat(np.arange(n_classes), n_per_class)
    x = centres[labels] + rng.normal(size=(labels.size, dim))
    return x.astype(np.float32), labels.astype(np.int32)


def _init_mlp(key, sizes=(20, 32, 4)):
    params = []
    for k, (n_in, n_out) in zip(random.split(key, len(sizes) - 1), zip(sizes, sizes[1:])):
        params.append({"w": random.normal(k, (n_in, n_out)) / np.sqrt(n_in),
                       "b": jnp.zeros((n_out,))})
    return params


def _loss(params, x, labels):
    h = x
    for layer in params[:-1]:
        h = nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ params[-1]["w"] + params[-1]["b"]
    return -jnp.mean(jnp.sum(nn.log_softmax(logits) * nn.one_hot(labels, 4), axis=-1))


@pytest.mark.parametrize("make_opt", [lambda: optim.adam(1e-2), lambda: optim.sgd(0.1),
                                      lambda: optim.momentum(0.05)],
                         ids=["adam", "sgd", "momentum"])
def test_mlp_loss_falls(make_opt):
    x, labels = _blobs()
    opt = make_opt()
    params = _init_mlp(random.PRNGKey(0))
    state = opt.init(params)

    @jaxlab.jit
    def step(params, state, x, labels):
        loss, grads = jaxlab.value_and_grad(_loss)(params, x, labels)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(50):
        params, state, loss = step(params, state, x, labels)
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0], losses
