"""Live mode (SANDBOX=0) never answers from the built-in echo upstream, nor charges for it (CONTRACT 4.14): the
REST door and the llm_chat verb (the MCP path) answer 502 provider_unavailable naming LLM_MODELS_FILE, with no
hold left and the request record failed; models on a real upstream keep working."""

import pytest

from api.pipeline import execute
from billing.models import CreditAccount, Hold, LedgerEntry, RequestRecord
from core.ids import new_id
from core.verbs import REGISTRY, Context

pytestmark = pytest.mark.usefixtures("models_file")

HELLO = [{"role": "user", "content": "hello there world"}]


def _nothing_charged(ws, request_id, start):
    acc = CreditAccount.objects.get(pk=ws.pk)
    assert (acc.balance_micros, acc.reserved_micros) == (start, 0)
    assert not LedgerEntry.objects.filter(kind="charge").exists()
    assert not Hold.objects.filter(status="pending").exists()
    rec = RequestRecord.objects.get(pk=request_id)
    assert rec.status == "failed" and rec.credits_charged_micros == 0 and rec.error["code"] == "provider_unavailable"


@pytest.mark.parametrize("headers", [{}, {"Idempotency-Key": "echo-1"}])
def test_rest_echo_model_refused_in_live_mode(api, workspace, settings, headers):
    start = CreditAccount.objects.get(pk=workspace.pk).balance_micros
    settings.SANDBOX = False
    r = api.post("/v1/llm/chat", {"model": "vendor_a/model_small", "messages": HELLO}, headers=headers)
    assert r.status_code == 502, r.content
    err = r.json()["error"]
    assert err["code"] == "provider_unavailable" and err["details"]["setting"] == "LLM_MODELS_FILE"
    assert "echo upstream" in err["message"]
    _nothing_charged(workspace, r["X-Request-Id"], start)
    ok = api.post("/v1/llm/chat", {"model": "fake/ok", "messages": HELLO})  # a real upstream still answers
    assert ok.status_code == 200, ok.content


def test_verb_echo_model_refused_in_live_mode(workspace, api_key, settings):
    from accounts.models import ApiKey

    start = CreditAccount.objects.get(pk=workspace.pk).balance_micros
    settings.SANDBOX = False
    ctx = Context(workspace=workspace, api_key=ApiKey.objects.get(workspace=workspace), request_id=new_id("req_"),
                  channel="mcp")
    resp = execute(REGISTRY["llm_chat"], ctx=ctx, raw={"model": "vendor_a/model_large", "messages": HELLO})
    assert resp.status == 502 and resp.data["error"]["code"] == "provider_unavailable"
    _nothing_charged(workspace, ctx.request_id, start)


def test_echo_models_still_answer_in_sandbox_mode(api, settings):
    settings.SANDBOX = True
    r = api.post("/v1/llm/chat", {"model": "vendor_a/model_small", "messages": HELLO})
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "echo: hello there world"
