"""Verifications per second against local peers with injected network latency.

Peers (a dnslib DNS server and scripted aiosmtpd MX servers on 127.0.0.x) run in a child process so that they
do not share the verifier's GIL. Every DNS answer is delayed by --dns-ms and every SMTP reply to EHLO, MAIL and
RCPT by --smtp-ms (internet-like round trips). The verifier is the product engine (`leads.verification.engine`)
with an in-process catch-all memory; the database store is not part of the measurement.

Baseline, measured in the same run: the same engine, one verification at a time. The figure that matters is
verifications per second with --workers threads (target: at least 100/s on 2 cores).

    .venv/bin/python bench/verify.py [--count 1000] [--domains 200] [--workers 48] [--dns-ms 10] [--smtp-ms 20]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def serve_peers(args, ready, stop):
    from tests.verification.peers import DnsPeer, Script, SmtpPeers

    dns = DnsPeer()
    dns.zone.latency = args.dns_ms / 1000
    smtp = SmtpPeers()
    ips = [f"127.0.0.{i + 2}" for i in range(args.mx_hosts)]
    for ip in ips:
        # every address "u<n>@" exists; the random catch-all probe is refused
        smtp.smtp(ip, Script(rcpt=lambda a, s: "250 2.1.5 OK" if a.startswith("u")
                             else "550 5.1.1 User unknown", latency=args.smtp_ms / 1000))
    for d in range(args.domains):
        domain = f"bench{d}.com"
        host = f"mx{d % args.mx_hosts}.benchmail.com"
        dns.zone.mx(domain, (10, host))
    for i, ip in enumerate(ips):
        dns.zone.a(f"mx{i}.benchmail.com", ip)
    ready.put((dns.nameserver, smtp.port))
    stop.wait()
    smtp.stop()
    dns.stop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--baseline-count", type=int, default=60)
    p.add_argument("--domains", type=int, default=200)
    p.add_argument("--mx-hosts", type=int, default=20)
    p.add_argument("--workers", type=int, default=48)
    p.add_argument("--dns-ms", type=float, default=10)
    p.add_argument("--smtp-ms", type=float, default=20)
    args = p.parse_args()

    ctx = mp.get_context("fork")
    ready, stop = ctx.Queue(), ctx.Event()
    child = ctx.Process(target=serve_peers, args=(args, ready, stop), daemon=True)
    child.start()
    nameserver, port = ready.get(timeout=30)

    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings", "DATA_DIR": tempfile.mkdtemp(),
        "VERIFIER_NAMESERVERS": nameserver, "VERIFIER_SMTP_PORT": str(port),
        "VERIFIER_ALLOW_PRIVATE_NETWORKS": "1", "VERIFIER_TIMEOUT_SECONDS": "5",
        "VERIFIER_MAX_CONNECTIONS_PER_HOST": str(max(4, args.workers // args.mx_hosts + 1)),
    })
    import django

    django.setup()
    from leads.verification import dnslayer, engine

    def run(n, workers, offset):
        dnslayer.reset()
        memory = engine.DictMemory()
        addresses = [f"u{offset + i}@bench{(offset + i) % args.domains}.com" for i in range(n)]
        started = time.perf_counter()
        if workers == 1:
            results = [engine.verify(a, memory=memory) for a in addresses]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(lambda a: engine.verify(a, memory=memory), addresses))
        elapsed = time.perf_counter() - started
        statuses = {}
        for r in results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        return n / elapsed, elapsed, statuses

    try:
        base_rate, base_s, base_st = run(args.baseline_count, 1, 0)
        rate, secs, st = run(args.count, args.workers, 100_000)
    finally:
        stop.set()
        child.join(10)
    per_call_ms = 1000 / base_rate
    print(f"latency injected: DNS {args.dns_ms:g} ms/answer, SMTP {args.smtp_ms:g} ms/reply; "
          f"{args.domains} domains on {args.mx_hosts} MX hosts; cpus={os.cpu_count()}")
    print(f"baseline  sequential        : {base_rate:8.1f} verifications/s  ({per_call_ms:.0f} ms each, "
          f"{args.baseline_count} in {base_s:.2f}s) {base_st}")
    print(f"verifier  {args.workers:3d} threads        : {rate:8.1f} verifications/s  "
          f"({args.count} in {secs:.2f}s) {st}")
    print(f"ratio concurrent/sequential : {rate / base_rate:8.1f}x   target >= 100/s: "
          f"{'met' if rate >= 100 else 'NOT met'}")
    ok = st.get("valid", 0) == args.count
    if not ok:
        print("WARNING: not every verification came back valid", st)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
