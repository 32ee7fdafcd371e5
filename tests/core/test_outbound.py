"""core.outbound: the guarded client for URLs that users or clients supply, against real local HTTP servers."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core import outbound

RELEASE = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/slow":
            RELEASE.wait(30)  # hangs until the test is over
        body = b"x" * (5000 if self.path == "/big" else 10)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    RELEASE.set()
    srv.shutdown()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "10.0.0.1", "169.254.169.254", "[::ffff:127.0.0.1]"])
def test_private_addresses_are_refused(host):
    with pytest.raises(outbound.OutboundError) as exc:
        outbound.request("GET", f"http://{host}:9/x", timeout=2, max_bytes=100)
    assert exc.value.kind == "refused"


def test_allowed_for_tests_no_redirects_capped_body_timeout(server):
    ok = outbound.request("GET", server + "/ok", timeout=5, max_bytes=100, allow_private=True)
    assert (ok.status_code, ok.body) == (200, b"x" * 10)
    redirect = outbound.request("GET", server + "/redirect", timeout=5, max_bytes=100, allow_private=True)
    assert redirect.status_code == 302  # answered as is, not followed
    with pytest.raises(outbound.OutboundError) as big:
        outbound.request("GET", server + "/big", timeout=5, max_bytes=1000, allow_private=True)
    assert big.value.kind == "too_large"
    with pytest.raises(outbound.OutboundError) as slow:
        outbound.request("GET", server + "/slow", timeout=0.5, max_bytes=1000, allow_private=True)
    assert slow.value.kind == "timeout"


def test_only_http_urls():
    with pytest.raises(outbound.OutboundError):
        outbound.request("GET", "file:///etc/passwd", timeout=1, max_bytes=10, allow_private=True)


# --- the total deadline: a peer trickling one byte at a time never trips a per-read timeout -----------------
@pytest.mark.parametrize("trickle_headers", [False, True], ids=["body", "headers"])
def test_a_trickling_peer_costs_one_total_deadline(trickle_headers):
    from tests.slowloris import Trickler

    # 200+ bytes, one every 0.1 s: each read waits far less than the 1 s timeout, the answer takes 20 s or more
    with Trickler(trickle_headers=trickle_headers) as peer:
        with pytest.raises(outbound.OutboundError) as exc:
            outbound.request("GET", peer.url + "/slow.json", timeout=1, max_bytes=100_000, allow_private=True)
        assert exc.value.kind == "timeout"
        assert not peer.finished.is_set()  # gave up well before the trickle ended


def test_every_client_keeps_the_deadline():
    """The pooled client (providers, Stripe, the LLM upstream's sync callers) keeps it too, and a request's own
    shorter `timeout=` cuts it shorter."""
    import httpx

    from tests.slowloris import Trickler

    with Trickler() as peer:
        with outbound.client(timeout=httpx.Timeout(30.0), total=1.0, allow_private=True) as http:
            with pytest.raises(httpx.TimeoutException):
                http.get(peer.url + "/x")
        with outbound.client(timeout=30.0, allow_private=True) as http:
            with pytest.raises(httpx.TimeoutException):
                http.get(peer.url + "/x", timeout=1.0)
            with pytest.raises(httpx.TimeoutException):
                with http.stream("GET", peer.url + "/x", timeout=1.0) as resp:
                    resp.read()
        assert not peer.finished.is_set()


def test_the_llm_upstream_keeps_a_total_deadline(monkeypatch):
    """The LLM door's own aiohttp path and its sync client: a provider trickling its answer is cut off at
    LLM_UPSTREAM_TOTAL_SECONDS, not after each 300-second wait for bytes."""
    import asyncio

    import httpx

    from llmproxy import upstream
    from llmproxy.catalog import Model
    from tests.slowloris import Trickler

    monkeypatch.setattr(upstream, "TOTAL_SECONDS", 1.0)
    with Trickler() as peer:
        model = Model(id="t/slow", upstream_base_url=peer.url + "/v1", upstream_model="slow", api_key_env="",
                      price_per_1k_micros=1)

        async def call():
            return await upstream.fetch(model, b"{}", "req_test", pooled=False)

        with pytest.raises(upstream.UNREACHABLE):
            asyncio.run(call())
        with outbound.client(**{**upstream._client_kwargs(model), "total": 1.0}) as http:
            with pytest.raises(httpx.TimeoutException):
                http.post(model.chat_url, content=b"{}")
        assert not peer.finished.is_set()
