"""POST /v1/draft_reply (CONTRACT 4.8c): a suggested answer written by an allowlisted model from the conversation,
billed like /v1/llm/chat (the exact token charge in the envelope, the same hold and settlement), never sent. In
sandbox mode the models are served by the built-in echo upstream."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.money import format_credits
from llmproxy import catalog
from replies import services
from replies.models import Reply, ReplyAnswer
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def reply(workspace):
    world = make_world(workspace)
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<d1@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body="Interested - what does it cost?"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound)


def test_draft_is_billed_exactly_and_sends_nothing(api, reply, settings):
    resp = api.post("/v1/draft_reply", {"reply_id": reply.pk, "instructions": "Offer a call on Thursday",
                                        "model": "vendor_a/model_small"})
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["result"]["model"] == "vendor_a/model_small"
    draft = body["result"]["body"]
    assert "what does it cost?" in draft and "Offer a call on Thursday" in draft  # the echo repeats the prompt
    record = api.get(f"/v1/requests/{body['service']['request_id']}").json()
    usage = record["usage"]
    price = catalog.model_get("vendor_a/model_small")
    assert body["service"]["credits_charged"] == format_credits(price.charge_for(usage["total_tokens"]))
    assert record["credits_charged"] == body["service"]["credits_charged"] != "0"
    assert record["verb"] == "draft_reply" and record["status"] == "succeeded"
    assert ReplyAnswer.objects.count() == 0
    new = Path(settings.MAIL_SINK_DIR) / "new"
    assert not new.exists() or not list(new.iterdir())


def test_default_model_and_refusals(api, make_api, reply, settings):
    default = api.post("/v1/draft_reply", {"reply_id": reply.pk}).json()
    assert default["result"]["model"] == next(iter(catalog.models()))
    settings.REPLIES_DRAFT_MODEL = "vendor_b/model_mini"
    assert api.post("/v1/draft_reply", {"reply_id": reply.pk}).json()["result"]["model"] == "vendor_b/model_mini"
    bad = api.post("/v1/draft_reply", {"reply_id": reply.pk, "model": "vendor_z/nope"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "model_not_allowed"
    stranger, _, _ = make_api()
    other = stranger.post("/v1/draft_reply", {"reply_id": reply.pk})
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    assert api.post("/v1/draft_reply", {"reply_id": reply.pk, "tone": "warm"}).status_code == 400
