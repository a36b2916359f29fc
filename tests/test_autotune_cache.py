"""The autotune cache: validated when read (a poisoned file costs a re-measurement,
never an error), replaced atomically without writing through symlinks, shown and
cleared by jaxlab.autotune_cache() and `%jaxlab autotune`."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.autotuning import TuneCache, valid_entry
from tests.conftest import BACKENDS, assert_close


def _result(run_ms: float, winner: bool, workgroup: int) -> dict:
    return {"overrides": {} if winner else {"workgroup": workgroup},
            "settings": [["strategy", "elementwise"], ["workgroup", workgroup]],
            "compile_ms": 1.0, "run_ms": run_ms, "winner": winner}


GOOD = {"measured_at": "2026-12-01T12:00:00+00:00", "tuning_ms": 9.0,
        "results": [_result(0.5, True, 64), _result(0.7, False, 128)]}


def _with(**changes) -> dict:
    return {**GOOD, **changes}


def _first_result(**changes) -> dict:
    return _with(results=[{**GOOD["results"][0], **changes}, GOOD["results"][1]])


POISON = {   # valid JSON of the wrong shape, or entries a hand edit could leave
    "a list": [1, 2, 3],
    "a number": 7,
    "entry a list": {"k": [1]},
    "no results": {"k": _with(results=[])},
    "results not a list": {"k": _with(results={"winner": True})},
    "undated": {"k": {"tuning_ms": 1.0, "results": GOOD["results"]}},
    "no winner": {"k": _first_result(winner=False)},
    "two winners": {"k": _with(results=[GOOD["results"][0], {**GOOD["results"][1],
                                                               "winner": True}])},
    "run_ms a string": {"k": _first_result(run_ms="fast")},
    "overrides a list": {"k": _first_result(overrides=[1])},
    "settings not pairs": {"k": _first_result(settings=[["workgroup"]])},
    "result a number": {"k": _with(results=[3])},
}


@pytest.fixture
def cache(tmp_path):
    return TuneCache("webgpu", tmp_path / "tune" / "webgpu-autotune.json")


@pytest.mark.parametrize("content", list(POISON))
def test_malformed_content_is_dropped_and_the_file_rewritten(cache, content):
    cache.path.parent.mkdir()
    cache.path.write_text(json.dumps(POISON[content]))
    assert cache.get("k") is None and cache.entries() == {}
    cache.put("other", GOOD)
    assert json.loads(cache.path.read_text()) == {"other": GOOD}


def test_not_json_at_all_is_empty(cache):
    cache.path.parent.mkdir()
    cache.path.write_bytes(b"\x00{not json")
    assert cache.entries() == {}
    cache.put("k", GOOD)
    assert cache.get("k") == GOOD


def test_valid_entries_survive_beside_bad_ones(cache):
    cache.path.parent.mkdir()
    cache.path.write_text(json.dumps({"good": GOOD, "bad": [1]}))
    assert list(cache.entries()) == ["good"]
    assert valid_entry(GOOD) and not valid_entry([1])


def test_writes_never_follow_symlinks(cache, tmp_path):
    """A symlink planted at the cache path or at the old fixed temporary name is
    replaced or ignored; the file it points to stays untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    cache.path.parent.mkdir()
    os.symlink(victim, cache.path.with_suffix(".tmp"))
    os.symlink(victim, cache.path)
    assert cache.entries() == {}           # not read through the link either
    cache.put("k", GOOD)
    assert victim.read_text() == "precious"
    assert not cache.path.is_symlink() and cache.get("k") == GOOD
    leftovers = [p.name for p in cache.path.parent.iterdir()
                 if p.name not in (cache.path.name, cache.path.with_suffix(".tmp").name)]
    assert leftovers == []                 # no temporary file is left behind


def test_unwritable_folder_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = TuneCache("webgpu", blocker / "sub" / "cache.json")   # no folder can be there
    cache.put("k", GOOD)
    assert cache.get("k") is None


def test_show_and_clear(cache):
    cache.put("adapter|vulkan|False|k1", GOOD)
    assert cache.winners() == [("adapter|vulkan|False|k1",
                                {"strategy": "elementwise", "workgroup": 64, "run_ms": 0.5})]
    assert "1 entries" in repr(cache)
    assert cache.clear() == 1 and cache.entries() == {} and not cache.path.exists()
    assert cache.clear() == 0
    assert jaxlab.autotune_cache("wasm").path.name == "wasm-autotune.json"


@pytest.mark.parametrize("platform", [p for p in ("wasm", "webgpu") if p in BACKENDS])
def test_a_poisoned_cache_is_remeasured_on_the_device(platform, tmp_path, monkeypatch):
    device = jaxlab.devices(platform)[0]
    cache = TuneCache(platform, tmp_path / f"{platform}-autotune.json")
    monkeypatch.setattr(device.backend, "_tune_cache", cache)
    cache.path.write_text("[1, 2, 3]")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)

    def tuned_run() -> None:
        device.cache.clear()
        with jaxlab.default_device(platform), jaxlab.autotune():
            assert_close(jnp.asarray(x).sum(axis=1) * 3.0, x.sum(axis=1) * 3)
    tuned_run()
    (key, _), = cache.winners()
    assert isinstance(json.loads(cache.path.read_text()), dict)
    # an entry whose winner the kernel cannot take is measured again too
    cache.path.write_text(json.dumps({key: _first_result(overrides={"no such knob": 1})}))
    tuned_run()
    assert "no such knob" not in json.dumps(cache.get(key))
    device.cache.clear()
