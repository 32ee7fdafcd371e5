"""A live server (uvicorn serving `config.asgi:application` on 127.0.0.1:<random port>) and the official
MCP SDK client talking streamable HTTP to it."""

from __future__ import annotations

import threading

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests import testverbs  # noqa: F401 - registers test_echo / test_confirm


class LiveServer:
    """`sock`: an already bound listening socket, for tests that must know the address (BASE_URL) before the
    app starts."""

    def __init__(self, sock=None):
        from config.asgi import application

        self.sock = sock
        self.config = uvicorn.Config(application, host="127.0.0.1", port=0, lifespan="on", log_level="warning")
        self.server = uvicorn.Server(self.config)
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        original = self.server.startup

        async def startup(sockets=None):
            await original(sockets=sockets)
            self.started.set()

        self.server.startup = startup
        self.server.run(sockets=[self.sock] if self.sock is not None else None)
        self.started.set()  # startup failed: do not leave the test waiting

    def __enter__(self):
        self.thread.start()
        assert self.started.wait(30), "uvicorn did not start"
        assert self.server.started, "uvicorn failed to start"
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.url = self.base + "/mcp"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def live(settings, transactional_db):
    settings.MCP_INCLUDE_TEST_VERBS = True
    with LiveServer() as server:
        yield server


def mcp_session(url: str, key: str | None, fn, *, headers: dict | None = None, mode: str = "auto"):
    """Run `await fn(client)` with an SDK client connected to `url`, sending `key` as the bearer token.

    mode "auto" negotiates the 2026 protocol (server/discover); "legacy" forces the initialize handshake that
    older clients and bridges still use."""
    h = dict(headers or {})
    if key:
        h["Authorization"] = f"Bearer {key}"

    async def main():
        async with create_mcp_http_client(headers=h) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                return await fn(client)

    return anyio.run(main)


def http_post(url: str, body: dict, *, headers: dict | None = None) -> httpx2.Response:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return httpx2.post(url, json=body, headers={**base, **(headers or {})}, timeout=30)
