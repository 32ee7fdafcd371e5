"""The allowlist file (llmproxy.catalog.models): parsed once, looked at again at most every RECHECK_SECONDS, and
re-read when its path or its modification time changes. The clock is the test's (no sleeping)."""

import json
import os

import pytest

from llmproxy import catalog


def _entry(model_id: str) -> dict:
    return {"id": model_id, "upstream_base_url": "http://127.0.0.1:9/v1", "upstream_model": "m", "api_key_env": "",
            "credits_per_1k_tokens": "1"}


@pytest.fixture
def clock(monkeypatch):
    class Clock:
        now = 1000.0
        stats = 0

    real_stat = os.stat

    def stat(path, *args, **kwargs):
        Clock.stats += 1
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(catalog.time, "monotonic", lambda: Clock.now)
    monkeypatch.setattr(catalog.os, "stat", stat)
    monkeypatch.setattr(catalog, "_cache", None)
    return Clock


def _write(path, *ids, mtime: float):
    path.write_text(json.dumps([_entry(i) for i in ids]))
    os.utime(path, (mtime, mtime))


def test_the_file_is_looked_at_once_per_recheck_interval_and_a_change_is_read_after_it(settings, tmp_path, clock):
    path = tmp_path / "models.json"
    _write(path, "a/one", mtime=1_000_000)
    settings.LLM_MODELS_FILE = str(path)
    assert sorted(catalog.models()) == ["a/one"] and clock.stats == 1
    for _ in range(100):
        catalog.models()
    assert clock.stats == 1  # one stat per interval, not per call

    _write(path, "a/one", "a/two", mtime=1_000_050)  # changed in place
    clock.now += catalog.RECHECK_SECONDS / 2
    assert sorted(catalog.models()) == ["a/one"]  # not looked at yet
    clock.now += catalog.RECHECK_SECONDS
    assert sorted(catalog.models()) == ["a/one", "a/two"] and clock.stats == 2

    clock.now += catalog.RECHECK_SECONDS
    first = catalog.models()
    assert clock.stats == 3 and catalog.models() is first  # unchanged: looked at, not parsed again


def test_a_new_path_is_read_at_once(settings, tmp_path, clock):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    _write(one, "a/one", mtime=1_000_000)
    _write(two, "b/two", mtime=1_000_000)
    settings.LLM_MODELS_FILE = str(one)
    assert sorted(catalog.models()) == ["a/one"]
    settings.LLM_MODELS_FILE = str(two)
    assert sorted(catalog.models()) == ["b/two"]  # same instant, same mtime: the path decides


def test_a_file_that_disappears_is_reported_when_next_looked_at(settings, tmp_path, clock):
    from django.core.exceptions import ImproperlyConfigured

    path = tmp_path / "models.json"
    _write(path, "a/one", mtime=1_000_000)
    settings.LLM_MODELS_FILE = str(path)
    catalog.models()
    path.unlink()
    assert sorted(catalog.models()) == ["a/one"]  # within the interval: the last good list
    clock.now += catalog.RECHECK_SECONDS
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        catalog.models()
