"""The passthrough's provider client (llmproxy.upstream) against a raw HTTP/1.1 peer that drops chosen requests
(reads one, then closes the connection without a byte of answer): a kept-alive connection closed as it is reused
is retried once on a new connection; a new connection closed before any answer, or a second drop, is a failure."""

import asyncio

import pytest

from llmproxy import upstream
from llmproxy.catalog import Model

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
          b"Connection: keep-alive\r\n\r\n{\"ok\":true}")


class Peer:
    def __init__(self, drop: set[int]):
        self.drop = drop  # request numbers (1-based, over all connections) whose connection is closed unanswered
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
                writer.write(ANSWER)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def _calls(drop: set[int], calls: int):
    """`calls` chat requests one after the other through the pooled session; returns (outcomes, peer)."""
    peer = Peer(drop)

    async def main():
        server = await asyncio.start_server(peer.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        model = Model(id="t/m", upstream_base_url=f"http://127.0.0.1:{port}/v1", upstream_model="m", api_key_env="",
                      price_per_1k_micros=1000)
        outcomes = []
        try:
            for _ in range(calls):
                try:
                    outcomes.append((await upstream.fetch(model, b'{"model":"m"}', "req_t"))[0])
                except upstream.UNREACHABLE as exc:
                    outcomes.append(type(exc).__name__)
        finally:
            await upstream.close_sessions()
            server.close()
            await server.wait_closed()
        return outcomes

    return asyncio.run(main()), peer


def test_a_kept_alive_connection_closed_as_it_is_reused_is_retried_once_on_a_new_connection():
    outcomes, peer = _calls(drop={2}, calls=3)
    assert outcomes == [200, 200, 200]
    assert peer.requests == 4 and peer.connections == 2  # the second call: dropped on the old connection, then sent anew


@pytest.mark.parametrize("drop, requests", [({1}, 1), ({2, 3}, 3)])
def test_a_new_connection_closed_unanswered_or_a_second_drop_is_a_failure(drop, requests):
    outcomes, peer = _calls(drop=drop, calls=1 if drop == {1} else 2)
    assert outcomes[-1] == "ServerDisconnectedError"
    assert peer.requests == requests  # a new connection dropped is never retried; a retry is never retried
