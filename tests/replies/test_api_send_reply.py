"""POST /v1/send_reply (CONTRACT 4.8c): preview + human approval, then the answer in the thread from the mailbox
that carried it, at most once; the owner's answers_per_day policy; every refusal. The sandbox mailbox's answers
land in the Maildir sink, read back as raw bytes with a compat32 parser."""

from __future__ import annotations

import email
import email.policy
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone

from accounts import services as accounts
from accounts.models import ApiKey
from campaigns.models import Suppression
from replies import answers, services
from replies.models import Reply, ReplyAnswer
from sending.models import Mailbox
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db

BODY = "Great, Tuesday at 10 works. I'll send an invite.\n\nAlex"


@pytest.fixture
def world(workspace):
    return make_world(workspace)


@pytest.fixture
def reply(world):
    raw = reply_bytes(message_id="<r-jane@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>",
                      references="<msg-0@outreach-sbx.test>")
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound)


def sink(settings) -> list[email.message.Message]:
    new = Path(settings.MAIL_SINK_DIR) / "new"
    files = sorted(new.iterdir()) if new.exists() else []
    return [email.message_from_bytes(p.read_bytes(), policy=email.policy.compat32) for p in files]


def answers_in(settings):
    return [m for m in sink(settings) if m["In-Reply-To"]]


def preview(api, reply, body=BODY, **headers):
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": body}, headers=headers or None)
    assert resp.status_code == 200, resp.content
    return resp.json()["result"]


def approve(plaintext, user):
    accounts.token_approve(token=accounts.token_lookup(plaintext=plaintext), user=user)


def test_preview_approve_send_threaded_once(api, owner, world, reply, settings):
    assert Suppression.objects.get(email="jane@acme.com").reason == "replied"  # does not block answers
    result = preview(api, reply)
    assert result["status"] == "preview" and result["reply_id"] == reply.pk
    assert (result["from"], result["to"], result["subject"]) == ("alex@outreach-sbx.test", "jane@acme.com",
                                                                 "Re: Quick question")
    assert result["body"] == BODY and result["in_reply_to"] == "r-jane@acme.com"
    assert result["references"] == ["msg-0@outreach-sbx.test", "r-jane@acme.com"]
    assert result["approval_url"].endswith(f"/console/approvals/{accounts.token_lookup(plaintext=result['confirmation_token']).pk}/")
    assert answers_in(settings) == []  # nothing leaves before a human approves

    call = {"reply_id": reply.pk, "body": BODY, "confirmation_token": result["confirmation_token"]}
    assert api.post("/v1/send_reply", call).json()["error"]["code"] == "idempotency_key_required"
    pending = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "ans-1"})
    assert pending.status_code == 409 and pending.json()["error"]["code"] == "confirmation_pending"
    detail = api.get(f"/v1/replies/{reply.pk}").json()
    assert detail["thread"][-1]["kind"] == "answer" and detail["thread"][-1]["state"] == "pending_approval"

    approve(result["confirmation_token"], owner)
    sent = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "ans-1"})
    assert sent.status_code == 200, sent.content
    out = sent.json()["result"]
    assert out["status"] == "sent", ReplyAnswer.objects.get(pk=out["answer_id"]).error
    assert out["answer_id"] == result["answer_id"] and out["sent_by"] == "test"
    again = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "ans-1"})
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json() == sent.json()
    reused = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "ans-2"})
    assert reused.status_code == 409 and reused.json()["error"]["code"] == "confirmation_used"

    (msg,) = answers_in(settings)
    assert msg["From"].endswith("<alex@outreach-sbx.test>") and msg["To"] == "jane@acme.com"
    assert msg["Subject"] == "Re: Quick question"
    assert msg["Message-ID"] == f"<{out['message_id']}>"
    assert msg["In-Reply-To"] == "<r-jane@acme.com>"
    assert msg["References"].split() == ["<msg-0@outreach-sbx.test>", "<r-jane@acme.com>"]
    assert msg["List-Unsubscribe"] is None and msg["List-Unsubscribe-Post"] is None
    assert msg.get_payload(decode=True).decode().strip() == BODY

    detail = api.get(f"/v1/replies/{reply.pk}").json()
    item = detail["thread"][-1]
    assert (item["kind"], item["direction"], item["state"], item["sent_by"]) == ("answer", "out", "sent", "test")
    assert detail["answered"] is True and detail["updated_at"] > detail["received_at"]


def test_the_leads_answer_to_our_answer_joins_the_same_conversation(api, owner, world, reply, settings):
    result = preview(api, reply)
    approve(result["confirmation_token"], owner)
    out = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY,
                                      "confirmation_token": result["confirmation_token"]},
                   headers={"Idempotency-Key": "k"}).json()["result"]
    (msg,) = answers_in(settings)
    # Jane answers our answer with the References chain her client builds
    chain = f"{msg['References']} {msg['Message-ID']}"
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<r-jane-2@acme.com>", in_reply_to=msg["Message-ID"], references=chain, body="See you then!"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    second = Reply.objects.get(inbound=stored.inbound)
    assert second.campaign_lead_id == world.jane.pk
    thread = api.get(f"/v1/replies/{second.pk}").json()["thread"]
    assert [(i["kind"], i["message_id"]) for i in thread] == [
        ("step", "msg-0@outreach-sbx.test"), ("reply", "r-jane@acme.com"), ("answer", out["message_id"]),
        ("reply", "r-jane-2@acme.com")]
    # answering the second reply continues the same chain
    result2 = preview(api, second, body="Invite sent.")
    assert result2["references"] == ["msg-0@outreach-sbx.test", "r-jane@acme.com", out["message_id"],
                                      "r-jane-2@acme.com"]


def test_denied_draft_is_denied_and_never_sent(api, owner, reply, settings):
    result = preview(api, reply)
    accounts.token_deny(token=accounts.token_lookup(plaintext=result["confirmation_token"]), user=owner)
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY,
                                       "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "d"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "confirmation_denied"
    assert api.get(f"/v1/replies/{reply.pk}").json()["thread"][-1]["state"] == "denied"
    assert answers_in(settings) == []


def test_changed_body_needs_a_new_approval(api, owner, reply):
    result = preview(api, reply)
    approve(result["confirmation_token"], owner)
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY + " (edited)",
                                       "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "e"})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "confirmation_invalid"


@pytest.mark.parametrize("reason", ["unsubscribed", "bounced"])
def test_suppressed_recipient_is_409(api, world, reply, reason):
    Suppression.objects.filter(email="jane@acme.com").update(reason=reason)
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY})
    assert resp.status_code == 409
    err = resp.json()["error"]
    assert err["code"] == "recipient_suppressed" and err["details"] == {"email": "jane@acme.com", "reason": reason}


def test_suppression_after_approval_still_blocks(api, owner, world, reply, settings):
    result = preview(api, reply)
    approve(result["confirmation_token"], owner)
    Suppression.objects.filter(email="jane@acme.com").update(reason="unsubscribed")
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY,
                                       "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "s"})
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "recipient_suppressed"
    assert answers_in(settings) == []


@pytest.mark.parametrize("status,reason", [("suspended", "suspended"), ("removed", "removed"),
                                           ("needs_reconnect", "needs_reconnect"), ("failed", "removed")])
def test_unavailable_mailbox_is_409_naming_why(api, world, reply, status, reason):
    Mailbox.objects.filter(pk=world.mailbox.pk).update(status=status)
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY})
    assert resp.status_code == 409
    err = resp.json()["error"]
    assert err["code"] == "mailbox_unavailable" and err["details"]["reason"] == reason
    assert err["details"]["email"] == "alex@outreach-sbx.test"


def test_a_mailbox_paused_by_deliverability_is_409_paused(api, world, reply):
    Mailbox.objects.filter(pk=world.mailbox.pk).update(health_state="paused")
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY})
    assert resp.status_code == 409
    assert resp.json()["error"]["code"] == "mailbox_unavailable" and resp.json()["error"]["details"]["reason"] == "paused"


@pytest.mark.parametrize("body", ["", "   \n ", "x" * 20_001, "bad \x00 byte", "bell \x07"])
def test_bad_bodies_are_400(api, reply, body):
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": body})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request"
    assert "body" in resp.json()["error"]["details"]["fields"]


def test_body_at_the_limit_is_accepted(api, reply):
    assert preview(api, reply, body="y" * 20_000)["status"] == "preview"


def test_header_breaking_subject_is_400(api, reply):
    Reply.objects.filter(pk=reply.pk).update(subject="Re: hi\r\nBcc: victim@evil.test")
    resp = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY})
    assert resp.status_code == 400 and "subject" in resp.json()["error"]["details"]["fields"]


def test_other_workspace_unknown_and_scope(api, make_api, reply):
    stranger, _, _ = make_api()
    for client, rid in ((stranger, reply.pk), (api, "rpl_nope")):
        resp = client.post("/v1/send_reply", {"reply_id": rid, "body": BODY})
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"
    limited, _, _ = make_api(scopes=["campaign:write"])
    resp = limited.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY})
    assert resp.status_code == 403 and resp.json()["error"]["details"]["required_scope"] == "replies:send"
    assert api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY, "cc": "x"}).status_code == 400


def test_policy_sends_without_approval_up_to_n_a_day(api, api_key, world, reply, settings):
    key = ApiKey.objects.get(workspace=world.workspace)
    key.answers_per_day = 1
    key.save(update_fields=["answers_per_day"])
    call = {"reply_id": reply.pk, "body": BODY}
    assert api.post("/v1/send_reply", call).json()["error"]["code"] == "idempotency_key_required"
    first = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "p1"})
    assert first.status_code == 200, first.content
    out = first.json()["result"]
    assert out["status"] == "sent" and out["without_approval"] is True and out["sent_by"] == "test"
    replay = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "p1"})
    assert replay.json() == first.json()
    second = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "p2"}).json()["result"]
    assert second["status"] == "preview" and second["confirmation_token"]  # today's one is used: approval again
    assert len(answers_in(settings)) == 1
    with time_machine.travel(timezone.now() + timedelta(days=1)):
        third = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "p3"}).json()["result"]
    assert third["status"] == "sent"
    assert len(answers_in(settings)) == 2


def test_a_send_in_doubt_is_never_repeated(api, owner, reply, settings, monkeypatch):
    """The worker's SMTP conversation ends without an outcome (the process dies, the connection drops after
    DATA): the row stays `sending`, a retry of the same call sends nothing, and once the doubt has lasted it
    is `send_unknown`."""
    result = preview(api, reply)
    approve(result["confirmation_token"], owner)
    calls = []

    def dies(*, mailbox, message):
        calls.append(message["Message-ID"])
        raise ConnectionResetError("worker lost mid-DATA")

    monkeypatch.setattr(answers, "send_message", dies)
    call = {"reply_id": reply.pk, "body": BODY, "confirmation_token": result["confirmation_token"]}
    first = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "doubt"})
    assert first.status_code == 500 and first.json()["error"]["code"] == "internal"
    monkeypatch.undo()
    retry = api.post("/v1/send_reply", call, headers={"Idempotency-Key": "doubt"})
    assert retry.status_code == 200 and retry.json()["result"]["status"] == "queued"
    assert len(calls) == 1 and answers_in(settings) == []
    answer = ReplyAnswer.objects.get(pk=result["answer_id"])
    assert answer.state == "sending"
    assert answers.answers_due() == []  # the sweep never picks it up
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert api.get(f"/v1/replies/{reply.pk}").json()["thread"][-1]["state"] == "send_unknown"
        assert answers.answers_report_in_doubt() == 1
    assert ReplyAnswer.objects.get(pk=answer.pk).state == "send_unknown"
    assert answers_in(settings) == []


def test_scope_migration_gives_replies_send_to_launch_keys(workspace):
    import importlib

    from django.apps import apps

    from accounts.services import key_create

    launcher, _ = key_create(workspace=workspace, name="launcher", scopes=["campaign:launch"])
    writer, _ = key_create(workspace=workspace, name="writer", scopes=["campaign:write"])
    migration = importlib.import_module("accounts.migrations.0004_i31_answers_per_day")
    migration.grant_replies_send(apps, None)
    launcher.refresh_from_db()
    writer.refresh_from_db()
    assert launcher.scopes == ["campaign:launch", "replies:send"] and writer.scopes == ["campaign:write"]


def test_webhooks_reply_answered_and_reply_received_carries_text(api, owner, world, settings, monkeypatch):
    from webhooks import services as webhooks
    from webhooks.models import WebhookEvent

    settings.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = True
    monkeypatch.setattr("webhooks.services._enqueue", lambda ids: None)
    webhooks.endpoint_create(workspace=world.workspace, url="http://127.0.0.1:9/hook",
                             events=["reply.received", "reply.answered"])
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<wh@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body="Yes please, send pricing."))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    received = WebhookEvent.objects.get(type="reply.received")
    assert received.data["text"] == "Yes please, send pricing." and received.data["updated_at"]
    reply = Reply.objects.get(inbound=stored.inbound)
    result = preview(api, reply)
    approve(result["confirmation_token"], owner)
    out = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": BODY,
                                      "confirmation_token": result["confirmation_token"]},
                   headers={"Idempotency-Key": "wh"}).json()["result"]
    answered = WebhookEvent.objects.get(type="reply.answered")
    assert answered.data["reply_id"] == reply.pk and answered.data["answer_id"] == out["answer_id"]
    assert (answered.data["kind"], answered.data["state"], answered.data["text"]) == ("answer", "sent", BODY)
    assert answered.data["message_id"] == out["message_id"] and answered.data["sent_by"] == "test"


def test_a_stranger_writing_to_the_mailbox_is_answered_from_it(api, owner, world, settings):
    raw = reply_bytes(frm="Sam Stranger <sam@elsewhere.test>", message_id="<cold@elsewhere.test>",
                      subject="Question about your product", body="Do you integrate with HubSpot?")
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    reply = Reply.objects.get(inbound=stored.inbound)
    assert reply.campaign_id is None
    thread = api.get(f"/v1/replies/{reply.pk}").json()["thread"]
    assert [(i["kind"], i["message_id"]) for i in thread] == [("reply", "cold@elsewhere.test")]
    result = preview(api, reply, body="Yes, natively.")
    assert (result["from"], result["to"], result["subject"]) == ("alex@outreach-sbx.test", "sam@elsewhere.test",
                                                                 "Re: Question about your product")
    assert result["references"] == ["cold@elsewhere.test"]
    approve(result["confirmation_token"], owner)
    out = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": "Yes, natively.",
                                      "confirmation_token": result["confirmation_token"]},
                   headers={"Idempotency-Key": "stranger"}).json()["result"]
    assert out["status"] == "sent"
    (msg,) = answers_in(settings)
    assert msg["In-Reply-To"] == "<cold@elsewhere.test>" and msg["References"] == "<cold@elsewhere.test>"
