"""Source provenance: equations carry the user's line (as JAX's source_info), kernels
know the equations behind each node, and each generated line of WGSL and WAT maps
back to the user lines it computes; the report shows both."""
from __future__ import annotations

import inspect
import json

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.lab.report import Report
from jaxlab.lab.view import to_json

from tests.conftest import BACKENDS


def three_lines(x, np_=jnp):
    a = np_.sin(x)
    b = a * a
    return b + np_.exp(b)


FIRST = inspect.getsourcelines(three_lines)[1] + 1
GENERATING = [b for b in BACKENDS if b in ("wasm", "webgpu")]   # (cpu runs NumPy plans)


LINE_OF = {"sin": FIRST, "mul": FIRST + 1, "exp": FIRST + 2, "add": FIRST + 2}


def _annotations(text: str) -> list[str]:
    return [line.split(" # ", 1)[1] for line in text.splitlines() if " # " in line]


def test_pretty_print_source_info_as_jax() -> None:
    ours = jaxlab.make_jaxpr(three_lines)(jnp.ones(3)).pretty_print(source_info=True)
    theirs = jax.make_jaxpr(lambda x: three_lines(x, jjnp))(jjnp.ones(3)) \
        .pretty_print(source_info=True)
    assert _annotations(ours) == _annotations(theirs)
    assert _annotations(ours)[0] == f"{__file__}:{FIRST}:8 (three_lines)"
    assert " # " not in str(jaxlab.make_jaxpr(three_lines)(jnp.ones(3)))


def test_equations_carry_their_lines() -> None:
    closed = jaxlab.make_jaxpr(three_lines)(jnp.ones(3))
    assert [(e.primitive.name, e.source_info.line) for e in closed.eqns] == \
        [(name, LINE_OF[name]) for name in ("sin", "mul", "exp", "add")]
    grad = jaxlab.make_jaxpr(jaxlab.grad(lambda x: three_lines(x).sum()))(jnp.ones(3))
    assert all(e.source_info is not None for e in grad.eqns)


def _run(device: str):
    x = jaxlab.device_put(jnp.linspace(-1.0, 1.0, 8), jaxlab.devices(device)[0])
    with jaxlab.capture() as log:
        out = jaxlab.jit(three_lines)(x)
    np.testing.assert_allclose(np.asarray(out), three_lines(np.asarray(x), np), rtol=1e-5)
    (event,) = log
    return event, log


@pytest.mark.parametrize("device", GENERATING)
def test_each_generated_line_maps_to_its_user_line(device: str) -> None:
    event, _ = _run(device)
    assert [o.source.line for o in event.origins] == [LINE_OF[o.equation] for o in event.origins]
    lines = event.source.splitlines()
    per_line = event.line_origins.lines
    assert len(per_line) == len(lines)
    computing = {i: {o.source.line for o in origins} for i, origins in enumerate(per_line)
                 if origins}
    # every origin of a line is the equation's own user line, and all three lines appear
    for origins in per_line:
        for o in origins:
            assert o.source.line == LINE_OF[o.equation.split("[")[0]]
    assert set().union(*computing.values()) == set(LINE_OF.values())
    # some lines compute only the second line (the square), some only the third (exp, add)
    assert any(computing[i] == {FIRST + 1} for i in computing)
    assert any(computing[i] == {FIRST + 2} for i in computing)
    sin_lines = [i for i in computing if "sin" in lines[i]]
    assert sin_lines and all(FIRST in computing[i] for i in sin_lines)


@pytest.mark.parametrize("device", GENERATING)
def test_reduction_step_names_the_reduction(device: str) -> None:
    x = jaxlab.device_put(jnp.arange(16.0), jaxlab.devices(device)[0])
    with jaxlab.capture() as log:
        jaxlab.jit(lambda v: jnp.sum(v * 3.0))(x)
    (event,) = log
    equations = {o.equation.split("[")[0] for origins in event.line_origins.lines
                 for o in origins}
    assert {"reduce_sum", "mul"} <= equations


def test_report_shows_user_lines_and_generated_table() -> None:
    device = "wasm" if "wasm" in BACKENDS else BACKENDS[0]
    event, log = _run(device)
    report = Report(log, stages=["source"])
    model = report.data()
    assert [u["line"] for u in model["lines"]] == sorted(set(LINE_OF.values()))
    assert sum(u["ms"] for u in model["lines"]) == pytest.approx(report.groups[0].ms)
    text = report.text()
    assert "split evenly over the user lines" in text
    assert "return b + np_.exp(b)" in text
    html = report.html()
    assert "generated lines beside what they compute" in html
    assert "<script" not in html
    # the live view draws the same rows as the static one
    tables = _tables(model["view"])
    provenance = [t for t in tables if t["name"] == "provenance"]
    assert provenance and any(str(FIRST) in " ".join(map(str, r)) for r in provenance[0]["rows"])
    lines_table = next(t for t in tables if t["name"] == "lines")
    # the live view lights a generated line and the user lines it computes together
    user_places = {k for row in lines_table["links"] for k in row}
    linked = [set(row) for row in provenance[0]["links"] if row]
    assert linked and all(row <= user_places for row in linked)
    assert f"{__file__}:{FIRST}" in user_places
    for row in lines_table["rows"]:
        assert all(str(c) in html or isinstance(c, dict) for c in row[2:4])
    json.dumps(model)


def _tables(node: dict) -> list[dict]:
    found = [node] if node.get("t") == "table" else []
    for child in node.get("children", []):
        found += _tables(child)
    return found


def test_eager_ops_carry_lines_only_while_listening() -> None:
    x = jnp.arange(4.0)
    with jaxlab.capture() as log:
        y = jnp.cos(x) + 1.0
        np.asarray(y)
    line = inspect.currentframe().f_lineno - 2
    assert {o.source.line for e in log for o in e.origins} == {line}
    assert to_json(Report(log).view)
