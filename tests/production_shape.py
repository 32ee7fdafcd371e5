"""The production shape, started as production starts it (shared by tests/core/test_production_shape.py and
bench/production_shape.py; not collected by pytest itself).

`Cluster` runs the Procfile's `release` step, then its `web` line twice (two processes, two ports the OS
picked), its `worker` line twice and its `beat` line once, each as its own process group, all on one fresh
PostgreSQL database and one Redis database. Every process is killed (SIGKILL to its group) and the database
dropped when the cluster stops, whatever happened. Nothing here asserts: the scenarios return counts and figures;
the test asserts on counts only and the bench prints the figures.

Inside the cluster's database, setup and read-back run in a short `python -c` child with the cluster's
environment (`django_call`), so the calling process never needs Django configured for that database.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The cluster's own Redis database (broker, cache, rate-limit buckets); flushed at start: nothing else uses it.
REDIS_DB = 13
RATE_LIMIT = 120  # per key per minute, shared by both web processes through Redis
N_MAILBOXES = 50  # 50 x 25 a day = 1,250 >= 1,000 leads: the daily cap never gets in the way


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def procfile() -> dict[str, str]:
    out = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if ":" in line and not line.lstrip().startswith("#"):
            name, cmd = line.split(":", 1)
            out[name.strip()] = cmd.strip()
    return out


def _own_group_and_die_with_parent():  # between fork and exec
    os.setpgrp()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass


class Cluster:
    def __init__(self, *, database_url: str, redis_url: str, data_dir: Path, worker_concurrency: int = 3,
                 extra_env: dict | None = None):
        self.base_db_url = database_url
        self.dbname = f"prodshape_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.data_dir = Path(data_dir)
        self.logs = self.data_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports = [free_port(), free_port()]
        while self.ports[0] == self.ports[1]:
            self.ports[1] = free_port()
        venv_bin = str(Path(sys.executable).parent)
        self.env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        self.env.update({
            "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
            "PYTHONUNBUFFERED": "1",
            "DATA_DIR": str(self.data_dir / "data"),
            "DATABASE_URL": database_url.rsplit("/", 1)[0] + "/" + self.dbname,
            "REDIS_URL": redis_url.rsplit("/", 1)[0] + f"/{REDIS_DB}",
            "SANDBOX": "1",
            "SANDBOX_SMTP_PORT": "0",
            "LOG_LEVEL": "WARNING",
            "WEB_CONCURRENCY": "1",  # one uvicorn process per web line; two web lines
            "WORKER_CONCURRENCY": str(worker_concurrency),
            "RATE_LIMIT_PER_MINUTE": str(RATE_LIMIT),
            # the scheduler ticks every second, dispatching at most 20 leads a tick (no more than two busy workers send
            # on this machine); a worker's death is recovered from in seconds, not the production 10-15 minutes
            "SCHEDULER_TICK_SECONDS": "1",
            "CAMPAIGNS_TICK_BATCH": "20",
            "CAMPAIGNS_LEASE_SECONDS": "60",
            "CAMPAIGNS_CLAIM_RELEASE_SECONDS": "10",
            "CAMPAIGNS_STUCK_SECONDS": "10",
        })
        self.env.update(extra_env or {})
        self.commands = self._commands()

    # --- processes ----------------------------------------------------------------------------------
    def _commands(self) -> dict[str, str]:
        pf = procfile()
        # Procfile as written, except: bound to loopback (nothing here listens beyond this machine) and each
        # worker named, so the two workers are two Celery nodes
        web = pf["web"].replace("--host 0.0.0.0", "--host 127.0.0.1")
        return {
            "release": pf["release"],
            "web1": f"export PORT={self.ports[0]}; exec {web}",
            "web2": f"export PORT={self.ports[1]}; exec {web}",
            "worker1": f"exec {pf['worker']} --hostname worker1-{self.dbname}@%h",
            "worker2": f"exec {pf['worker']} --hostname worker2-{self.dbname}@%h",
            "webhooks": f"exec {pf['webhooks']} --hostname webhooks-{self.dbname}@%h",
            "beat": f"exec {pf['beat']}",
        }

    def spawn(self, name: str) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(["bash", "-c", self.commands[name]], cwd=str(ROOT), env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=_own_group_and_die_with_parent)
        log.close()
        self.procs[name] = proc
        return proc

    def kill(self, name: str) -> None:
        """SIGKILL the process and everything in its group (a prefork worker's pool children too)."""
        proc = self.procs.get(name)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def start(self) -> None:
        import psycopg
        import redis

        redis.Redis.from_url(self.env["REDIS_URL"]).flushdb()
        with psycopg.connect(self.base_db_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.dbname}"')
        subprocess.run(["bash", "-c", self.commands["release"] + " -v0"], cwd=str(ROOT), env=self.env, check=True,
                       timeout=600)
        for name in ("web1", "web2", "worker1", "worker2", "webhooks", "beat"):
            self.spawn(name)
        deadline = time.monotonic() + 180
        for port in self.ports:
            while True:
                self.check_alive()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"web on {port} not ready in time\n{self.tail()}")
                time.sleep(0.2)

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}\n{self.tail()}")

    def tail(self, n: int = 30) -> str:
        out = []
        for f in sorted(self.logs.glob("*.log")):
            lines = f.read_text(errors="replace").splitlines()[-n:]
            out.append(f"--- {f.name}\n" + "\n".join(lines))
        return "\n".join(out)

    def stop(self) -> None:
        for name in list(self.procs):
            self.kill(name)
        try:
            import psycopg

            with psycopg.connect(self.base_db_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.dbname}" WITH (FORCE)')
        finally:
            try:
                import redis

                redis.Redis.from_url(self.env["REDIS_URL"]).flushdb()
            except Exception:  # noqa: BLE001 (best effort: the database drop above is what matters)
                pass

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs.values()]

    # --- inside the cluster's database ----------------------------------------------------------------
    def django_call(self, func: str, **kwargs):
        code = ("import json, sys, django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); "
                "django.setup(); from tests import production_shape as p; "
                f"print('@@' + json.dumps(p.{func}(**json.loads(sys.argv[1])), default=str))")
        out = subprocess.run([sys.executable, "-c", code, json.dumps(kwargs)], cwd=str(ROOT), env=self.env,
                             capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise RuntimeError(f"{func} failed:\n{out.stdout}\n{out.stderr}")
        return json.loads(out.stdout.rsplit("@@", 1)[1])

    def url(self, i: int, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[i % 2]}{path}"


# --- HTTP ---------------------------------------------------------------------------------------------
def http(method: str, url: str, key: str, body: dict | None = None, timeout: float = 120) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def burst(cluster: Cluster, key: str, n: int, body: dict) -> list[tuple[int, int, str]]:
    """n concurrent POST /v1/verify_email, request i to web process i % 2, all released at once by a barrier.
    Returns [(process index, status, error code)]."""
    barrier = threading.Barrier(n)

    def one(i):
        barrier.wait()
        status, payload = http("POST", cluster.url(i, "/v1/verify_email"), key, body)
        return i % 2, status, (payload.get("error") or {}).get("code", "")

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


# --- functions run inside the cluster's database (django_call) --------------------------------------------
def setup_workspace(*, available_credits: int, email: str) -> dict:
    """A workspace whose available balance is exactly `available_credits` (signup grant, then an adjustment
    through the ledger), with one API key. Returns {workspace_id, key}."""
    from accounts.services import key_create, user_get_or_create, workspace_create
    from billing.services import account_get, credits_debit, credits_grant
    from core.money import MICROS_PER_CREDIT

    owner = user_get_or_create(email=email)
    ws = workspace_create(owner=owner)
    have = account_get(workspace=ws).available_micros
    want = available_credits * MICROS_PER_CREDIT
    if have > want:
        credits_debit(workspace=ws, amount=have - want, kind="adjustment", memo="production-shape setup")
    elif want > have:
        credits_grant(workspace=ws, amount=want - have, memo="production-shape setup")
    _, key = key_create(workspace=ws, name="prodshape", scopes="all", created_by=owner)
    return {"workspace_id": str(ws.pk), "key": key}


def money_report(*, workspace_id: str) -> dict:
    from django.db.models import Min, Sum

    from billing.models import CreditAccount, Hold, LedgerEntry

    acct = CreditAccount.objects.get(workspace_id=workspace_id)
    entries = LedgerEntry.objects.filter(account=acct)
    agg = entries.aggregate(total=Sum("amount_micros"), lowest=Min("balance_after_micros"))
    return {"balance_micros": acct.balance_micros, "reserved_micros": acct.reserved_micros,
            "ledger_sum_micros": agg["total"], "lowest_balance_after_micros": agg["lowest"],
            "charges": entries.filter(kind="charge").count(),
            "open_holds": Hold.objects.filter(account=acct, status="held").count()}


def setup_campaign(*, workspace_id: str, leads: int, smtp_port: int) -> dict:
    """A launched campaign of `leads` leads, one step, an always-open window, spread over N_MAILBOXES warmed-up
    bring-your-own mailboxes whose SMTP server is the test's aiosmtpd peer on loopback."""
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from accounts.models import Workspace
    from campaigns.models import Campaign, CampaignLead
    from sending.testing import make_active_mailbox

    ws = Workspace.objects.get(pk=workspace_id)
    long_ago = timezone.now() - timedelta(days=90)  # warm-up over: the full 25 a day
    mailboxes = [make_active_mailbox(ws, email=f"sender{i}@prodshape-{i % 10}.test", provider="byo",
                                     smtp_host="127.0.0.1", smtp_port=smtp_port, smtp_security="none",
                                     activated_at=long_ago).pk for i in range(N_MAILBOXES)]
    always = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
              "end_hour": 24}
    steps = [{"subject": "Hello {{first_name|there}}", "body": "Hi {{first_name|there}},\n\nA note.\n\nSam",
              "wait_days": 0}]
    # one transaction, as launch_campaign's: the beat's tick completes a launched campaign that has no active lead
    # (campaigns_complete_finished), and it runs meanwhile in this cluster; seen between a campaign committed
    # alone and its leads, the campaign was completed with no lead and nothing was ever sent
    with transaction.atomic():
        camp = Campaign.objects.create(workspace=ws, name="production shape", state="launched", steps=steps,
                                       sending_window=always, launched_at=timezone.now())
        now = timezone.now()
        CampaignLead.objects.bulk_create([
            CampaignLead(campaign=camp, workspace=ws, email=f"lead{i}@recipients.test", first_name=f"L{i}",
                         company_name="Acme", position=i, state="active", mailbox_id=mailboxes[i % len(mailboxes)],
                         next_send_at=now) for i in range(leads)], batch_size=1000)
    return {"campaign_id": str(camp.pk), "emails": [f"lead{i}@recipients.test" for i in range(leads)]}


def campaign_report(*, campaign_id: str) -> dict:
    from django.db.models import Count

    from campaigns.models import CampaignLead, SentMessage

    leads = dict(CampaignLead.objects.filter(campaign_id=campaign_id).values_list("state")
                 .annotate(n=Count("id")).values_list("state", "n"))
    stops = dict(CampaignLead.objects.filter(campaign_id=campaign_id, state="stopped").values_list("stop_reason")
                 .annotate(n=Count("id")).values_list("stop_reason", "n"))
    msgs = dict(SentMessage.objects.filter(campaign_id=campaign_id).values_list("state")
                .annotate(n=Count("id")).values_list("state", "n"))
    released = SentMessage.objects.filter(campaign_id=campaign_id, error__startswith="claim released").count()
    return {"leads": leads, "stops": stops, "messages": msgs, "claims_released": released}


# --- the SMTP peer --------------------------------------------------------------------------------------
class Peer:
    """A local aiosmtpd server counting DATA deliveries by recipient."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.by_rcpt: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        peer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                with peer.lock:
                    for rcpt in envelope.rcpt_tos:
                        peer.by_rcpt[rcpt.lower()] += 1
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def total(self) -> int:
        with self.lock:
            return sum(self.by_rcpt.values())

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc):
        self.controller.stop()


# --- the scenarios ----------------------------------------------------------------------------------------
def spenders(cluster: Cluster, *, n: int = 100, affordable: int = 37) -> dict:
    ws = cluster.django_call("setup_workspace", available_credits=affordable, email="spenders@prodshape.test")
    t0 = time.perf_counter()
    results = burst(cluster, ws["key"], n, {"email": "not-an-address"})  # malformed: `invalid`, 1 credit
    elapsed = time.perf_counter() - t0
    by = collections.Counter((status, code) for _, status, code in results)
    per_process = collections.Counter((proc, status) for proc, status, _ in results)
    # each answered call's settlement follows its answer (SETTLE_AFTER_RESPONSE): read once none is pending
    deadline = time.monotonic() + 60
    while True:
        money = cluster.django_call("money_report", workspace_id=ws["workspace_id"])
        if money["open_holds"] == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    return {"n": n, "affordable": affordable, "outcomes": {f"{s} {c}".strip(): k for (s, c), k in by.items()},
            "succeeded": sum(k for (s, _), k in by.items() if s == 200), "per_process": dict(per_process),
            "money": money, "seconds": round(elapsed, 2)}


def rate_limit(cluster: Cluster, *, n: int = 160) -> dict:
    """Two keys with credits to spare. Key A: n requests one after another, alternating between the two web
    processes (deterministic: exactly RATE_LIMIT admitted if the count is shared; up to n if each process counted
    its own). Key B: n requests at once, split across both (never more than RATE_LIMIT admitted)."""
    a = cluster.django_call("setup_workspace", available_credits=10_000, email="rate-a@prodshape.test")
    b = cluster.django_call("setup_workspace", available_credits=10_000, email="rate-b@prodshape.test")
    seq = collections.Counter()
    for i in range(n):
        status, payload = http("POST", cluster.url(i, "/v1/verify_email"), a["key"], {"email": "not-an-address"})
        seq[(i % 2, status, (payload.get("error") or {}).get("code", ""))] += 1
    conc = collections.Counter(burst(cluster, b["key"], n, {"email": "not-an-address"}))
    return {"limit": RATE_LIMIT, "n": n,
            "sequential_admitted": sum(k for (_, s, _), k in seq.items() if s == 200),
            "sequential_refused_429": sum(k for (_, s, c), k in seq.items() if s == 429 and c == "rate_limited"),
            "sequential_admitted_per_process": {p: sum(k for (q, s, _), k in seq.items() if q == p and s == 200)
                                                for p in (0, 1)},
            "concurrent_admitted": sum(k for (_, s, _), k in conc.items() if s == 200),
            "concurrent_refused_429": sum(k for (_, s, c), k in conc.items() if s == 429 and c == "rate_limited"),
            "other": {f"{s} {c}": k for (_, s, c), k in (seq + conc).items() if s not in (200, 429)}}


def stuck_leads_via_api(cluster: Cluster, key: str, campaign_id: str) -> list[dict]:
    """Every lead GET /v1/campaigns/:id/leads reports (all pages), as the contract exposes them."""
    out, cursor = [], None
    while True:
        path = f"/v1/campaigns/{campaign_id}/leads?status=send_unknown" + (f"&cursor={cursor}" if cursor else "")
        status, body = http("GET", cluster.url(0, path), key)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        out += body["leads"]
        cursor = body.get("next_cursor")
        if not cursor:
            return out


def campaign_with_kill(cluster: Cluster, *, leads: int = 1000, kill_after: int = 300,
                       deadline_s: float = 240) -> dict:
    """Send a campaign of `leads` through both workers; once the peer has `kill_after` messages, SIGKILL worker1
    (its whole process group) and start it again. Wait (polling, generous deadline) until no lead is left active,
    then count at the peer by recipient and read stuck leads through the API."""
    ws = cluster.django_call("setup_workspace", available_credits=1000, email="campaign@prodshape.test")
    with Peer() as peer:
        camp = cluster.django_call("setup_campaign", workspace_id=ws["workspace_id"], leads=leads,
                                   smtp_port=peer.port)
        t0 = time.perf_counter()
        killed_at = restarted_at = None
        deadline = time.monotonic() + deadline_s
        report = None
        while time.monotonic() < deadline:
            cluster.check_alive()
            if killed_at is None and peer.total() >= kill_after:
                killed_at = peer.total()
                cluster.kill("worker1")
                cluster.spawn("worker1")
                restarted_at = peer.total()
            if killed_at is not None:
                report = cluster.django_call("campaign_report", campaign_id=camp["campaign_id"])
                if not report["leads"].get("active") and not report["leads"].get("pending"):
                    break
            time.sleep(1)
        elapsed = time.perf_counter() - t0
        time.sleep(1)  # a message whose DATA was answered as the last row settled is counted by now
        received = dict(peer.by_rcpt)
    stuck = stuck_leads_via_api(cluster, ws["key"], camp["campaign_id"])
    return {"leads": leads, "emails": camp["emails"], "received": received, "killed_at_peer_count": killed_at,
            "restarted_at_peer_count": restarted_at, "report": report, "stuck": stuck,
            "seconds": round(elapsed, 1), "finished_in_time": bool(report) and not report["leads"].get("active")}
