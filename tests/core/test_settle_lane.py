"""Settlements after the answer run ahead of new work: on the API thread that answered, before it takes another
call, never queued behind the verb calls waiting for an API thread. Live server (uvicorn, config.asgi); the order is made with gates, never timed."""

import threading

import httpx
import pytest

from api import door
from billing.models import RequestRecord
from tests.core.test_settle_after_answer import server  # noqa: F401 - the live server fixture
from tests.llmproxy.test_live import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_settlement_does_not_wait_behind_new_calls(server, api_key, workspace, settings, monkeypatch):  # noqa: F811
    """One API thread. Call A runs; call B waits for the thread; A is answered, and its settlement must commit
    while B still holds the thread (on the verbs' FIFO pool it would wait for B, and behind a burst, for all of
    it)."""
    from leads.verification import verbs as verification_verbs

    door.close_threads()
    settings.API_THREADS = 1
    settings.SETTLE_AFTER_RESPONSE = True
    real = verification_verbs.services.verification_run
    entered = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]
    calls = []

    def gated(**kwargs):
        n = len(calls)
        calls.append(n)
        if n < 2:
            entered[n].set()
            assert release[n].wait(60)
        return real(**kwargs)

    monkeypatch.setattr(verification_verbs.services, "verification_run", gated)
    answers = {}

    def call(name):
        answers[name] = httpx.post(f"{server}/v1/verify_email", json={"email": "not-an-address"}, timeout=90,
                                   headers={"Authorization": f"Bearer {api_key}"})

    threads = [threading.Thread(target=call, args=(name,), daemon=True) for name in ("a", "b")]
    try:
        threads[0].start()
        assert entered[0].wait(30)
        threads[1].start()
        wait_for(lambda: door._verb_pool._work_queue.qsize() == 1, "call B waiting for the API thread")
        release[0].set()
        threads[0].join(30)
        assert answers["a"].status_code == 200, answers["a"].text
        rid = answers["a"].json()["service"]["request_id"]
        assert entered[1].wait(30)  # B now holds the only API thread
        wait_for(lambda: RequestRecord.objects.get(pk=rid).status == "succeeded", "A's settlement", timeout=30)
        assert not release[1].is_set() and threads[1].is_alive()  # settled while B still ran
    finally:
        release[0].set()
        release[1].set()
        for t in threads:
            t.join(60)
    assert answers["b"].status_code == 200
