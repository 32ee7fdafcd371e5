"""A real OpenAI-style upstream over HTTP for the tests and the benchmark: a small Starlette app served by
uvicorn on 127.0.0.1 (random port) in a thread. Behaviour is chosen by the upstream model name:

- `ok`: answers `x_words` words (default 8, each 4 bytes with its space: "w00 "), usage
  prompt_tokens=PROMPT_TOKENS, completion_tokens=words; streams one word per chunk, then the usage chunk
  when `stream_options.include_usage` is set, then [DONE];
- `bytetok`: as `ok`, but prompt_tokens is a tokenizer's worst case (`worst_case_prompt_tokens`);
- `nousage`: the same without any usage (neither in the body nor in the stream);
- `err400`, `err401`, `err429`, `err500`: that status with an OpenAI-style error body;
- `cut_before`: streaming 200 headers, then the connection drops before any event;
- `cut_mid`: three words, then the connection drops (no usage, no [DONE]);
- `error_event`: three words, then an SSE `{"error": …}` event;
- `gate`: like `ok`, but waits for `fake.gate` (a threading.Event) before the first word: lets a test hold
  many streams open at once, deterministically;
- `hang_after_3`: three words, then waits for `fake.gate` (for client-side cuts); records the cut;
- `late_done`: like `ok`, but after the usage chunk waits for `fake.gate` before [DONE].
Every request body is appended to `fake.requests`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PROMPT_TOKENS = 11


class Cut(Exception):
    pass


class FakeUpstream:
    def __init__(self, delay: float = 0.0):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.peers: list[tuple] = []  # (host, port) of the connection each request came on
        self.gate = threading.Event()
        self.cut_seen = threading.Event()
        self.arrived = threading.Semaphore(0)
        self.delay = delay  # seconds between chunks (benchmark only)
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])
        self.server = None
        self.thread = None
        self.base_url = ""

    # --- the upstream ---------------------------------------------------------------------------------
    async def _wait_gate(self):
        while not self.gate.is_set():
            await asyncio.sleep(0.005)

    async def chat(self, request: Request):
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self.peers.append(tuple(request.client) if request.client else None)
        self.arrived.release()
        mode = body.get("model", "ok")
        if mode == "redirect":  # a provider sending the call elsewhere: never followed
            return Response(status_code=307, headers={"location": "/v1/chat/completions"})
        if mode[:3] == "err" and mode[3:].isdigit():
            status = int(mode[3:])
            return JSONResponse({"error": {"message": f"upstream says {status}", "type": "test", "code": None}},
                                status_code=status)
        words = [f"w{i:02d}" for i in range(int(body.get("x_words", 8)))]
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        finish = "stop"
        if cap and cap < len(words):
            words, finish = words[:cap], "length"
        prompt_tokens = worst_case_prompt_tokens(body) if mode == "bytetok" else PROMPT_TOKENS
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(words),
                 "total_tokens": prompt_tokens + len(words)}
        with_usage = mode != "nousage"
        if not body.get("stream"):
            if mode == "gate":
                try:
                    await self._wait_gate()
                except asyncio.CancelledError:
                    self.cut_seen.set()
                    raise
            out = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": mode,
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": " ".join(words)},
                                "finish_reason": finish}]}
            if with_usage:
                out["usage"] = usage
            return JSONResponse(out)
        include_usage = with_usage and (body.get("stream_options") or {}).get("include_usage")
        return StreamingResponse(self._stream(mode, words, finish, usage, include_usage, request),
                                 media_type="text/event-stream")

    async def _stream(self, mode, words, finish, usage, include_usage, request):
        def event(choices, usage_value=None):
            chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": mode,
                     "choices": choices}
            if include_usage:
                chunk["usage"] = usage_value
            return f"data: {json.dumps(chunk)}\n\n".encode()

        try:
            if mode == "cut_before":
                raise Cut()
            if mode == "gate":
                await self._wait_gate()
            yield event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
            for i, word in enumerate(words):
                if i == 3 and mode in ("cut_mid", "error_event", "hang_after_3"):
                    if mode == "cut_mid":
                        raise Cut()
                    if mode == "error_event":
                        yield b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'
                        return
                    await self._wait_gate()
                if self.delay:
                    await asyncio.sleep(self.delay)
                text = word if i == len(words) - 1 else word + " "
                yield event([{"index": 0, "delta": {"content": text}, "finish_reason": None}])
            yield event([{"index": 0, "delta": {}, "finish_reason": finish}])
            if include_usage:
                yield event([], usage)
            if mode == "late_done":
                await self._wait_gate()
            yield b"data: [DONE]\n\n"
        except asyncio.CancelledError:
            self.cut_seen.set()
            raise
        finally:
            if mode == "hang_after_3":
                self.cut_seen.set()

    # --- serving --------------------------------------------------------------------------------------
    def start(self) -> str:
        self.server, self.thread, port = serve_in_thread(self.app)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    def stop(self):
        stop_server(self.server, self.thread)


def worst_case_prompt_tokens(body: dict) -> int:
    """What the `bytetok` mode reports: a tokenizer at its worst, one token per UTF-8 byte of every string in
    the messages and tools, plus a chat template of 7 tokens a message and 3 for the reply."""
    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    parts = [body.get("messages") or [], body.get("tools") or []]
    return sum(len(s.encode()) for s in strings(parts)) + 7 * len(body.get("messages") or []) + 3


def serve_in_thread(app, **kwargs):
    """Serve an ASGI app with uvicorn on 127.0.0.1, random port, in a daemon thread; returns (server, thread, port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1, **kwargs)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    return server, thread, port


def stop_server(server, thread):
    if server is not None:
        server.should_exit = True
        thread.join(timeout=10)
