"""GET /v1/replies/:id (CONTRACT 4.8c): the whole reply (text, full_text, attachments) and its thread; free, no
envelope, another workspace's is 404. get_replies rows carry `text` (at most 5,000 characters) and `updated_at`."""

from __future__ import annotations

import pytest

from replies import content, services
from replies.models import Reply
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db

HTML_REPLY = (
    b"From: Jane Doe <jane@acme.com>\r\nTo: alex@outreach-sbx.test\r\nSubject: Re: Quick question\r\n"
    b"Message-ID: <html-1@acme.com>\r\nIn-Reply-To: <msg-0@outreach-sbx.test>\r\nMIME-Version: 1.0\r\n"
    b"Content-Type: multipart/mixed; boundary=\"outer\"\r\n\r\n"
    b"--outer\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    b"<html><body><p>Yes, <b>very</b> interested.</p><p>Can we talk Tuesday at 10?</p>"
    b"<div>-- <br>Jane Doe<br>CTO, Acme</div>"
    b"<blockquote>On Wed Alex wrote: Would you be interested in a call?</blockquote></body></html>\r\n"
    b"--outer\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"brief.pdf\"\r\n"
    b"Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJcfsj6IK\r\n"
    b"--outer--\r\n"
)


@pytest.fixture
def world(workspace):
    return make_world(workspace)


def _store(world, raw):
    stored = services.inbound_store(mailbox=world.mailbox, raw=raw, source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound)


def test_whole_reply_html_converted_attachments_and_thread(api, world):
    reply = _store(world, HTML_REPLY)
    resp = api.get(f"/v1/replies/{reply.pk}")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert "service" not in body and "result" not in body  # a state read: no envelope
    assert body["reply_id"] == reply.pk and body["classification"] == "interested"
    assert "very interested" in body["full_text"] and "<b>" not in body["full_text"]
    assert "Would you be interested in a call?" in body["full_text"]  # the whole body, quote included
    assert "Tuesday at 10" in body["text"] and "Would you be interested" not in body["text"]
    assert body["attachments"] == [{"filename": "brief.pdf", "content_type": "application/pdf", "size": 15}]
    assert body["text_truncated"] is False and body["answered"] is False
    assert [(i["direction"], i["kind"]) for i in body["thread"]] == [("out", "step"), ("in", "reply")]
    step, theirs = body["thread"]
    assert step["message_id"] == "msg-0@outreach-sbx.test" and step["subject"] == "Quick question"
    assert step["text"] == "Hi"
    assert theirs["message_id"] == "html-1@acme.com" and theirs["text"] == body["text"]
    assert body["received_at"] <= body["updated_at"]


def test_rows_carry_text_capped_at_5000(api, world):
    long_text = ("word " * 1500).strip()  # 7,499 characters
    reply = _store(world, reply_bytes(message_id="<long@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>",
                                      body=long_text))
    row = api.post("/v1/get_replies", {}).json()["result"]["replies"][0]
    assert row["reply_id"] == reply.pk
    assert len(row["text"]) == content.ROW_TEXT_LIMIT and row["text_truncated"] is True
    assert row["text"] == long_text[:5000]
    detail = api.get(f"/v1/replies/{reply.pk}").json()
    assert long_text in detail["full_text"]


def test_other_workspace_and_unknown_are_404(api, make_api, world):
    reply = _store(world, reply_bytes(message_id="<mine@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>"))
    stranger, _, _ = make_api()
    for client, path in ((stranger, f"/v1/replies/{reply.pk}"), (api, "/v1/replies/rpl_nope"),
                         (api, "/v1/replies/" + "x" * 300)):
        resp = client.get(path)
        assert resp.status_code == 404, path
        assert resp.json()["error"]["code"] == "not_found"
    assert api.get(f"/v1/replies/{reply.pk}").status_code == 200


def test_received_at_never_moves_updated_at_does(api, world, owner):
    from replies.corrections import reply_correct

    reply = _store(world, reply_bytes(message_id="<fix@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>"))
    before = api.get(f"/v1/replies/{reply.pk}").json()
    reply_correct(workspace=world.workspace, reply_id=reply.pk, label="not_interested", user=owner)
    after = api.get(f"/v1/replies/{reply.pk}").json()
    assert after["received_at"] == before["received_at"]
    assert after["updated_at"] > before["updated_at"]
    rows = api.post("/v1/get_replies", {"since": before["updated_at"]}).json()["result"]["replies"]
    assert [r["reply_id"] for r in rows] == [reply.pk]


def test_migration_fills_existing_replies_from_the_raw_message(world):
    import importlib

    from django.apps import apps

    found = content.extract(HTML_REPLY)
    assert found.text.startswith("Yes, very interested.")
    assert "Jane Doe" not in found.text  # the signature is cut
    assert found.attachments[0]["filename"] == "brief.pdf"
    assert "\x00" not in content.extract(b"\x00garbage").full_text
    reply = _store(world, HTML_REPLY)
    # a reply stored before these fields existed: only its snippet and raw message
    Reply.objects.filter(pk=reply.pk).update(text="", full_text="", attachments=[], updated_at=world.campaign.created_at)
    migration = importlib.import_module("replies.migrations.0006_i31_conversations")
    migration.fill_from_stored(apps, None)
    reply.refresh_from_db()
    assert reply.text == found.text and reply.full_text == found.full_text
    assert reply.attachments == found.attachments and reply.updated_at == reply.received_at
