"""Fixtures: a real fake upstream over HTTP, an LLM_MODELS_FILE pointing at it (plus the default echo
models), and the service itself served live by uvicorn (config.asgi) for the official openai client."""

import json

import pytest

from tests.llmproxy.fake_upstream import FakeUpstream, serve_in_thread, stop_server

FAKE_MODES = ("ok", "nousage", "err400", "err401", "err429", "err500", "cut_before", "cut_mid", "error_event",
              "late_done", "gate", "hang_after_3", "bytetok", "redirect")


@pytest.fixture(scope="session")
def fake_upstream_server():
    fake = FakeUpstream()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def fake(fake_upstream_server):
    fake_upstream_server.requests.clear()
    fake_upstream_server.headers.clear()
    fake_upstream_server.peers.clear()
    fake_upstream_server.gate.clear()
    fake_upstream_server.cut_seen.clear()
    while fake_upstream_server.arrived.acquire(blocking=False):
        pass
    yield fake_upstream_server
    fake_upstream_server.gate.set()  # never leave a stream hanging


@pytest.fixture
def models_file(settings, tmp_path, fake, monkeypatch):
    """Default echo models plus `fake/<mode>` at 1 credit per 1k tokens and `fake/pricey` at 1000."""
    with open(settings.BASE_DIR / "llmproxy" / "models.json") as fh:
        entries = json.load(fh)
    for mode in FAKE_MODES:
        entries.append({"id": f"fake/{mode}", "upstream_base_url": fake.base_url, "upstream_model": mode,
                        "api_key_env": "FAKE_UPSTREAM_KEY", "credits_per_1k_tokens": "1"})
    entries.append({"id": "fake/pricey", "upstream_base_url": fake.base_url, "upstream_model": "gate",
                    "api_key_env": "FAKE_UPSTREAM_KEY", "credits_per_1k_tokens": "1000"})
    path = tmp_path / "models.json"
    path.write_text(json.dumps(entries))
    settings.LLM_MODELS_FILE = str(path)
    monkeypatch.setenv("FAKE_UPSTREAM_KEY", "sk-upstream-test")
    return path


@pytest.fixture
def live(transactional_db, models_file):
    """The service over real HTTP: uvicorn serving config.asgi:application; yields its base URL."""
    from config.asgi import application
    from llmproxy.views import close_db_threads

    server, thread, port = serve_in_thread(application, lifespan="on")
    yield f"http://127.0.0.1:{port}"
    stop_server(server, thread)
    close_db_threads()  # its threads keep their connections: close them before the test database goes
