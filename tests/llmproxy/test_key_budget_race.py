"""A key's budget under a race of 100 concurrent calls through the live server (uvicorn, config.asgi): REST verb
calls, LLM calls and LLM streams of one key against a small daily limit. The key never spends past its limit,
the ledger equals the balance, and every refused call is a recorded 402 key_budget_exceeded with nothing
charged. Runs on SQLite and on PostgreSQL (DATABASE_URL)."""

import asyncio
import json
import threading

import openai
import pytest
from django.db.models import Sum

from accounts.models import ApiKey
from billing import services as billing
from billing.models import CreditAccount, Hold, KeyBudget, LedgerEntry, RequestRecord
from core.money import credits
from tests.llmproxy.test_live import HELLO, client, settled

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = credits("3")


def test_100_concurrent_verbs_llm_calls_and_streams_never_pass_the_key_budget(live, api_key, workspace, fake,
                                                                             settings):
    settings.RATE_LIMIT_PER_MINUTE = 10_000
    fake.gate.set()
    key = ApiKey.objects.get(workspace=workspace)
    billing.credits_grant(workspace=workspace, amount=credits(1000))
    billing.key_limits_set(api_key=key, daily=LIMIT)
    auth = {"Authorization": f"Bearer {api_key}"}
    results: list = []

    async def verb(http):
        r = await http.post(f"{live}/v1/test_echo", headers=auth, json={"hold": "0.2", "charge": "0.1"})
        results.append(("verb", r.status_code, r.json()))

    async def chat(http):
        r = await http.post(f"{live}/v1/llm/chat", headers=auth, json={"model": "fake/ok", "messages": HELLO})
        results.append(("chat", r.status_code, r.json()))

    async def stream(http):
        async with http.stream("POST", f"{live}/v1/llm/chat", headers=auth,
                               json={"model": "fake/ok", "messages": HELLO, "stream": True}) as r:
            lines = [line async for line in r.aiter_lines()]
            body = json.loads("".join(lines)) if r.status_code != 200 else lines
            results.append(("stream", r.status_code, body))

    async def run_all():
        async with httpx_client() as http:
            jobs = [verb, chat, stream, verb] * 25
            await asyncio.gather(*(job(http) for job in jobs))

    runner = threading.Thread(target=asyncio.run, args=(run_all(),))
    runner.start()
    runner.join(timeout=120)
    assert not runner.is_alive()
    settled()

    assert len(results) == 100
    refused = [body for _, status, body in results if status != 200]
    assert all(body["error"]["code"] == "key_budget_exceeded" for body in refused), refused[:3]
    assert refused and len(refused) < 100
    records = RequestRecord.objects.filter(api_key=key)
    spent = records.aggregate(s=Sum("credits_charged_micros"))["s"]
    assert 0 < spent <= LIMIT
    assert KeyBudget.objects.get(pk=key.pk).day_micros == spent  # every hold settled and gave back the rest
    failed = records.filter(status="failed")
    assert failed.count() == len(refused)
    assert all(r.error["code"] == "key_budget_exceeded" and r.credits_charged_micros == 0 for r in failed)
    assert not Hold.objects.filter(status="held").exists()
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert account.reserved_micros == 0
    assert account.balance_micros == credits(1300) - spent
    assert LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount_micros"))["s"] == account.balance_micros


def httpx_client():
    import httpx

    return httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=100))


def test_openai_client_sees_402_key_budget_exceeded_streaming_and_not(live, api_key, workspace, fake):
    key = ApiKey.objects.get(workspace=workspace)
    billing.key_limits_set(api_key=key, daily=0)
    c = client(live, api_key)
    for stream in (False, True):
        with pytest.raises(openai.APIStatusError) as exc:
            c.chat.completions.create(model="fake/ok", messages=HELLO, stream=stream)
        assert exc.value.status_code == 402
        assert exc.value.body["code"] == "key_budget_exceeded"
        assert exc.value.body["details"]["period"] == "day" and exc.value.body["details"]["limit"] == "0"
    assert fake.requests == []  # no provider called
    assert RequestRecord.objects.filter(api_key=key, status="failed").count() == 2
    assert CreditAccount.objects.get(pk=workspace.pk).balance_micros == credits(300)


def test_the_early_start_needs_the_keys_budget_known_and_covering_the_hold():
    from llmproxy import services as llm

    allowance = llm.EarlyStart(seconds=60, rate_seconds=60)
    allowance.learn("ws", 1_000)
    assert not allowance.claim("ws", 10, budget_key="key")  # the key's budget unknown: the hold decides first
    allowance.learn_budget("key", None)  # its last hold found no limits
    assert allowance.claim("ws", 10, budget_key="key")
    allowance.learn_budget("key", 15)  # 15 below its nearest limit
    assert allowance.claim("ws", 10, budget_key="key") and not allowance.claim("ws", 10, budget_key="key")
    allowance.learn_budget("key", 100)
    allowance.learn_budget("key", None, refused=True)  # a budget refusal forgets the key
    assert not allowance.claim("ws", 1, budget_key="key")
    assert allowance.claim("ws", 1)  # (other keys and calls without a budget check are unaffected)
