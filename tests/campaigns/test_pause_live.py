"""A paused campaign sends nothing more, with the real thing running: `manage.py serve` (web, Celery worker,
Celery beat ticking the scheduler every second) on a fresh DATA_DIR, driven over HTTP like a client would.

No sleeps decide the outcome: progress is observed through the API. While campaign A is paused, campaign B
(same mailboxes) is launched and sent to the end, one step per tick: that proves the scheduler and the worker
ran many ticks while A stayed paused, and A sent nothing in them."""

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

from tests.core.test_serve import ROOT, _backends, free_port, output, start, wait_healthy

STEPS = [{"subject": "Step 1", "body": "One"}] + [{"body": f"Step {i}", "wait_days": 0} for i in range(2, 9)]
ALWAYS = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
          "end_hour": 24}


class Client:
    def __init__(self, port, key):
        self.base, self.key = f"http://127.0.0.1:{port}", key

    def call(self, method, path, body=None, key=None):
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())


def manage(env, *args):
    out = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    return out.stdout


def wait_for(what, predicate, proc, deadline_s=600):  # generous: progress, not time, decides
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, output(proc)
        try:
            value = predicate()
        except OSError as exc:  # the web server went away: what serve and its children printed says why
            raise AssertionError(f"{what}: {exc}\n--- serve's output ---\n{output(proc)[-6000:]}") from exc
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(params=_backends())
def served(request, tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    port = free_port()
    env.update(DATA_DIR=str(tmp_path / "data"), PORT=str(port), SANDBOX_SMTP_PORT="0", SANDBOX="1",
               SCHEDULER_TICK_SECONDS="1")
    dbname = None
    if request.param == "postgres+redis":
        import psycopg

        base = os.environ["DATABASE_URL"]
        dbname = f"pause_test_{os.getpid()}_{port}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dbname}"')
        env["DATABASE_URL"] = base.rsplit("/", 1)[0] + "/" + dbname
        env["REDIS_URL"] = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/13"
    manage(env, "migrate", "--noinput", "-v0")
    created = json.loads(manage(env, "create_workspace", "--email", "owner@pause.test", "--scopes", "all", "--json"))
    manage(env, "shell", "-c", (
        "from accounts.models import Workspace; from sending.testing import make_active_mailbox; "
        f"ws = Workspace.objects.get(pk={created['workspace_id']!r}); "
        "make_active_mailbox(ws, email='alex@pause-mail.test'); make_active_mailbox(ws, email='sam@pause-mail.test')"))
    proc = start(env)
    try:
        wait_healthy(port, proc, deadline_s=300)  # a loaded 2-core machine starts serve slowly
        yield env, proc, Client(port, created["api_key"])
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
        if dbname:
            import os as _os

            import psycopg

            with psycopg.connect(_os.environ["DATABASE_URL"], autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def launch(env, api, leads):
    status, body = api.call("POST", "/v1/campaigns", {"name": "live", "leads": leads, "steps": STEPS,
                                                      "sending_window": ALWAYS}, key=str(uuid.uuid4()))
    assert status == 200, body
    cid = body["result"]["campaign_id"]
    status, body = api.call("POST", "/v1/launch_campaign", {"campaign_id": cid})
    token = body["result"]["confirmation_token"]
    manage(env, "approve", token, "--by", "owner@pause.test")
    status, body = api.call("POST", "/v1/launch_campaign", {"campaign_id": cid, "confirmation_token": token},
                            key=str(uuid.uuid4()))
    assert status == 200 and body["result"]["status"] == "launched", body
    return cid


def sent(api, cid):
    status, body = api.call("GET", f"/v1/campaigns/{cid}")
    assert status == 200, body
    return body


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="serve's process tree is Linux-tested")
def test_paused_campaign_sends_nothing_while_the_worker_runs(served):
    env, proc, api = served
    a = launch(env, api, [{"email": "ann@acme.test"}, {"email": "al@acme.test"}])
    # A is under way (8 steps, one per tick): pause it in the middle
    wait_for("A's first messages", lambda: sent(api, a)["stats"]["messages"]["sent"] >= 2, proc)
    status, body = api.call("POST", "/v1/pause_campaign", {"campaign_id": a})
    assert status == 200 and body["result"]["state"] == "paused", body
    at_pause = sent(api, a)
    # messages already handed to SMTP when the pause returned may still finish; nothing else may go out
    ceiling = at_pause["stats"]["messages"]["sent"] + at_pause["stats"]["messages"]["in_doubt"]
    assert ceiling < 16
    # B runs all 8 steps on the same mailboxes: at least 8 more scheduler ticks with a worker consuming them
    b = launch(env, api, [{"email": "bea@beta.test"}])
    wait_for("B to complete", lambda: sent(api, b)["state"] == "completed", proc)
    assert sent(api, b)["stats"]["messages"]["sent"] == 8
    paused = sent(api, a)
    assert paused["state"] == "paused" and paused["waiting_reason"] == "paused"
    frozen = paused["stats"]["messages"]["sent"]
    assert frozen <= ceiling
    assert paused["stats"]["messages"]["in_doubt"] == 0

    status, body = api.call("POST", "/v1/resume_campaign", {"campaign_id": a}, key="resume-a")
    assert status == 200 and body["result"]["state"] == "launched", body
    wait_for("A to complete", lambda: sent(api, a)["state"] == "completed", proc)
    done = sent(api, a)
    assert done["stats"]["messages"]["sent"] == 16  # every (lead, step) exactly once, before and after the pause
    assert done["stats"]["messages"]["sent_per_step"] == [{"step": i, "sent": 2} for i in range(1, 9)]
    assert done["stats"]["leads"]["finished"] == 2
    status, leads = api.call("GET", f"/v1/campaigns/{a}/leads")
    assert {lead["last_step_sent"] for lead in leads["leads"]} == {8}
