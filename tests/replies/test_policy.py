"""The owner's policy (CONTRACT 4.8c): `answers_per_day` per API key or OAuth connection, set with `manage.py
key_limits` or on the console's API keys page; the approval page of a send_reply token shows the thread above
the draft."""

from __future__ import annotations

import json
from io import StringIO
from urllib.parse import urlparse

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import ApiKey, Membership
from replies import services
from replies.models import Reply
from tests.factories import UserFactory
from tests.replies.conftest import make_world, reply_bytes

pytestmark = pytest.mark.django_db


def run(*args) -> dict:
    out = StringIO()
    call_command("key_limits", *args, stdout=out)
    return json.loads(out.getvalue())


def test_key_limits_command_sets_and_prints_one_json_object(workspace, api_key):
    key = ApiKey.objects.get(workspace=workspace)
    shown = run(str(key.pk))
    assert shown == {"key_id": str(key.pk), "name": "test", "kind": "api_key", "workspace_id": str(workspace.pk),
                     "scopes": key.scopes, "revoked": False, "answers_per_day": None,
                     "daily_limit": None, "monthly_limit": None, "limits": {"day": None, "month": None}}
    assert run(str(key.pk), "--answers-per-day", "3")["answers_per_day"] == 3
    key.refresh_from_db()
    assert key.answers_per_day == 3
    assert run(str(key.pk), "--answers-per-day", "none")["answers_per_day"] is None
    for bad in (["--answers-per-day", "-1"], ["--answers-per-day", "three"], ["--answers-per-day", "10001"]):
        with pytest.raises(CommandError):
            run(str(key.pk), *bad)
    with pytest.raises(CommandError):
        run("not-a-uuid")
    with pytest.raises(CommandError):
        run("00000000-0000-0000-0000-000000000000")


@pytest.fixture
def console(owner):
    c = Client()
    c.force_login(owner)
    return c


def test_console_keys_page_sets_the_policy_owners_only(console, workspace, api_key):
    key = ApiKey.objects.get(workspace=workspace)
    page = console.get("/console/keys/").content.decode()
    assert "Replies a day without approval" in page
    resp = console.post(f"/console/keys/{key.pk}/answers/", {"answers_per_day": "5"})
    assert resp.status_code == 302
    key.refresh_from_db()
    assert key.answers_per_day == 5
    console.post(f"/console/keys/{key.pk}/answers/", {"answers_per_day": ""})
    key.refresh_from_db()
    assert key.answers_per_day is None
    console.post(f"/console/keys/{key.pk}/answers/", {"answers_per_day": "lots"})
    key.refresh_from_db()
    assert key.answers_per_day is None

    member = UserFactory()
    Membership.objects.create(user=member, workspace=workspace, role=Membership.Role.MEMBER)
    other = Client()
    other.force_login(member)
    assert other.post(f"/console/keys/{key.pk}/answers/", {"answers_per_day": "9"}).status_code in (403, 404)
    key.refresh_from_db()
    assert key.answers_per_day is None


def test_approval_page_shows_the_thread_above_the_draft(api, console, workspace):
    world = make_world(workspace)
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<ap@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>", body="Can you send pricing?"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    reply = Reply.objects.get(inbound=stored.inbound)
    result = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": "Pricing attached below."}).json()["result"]
    page = console.get(urlparse(result["approval_url"]).path).content.decode()
    thread_at, draft_at = page.index('data-testid="thread"'), page.index('data-testid="draft"')
    assert thread_at < draft_at
    assert "Can you send pricing?" in page[thread_at:draft_at] and "Hi" in page[thread_at:draft_at]
    assert "Pricing attached below." in page[draft_at:]
    assert ">Approve<" in page and ">Deny<" in page
