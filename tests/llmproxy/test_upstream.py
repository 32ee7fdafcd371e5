"""The passthrough's provider client (llmproxy.upstream) against a raw HTTP/1.1 peer: a request is never sent
twice, even on a kept-alive connection the provider closed after reading it; a body whose chunked encoding breaks
mid-stream fails the read within the idle bound instead of leaving it waiting for ever."""

import asyncio

import pytest

from llmproxy import upstream
from llmproxy.catalog import Model

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
          b"Connection: keep-alive\r\n\r\n{\"ok\":true}")
BROKEN_STREAM = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                 b"f\r\ndata: {\"a\":1}\n\n\r\n",
                 b"zz-not-a-chunk-size\r\n\r\n"]  # the second part a moment later, once the first was read


class Peer:
    def __init__(self, drop: set[int] = frozenset(), answer: bytes | list[bytes] = ANSWER):
        self.drop = drop  # request numbers (1-based, over all connections) whose connection is closed unanswered
        self.answer = answer
        self.requests = 0
        self.connections = 0

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                await reader.readexactly(length)
                self.requests += 1
                if self.requests in self.drop:
                    break
                for i, part in enumerate([self.answer] if isinstance(self.answer, bytes) else self.answer):
                    if i:
                        await asyncio.sleep(0.1)
                    writer.write(part)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        await asyncio.sleep(0.05)
        writer.close()


async def _with_peer(peer: Peer, calls):
    server = await asyncio.start_server(peer.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    model = Model(id="t/m", upstream_base_url=f"http://127.0.0.1:{port}/v1", upstream_model="m", api_key_env="",
                  price_per_1k_micros=1000)
    try:
        return await calls(model)
    finally:
        await upstream.close_sessions()
        server.close()
        await server.wait_closed()


def test_a_request_the_provider_dropped_on_a_kept_alive_connection_is_not_sent_again():
    peer = Peer(drop={2})

    async def calls(model):
        outcomes = []
        for _ in range(3):
            try:
                outcomes.append((await upstream.fetch(model, b'{"model":"m"}', "req_t"))[0])
            except upstream.UNREACHABLE as exc:
                outcomes.append(type(exc).__name__)
        return outcomes

    assert asyncio.run(_with_peer(peer, calls)) == [200, "ServerDisconnectedError", 200]
    assert peer.requests == 3  # the dropped request (it may have been processed) was not sent twice


def test_a_chunked_body_broken_mid_stream_fails_the_read_within_the_idle_bound(monkeypatch):
    monkeypatch.setattr(upstream, "READ_IDLE_SECONDS", 0.3)
    peer = Peer(answer=BROKEN_STREAM)

    async def calls(model):
        answer = await upstream.send(model, b'{"model":"m","stream":true}', "req_t")
        got = []
        try:
            with pytest.raises(upstream.UNREACHABLE):
                async for chunk in answer.chunks():
                    got.append(chunk)
        finally:
            await answer.aclose()
        return got

    got = asyncio.run(asyncio.wait_for(_with_peer(peer, calls), 10))  # (hung for ever before: no timeout fired)
    assert b"".join(got) == b'data: {"a":1}\n\n'
