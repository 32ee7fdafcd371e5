"""POST /v1/get_replies (SPEC 4.8, CONTRACT 4.8): free, newest first, since exclusive, limit 1..200, 404s."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from replies import services
from replies.models import Reply
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db

SEQ = itertools.count()
T0 = datetime(2026, 11, 19, 10, 0, 0, 123456, tzinfo=UTC)


def add_replies(world, n, *, start=T0, step=timedelta(minutes=1), frm="jane@acme.com", in_reply_to="<msg-0@outreach-sbx.test>"):
    rows = []
    for i in range(n):
        stored = services.inbound_store(mailbox=world.mailbox, raw=reply_bytes(
            frm=frm, message_id=f"<r{next(SEQ)}@x>", in_reply_to=in_reply_to, body=f"Reply {i}: interested"),
            source="smtp")
        Reply.objects.filter(inbound=stored.inbound).update(received_at=start + i * step, updated_at=start + i * step)
        rows.append(stored.inbound.reply.pk)
    return rows


@pytest.fixture
def world(workspace):
    return make_world(workspace)


def test_shape_newest_first_and_free(api, world):
    ids = add_replies(world, 3)
    resp = api.post("/v1/get_replies", {})
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["service"]["credits_charged"] == "0" and body["service"]["credits_available"] == "300"
    replies = body["result"]["replies"]
    assert [r["reply_id"] for r in replies] == ids[::-1]
    assert replies[-1] == {
        "reply_id": ids[0], "campaign_id": str(world.campaign.pk), "from_email": "jane@acme.com",
        "subject": "Re: Quick question", "snippet": "Reply 0: interested", "classification": None,
        "language": None, "received_at": "2026-11-19T10:00:00.123456Z", "lead_email": "jane@acme.com",
        "correction": None, "text": "Reply 0: interested", "text_truncated": False,
        "updated_at": "2026-11-19T10:00:00.123456Z",
    }


def test_a_reply_classified_after_it_was_read_comes_back_with_its_label(api, world):
    """Polling with since = the newest updated_at read never loses a classification: classifying a reply
    moves its updated_at forward to that moment; its received_at never changes."""
    ids = add_replies(world, 2)
    first = api.post("/v1/get_replies", {}).json()["result"]["replies"]
    assert [r["classification"] for r in first] == [None, None]
    services.inbound_classify(inbound_id=Reply.objects.get(pk=ids[0]).inbound_id)  # the older one
    again = api.post("/v1/get_replies", {"since": first[0]["updated_at"]}).json()["result"]["replies"]
    assert [(r["reply_id"], r["classification"]) for r in again] == [(ids[0], "interested")]
    assert again[0]["updated_at"] > first[0]["updated_at"]
    assert again[0]["received_at"] == first[1]["received_at"]  # accepted time: unchanged
    assert api.post("/v1/get_replies", {"since": again[0]["updated_at"]}).json()["result"]["replies"] == []


def test_since_is_exclusive_and_round_trips_updated_at(api, world):
    ids = add_replies(world, 3)
    first = api.post("/v1/get_replies", {}).json()["result"]["replies"]
    since = first[1]["updated_at"]  # the middle one
    got = api.post("/v1/get_replies", {"since": since}).json()["result"]["replies"]
    assert [r["reply_id"] for r in got] == [ids[2]]
    assert api.post("/v1/get_replies", {"since": first[0]["updated_at"]}).json()["result"]["replies"] == []
    # an offset and a naive timestamp (UTC) mean the same instant
    assert len(api.post("/v1/get_replies", {"since": "2026-11-19T11:00:00.123456+01:00"}).json()["result"]["replies"]) == 2
    assert len(api.post("/v1/get_replies", {"since": "2026-11-19T10:00:00.123456"}).json()["result"]["replies"]) == 2


def test_before_pages_back(api, world):
    ids = add_replies(world, 5)
    page1 = api.post("/v1/get_replies", {"limit": 2}).json()["result"]["replies"]
    page2 = api.post("/v1/get_replies", {"limit": 2, "before": page1[-1]["received_at"]}).json()["result"]["replies"]
    assert [r["reply_id"] for r in page1 + page2] == ids[::-1][:4]


def test_limit_default_and_edges(api, world):
    add_replies(world, 205, step=timedelta(seconds=1))
    assert len(api.post("/v1/get_replies", {}).json()["result"]["replies"]) == 50
    assert len(api.post("/v1/get_replies", {"limit": 1}).json()["result"]["replies"]) == 1
    assert len(api.post("/v1/get_replies", {"limit": 200}).json()["result"]["replies"]) == 200
    for bad in (0, 201, -1, "ten", 1.5, None):
        resp = api.post("/v1/get_replies", {"limit": bad})
        assert resp.status_code == 400, bad
        assert resp.json()["error"]["code"] == "invalid_request"
        assert "limit" in resp.json()["error"]["details"]["fields"]


def test_invalid_fields(api, world):
    for body in ({"since": "yesterday"}, {"campaign_id": 5}, {"colour": "red"}, {"since": 17}):
        resp = api.post("/v1/get_replies", body)
        assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request", body


def test_campaign_filter_and_404s(api, make_api, world, workspace):
    from campaigns.models import Campaign

    ids = add_replies(world, 2)
    add_replies(world, 1, frm="stranger@else.org", in_reply_to=None, start=T0 + timedelta(hours=1))
    other = Campaign.objects.create(workspace=workspace, name="empty")
    got = api.post("/v1/get_replies", {"campaign_id": str(world.campaign.pk)}).json()["result"]["replies"]
    assert [r["reply_id"] for r in got] == ids[::-1]
    assert api.post("/v1/get_replies", {"campaign_id": str(other.pk)}).json()["result"]["replies"] == []
    assert len(api.post("/v1/get_replies", {}).json()["result"]["replies"]) == 3
    for unknown in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        resp = api.post("/v1/get_replies", {"campaign_id": unknown})
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_workspace_isolation(api, make_api, world):
    add_replies(world, 2)
    other_api, other_ws, _ = make_api()
    other_world = make_world(other_ws, mailbox_email="bob@other-sbx.test", prefix="o-")
    add_replies(other_world, 1, in_reply_to="<o-msg-0@outreach-sbx.test>")
    assert len(api.post("/v1/get_replies", {}).json()["result"]["replies"]) == 2
    mine = other_api.post("/v1/get_replies", {}).json()["result"]["replies"]
    assert len(mine) == 1 and mine[0]["campaign_id"] == str(other_world.campaign.pk)
    # another workspace's campaign is 404, never an empty list
    resp = other_api.post("/v1/get_replies", {"campaign_id": str(world.campaign.pk)})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_requires_a_key(world):
    from tests.conftest import Api

    resp = Api(None).post("/v1/get_replies", {})
    assert resp.status_code == 401 and resp.json()["error"]["code"] == "unauthenticated"


def test_mcp_tool_is_registered():
    from core.verbs import REGISTRY

    verb = REGISTRY["get_replies"]
    assert verb.tool_name == "get_replies" and verb.path == "/v1/get_replies" and verb.max_charge == 0


def test_openapi_documents_get_replies(client):
    import json

    spec = json.loads(client.get("/openapi.json").content)
    op = spec["paths"]["/v1/get_replies"]["post"]
    body_ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    props = spec["components"]["schemas"][body_ref]["properties"]
    assert {"campaign_id", "since", "limit"} <= set(props)
    assert (props["limit"]["minimum"], props["limit"]["maximum"], props["limit"]["default"]) == (1, 200, 50)
    assert "404" in op["responses"]


def test_language_of_the_persons_text_and_null_for_machine_mail(api, world):
    """Issue 16: `language` is the ISO 639-1 code of what the person wrote; null for machine mail."""
    from tests.replies.conftest import corpus

    for i, body in enumerate(["Vielen Dank, aber wir nutzen bereits HubSpot und sind zufrieden.",
                              "ご提案ありがとうございます。来週デモを拝見したいです。"]):
        stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
            message_id=f"<lang-{i}@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body=body))
        services.inbound_classify(inbound_id=stored.inbound.pk)
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=corpus("postfix-user-unknown"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    replies = api.post("/v1/get_replies", {}).json()["result"]["replies"]
    got = sorted((r["classification"], r["language"]) for r in replies)
    assert got == [("bounce", None), ("interested", "ja"), ("not_interested", "de")]
