#!/usr/bin/env python3
"""Added latency of the LLM passthrough: p50/p99 versus calling the fake upstream directly, at 1, 50
and 200 concurrent streams, and LiteLLM's proxy side by side on the same fake upstream.

    .venv/bin/python bench/llm_overhead.py [--litellm /tmp/litellm-venv/bin/litellm] [--chunks 20]
                                           [--chunk-ms 10] [--rounds 3] [--compare LLM_EARLY_START=0]
                                           [--bare-relay] [--compare-code BEFORE=/tmp/before] [--pin]
                                           [--once-ms 200]

Three processes besides this client, each its own uvicorn: the fake OpenAI-style upstream (streams
`--chunks` chunks, `--chunk-ms` apart, then a usage chunk and [DONE]; a non-streamed request is answered at
once, or after `--once-ms`); the service (config.asgi on a fresh
SQLite DATA_DIR, a workspace with enough credits, the rate limit lifted); LiteLLM's proxy when its binary is
given (install it in its own venv: python3 -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install
'litellm[proxy]'). `--mode` (default both): streaming chat completions read to their end, and non-streamed ones; per request we record the
time to the first content chunk and to the end of the stream. Added latency = proxy percentile minus the
same percentile measured directly against the upstream in the same run, at the same concurrency. The targets'
rounds are interleaved (direct, service, LiteLLM, direct, ...), so a drift of the machine during the run falls
on all of them alike: at one client, running the targets one after the other moved the service's added p50
by 2-4 ms between otherwise identical runs. `--bare-relay` adds the least a proxy on the same stack can do (uvicorn
with serve's options, one aiohttp session, bytes forwarded both ways, nothing else): the floor of the service's
added latency at one client.

`--pin` puts the proxies under test (the service, the bare relay, LiteLLM) on the last CPU and this client and
the fake upstream on the others, as the issue's own measurements were taken. Unpinned, the fake upstream's clock
(it sleeps `--chunk-ms` after each chunk it sends) runs on a CPU it may share with the proxy, so every chunk's
processing in the proxy delays the upstream's next chunk, and a stream's "added latency" grows with the proxy's
CPU per chunk, which a real provider's clock does not do. Pinned at 50 and 200 clients, a proxy has one CPU: LiteLLM
saturates it (its added latency then says little), so those levels are better read unpinned.

The service runs with the uvicorn options `manage.py serve` uses (core.management.commands.serve.web_options).
The client spreads its connections over up to CLIENT_SHARDS httpx clients (see run_level); a request that fails
is counted and named in its row (FAILED ...) instead of ending the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLIENT_SHARDS = 16


async def _request_body(scope, receive, send) -> bytes | None:
    """An HTTP request's whole body; None for the lifespan protocol (answered here until shutdown)."""
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return None
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            return body


# --- the fake upstream (run in its own process: `llm_overhead.py --serve-upstream PORT`) -------------------
def serve_upstream(port: int, chunks: int, chunk_ms: float, once_ms: float = 0.0) -> None:
    import uvicorn

    async def app(scope, receive, send):
        body = await _request_body(scope, receive, send)
        if body is None:
            return
        req = json.loads(body or b"{}")
        if not scope["path"].endswith("/chat/completions"):
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"error":{"message":"not found"}}'})
            return
        usage = {"prompt_tokens": 12, "completion_tokens": chunks, "total_tokens": 12 + chunks}
        if not req.get("stream"):
            if once_ms:  # the time a provider takes to generate the whole answer before sending it
                await asyncio.sleep(once_ms / 1000)
            out = {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": req.get("model"),
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok " * chunks},
                                "finish_reason": "stop"}], "usage": usage}
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(out).encode()})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": req.get("model")}
        with_usage = (req.get("stream_options") or {}).get("include_usage")

        async def event(choices, u=None):
            chunk = {**base, "choices": choices}
            if with_usage:
                chunk["usage"] = u
            await send({"type": "http.response.body", "body": b"data: " + json.dumps(chunk).encode() + b"\n\n",
                        "more_body": True})

        await event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for _ in range(chunks):
            if chunk_ms:
                await asyncio.sleep(chunk_ms / 1000)
            await event([{"index": 0, "delta": {"content": "tok "}, "finish_reason": None}])
        await event([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        if with_usage:
            await event([], usage)
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, backlog=4096)


# --- a bare relay (`llm_overhead.py --serve-relay PORT --relay-to URL`): the floor of any proxy on this stack ----
def serve_relay(port: int, target: str) -> None:
    """The least a Python proxy on the service's stack can do: uvicorn with serve's options, one pooled
    aiohttp session (the service's provider client), the request body forwarded as it came and the response's
    bytes streamed back as they come (no key, no rate limit, no database, no parsing, no metering). Its added
    latency is the floor of the service's: what the service adds beyond it is its own work."""
    import aiohttp
    import uvicorn

    sys.path.insert(0, str(ROOT))
    from core.management.commands.serve import web_options

    session = None

    async def app(scope, receive, send):
        nonlocal session
        body = await _request_body(scope, receive, send)
        if body is None:
            if session is not None:
                await session.close()
            return
        if session is None:
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=2000),
                                            timeout=aiohttp.ClientTimeout(total=120))
        async with session.post(target, data=body, headers={"content-type": "application/json"},
                                allow_redirects=False) as resp:
            await send({"type": "http.response.start", "status": resp.status,
                        "headers": [(b"content-type", resp.headers.get("content-type", "").encode())]})
            async for chunk in resp.content.iter_any():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    opts = web_options()
    kwargs = {}
    for i, opt in enumerate(opts):  # serve's uvicorn options, as keyword arguments
        if opt == "--timeout-keep-alive":
            kwargs["timeout_keep_alive"] = int(opts[i + 1])
        elif opt == "--backlog":
            kwargs["backlog"] = int(opts[i + 1])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **kwargs)


# --- helpers -------------------------------------------------------------------------------------------------
def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"port {port} never opened")


def cpu_seconds(pid: int) -> float:
    """user + system CPU of a process and its children (so a proxy that forks workers is counted whole)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            pids.append(int(child))
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


async def one_stream(http, url: str, headers: dict, body: dict) -> tuple[float, float]:
    t0 = time.perf_counter()
    first = None
    async with http.stream("POST", url, headers=headers, json=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"{url}: HTTP {r.status_code} {await r.aread()!r}")
        async for line in r.aiter_lines():
            if first is None and line.startswith("data: ") and '"content": "tok' in line.replace('":"', '": "'):
                first = time.perf_counter()
            if line == "data: [DONE]":
                break
    end = time.perf_counter()
    return (first or end) - t0, end - t0


async def one_once(http, url: str, headers: dict, body: dict) -> tuple[float, float]:
    """A non-streamed completion: its whole response is the first output."""
    t0 = time.perf_counter()
    r = await http.post(url, headers=headers, json=body)
    if r.status_code != 200 or "choices" not in r.json():
        raise RuntimeError(f"{url}: HTTP {r.status_code} {r.content[:300]!r}")
    end = time.perf_counter()
    return end - t0, end - t0


async def run_level(targets: dict, mode: str, concurrency: int, rounds: int, pids: dict) -> dict:
    """Every target at one concurrency, rounds interleaved (a round of the first target, then of the second, ...,
    then the next round), so that a drift in the machine's state during the run (other load, frequency, cache)
    falls on all targets alike instead of on whichever ran during it. Returns {target: figures}."""
    import httpx

    one_stream_or_once = one_stream if mode == "stream" else one_once

    # The client's connections are split over several httpx clients, used in turn: one httpcore pool re-examines all
    # its connections whenever a request starts or ends, so one pool of 200 busy connections cost this process 3-5x
    # the CPU of the whole round against a slower target (it shares the 2 CPUs with the proxy it measures), and
    # that showed up as up to 3 s of "added latency" for 200 non-streamed calls, for the service and LiteLLM alike.
    shards = min(CLIENT_SHARDS, concurrency)
    per_shard = -(-concurrency // shards) + 10
    limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
    state = {name: {"ttft": [], "total": [], "failed": {}, "cpu": 0.0,
                    "clients": [httpx.AsyncClient(timeout=120, limits=limits) for _ in range(shards)]}
             for name in targets}

    def body_for(model: str) -> dict:
        return {"model": model, "messages": [{"role": "user", "content": "benchmark"}], "stream": mode == "stream",
                "max_tokens": 64}

    try:
        for name, (url, headers, model) in targets.items():  # warm each pool and server
            await one_stream_or_once(state[name]["clients"][0], url, headers, body_for(model))
        for _ in range(rounds):
            for name, (url, headers, model) in targets.items():
                st, body = state[name], body_for(model)
                cpu0 = cpu_seconds(pids[name]) if pids[name] else 0.0
                results = await asyncio.gather(*(one_stream_or_once(st["clients"][i % shards], url, headers, body)
                                                 for i in range(concurrency)), return_exceptions=True)
                st["cpu"] += (cpu_seconds(pids[name]) - cpu0) if pids[name] else 0.0
                for result in results:
                    if isinstance(result, BaseException):  # counted and named in the report, not silently dropped
                        why = f"{type(result).__name__}: {str(result)[:400]}"
                        st["failed"][why] = st["failed"].get(why, 0) + 1
                        continue
                    st["ttft"].append(result[0])
                    st["total"].append(result[1])
    finally:
        for st in state.values():
            for http in st["clients"]:
                await http.aclose()
    out = {}
    for name, st in state.items():
        ttft, total = st["ttft"], st["total"]
        out[name] = {"n": len(total), "failed": st["failed"], "ttft_p50": pct(ttft, 50), "ttft_p99": pct(ttft, 99),
                     "p50": pct(total, 50), "p99": pct(total, 99),
                     "mean": statistics.fmean(total) if total else float("nan"),
                     "cpu_ms": st["cpu"] * 1000 / max(1, len(total))}
    return out


# --- main ----------------------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--chunk-ms", type=float, default=10.0)
    ap.add_argument("--once-ms", type=float, default=0.0,
                    help="the fake upstream answers a non-streamed request after this many ms (default 0: at once; a "
                         "real provider takes about as long as its stream, --chunks x --chunk-ms)")
    ap.add_argument("--levels", default="1,50,200")
    ap.add_argument("--mode", choices=["stream", "once", "both"], default="both",
                    help="streamed completions, non-streamed ones, or both (one after the other, same processes)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per level (level 1: 20x as many)")
    ap.add_argument("--database-url", default="", help="e.g. postgres://… (default: a fresh SQLite DATA_DIR)")
    ap.add_argument("--redis-url", default="", help="shared cache for the rate limit, as in production")
    ap.add_argument("--serve-relay", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--relay-to", help=argparse.SUPPRESS)
    ap.add_argument("--bare-relay", action="store_true",
                    help="also measure a bare relay on the same stack (no key, database or parsing): the floor")
    ap.add_argument("--compare", action="append", default=[], metavar="NAME=VALUE",
                    help="also measure the service started with this environment setting changed (repeatable)")
    ap.add_argument("--compare-code", action="append", default=[], metavar="NAME=PATH",
                    help="also measure the service from another checkout of the code (e.g. a git worktree of the "
                         "previous commit; same database, migrations must match), as target service[NAME]")
    ap.add_argument("--py-spy", default="", metavar="PATH",
                    help="profile each service under this py-spy binary (pip install py-spy in a venv of its own)")
    ap.add_argument("--profile-dir", default=".", help="where --py-spy writes one collapsed-stack file per service")
    ap.add_argument("--pin", action="store_true",
                    help="the proxies under test on the last CPU, this client and the fake upstream on the others (as the "
                         "issue's measurements were taken): a proxy's work per chunk then no longer delays the fake "
                         "upstream's own clock on a shared CPU")
    ap.add_argument("--litellm", default="/tmp/litellm-venv/bin/litellm" if Path("/tmp/litellm-venv/bin/litellm").exists() else "")
    args = ap.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream, args.chunks, args.chunk_ms, args.once_ms)
        return
    if args.serve_relay:
        serve_relay(args.serve_relay, args.relay_to)
        return

    procs: list[subprocess.Popen] = []
    pids: dict[str, int | None] = {}  # target -> the process whose CPU it counts
    cpus = sorted(os.sched_getaffinity(0))
    proxy_cpu = {cpus[-1]} if args.pin and len(cpus) > 1 else None
    rest = set(cpus[:-1]) if proxy_cpu else None

    def on_cpus(which):
        """preexec_fn pinning a child (and every thread it starts) to `which` (None: not pinned)."""
        return None if which is None else (lambda: os.sched_setaffinity(0, which))

    if rest:
        os.sched_setaffinity(0, rest)
    tmp = Path(tempfile.mkdtemp(prefix="llm-bench-"))
    try:
        up_port = free_port()
        procs.append(subprocess.Popen([PY, __file__, "--serve-upstream", str(up_port), "--chunks", str(args.chunks),
                                       "--chunk-ms", str(args.chunk_ms), "--once-ms", str(args.once_ms)],
                                      preexec_fn=on_cpus(rest)))
        wait_port(up_port, procs[-1])
        upstream = f"http://127.0.0.1:{up_port}/v1"

        # the service: fresh DATA_DIR (SQLite), allowlist pointing at the fake upstream
        models = tmp / "models.json"
        models.write_text(json.dumps([{"id": "bench/model", "upstream_base_url": upstream, "upstream_model": "bench",
                                       "api_key_env": "", "credits_per_1k_tokens": "0.5"}]))
        svc_port = free_port()
        env = {**os.environ, "DATA_DIR": str(tmp / "data"), "LLM_MODELS_FILE": str(models), "SANDBOX": "1",
               "RATE_LIMIT_PER_MINUTE": "100000000", "LOG_LEVEL": "WARNING", "BASE_URL": f"http://127.0.0.1:{svc_port}"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        if args.database_url:
            env["DATABASE_URL"] = args.database_url
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
        subprocess.run([PY, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        out = subprocess.run([PY, "manage.py", "create_workspace", "--email", "bench@example.com", "--credits", "10000000",
                              "--json"], cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
        api_key = json.loads(out.strip().splitlines()[-1])["api_key"]
        # the web server as `manage.py serve` starts it (same uvicorn options), without its access log
        sys.path.insert(0, str(ROOT))
        from core.management.commands.serve import web_options

        targets = {"direct": (f"{upstream}/chat/completions", {}, "bench")}
        pids["direct"] = None

        def add_service(name: str, port: int, cwd: Path = ROOT, extra_env: dict | None = None) -> None:
            wrap = []
            if args.py_spy:  # sampled: idle threads left out, collapsed stacks (flamegraph.pl / speedscope read them)
                out = Path(args.profile_dir) / (name.replace("[", "-").replace("]", "").replace("=", "-") + ".txt")
                wrap = [args.py_spy, "record", "--format", "raw", "--rate", "200", "-o", str(out), "--"]
            procs.append(subprocess.Popen([*wrap, PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
                                           "--port", str(port), "--log-level", "warning", "--no-access-log",
                                           *web_options()], cwd=cwd, env={**env, **(extra_env or {})},
                                          preexec_fn=on_cpus(proxy_cpu)))
            wait_port(port, procs[-1])
            targets[name] = (f"http://127.0.0.1:{port}/v1/llm/chat/completions", {"Authorization": f"Bearer {api_key}"},
                             "bench/model")
            pids[name] = procs[-1].pid
            if wrap:  # the CPU column counts the service, not py-spy
                children = Path(f"/proc/{procs[-1].pid}/task/{procs[-1].pid}/children").read_text().split()
                pids[name] = int(children[0])

        add_service("service", svc_port)
        if args.bare_relay:
            port = free_port()
            procs.append(subprocess.Popen([PY, __file__, "--serve-relay", str(port), "--relay-to",
                                           f"{upstream}/chat/completions"],
                                           preexec_fn=on_cpus(proxy_cpu)))
            wait_port(port, procs[-1])
            targets["bare relay"] = (f"http://127.0.0.1:{port}/chat/completions", {}, "bench")
            pids["bare relay"] = procs[-1].pid
        for setting in args.compare:  # the same service with one setting changed, as one more target (an A/B in one run)
            name, _, value = setting.partition("=")
            add_service(f"service[{setting}]", free_port(), extra_env={name: value})
        for spec in args.compare_code:  # the service from another checkout: a before/after A/B in one run
            name, _, path = spec.partition("=")
            add_service(f"service[{name}]", free_port(), cwd=Path(path),
                        extra_env={"PYTHONPATH": str(Path(path).resolve())})
        if args.litellm:
            ll_port = free_port()
            cfg = tmp / "litellm.yaml"
            cfg.write_text(
                "model_list:\n"
                "  - model_name: bench-model\n"
                "    litellm_params:\n"
                "      model: openai/bench\n"
                f"      api_base: {upstream}\n"
                "      api_key: sk-bench\n"
                "litellm_settings:\n"
                "  drop_params: true\n"
                "  set_verbose: false\n"
                "  json_logs: false\n"
            )
            master = "sk-bench-" + os.urandom(24).hex()
            ll_env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False", "DISABLE_SCHEMA_UPDATE": "true",
                      "LITELLM_MASTER_KEY": master}
            procs.append(subprocess.Popen([args.litellm, "--config", str(cfg), "--host", "127.0.0.1", "--port", str(ll_port),
                                           "--num_workers", "1"], env=ll_env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, preexec_fn=on_cpus(proxy_cpu)))
            wait_port(ll_port, procs[-1], timeout=300)
            targets["litellm"] = (f"http://127.0.0.1:{ll_port}/chat/completions", {"Authorization": f"Bearer {master}"},
                                  "bench-model")
            pids["litellm"] = procs[-1].pid

        print(f"# LLM passthrough added latency: {'PostgreSQL' if args.database_url else 'SQLite'}; "
              f"{args.chunks} chunks {args.chunk_ms:g} ms apart per stream; non-streamed answered after "
              f"{args.once_ms:g} ms; "
              f"{os.cpu_count()} CPUs{' (proxies pinned to CPU ' + str(cpus[-1]) + ')' if proxy_cpu else ''}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        rows = []
        modes = ["stream", "once"] if args.mode == "both" else [args.mode]
        for mode, level in [(m, int(x)) for m in modes for x in args.levels.split(",")]:
            rounds = args.rounds * 20 if level == 1 else args.rounds
            measured = asyncio.run(run_level(targets, mode, level, rounds, pids))
            base = measured["direct"]
            for name, m in measured.items():
                added50 = (m["p50"] - base["p50"]) * 1000
                added99 = (m["p99"] - base["p99"]) * 1000
                rows.append((f"{mode} {level}", name, m, added50, added99, (m["ttft_p50"] - base["ttft_p50"]) * 1000))
                print(f"{mode:6} c={level:<4} {name:10} n={m['n']:<4} total p50 {m['p50']*1000:8.2f} ms p99 {m['p99']*1000:8.2f} ms | "
                      f"added p50 {added50:7.2f} ms p99 {added99:7.2f} ms | ttft added p50 "
                      f"{(m['ttft_p50'] - base['ttft_p50']) * 1000:7.2f} ms | proxy CPU {m['cpu_ms']:6.2f} ms/stream"
                      + (f" | FAILED {sum(m['failed'].values())}: {m['failed']}" if m["failed"] else ""), flush=True)
            if "litellm" in measured:
                ours = measured["service"]["p50"] - base["p50"]
                theirs = measured["litellm"]["p50"] - base["p50"]
                ours99 = measured["service"]["p99"] - base["p99"]
                theirs99 = measured["litellm"]["p99"] - base["p99"]
                cpu_ratio = measured["service"]["cpu_ms"] / measured["litellm"]["cpu_ms"]
                print(f"{mode:6} c={level:<4} ratio service/litellm added latency: p50 {ours / theirs if theirs > 0 else float('nan'):.3f}"
                      f"  p99 {ours99 / theirs99 if theirs99 > 0 else float('nan'):.3f}  CPU per stream {cpu_ratio:.3f}",
                      flush=True)
        print("\n| mode, concurrency | target | n | total p50 ms | total p99 ms | added p50 ms | added p99 ms | added TTFT p50 ms "
              "| proxy CPU ms/stream |")
        print("|---|---|---|---|---|---|---|---|---|")
        for level, name, m, a50, a99, attft in rows:
            print(f"| {level} | {name} | {m['n']} | {m['p50']*1000:.2f} | {m['p99']*1000:.2f} | "
                  f"{a50:.2f} | {a99:.2f} | {attft:.2f} | {m['cpu_ms']:.2f} |")
    finally:
        profiled = [pid for pid in pids.values() if pid and pid not in {p.pid for p in procs}]
        for pid in profiled:  # a profiled service first: py-spy writes its file when the service ends
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in profiled:
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.1)
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
