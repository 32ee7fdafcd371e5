"""A real local HTTP receiver that verifies Standard Webhooks signatures with the `standardwebhooks` library."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class Receiver:
    """Answers each request by the next entry of `script` ("ok", "500", "302", "hang"), then "ok"."""

    def __init__(self):
        self.script: list[str] = []
        self.requests: list[dict] = []
        self.arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                mode = receiver.script.pop(0) if receiver.script else "ok"
                receiver.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                                          "mode": mode})
                receiver.arrived.set()
                if mode == "hang":
                    receiver.release.wait(60)
                    return
                status = {"ok": 204, "500": 500, "302": 302}[mode]
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", receiver.url + "elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def verified(self, secret: str, index: int = -1) -> dict:
        from standardwebhooks.webhooks import Webhook

        req = self.requests[index]
        payload = Webhook(secret).verify(req["body"], req["headers"])
        assert payload == json.loads(req["body"])
        return payload

    def close(self):
        self.release.set()
        self.server.shutdown()


@pytest.fixture
def receiver(settings):
    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def queued(monkeypatch):
    """Deliveries the services queue (instead of the broker): the tests drive the attempts themselves."""
    ids: list[str] = []
    monkeypatch.setattr("webhooks.services._enqueue", lambda delivery_ids: ids.extend(delivery_ids))
    return ids
