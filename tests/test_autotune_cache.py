"""The webgpu autotune cache: validated when read (a poisoned file costs a
re-measurement, never an error), replaced atomically without writing through
symlinks, shown and cleared by jaxlab.autotune_cache() and `%jaxlab autotune`."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.backends.webgpu.autotuning import TuneCache, valid_results
from tests.conftest import BACKENDS, assert_close

GOOD = [{"strategy": "elementwise", "workgroup": 64, "ms": 0.5, "overrides": {},
         "winner": True},
        {"strategy": "elementwise", "workgroup": 128, "ms": 0.7,
         "overrides": {"workgroup": 128}, "winner": False}]

POISON = {   # valid JSON of the wrong shape, or entries a hand edit could leave
    "a list": [1, 2, 3],
    "a number": 7,
    "no winner": {"k": [{**GOOD[0], "winner": False}]},
    "two winners": {"k": [GOOD[0], {**GOOD[1], "winner": True}]},
    "entry not a list": {"k": {"winner": True}},
    "empty entry": {"k": []},
    "ms a string": {"k": [{**GOOD[0], "ms": "fast"}]},
    "overrides a list": {"k": [{**GOOD[0], "overrides": [1]}]},
    "candidate a number": {"k": [3]},
}


@pytest.fixture
def cache(tmp_path):
    return TuneCache(tmp_path / "tune" / "webgpu-autotune.json")


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
    assert valid_results(GOOD) and not valid_results([1])


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
    cache = TuneCache(blocker / "sub" / "cache.json")   # its parent cannot be a folder
    cache.put("k", GOOD)
    assert cache.get("k") is None


def test_show_and_clear(cache):
    cache.put("adapter|vulkan|False|k1", GOOD)
    assert cache.winners() == [("adapter|vulkan|False|k1",
                                {"strategy": "elementwise", "workgroup": 64, "ms": 0.5})]
    assert "1 entries" in repr(cache)
    assert cache.clear() == 1 and cache.entries() == {} and not cache.path.exists()
    assert cache.clear() == 0


@pytest.mark.skipif("webgpu" not in BACKENDS, reason="needs the webgpu device")
def test_a_poisoned_cache_is_remeasured_on_the_device(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = jaxlab.autotune_cache().path
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2, 3]")
    device = jaxlab.devices("webgpu")[0]
    monkeypatch.setattr(device.backend, "_tune_cache", jaxlab.autotune_cache())
    device.cache.clear()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    with jaxlab.default_device("webgpu"), jaxlab.autotune():
        assert_close(jnp.asarray(x).sum(axis=1) * 3.0, x.sum(axis=1) * 3)
    winners = jaxlab.autotune_cache().winners()
    assert len(winners) == 1 and isinstance(json.loads(path.read_text()), dict)
    # an entry whose winner the kernel cannot take is measured again too
    key = winners[0][0]
    path.write_text(json.dumps({key: [{**GOOD[0], "overrides": {"tile": [1, 2]}}]}))
    device.cache.clear()
    with jaxlab.default_device("webgpu"), jaxlab.autotune():
        assert_close(jnp.asarray(x).sum(axis=1) * 3.0, x.sum(axis=1) * 3)
    assert jaxlab.autotune_cache().get(key)[0]["overrides"] != {"tile": [1, 2]}
    device.cache.clear()
