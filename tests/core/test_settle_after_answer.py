"""SETTLE_AFTER_RESPONSE through the REST verbs' fast door (api.door, api.pipeline): a metered call whose
settlement is known exactly is answered first, stating exactly what the settlement then commits; the verb's own
result rows (Outcome.writes) commit with that settlement. Served live by uvicorn (config.asgi); order is observed
with a gate on the settlement, never timed."""

import asyncio
import json
import socket
import threading
from urllib.parse import urlparse

import httpx
import pytest

from api import door
from billing import services as billing
from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from core.money import format_credits
from leads.verification.models import Verification
from tests.llmproxy.test_live import wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # the server's threads have their own connections

START = 300_000_000  # the signup grant
PRICE = 1_000_000  # verify_email: 1 credit


@pytest.fixture
def server():
    from config.asgi import application
    from tests.llmproxy.fake_upstream import serve_in_thread, stop_server

    srv, thread, port = serve_in_thread(application, lifespan="on")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(srv, thread)
        door.close_threads()


def _verify(base, api_key, **headers):
    return httpx.post(f"{base}/v1/verify_email", json={"email": "not-an-address"}, timeout=30,
                      headers={"Authorization": f"Bearer {api_key}", **headers})


def _settled():
    wait_for(lambda: not list(door._background), "the settlements after the answers")


def test_the_answer_leaves_first_and_the_settlement_commits_what_it_stated(server, api_key, workspace, settings,
                                                                          settle_gate):
    settings.SETTLE_AFTER_RESPONSE = True  # the default
    r = _verify(server, api_key)  # returns while the settlement is held at the gate
    settle_gate.order.append("response")
    assert r.status_code == 200, r.text
    service = r.json()["service"]
    assert service["credits_charged"] == format_credits(PRICE)
    assert service["credits_available"] == format_credits(START - PRICE)
    rid = service["request_id"]
    assert RequestRecord.objects.get(pk=rid).status == "in_progress"
    assert Hold.objects.get(request_id=rid).status == "held"  # nothing settled yet: the hold covers it
    assert not Verification.objects.filter(request_id=rid).exists()  # the result row rides with the settlement

    settle_gate.open.set()
    _settled()
    assert settle_gate.order == ["response", "settled"]
    record = RequestRecord.objects.get(pk=rid)
    assert (record.status, record.http_status, record.credits_charged_micros) == ("succeeded", 200, PRICE)
    assert Hold.objects.get(request_id=rid).status == "captured"
    assert LedgerEntry.objects.get(request_id=rid).amount_micros == -PRICE
    row = Verification.objects.get(request_id=rid)
    assert (row.status, row.reason, row.workspace_id) == ("invalid", "invalid_syntax", workspace.pk)
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (START - PRICE, 0)  # what the answer said


def test_the_settlement_starts_once_its_answer_is_sent(server, api_key, workspace, settle_gate, monkeypatch):
    """The thread that answered settles after the loop has sent the answer (up to door.SENT_WAIT): it does not hold
    the GIL while the answer waits to leave. Sending is slowed here, and the bound lifted: the order is the proof."""
    real = door._send_parts

    async def slow_send(send, response, headers):
        await asyncio.sleep(0.3)  # long beside a settlement: one that did not wait would commit meanwhile
        await real(send, response, headers)
        settle_gate.order.append("sent")

    monkeypatch.setattr(door, "_send_parts", slow_send)
    monkeypatch.setattr(door, "SENT_WAIT", 30)
    settle_gate.open.set()
    r = _verify(server, api_key)
    assert r.status_code == 200, r.text
    _settled()
    assert settle_gate.order == ["sent", "settled"]
    assert RequestRecord.objects.get(pk=r.json()["service"]["request_id"]).status == "succeeded"


@pytest.mark.parametrize("setting, headers", [(False, {}), (True, {"Idempotency-Key": "k-1"})],
                         ids=["off", "idempotent"])
def test_otherwise_the_settlement_commits_before_the_answer_leaves(server, api_key, workspace, settings, settle_gate,
                                                                   setting, headers):
    settings.SETTLE_AFTER_RESPONSE = setting
    settle_gate.open.set()
    r = _verify(server, api_key, **headers)
    settle_gate.order.append("response")
    assert r.status_code == 200, r.text
    assert settle_gate.order == ["settled", "response"]
    rid = r.json()["service"]["request_id"]
    assert RequestRecord.objects.get(pk=rid).status == "succeeded"
    assert Verification.objects.filter(request_id=rid).count() == 1
    assert r.json()["service"]["credits_available"] == format_credits(START - PRICE)


def test_a_settlement_that_fails_after_its_answer_is_retried(server, api_key, workspace, flaky_settlement):
    r = _verify(server, api_key)
    assert r.status_code == 200, r.text
    rid = r.json()["service"]["request_id"]
    _settled()
    assert flaky_settlement == [rid, rid]
    assert RequestRecord.objects.get(pk=rid).credits_charged_micros == PRICE
    assert Verification.objects.filter(request_id=rid).count() == 1  # written once, by the attempt that committed
    acc = CreditAccount.objects.get(pk=workspace.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (START - PRICE, 0)


def test_a_settlement_that_keeps_failing_leaves_the_hold_to_the_sweep(server, api_key, workspace, monkeypatch):
    monkeypatch.setattr(billing, "SETTLE_RETRIES", (0.0,))

    def broken(**kwargs):
        raise RuntimeError("database unavailable")

    monkeypatch.setattr(billing, "hold_settle_close", broken)
    r = _verify(server, api_key)
    assert r.status_code == 200, r.text
    rid = r.json()["service"]["request_id"]
    _settled()
    assert Hold.objects.get(request_id=rid).status == "held"  # the sweep releases it (nothing charged)
    assert not Verification.objects.filter(request_id=rid).exists()  # the result commits with its charge or not


def test_a_client_gone_before_the_answer_still_gets_its_call_settled(server, api_key, workspace, monkeypatch):
    """The client hangs up while the verb runs: its view is cancelled, and the settlement still follows the verb."""
    from leads.verification import verbs as verification_verbs

    entered, release = threading.Event(), threading.Event()
    real = verification_verbs.services.verification_run

    def slow(**kwargs):
        entered.set()
        assert release.wait(30)
        return real(**kwargs)

    monkeypatch.setattr(verification_verbs.services, "verification_run", slow)
    body = json.dumps({"email": "not-an-address"}).encode()
    url = urlparse(server)
    sock = socket.create_connection((url.hostname, url.port))
    sock.sendall(b"POST /v1/verify_email HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 + f"Authorization: Bearer {api_key}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    assert entered.wait(30)
    sock.close()
    wait_for(lambda: RequestRecord.objects.filter(workspace=workspace).exists(), "the request record")
    release.set()
    wait_for(lambda: RequestRecord.objects.filter(workspace=workspace, status="succeeded").exists(),
             "the settlement of the call whose client left")
    _settled()
    record = RequestRecord.objects.get(workspace=workspace)
    assert record.credits_charged_micros == PRICE
    assert not Hold.objects.filter(status="held").exists()
    assert Verification.objects.filter(request_id=record.pk).count() == 1


@pytest.mark.parametrize("door_name", ["verbs", "llm"])
def test_the_servers_shutdown_waits_for_the_settlements_left_after_answers(door_name):
    """config.asgi's lifespan shutdown awaits both doors' drain_background (api.door.drain)."""
    from llmproxy import views

    registry, drain_background = {"verbs": (door._background, door.drain_background),
                                  "llm": (views._background, views.drain_background)}[door_name]
    done = []

    async def main():
        gate = asyncio.Event()

        async def settlement():
            await gate.wait()
            done.append("settled")

        future = asyncio.ensure_future(settlement())
        registry.add(future)
        future.add_done_callback(registry.discard)
        asyncio.get_running_loop().call_soon(gate.set)
        await drain_background()
        assert done == ["settled"]
        await drain_background()  # nothing pending: returns at once

    asyncio.run(main())


def test_a_verbs_result_rows_are_written_by_the_settlement_itself(workspace):
    """Outcome.writes: inserted by the settlement's own statement (PostgreSQL) or transaction (SQLite)."""
    hold = billing.request_open_with_hold(request_id="req_rows", workspace=workspace, verb="verify_email",
                                          amount=PRICE)
    row = Verification(email="a@b.example", domain="b.example", status="invalid", reason="invalid_syntax",
                       workspace=workspace, request_id="req_rows")
    charged, available = billing.hold_settle_close(hold=hold, charge=PRICE, workspace=workspace,
                                                   request_id="req_rows", status="succeeded", http_status=200,
                                                   verb="verify_email", writes=(row,))
    assert (charged, available) == (PRICE, START - PRICE)
    stored = Verification.objects.get(request_id="req_rows")
    assert (stored.email, stored.domain, stored.status, stored.workspace_id) == (
        "a@b.example", "b.example", "invalid", workspace.pk)
    assert stored.checked_at == row.checked_at  # the instance's own default, as Model.save would write it


def test_a_settlement_that_lost_its_hold_to_the_sweep_writes_no_rows_and_leaves_the_record_failed(workspace):
    """The expiry sweep released the hold and closed the record first: the late settlement charges nothing, writes
    none of the verb's rows (they commit with the charge or not at all) and does not reopen the record."""
    hold = billing.request_open_with_hold(request_id="req_late", workspace=workspace, verb="verify_email",
                                          amount=PRICE)
    billing.hold_release(hold=Hold.objects.get(pk=hold.pk))
    RequestRecord.objects.filter(pk="req_late").update(status="failed", error=billing.ABANDONED)
    row = Verification(email="a@b.example", domain="b.example", status="invalid", reason="invalid_syntax",
                       workspace=workspace, request_id="req_late")
    charged, available = billing.hold_settle_close(hold=hold, charge=PRICE, workspace=workspace,
                                                   request_id="req_late", status="succeeded", http_status=200,
                                                   verb="verify_email", writes=(row,))
    assert (charged, available) == (0, START)
    assert not Verification.objects.filter(request_id="req_late").exists()
    record = RequestRecord.objects.get(pk="req_late")
    assert (record.status, record.credits_charged_micros) == ("failed", 0)
    assert not LedgerEntry.objects.filter(request_id="req_late").exists()
