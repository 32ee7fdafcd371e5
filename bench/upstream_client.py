#!/usr/bin/env python3
"""CPU per provider call of the passthrough's HTTP client: httpx (the door's former client)
against aiohttp (llmproxy.upstream since), against the same fake provider, non-streamed and streamed, at 1 and
50 concurrent calls, interleaved rounds.

    .venv/bin/python bench/upstream_client.py [--calls 2000] [--rounds 2]

The fake provider is bench/llm_overhead.py's (its own process, 20 chunks a stream, no delay); this process is
the client, pinned to CPU 1 when it can be. Prints microseconds of client CPU (process time) and of wall time per
call, and aiohttp's CPU as a ratio of httpx's measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from llm_overhead import free_port, wait_port  # noqa: E402

H = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}


async def one_run(kind: str, url: str, concurrency: int, calls: int, stream: bool) -> tuple[float, float]:
    import httpx

    from llmproxy import upstream

    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "max_tokens": 20}
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    content = json.dumps(body).encode()
    if kind == "httpx":  # as the door had it: 16 pools used in turn (one pool of N connections costs O(N^2))
        clients = [httpx.AsyncClient(timeout=upstream.TIMEOUT, limits=upstream.LIMITS, trust_env=False)
                   for _ in range(16)]
        turn = itertools.count()
    else:
        session = upstream._new_session()

    async def call():
        if kind == "httpx":
            client = clients[next(turn) % 16]
            if stream:
                async with client.stream("POST", url, content=content, headers=H) as r:
                    async for _ in r.aiter_bytes():
                        pass
            else:
                await (await client.post(url, content=content, headers=H)).aread()
        else:
            async with session.post(url, data=content, headers=H, allow_redirects=False) as r:
                if stream:
                    async for _ in r.content.iter_any():
                        pass
                else:
                    await r.read()

    async def worker(n):
        for _ in range(n):
            await call()

    try:
        await asyncio.gather(*(worker(10) for _ in range(concurrency)))  # warm the pool
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    finally:
        if kind == "httpx":
            await asyncio.gather(*(c.aclose() for c in clients))
        else:
            await session.close()
    return cpu / calls * 1e6, wall / calls * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    import uvloop

    try:
        os.sched_setaffinity(0, {1})
    except (AttributeError, OSError):
        pass
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "llm_overhead.py"), "--serve-upstream", str(port),
                             "--chunks", "20", "--chunk-ms", "0"])
    try:
        wait_port(port, proc)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        print("| mode | clients | httpx CPU / wall (us per call) | aiohttp CPU / wall | aiohttp / httpx CPU |")
        print("|---|---|---|---|---|")
        for stream in (False, True):
            for concurrency in (1, 50):
                got = {"httpx": [], "aiohttp": []}
                for _ in range(args.rounds):
                    for kind in got:
                        got[kind].append(uvloop.run(one_run(kind, url, concurrency, args.calls, stream)))
                cpu = {k: min(c for c, _ in v) for k, v in got.items()}
                wall = {k: min(w for _, w in v) for k, v in got.items()}
                print(f"| {'streamed' if stream else 'non-streamed'} | {concurrency} | {cpu['httpx']:.0f} / "
                      f"{wall['httpx']:.0f} | {cpu['aiohttp']:.0f} / {wall['aiohttp']:.0f} | "
                      f"{cpu['aiohttp'] / cpu['httpx']:.2f} |", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
