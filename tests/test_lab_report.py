"""The lab's report, error report, WAT lexer and trace export, on synthetic
KernelEvents (any backend's source) and on events from the engine."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from pygments.lexers import get_lexer_by_name
from pygments.token import Error

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.base import Autotuned, Candidate, Choice, TuningRecord
from jaxlab.events import KernelEvent
from jaxlab.lab.lexers import WatLexer, highlight_lines
from jaxlab.lab.profile import trace, write_trace
from jaxlab.lab.report import MIME, Comparison, ErrorReport, Report, jsonable
from jaxlab.lab.view import code, to_html, to_json

SCRIPT = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"

WAT = """(module
  (import "env" "memory" (memory 1 1 shared))
  (func $kernel (export "kernel") (param $out i32) (local $v v128)
    ;; four lanes at a time
    (local.set $v (v128.load offset=16 align=4 (local.get $out)))
    (local.set $v (f32x4.add (local.get $v) (f32x4.splat (f32.const 12.5))))
    (local.set $v (i32x4.splat (i32.const 3)))
    (v128.store (local.get $out) (v128.const f32x4 0.0 1.5 -2.25e-3 3e10))
    (drop (f32x4.extract_lane 3 (local.get $v)))
    (drop (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v)))
    (drop (i32.atomic.rmw.add offset=0 (local.get $out) (i32.const 1)))
    (drop (memory.atomic.notify (local.get $out) (i32.const 1)))
    (drop (memory.atomic.wait32 (local.get $out) (i32.const 0) (i64.const -1)))
    (atomic.fence)
    (memory.fill (local.get $out) (i32.const 0) (i32.const 16))
    (drop (i32.trunc_sat_f32_s (f32.const 1e-05)))))
"""

WGSL = """@group(0) @binding(0) var<storage, read_write> out0: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  out0[gid.x] = f32(gid.x) * 2.0;
}
"""


@pytest.fixture(autouse=True)
def on_cpu():
    """The engine's events here come from cpu (the default device varies by machine)."""
    with jaxlab.default_device("cpu"):
        yield


def event(name: str = "r_512_784", **kw) -> KernelEvent:
    base = dict(name=name, backend="wasm", kind="kernel", input_shapes=[(784,)],
                input_dtypes=["float32"], output_shapes=[(512,)], output_dtypes=["float32"],
                equations=["dot_general[...]", "tanh"], ir=f"kernel {name}(...)",
                tuned_ir=f"kernel {name}: 512 rows", source=WAT, source_language="wat",
                compile_ms=1.5, dispatch_ms=0.25, device_ms=None, flops=802_816,
                bytes=1_608_704, cache_hit=False, key=f"key-{name}", reason="jit output",
                tuning=TuningRecord((Choice("vector_width", 4, "4 lanes along ridx"),)))
    base.update(kw)
    return KernelEvent(**base)


def bundle(obj) -> dict:
    return obj._repr_mimebundle_()


# --- the report ----------------------------------------------------------------------

def test_three_mimetypes_and_json_round_trip():
    ev = event(tuning=TuningRecord((Choice("split", (1, 4096)), Choice("unroll", np.int32(4)))),
               output_shapes=[(np.int64(512),)], device_ms=np.float64(0.125))
    data = bundle(Report([ev, event("E_10", cache_hit=True)], title="t"))
    assert set(data) == {"text/plain", "text/html", MIME}
    doc = data[MIME]
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    assert doc["version"] == 2 and doc["heading"] == "jaxlab report: t (ran on wasm)"
    totals = {q["name"]: q for q in doc["totals"]}
    assert totals["dispatches"]["value"] == 2 and totals["cached"]["value"] == 1
    assert totals["work"] == {"name": "work", "value": 2 * 802_816, "unit": "FLOP",
                              "text": "1.61 MFLOP"}
    assert doc["view"]["t"] == "block"
    assert "1x4096" in json.dumps(doc["view"])


def test_text_report_lists_every_stage():
    text = bundle(Report([event()], title="demo"))["text/plain"]
    for piece in ("jaxlab report: demo", "r_512_784", "wasm", "jit output", "dot_general[...]",
                  "IR after tuning", "source (wat)", "f32x4.add", "compile 1.50 ms", "GFLOP/s"):
        assert piece in text, piece
    assert re.search(r"^ +vector_width +4 +4 lanes along ridx$", text, re.M)


def test_html_escapes_every_user_string_and_has_no_script():
    ev = event(name=SCRIPT, equations=[f"custom_jvp_call[fun={SCRIPT}]"], reason=SCRIPT,
               ir=SCRIPT, tuned_ir=SCRIPT, source=SCRIPT, source_language="text",
               tuning=TuningRecord((Choice("why", SCRIPT, SCRIPT),), Autotuned(
                   (Candidate((("tile", SCRIPT),), 1.0, 2.0, True),), 3.0, False, SCRIPT)))
    for obj in (Report([ev], title=SCRIPT), Comparison(Report([ev], title=SCRIPT), Report([ev]))):
        page = bundle(obj)["text/html"]
        assert "<script" not in page.lower()
        assert re.search(r"\son\w+\s*=", page) is None     # no event-handler attributes
        assert ESCAPED in page


def test_engine_equations_with_angle_brackets_are_escaped():
    @jaxlab.custom_jvp
    def f(x):
        return jnp.sin(x) * 2
    f.defjvp(lambda p, t: (f(p[0]), t[0]))
    g = jaxlab.jit(lambda x: f(x) + 1)
    with jaxlab.capture() as log:
        g(jnp.ones(3)).block_until_ready()
    page = Report(log, g.lower(jnp.ones(3))).html()
    assert "custom_jvp_call" in page and "<function" not in page


def test_html_is_scoped_themed_and_uses_details():
    page = Report([event(), event("E_10")]).html()
    style = re.search(r"<style>(.*)</style>", page, re.S).group(1)
    assert page.startswith('<div class="jaxlab-report jl-scope">')
    for rule in re.findall(r"([^{}]+)\{[^{}]*\}", re.sub(r"@media[^{]*\{", "", style)):
        for selector in rule.split(","):
            assert ".jaxlab-report.jl-scope" in selector, selector
    assert "prefers-color-scheme: dark" in style and "var(--jp-" in style
    assert 'data-jp-theme-light="false"' in style
    assert page.count('<details class="jl-kernel"') == 2
    assert "<summary>source (wat)</summary>" in page


def test_summary_bars_are_relative_widths():
    page = Report([event("a", dispatch_ms=2.0), event("b", dispatch_ms=0.5)]).html()
    assert re.findall(r'class="jl-bar" style="width: ([\d.]+)%"', page) == ["100.0", "25.0"]


def test_repeated_dispatches_group_into_one_kernel():
    report = Report([event(dispatch_ms=1.0), event(dispatch_ms=2.0, cache_hit=True),
                     event("E_3")])
    assert [(g.first.name, g.calls, g.host_ms) for g in report.groups] == \
        [("r_512_784", 2, 3.0), ("E_3", 1, 0.25)]
    totals = {q.name: q.value for q in report.totals()}
    assert totals["kernels"] == 2 and totals["dispatches"] == 3
    text = report.text()     # each dispatch's time inside the kernel, rows from 1
    assert re.search(r"^ +1 +1\.00 ms +- +no$", text, re.M)
    assert re.search(r"^ +2 +2\.00 ms +- +yes$", text, re.M)


def test_device_time_drives_rates_where_measured():
    g = Report([event(device_ms=0.5, flops=10**9, bytes=10**9)]).groups[0]
    assert g.ms == 0.5 and g.gflops == pytest.approx(2000) and g.gbps == pytest.approx(2000)
    assert "device 500.0 us" in Report([event(device_ms=0.5)]).text()


def test_stages_filter_and_open():
    report = Report([event()], stages=["source", "timings"])
    page, text = report.html(), report.text()
    assert "IR after tuning" not in page and "jaxpr equations" not in page
    assert '<details class="jl-stage" open><summary>source (wat)' in page
    assert "IR:" not in text and "source (wat):" in text
    with pytest.raises(ValueError, match="unknown report stages"):
        Report([], stages=["bogus"])


def test_stage_node_renders_one_stage_of_one_kernel():
    report = Report([event(equations=[])], stages=["tuning", "jaxpr", "timings"])
    group = report.groups[0]
    assert to_html(report.stage_node(group, "tuning")).startswith(
        '<details class="jl-stage" open><summary>tuning</summary>')
    assert report.stage_node(group, "jaxpr") is None
    assert "<th class=\"jl-num\">host dispatch</th>" in to_html(report.stage_node(group, "timings"))


def test_autotune_candidates_table_marks_the_winner():
    cands = (Candidate((("vector_width", 4), ("unroll", 2)), 3.0, 0.12),
             Candidate((("vector_width", 8), ("unroll", 1)), 2.5, 0.08, True))
    record = TuningRecord((Choice("vector_width", 8, "measured"),),
                          Autotuned(cands, 1234.0, False, "2026-12-01T14:00:00+00:00"))
    report = Report([event(tuning=record)])
    page = report.html()
    winner = re.search(r'<tr class="jl-winner">(.*?)</tr>', page).group(1)
    assert "<td>8</td>" in winner and "80.0 us" in winner and "winner" in winner
    assert "2 autotune candidates" in page and "compiled and timed in 1.23 s" in page
    assert re.search(r"^\s*\*8\s+1\s+2\.50 ms\s+80\.0 us\s+winner$", report.text(), re.M)
    assert re.search(r"^\s* 4\s+2\s+3\.00 ms\s+120\.0 us$", report.text(), re.M)
    assert "autotuning 1.23 s" in report.headline()
    cached = TuningRecord(record.choices, Autotuned(cands, 1234.0, True, "2026-12-01T14:00:00+00:00"))
    again = Report([event(tuning=cached)])
    assert "from the on-disk cache, measured 2026-12-01T14:00:00+00:00" in again.text()
    assert "autotuning" not in again.headline()     # nothing was timed this time


def test_wat_and_wgsl_sources_are_highlighted():
    page = Report([event(), event("E_64", source=WGSL, source_language="wgsl",
                                  backend="webgpu")]).html()
    assert '<span class="nb">f32x4.add</span>' in page
    assert '<span class="nb">i32.atomic.rmw.add</span>' in page
    assert '<span class="kt">v128</span>' in page
    assert '<span class="k">fn</span>' in page and '<span class="nd">@compute</span>' in page
    assert 'class="err"' not in page
    assert '<span class="jl-ln">5</span>' in page      # numbered lines


def test_wat_lexer_has_no_error_tokens_for_simd_atomics_bulk_memory():
    assert [v for t, v in WatLexer().get_tokens(WAT) if t in Error] == []
    # Pygments' own lexer is why ours exists
    assert any(t in Error for t, _ in get_lexer_by_name("wat").get_tokens(WAT))


def test_highlight_lines_are_self_contained():
    lines = highlight_lines("(; a\nb ;)\n(f32x4.add)", "wat")
    assert len(lines) == 3
    for line in lines:
        assert line.count("<span") == line.count("</span>")


def test_jit_program_is_shown_on_the_engine():
    f = jaxlab.jit(lambda x: jnp.tanh(x @ x).sum(0) + 1)
    x = jnp.ones((4, 4)).block_until_ready()
    with jaxlab.capture() as log:
        f(x).block_until_ready()
    report = Report(log, f.lower(x))
    assert report.data()["program"].startswith("program on cpu")
    assert "jit program" in report.html() and "run r_4_4_4" in report.text()
    assert {k["name"] for k in report.data()["kernels"]} == {"r_4_4_4", "r_4_4"}


def test_wall_times_from_repeats():
    doc = Report([event()], wall_ms=[3.0, 1.0, 2.0]).data()
    totals = {q["name"]: q["value"] for q in doc["totals"]}
    assert (totals["runs"], totals["best wall"], totals["median wall"]) == (3, 1.0, 2.0)
    assert "best 1.00 ms, median 2.00 ms" in Report([event()], wall_ms=[3.0, 1.0, 2.0]).text()


def test_a_report_of_nothing_says_so():
    report = Report([], wall_ms=[2.0])
    assert report.text() == "jaxlab report\nno kernels ran, wall over 1 runs: best 2.00 ms, median 2.00 ms"
    assert "<table" not in report.html()
    assert {q["name"]: q["text"] for q in report.data()["totals"]}["device"] == "-"


def test_comparison_times_per_kernel_side_by_side():
    left = Report([event("E_8", dispatch_ms=1.0, backend="cpu")], title="cpu")
    right = Report([event("E_8", dispatch_ms=0.5), event("E_9")], title="wasm")
    data = bundle(Comparison(left, right))
    assert [r["title"] for r in data[MIME]["compare"]] == ["cpu", "wasm"]
    assert re.search(r"E_8\s+1\.00 ms\s+500\.0 us\s+0\.50x", data["text/plain"])
    assert re.search(r"E_9\s+-\s+250\.0 us\s+-", data["text/plain"])
    assert data["text/html"].count('class="jaxlab-report jl-scope"') == 1
    assert data["text/html"].count('<div class="jl-column">') == 2


# --- compile errors ------------------------------------------------------------------

class ShaderError(RuntimeError):
    def __init__(self, message: str, source: str, **attrs) -> None:
        super().__init__(message)
        self.source = source
        self.__dict__.update(attrs)


def test_error_report_marks_the_line_from_an_attribute():
    err = ShaderError("bad <token>", WGSL.replace("2.0", "2.0 +"), line=4)
    report = ErrorReport(err)
    assert report.lines == [4] and report.language == "wgsl"
    assert "> 4 |   out0[gid.x] = f32(gid.x) * 2.0 +;" in report.text()
    page = report.html()
    assert "bad &lt;token&gt;" in page and "<token>" not in page
    assert re.search(r'<span class="jl-line jl-fault"><span class="jl-ln">4</span>', page)
    assert page.count("jl-fault") >= 1 and "fault at line 4" in page


def test_error_report_reads_line_col_from_the_message_and_lineno():
    source = "\n".join(f"(; line {i} ;)" for i in range(1, 40)) + "\n(module)"
    from_message = ErrorReport(ShaderError("expected `)`\n  --> <anon>:30:7", source))
    assert from_message.lines == [30] and from_message.language == "text"
    assert list(from_message.excerpt()) == list(range(24, 35))
    assert ErrorReport(ShaderError("x", source, lineno=3, language="wat")).lines == [3]


def test_error_report_without_source_is_the_message():
    report = ErrorReport(ValueError("shapes (2,) and (3,) <mismatch>"))
    assert report.text() == "ValueError\nshapes (2,) and (3,) <mismatch>"
    assert "&lt;mismatch&gt;" in report.html() and "<details" not in report.html()


# --- traces and JSON ----------------------------------------------------------------

def test_trace_has_one_complete_event_per_dispatch():
    evs = [event(dispatch_ms=0.5, compile_ms=2.0, timestamp=10.0),
           event("E_3", dispatch_ms=0.25, cache_hit=True, device_ms=0.125, timestamp=10.001)]
    doc = trace(evs)
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    dispatches = [e for e in spans if e["cat"] == "kernel"]
    assert [e["name"] for e in dispatches] == ["r_512_784", "E_3"]
    assert [e["dur"] for e in dispatches] == [500.0, 250.0]
    assert dispatches[1]["ts"] - dispatches[0]["ts"] == pytest.approx(1000 - 250 + 500)
    assert dispatches[1]["args"]["device_ms"] == 0.125
    compile_span = next(e for e in spans if e["cat"] == "compile")
    assert compile_span["ts"] == 0 and compile_span["dur"] == 2000.0
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
    assert names == {"jaxlab", "wasm dispatch", "wasm compile"}


def test_write_trace_is_valid_json(tmp_path):
    with jaxlab.capture() as log:
        (jnp.arange(8.0) * 2).sum().block_until_ready()
    log[0].device_ms = np.float32(0.5)    # a backend may hand back NumPy numbers
    path = write_trace(log, tmp_path / "t.json")
    doc = json.loads(open(path).read())
    assert [e["name"] for e in doc["traceEvents"] if e.get("cat") == "kernel"] == \
        [e.name for e in log]
    assert all(e["ts"] >= 0 for e in doc["traceEvents"] if e["ph"] == "X")


def test_jsonable():
    assert jsonable({1: (np.int8(2), [np.array([1.5])]), "x": float("inf"), "o": object}) == \
        {"1": [2, [[1.5]]], "x": None, "o": "<class 'object'>"}


def test_a_capped_listing_carries_its_whole_text_for_the_renderer_only() -> None:
    source = "\n".join(f"line_{i} = {i}" for i in range(100))
    kept = code(source, "python", cap=10, keep_full=True)
    assert kept.full == source and to_json(kept)["full"] == source
    assert "line_50 " not in to_html(kept)            # the static HTML stays capped
    assert code(source, "python", cap=10).full is None
    assert code(source, "python", cap=None, keep_full=True).full is None   # nothing left out
