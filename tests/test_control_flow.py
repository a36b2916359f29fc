"""cond / switch / while_loop / fori_loop / scan / map against JAX: values, grad,
vmap, nesting, error messages, make_jaxpr text, and compiled loop/branch steps."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax
from tests.conftest import assert_close

X = np.array([0.5, -1.0, 2.0], np.float32)
XS = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 10


def both(fn, *args):
    """fn(jax's (numpy, lax, transforms), *args) and the same with jaxlab's."""
    mine = fn((jnp, lax, jaxlab), *[jnp.asarray(a) for a in args])
    theirs = fn((jjnp, jlax, jax), *[jjnp.asarray(a) for a in args])
    return mine, theirs


def check(fn, *args, rtol=1e-4, atol=1e-5):
    mine, theirs = both(fn, *args)
    got, want = jaxlab.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(theirs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w), rtol=rtol, atol=atol)


# --- the functions under test, written once over (numpy, lax, transforms) ----------------

def scan_fn(m, x, xs):
    np_, lax_, _ = m
    c, ys = lax_.scan(lambda c, a: (c * np_.sin(a) + a, c * a), x, xs)
    return c.sum() + ys.sum()


def rev_scan(m, x, xs):
    return m[1].scan(lambda c, a: (c + a, c * a), x, xs, reverse=True)


def fori_fn(m, x):
    np_, lax_, _ = m
    return lax_.fori_loop(0, 4, lambda i, v: np_.sin(v) * i + v, x).sum()


def cond_fn(m, x):
    np_, lax_, _ = m
    return lax_.cond(x.sum() > 0, lambda v: np_.sin(v) * x, lambda v: v * v, x).sum()


def while_fn(m, x):
    np_, lax_, _ = m
    return lax_.while_loop(lambda c: c[0] < 4,
                           lambda c: (c[0] + 1, c[1] * 1.5 + np_.sin(c[1])), (0, x))[1]


def doubling(m, v):
    return m[1].while_loop(lambda c: c[1] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, v))


def nested(m, x):
    np_, lax_, _ = m
    body = lambda c, a: (lax_.cond(a > 0.5, lambda u: u * a, lambda u: np_.sin(u), c), c.sum())
    return lax_.scan(body, x, np_.linspace(0.0, 1.0, 4))[0].sum()


# --- values on every device ---------------------------------------------------------------

def test_values_match_jax(backend):
    check(lambda m, x, xs: m[1].scan(lambda c, a: (c + a, c * a), x, xs), X, XS)
    check(rev_scan, X, XS)
    check(lambda m, x: m[1].fori_loop(0, 5, lambda i, v: v * 1.5 + i, x), X)
    check(lambda m, x: m[1].fori_loop(2, 2, lambda i, v: v + 1, x), X)
    check(while_fn, X)
    check(lambda m, x: m[1].cond(True, m[0].sin, m[0].cos, x), X)
    check(lambda m, x: m[1].switch(7, [m[0].sin, m[0].cos, lambda v: v * 3], x), X)
    check(lambda m, x: m[1].switch(-2, [m[0].sin, m[0].cos, lambda v: v * 3], x), X)
    check(lambda m, xs: m[1].map(lambda r: r.sum() * 2, xs), XS)
    check(lambda m, x: m[1].scan(lambda c, _: (c + 1, None), x, None, length=3), X)


def test_jit_values_match_jax(backend):
    check(lambda m, x, xs: m[2].jit(lambda x, xs: rev_scan(m, x, xs))(x, xs), X, XS)
    check(lambda m, x: m[2].jit(lambda x: while_fn(m, x))(x), X)
    check(lambda m, x: m[2].jit(lambda p, x: m[1].cond(p, m[0].sin, m[0].cos, x))(False, x), X)
    check(lambda m, x: m[2].jit(lambda n, x: m[1].fori_loop(0, n, lambda i, v: v + i, x))(3, x),
          X)


def test_fori_loop_with_python_values_is_exact():
    assert int(lax.fori_loop(0, 10, lambda i, v: v + i, 0)) == 45
    assert float(lax.fori_loop(1, 5, lambda i, v: v * i, 1.0)) == 24.0
    assert int(lax.fori_loop(5, 1, lambda i, v: v + 1, 0)) == 0


# --- differentiation and batching (cpu: the rules, not the kernels, are under test) -------

@pytest.mark.parametrize("name, fn, args", [
    ("scan", scan_fn, (X, XS)),
    ("fori", fori_fn, (X,)),
    ("cond", cond_fn, (X,)),
    ("cond other branch", cond_fn, (-X,)),
    ("scan of cond", nested, (X,)),
    ("fori of fori", lambda m, x: m[1].fori_loop(
        0, 3, lambda i, v: m[1].fori_loop(0, 2, lambda j, u: u * m[0].cos(u) + i, v), x).sum(),
     (X,)),
])
def test_grad_matches_jax(name, fn, args):
    check(lambda m, *a: m[2].grad(lambda *b: fn(m, *b), argnums=tuple(range(len(a))))(*a),
          *args)


def test_grad_through_scan_keeps_a_closed_over_weight_unstacked():
    w = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32) * 0.5

    def loss(m, w, x):
        np_, lax_, _ = m
        c, ys = lax_.scan(lambda c, a: (np_.tanh(w @ c) + a, (c * c).sum()), x,
                          np_.ones((6, 3)) * 0.1)
        return c.sum() + ys.sum()
    check(lambda m, w, x: m[2].grad(lambda *a: loss(m, *a), argnums=(0, 1))(w, x), w, X)
    from jaxlab.core.partial_eval import linearize_flat
    _, _, residuals, _ = linearize_flat(lambda v: [loss((jnp, lax, jaxlab), v, jnp.asarray(X))],
                                        [jnp.asarray(w)])
    assert (3, 3) in [r.shape for r in residuals]          # the weight, once
    assert (6, 3, 3) not in [r.shape for r in residuals]   # not once per step


def test_grad_of_jit_and_jit_of_grad(backend):
    check(lambda m, x: m[2].grad(m[2].jit(lambda x: nested(m, x)))(x), X)
    check(lambda m, x, xs: m[2].jit(m[2].grad(lambda x, xs: scan_fn(m, x, xs)))(x, xs), X, XS)


def test_jvp_matches_jax():
    check(lambda m, x: m[2].jvp(lambda v: while_fn(m, v), (x,), (x,)), X)
    check(lambda m, x, xs: m[2].jvp(lambda v: scan_fn(m, v, xs), (x,), (x,)), X, XS)
    check(lambda m, x: m[2].jvp(lambda v: cond_fn(m, v), (x,), (x,)), X)


def test_vmap_matches_jax():
    scan_c = lambda m, x, xs: m[1].scan(lambda c, a: (c * a + 1, c), x, xs)
    check(lambda m, x, xs: m[2].vmap(lambda v: scan_c(m, v, xs))(xs), X, XS)
    check(lambda m, x, xs: m[2].vmap(lambda v: scan_c(m, x, v), in_axes=1)(xs), X, XS)
    check(lambda m, x: m[2].vmap(lambda v: m[1].cond(v > 0, m[0].sin, lambda u: u * 3, v))(x), X)
    check(lambda m, x: m[2].vmap(lambda v: m[1].cond(True, m[0].sin, m[0].cos, v))(x), X)
    check(lambda m, x: m[2].vmap(lambda i, v: m[1].switch(
        i, [m[0].sin, m[0].cos, lambda u: u * 2], v))(m[0].array([2, 0, 1]), x), X)
    check(lambda m, x: m[2].vmap(lambda v: doubling(m, v))(m[0].abs(x) + 0.3), X)
    check(lambda m, x: m[2].vmap(lambda v: m[1].while_loop(
        lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 2), (0, v)))(x), X)
    check(lambda m, x, xs: m[2].vmap(m[2].grad(lambda v: scan_fn(m, v, xs)))(xs), X, XS)


def test_vmap_of_while_with_per_lane_predicate_under_jit(backend):
    check(lambda m, x: m[2].jit(m[2].vmap(lambda v: doubling(m, v)))(m[0].abs(x) + 0.3), X)


def test_while_loop_reverse_mode_raises_jax_error():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                                         "lax.while_loop"):
        jaxlab.grad(lambda x: lax.while_loop(lambda v: v < 3, lambda v: v * 2, x))(1.0)
    n = jnp.asarray(3)
    with pytest.raises(ValueError, match="Reverse-mode"):
        jaxlab.grad(lambda x: lax.fori_loop(0, n, lambda i, v: v * 2, x))(1.0)


# --- JAX's checks and messages ------------------------------------------------------------

@pytest.mark.parametrize("call, exc, message", [
    (lambda x: lax.scan(lambda c, a: (jnp.ones(4), a), x, jnp.ones((2, 3))), TypeError,
     "The input carry c has type float32[3] but the corresponding output carry component "
     "has type float32[4], so the shapes do not match"),
    (lambda x: lax.scan(lambda c, a: (c.astype(jnp.int32), a), x, jnp.ones((2, 3))), TypeError,
     "so the dtypes do not match"),
    (lambda x: lax.scan(lambda c, a: ((c, c), a), x, jnp.ones((2, 3))), TypeError,
     "must have the same pytree structure"),
    (lambda x: lax.scan(lambda c, a: (c, a), x, jnp.ones((2, 3)), length=3), ValueError,
     "scan got `length` argument of 3 which disagrees with leading axis sizes [2]."),
    (lambda x: lax.scan(lambda c, a: (c, a), x, (jnp.ones((2, 3)), jnp.ones(3))), ValueError,
     "scan got values with different leading axis sizes: 2, 3."),
    (lambda x: lax.scan(lambda c, a: (c, a), x, None), ValueError,
     "scan got no values to scan over and `length` not provided."),
    (lambda x: lax.while_loop(lambda v: v[0] < 3, lambda v: jnp.ones(4), x), TypeError,
     "while_loop body function carry input and carry output must have equal types"),
    (lambda x: lax.while_loop(lambda v: v < 3, lambda v: v + 1, x), TypeError,
     "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(bool[3])]."),
    (lambda x: lax.fori_loop(0, 3, lambda i, v: jnp.ones(4), x), TypeError,
     "The input carry component loop_carry[1] has type float32[3]"),
    (lambda x: lax.cond(True, lambda v: v, lambda v: v[:2], x), TypeError,
     "cond branches must have equal output types but they differ."),
    (lambda x: lax.cond(True, lambda v: v, lambda v: (v, v), x), TypeError,
     "cond branch outputs must have the same pytree structure"),
    (lambda x: lax.cond(x, lambda v: v, lambda v: v, x), TypeError, "Pred must be a scalar"),
    (lambda x: lax.switch(1.5, [lambda v: v], x), TypeError, "Index type must be an integer"),
    (lambda x: lax.switch(1, [], x), ValueError, "Empty branch sequence"),
])
def test_errors_match_jax(call, exc, message):
    with pytest.raises(exc) as info:
        call(jnp.ones(3))
    assert message in str(info.value)
    assert float(jaxlab.jit(lambda v: v + 1)(jnp.ones(()))) == 2.0   # still works after


# --- make_jaxpr prints nested jaxprs as JAX does --------------------------------------------

def test_make_jaxpr_text_matches_jax_layout():
    scan_text = str(jaxlab.make_jaxpr(
        lambda x: lax.scan(lambda c, a: (c + a, c * a), x, x))(jnp.ones((4, 3))))
    assert scan_text == """{ lambda ; a:f32[4,3]. let
    b:f32[4,3] c:f32[4,4,3] = scan[
      jaxpr={ lambda ; d:f32[4,3] e:f32[3]. let
          f:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(4, 3)] e
          g:f32[4,3] = add d f
          h:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(1,) shape=(4, 3)] e
          i:f32[4,3] = mul d h
        in (g, i) }
      length=4
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a a
  in (b, c) }"""
    cond_text = str(jaxlab.make_jaxpr(
        lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, jnp.ones(3)))
    assert """    d:f32[3] = cond[
      branches=(
        { lambda ; e:f32[3]. let f:f32[3] = cos e in (f,) }
        { lambda ; g:f32[3]. let h:f32[3] = sin g in (h,) }
      )
    ] c b""" in cond_text
    while_text = str(jaxlab.make_jaxpr(
        lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x))(jnp.ones(()), 3))
    assert "_:i32[] _:i32[] c:f32[] = while[" in while_text
    assert "body_nconsts=0\n      cond_jaxpr={ lambda ; " in while_text


# --- compiled programs: loop and branch steps ------------------------------------------------

def _kernels(log) -> int:
    return sum(e.calls for e in log.kernels())


def test_jit_cond_runs_only_the_taken_branch(backend):
    f = jaxlab.jit(lambda p, x: lax.cond(p, lambda v: jnp.sin(v) * 2 + 1,
                                         lambda v: jnp.exp(v).sum() * jnp.ones(3), x))
    x = jnp.asarray(X)
    f(True, x), f(False, x)   # compile
    with jaxlab.capture() as log:
        out = f(True, x)
    names = [e.name for e in log.kernels()]
    assert not any(e.ir.count("exp") for e in log.kernels()), names
    assert_close(out, np.sin(X) * 2 + 1, rtol=1e-5)
    assert [e.kind for e in log if e.kind == "readback"] == ["readback"]


@pytest.mark.parametrize("steps", [300, 1000])
def test_jit_fori_loop_compiles_its_body_once(backend, steps):
    f = jaxlab.jit(lambda x: lax.fori_loop(0, steps, lambda i, v: v * 0.5 + 1.0, x))
    x = jnp.asarray(X)
    with jaxlab.capture() as log:
        out = f(x)
    expected = X.copy()
    for _ in range(steps):
        expected = expected * np.float32(0.5) + np.float32(1.0)
    assert_close(out, expected, rtol=1e-5)
    body = [e for e in log.kernels() if e.calls == steps]
    assert body, [(e.name, e.calls) for e in log.kernels()]
    assert len(log.kernels()) <= 3     # reported once each, with their call count
    (update,) = [e for e in body if e.output_shapes == [(3,)]]
    assert update.flops == steps * 2 * 3   # a multiply and an add per element, per step
    text = f.lower(x).text()
    assert f"loop {steps} x" in text


def test_scan_carry_aliasing_and_reverse_under_jit(backend):
    # the body returns its carry swapped and unchanged: outputs alias inputs
    def body(c, x):
        a, b = c
        return (b, a + x), a
    f = jaxlab.jit(lambda a, b, xs: lax.scan(body, (a, b), xs, reverse=True))
    got = f(jnp.asarray(X), jnp.asarray(-X), jnp.asarray(XS))
    want = jax.jit(lambda a, b, xs: jlax.scan(body, (a, b), xs, reverse=True))(X, -X, XS)
    for g, w in zip(jaxlab.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_close(g, np.asarray(w), rtol=1e-5)


def test_program_text_shows_nested_blocks():
    f = jaxlab.jit(lambda x: lax.fori_loop(
        0, 7, lambda i, v: lax.cond(i > 3, jnp.sin, jnp.cos, v), x))
    text = f.lower(jnp.ones(3)).text()
    assert "loop 7 x" in text and "cond %" in text and "} else {" in text
    g = jaxlab.jit(lambda x: lax.while_loop(lambda v: v.sum() < 10, lambda v: v * 2, x))
    assert "while (carry" in g.lower(jnp.ones(3)).text()


def test_eager_loop_runs_step_by_step():
    with jaxlab.capture() as log:
        out = lax.fori_loop(0, 20, lambda i, v: jnp.sin(v) + 1.0, jnp.asarray(X))
    expected = X.copy()
    for _ in range(20):
        expected = np.sin(expected) + np.float32(1)
    assert_close(out, expected, rtol=1e-5)
    assert max(len(e.equations) for e in log.kernels()) < 10   # no unrolled expression


def test_per_iteration_events_for_traces():
    f = jaxlab.jit(lambda x: lax.fori_loop(0, 5, lambda i, v: v * 2.0, x))
    x = jnp.ones(3)
    f(x)
    with jaxlab.capture() as log, jaxlab.events.per_iteration():
        f(x)
    assert all(e.calls == 1 for e in log) and len(log.kernels()) >= 5


def test_ten_thousand_op_chain_compiles_and_runs(backend):
    pairs = 5000   # sin and add: 2 ops each (webgpu on lavapipe: ~3 distinct shaders)
    def chain(x):
        for _ in range(pairs):
            x = jnp.sin(x) + 1.0
        return x
    with jaxlab.capture() as log:
        out = jaxlab.jit(chain)(jnp.asarray(X))
    expected = X.copy()
    for _ in range(pairs):
        expected = np.sin(expected) + np.float32(1)
    assert_close(out, expected, rtol=1e-4, atol=1e-5)
    assert len(log.kernels()) <= 2 * pairs // 16   # fused, as far as the device allows


# --- weak types through control flow, and unroll ---------------------------------------------

WEAK_CASES = {
    "fori promotes a weak int carry": lambda m: m[1].fori_loop(0, 3, lambda i, c: c + 1.0, 0),
    "fori keeps a weak int": lambda m: m[1].fori_loop(0, 3, lambda i, c: c + 1, 0),
    "fori with traced bounds": lambda m: m[1].fori_loop(0, m[0].int32(3), lambda i, c: c + 1.0, 0),
    "scan: weak init, strong body": lambda m: m[1].scan(lambda c, x: (c + x, c * 2), 0.,
                                                         m[0].arange(3.0)),
    "scan promotes": lambda m: m[1].scan(lambda c, x: (c + 1.0, x), 0, m[0].arange(3.0)),
    "while keeps a weak int": lambda m: m[1].while_loop(lambda c: c < 3, lambda c: c + 1, 0),
    "while promotes": lambda m: m[1].while_loop(lambda c: c < 3, lambda c: c + 0.5, 0),
    "cond of weak branches": lambda m: m[1].cond(True, lambda: 1.0, lambda: 2.0),
    "cond of weak and strong": lambda m: m[1].cond(False, lambda: 1.0, lambda: m[0].float32(2)),
    "switch of weak branches": lambda m: m[1].switch(1, [lambda: 1, lambda: 2, lambda: 3]),
}


@pytest.mark.parametrize("name", sorted(WEAK_CASES))
def test_weak_types_through_control_flow_match_jax(backend, name):
    fn = WEAK_CASES[name]
    for mine, theirs in [(fn((jnp, lax)), fn((jjnp, jlax))),
                         (jaxlab.jit(lambda: fn((jnp, lax)))(), jax.jit(lambda: fn((jjnp, jlax)))())]:
        got, want = jaxlab.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(theirs)
        assert [g.weak_type for g in got] == [w.weak_type for w in want]
        for g, w in zip(got, want):
            assert_close(g, np.asarray(w))


def test_weakly_typed_carry_that_still_changes_type_raises_jax_error():
    with pytest.raises(TypeError, match=r"The input carry component loop_carry\[1\] has type "
                                        r"float32\[\] but the corresponding output carry "
                                        r"component has type int32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: (c + 1.0).astype(jnp.int32), 0.0)
    with pytest.raises(TypeError, match=r"has type int32\[\] but the corresponding output carry "
                                        r"component has type float32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: c + 1.0, jnp.int32(0))


@pytest.mark.parametrize("unroll", [2, 3, True, 0])
def test_unroll_gives_the_same_results_and_unrolls_the_body(backend, unroll):
    xs = np.linspace(-1, 1, 7 * 3, dtype=np.float32).reshape(7, 3)
    body = lambda np_: lambda c, x: (c * 0.5 + np_.sin(x), c.sum() * x)   # noqa: E731
    for length in (0, 1, 7):
        check(lambda m, x, xs: m[2].jit(lambda x, xs: m[1].scan(
            body(m[0]), x, xs, unroll=unroll, reverse=True))(x, xs), X, xs[:length])
        check(lambda m, x: m[2].jit(lambda x: m[1].fori_loop(
            0, length, lambda i, v: v * 1.5 + i, x, unroll=unroll))(x), X)
    check(lambda m, x, xs: m[2].grad(lambda x: m[1].scan(
        body(m[0]), x, xs, unroll=unroll)[1].sum())(x), X, xs)
    text = jaxlab.jit(lambda x: lax.fori_loop(0, 7, lambda i, v: v * 2, x, unroll=unroll)) \
        .lower(jnp.ones(3)).text()
    k = 7 if unroll is True else max(unroll, 1)
    assert (f"loop {7 // k} x, {k} steps each" if k > 1 else "loop 7 x") in text
    if 7 % k:
        assert f"loop {7 % k} x (" in text   # the steps left over


def test_unroll_is_checked_as_jax_checks_it():
    for bad, exc in [(-1, ValueError), (2.5, TypeError)]:
        with pytest.raises(exc):
            lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0), unroll=bad)
        with pytest.raises(exc):
            jax.lax.scan(lambda c, x: (c + x, c), 0.0, jjnp.arange(3.0), unroll=bad)


def _structure(text: str) -> list[str]:
    """The control-flow skeleton of a jaxpr's text: nesting and parameters, no names.
    Scan's num_carry / num_consts are left out: JAX 0.11 prints its operands' layout in
    other parameters (ft_in / ft_out), and the skeleton must hold for every JAX."""
    keep = re.compile(r"\s*((length|reverse|unroll|body_nconsts|"
                      r"cond_nconsts)=|branches=\(|(jaxpr|body_jaxpr|cond_jaxpr)=\{)")
    return [re.sub(r"=\{ lambda.*", "={", line) for line in text.splitlines() if keep.match(line)]


def test_make_jaxpr_of_nested_control_flow_matches_jax():
    def fn(m):
        np_, lax_ = m[0], m[1]

        def body(c, a):
            c = lax_.cond(a > 0.5, lambda u: u * a, np_.sin, c)
            c = lax_.fori_loop(0, 2, lambda i, v: v * 2.0, c, unroll=2)
            return lax_.while_loop(lambda v: v.sum() < 10.0, lambda v: v + 1.0, c), c.sum()
        return lambda x: lax_.scan(body, x, np_.ones(4), reverse=True)
    mine = str(jaxlab.make_jaxpr(fn((jnp, lax)))(jnp.ones(3)))
    theirs = str(jax.make_jaxpr(fn((jjnp, jlax)))(np.ones(3, np.float32)))
    assert _structure(mine) == _structure(theirs)
    assert len(_structure(mine)) > 10


def test_eager_scan_row_indexing_a_table(backend):
    # the row a step reads is itself a gather (by the step index): an index computed
    # from it into a table nests one gather inside another in the same kernel
    def step(m):
        table = m.arange(10.0) * 2
        return lambda c, x: (c + table[m.floor(x * 1.5).astype(m.int32)], c)
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    ours = lax.scan(step(jnp), jnp.zeros(3), xs)
    theirs = jlax.scan(step(jjnp), jjnp.zeros(3), xs)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
