"""jaxlab.debug.print and callback against jax.debug's: eagerly, under jit (each run
prints), vmap (once per element), grad (the primal values) and inside a loop."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import pytest

import jaxlab
import jaxlab.numpy as jnp


def _programs(api, m):
    """Each program prints; every API runs the same ones."""
    def double_and_print(x):
        api.debug.print("jit {x} {n}", x=x * 2, n=3)
        return x + 1
    jitted = api.jit(double_and_print)

    def square(x):
        api.debug.print("grad {}", x)
        return x * x

    def body(i, c):
        api.debug.print("loop {} {}", i, c)
        return c + 1
    return [
        lambda: api.debug.print("eager {} {}", 1, m.arange(3)),
        lambda: (jitted(m.ones(2)), jitted(m.zeros(2))),
        lambda: api.vmap(lambda x: api.debug.print("vmap {} {y}", x, y=2))(m.arange(3.0)),
        lambda: api.grad(square)(3.0),
        lambda: api.jit(api.grad(square))(2.0),
        lambda: api.jit(lambda x: api.lax.fori_loop(0, 2, body, x))(1.0),
    ]


def test_debug_print_matches_jax(backend, capsys):
    for run in _programs(jax, jjnp):
        jax.block_until_ready(run())
        jax.effects_barrier()
    theirs = capsys.readouterr().out
    for run in _programs(jaxlab, jnp):
        jaxlab.block_until_ready(run())
    assert capsys.readouterr().out == theirs


def test_debug_callback_gets_values_and_errors(backend):
    seen = []
    f = jaxlab.jit(lambda x, y: jaxlab.debug.callback(
        lambda a, b, k: seen.append((a.tolist(), b, k.tolist())), x * 2, "tag", k=y))
    f(jnp.arange(3.0), jnp.asarray([True, False]))
    f(jnp.ones(3), jnp.asarray([False, False]))
    assert seen == [([0.0, 2.0, 4.0], "tag", [True, False]),
                    ([2.0, 2.0, 2.0], "tag", [False, False])]
    with pytest.raises(TypeError, match="expected str"):
        jaxlab.debug.print(3)
    with pytest.raises(NotImplementedError, match="breakpoint"):
        jaxlab.debug.breakpoint()
    assert "debug_callback(" in f.lower(jnp.ones(3), jnp.asarray([True, True])).text()
