"""The fusion story: the fuser records why two adjacent equations did not fuse (as it
decides), the report names the pair, the reason and what to change, and draws the
equations grouped by kernel; each kernel's IR pipeline stage by stage."""
from __future__ import annotations

import inspect
from html import escape

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine.fusion import ADVICE, Break
from jaxlab.lab.report import Report
from jaxlab.lab.view import to_json
from tests.conftest import holds_rows


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


FIRST = inspect.getsourcelines(softmax)[1] + 1     # the max
DATA = np.linspace(-2.0, 2.0, 24, dtype=np.float32).reshape(3, 8)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "eager"])
def test_softmax_names_the_reduction_broadcast_into_the_next_line(backend: str, jit: bool):
    x = jnp.asarray(DATA)
    with jaxlab.capture() as log:
        out = (jaxlab.jit(softmax) if jit else softmax)(x)
        np.testing.assert_allclose(np.asarray(out), np.exp(DATA - DATA.max(-1, keepdims=True))
                                   / np.exp(DATA - DATA.max(-1, keepdims=True)).sum(-1,
                                                                                   keepdims=True),
                                   rtol=1e-5)
    if holds_rows(backend, DATA.shape[-1]):   # one row kernel folds max and sum, writes
        (event,) = log
        assert event.tuning.value("strategy") == "rows"
        return
    breaks = [e.unfused for e in log if e.unfused is not None and e.unfused.consumer]
    first = breaks[0]
    assert first.reason.kind is Break.REDUCE_THEN_BROADCAST
    assert first.producer.source.line == FIRST
    assert first.consumer.source.line == FIRST + 1
    assert first.advice == ADVICE[Break.REDUCE_THEN_BROADCAST]


def test_routine_boundary_is_a_reason() -> None:
    a = jnp.asarray(np.eye(3, dtype=np.float32) * 2)
    with jaxlab.default_device("cpu"), jaxlab.capture() as log:
        np.asarray(jnp.linalg.cholesky(a + 1.0))
    kinds = {e.unfused.reason.kind for e in log if e.unfused is not None}
    assert Break.ROUTINE in kinds


def test_report_tells_the_story_and_draws_it() -> None:
    with jaxlab.default_device("cpu"), jaxlab.capture() as log:
        x = jnp.asarray(DATA)
        jaxlab.jit(softmax)(x)
    report = Report(log, stages=["fusion", "pipeline"])
    text = report.text()
    assert "adjacent equations that did not fuse" in text
    assert f"(line {FIRST})" in text and Break.REDUCE_THEN_BROADCAST.value in text
    html = report.html()
    assert "<svg" in html and "jl-break" in html and "<script" not in html
    figures = _nodes(to_json(report.view), "figure")
    assert figures and sum(m["k"] == "circle" for m in figures[0]["marks"]) >= 4
    fusion = [t for t in _nodes(to_json(report.view), "table") if t["name"] == "fusion"]
    assert fusion and all(escape(row[3]) in html for row in fusion[0]["rows"])
    assert escape(ADVICE[Break.REDUCE_THEN_BROADCAST]) in html


def test_pipeline_stage_by_stage(backend: str) -> None:
    x = jnp.arange(24.0).reshape(4, 6)
    with jaxlab.capture() as log:
        jaxlab.jit(lambda v: (v.T * 2.0).sum(axis=0))(x)
    (event,) = log
    assert event.pipeline is not None and event.pipeline.lowered.startswith("kernel ")
    report = Report(log, stages=["pipeline"])
    text = report.text()
    for stage in ("1. lowered", "2. simplified; rules fired", "3. tuned", "4. rendered"):
        assert stage in text
    if event.pipeline.rules:
        name, times = event.pipeline.rules[0]
        assert f"{name} x{times}" in text


def _nodes(node: dict, kind: str) -> list[dict]:
    found = [node] if node.get("t") == kind else []
    for child in node.get("children", []):
        found += _nodes(child, kind)
    return found


def _texts(node: dict) -> list[str]:
    """Every text the live view draws from a view node."""
    found = []
    if node.get("t") == "line":
        found.append(node["text"])
    elif node.get("t") == "table":
        found += [node["title"], *node["headers"]]
        found += [c for row in node["rows"] for c in row if isinstance(c, str)]
    elif node.get("t") == "figure":
        found += [m["text"] for m in node["marks"] if m.get("text")]
    elif node.get("t") == "fold":
        found.append(node["label"])
    for child in node.get("children", []):
        found += _texts(child)
    return found


def test_static_and_live_views_draw_the_same_texts() -> None:
    from jaxlab.engine.roofline import Roof
    with jaxlab.default_device("cpu"), jaxlab.capture() as log:
        x = jnp.asarray(DATA)
        jaxlab.jit(softmax)(x)
        (x @ x.T).block_until_ready()
    roof = Roof("cpu", gbps=5.0, gflops=20.0, launch_ms=0.0001, measured_at="now",
                host_timed=True)
    report = Report(log, peaks={"cpu": roof})
    html = report.html()
    texts = [t for t in _texts(to_json(report.view)) if t]
    assert any("roofline" in t for t in texts) and any("fusion story" in t for t in texts)
    for text in texts:
        assert escape(text) in html, text
