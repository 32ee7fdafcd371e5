#!/usr/bin/env python
"""Fresh clone to a service that answers: `make run` in a new clone, timed until `serve` prints that it listens
and `/healthz` answers, with the longest silence (time between two lines of output) on the way.

    python3 bench/first_run.py                   # clone this checkout's HEAD into a temporary folder
    python3 bench/first_run.py --ref 7b382e3     # the same for another commit (the baseline before the change)

Each run gets a new `.venv` and an empty `var/`; pip's download cache is whatever this machine has (say which in
bench/RESULTS.md). The service is stopped with SIGINT once it answered (the background model build with it).
Targets: ready within 120 s on an idle two-core machine, no silence over 10 s.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(ref: str, timeout: float) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="first-run-"))
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", ref], check=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "REPLIES_MODEL_DIR",
                                                             "VIRTUAL_ENV")}
    env.update(PORT=str(port), SANDBOX_SMTP_PORT=str(free_port()))
    started = time.monotonic()
    proc = subprocess.Popen(["make", "run"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    lines: list[tuple[float, str]] = []
    ready = threading.Event()

    def read():
        for raw in proc.stdout:
            lines.append((time.monotonic() - started, raw.decode(errors="replace").rstrip()))
            if "[serve] listening" in lines[-1][1]:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    answered_at = None
    while time.monotonic() - started < timeout and proc.poll() is None:
        if ready.is_set():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        answered_at = time.monotonic() - started
                        break
            except OSError:
                pass
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    seen = [(0.0, "(start)")] + [(t, text) for t, text in lines if answered_at is None or t <= answered_at]
    seen.append((answered_at or timeout, "(ready)" if answered_at else "(timeout)"))
    gaps = [(b[0] - a[0], a[1], b[1]) for a, b in zip(seen, seen[1:], strict=False)]
    silence, before, after = max(gaps)
    return {"ref": ref, "ready_s": answered_at, "longest_silence_s": silence, "lines": len(lines), "folder": tmp,
            "silence_between": (before[:100], after[:100])}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    out = run(args.ref, args.timeout)
    ready = "not ready" if out["ready_s"] is None else f"{out['ready_s']:.1f} s"
    print(f"{out['ref']}: fresh clone to /healthz answering: {ready}; longest silence {out['longest_silence_s']:.1f} s; "
          f"{out['lines']} lines of output (clone kept in {out['folder']})")
    print(f"longest silence between: {out['silence_between'][0]!r} and {out['silence_between'][1]!r}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0 if out["ready_s"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
