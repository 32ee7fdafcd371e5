"""The console's Replies page as conversations (CONTRACT 4.8c): the thread, the whole text, the label, a reply box
that sends at once as the signed-in member, agents' drafts waiting for approval, filters by label, campaign and
unanswered; the approval in Chromium and the inbox at 1280 and 390 px."""

from __future__ import annotations

import email
import email.policy
import os
import shutil
from pathlib import Path

import pytest
from django.test import Client

from accounts.models import Membership
from campaigns.models import Suppression
from replies import services
from replies.models import Reply, ReplyAnswer
from tests.factories import UserFactory
from tests.replies.conftest import make_world, reply_bytes

CHROMIUM = "/usr/bin/chromium"


def _reply(world, mid="<c1@acme.com>", body="Yes! Can we talk Tuesday?\n\nJane"):
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id=mid, in_reply_to="<msg-0@outreach-sbx.test>", body=body))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound)


def _sink(settings):
    new = Path(settings.MAIL_SINK_DIR) / "new"
    return [email.message_from_bytes(p.read_bytes(), policy=email.policy.compat32)
            for p in sorted(new.iterdir())] if new.exists() else []


def _signed_in(user):
    c = Client()
    c.force_login(user)
    return c


@pytest.mark.django_db
def test_member_answers_from_the_conversation_page(workspace, owner, settings):
    world = make_world(workspace)
    reply = _reply(world)
    member = UserFactory(email="mia@example.com")
    Membership.objects.create(user=member, workspace=workspace, role=Membership.Role.MEMBER)
    c = _signed_in(member)
    page = c.get(f"/console/replies/{reply.pk}/").content.decode()
    assert 'data-testid="thread"' in page and "Can we talk Tuesday?" in page and "Hi" in page
    assert 'data-testid="full-text"' in page and "Would you be interested in a call?" in page
    resp = c.post(f"/console/replies/{reply.pk}/answer", {"body": "Tuesday 3pm works. Alex"})
    assert resp.status_code == 302
    (msg,) = [m for m in _sink(settings) if m["In-Reply-To"]]
    assert msg["In-Reply-To"] == "<c1@acme.com>" and msg["Subject"] == "Re: Quick question"
    answer = ReplyAnswer.objects.get(reply=reply)
    assert (answer.state, answer.sent_by, answer.member, answer.without_approval) == ("sent", "mia@example.com",
                                                                                      member, False)
    page = c.get(f"/console/replies/{reply.pk}/").content.decode()
    assert "Tuesday 3pm works." in page and "by mia@example.com" in page
    # a member reads and answers but does not correct labels
    assert "Correct label" not in page


@pytest.mark.django_db
def test_refusals_keep_the_draft_and_say_why(workspace, owner, settings):
    world = make_world(workspace)
    reply = _reply(world)
    c = _signed_in(owner)
    resp = c.post(f"/console/replies/{reply.pk}/answer", {"body": "   "}, follow=True)
    assert "The answer is empty." in resp.content.decode()
    Suppression.objects.filter(email="jane@acme.com").update(reason="unsubscribed")
    page = c.get(f"/console/replies/{reply.pk}/").content.decode()
    assert 'data-testid="cannot-answer"' in page and "suppressed as unsubscribed" in page
    resp = c.post(f"/console/replies/{reply.pk}/answer", {"body": "Hello again"}, follow=True)
    assert "suppressed as unsubscribed" in resp.content.decode()
    assert "Hello again" in resp.content.decode()  # what was typed is kept
    assert ReplyAnswer.objects.count() == 0 and not [m for m in _sink(settings) if m["In-Reply-To"]]


@pytest.mark.django_db
def test_filters_unanswered_and_drafts_waiting(api, workspace, owner):
    world = make_world(workspace)
    first, second = _reply(world), _reply(world, mid="<c2@acme.com>", body="Not interested, thanks.")
    c = _signed_in(owner)
    c.post(f"/console/replies/{first.pk}/answer", {"body": "Great, Tuesday then."})
    page = c.get("/console/replies/?unanswered=1").content.decode()
    assert f'id="{second.pk}"' in page and f'id="{first.pk}"' not in page
    page = c.get("/console/replies/?classification=interested").content.decode()
    assert f'id="{first.pk}"' in page and f'id="{second.pk}"' not in page
    page = c.get(f"/console/replies/?campaign={world.campaign.pk}").content.decode()
    assert f'id="{first.pk}"' in page and f'id="{second.pk}"' in page
    draft = api.post("/v1/send_reply", {"reply_id": second.pk, "body": "Understood, thanks."}).json()["result"]
    page = c.get("/console/replies/").content.decode()
    assert 'data-testid="drafts"' in page and "Understood, thanks." in page and draft["approval_url"] in page
    assert "Understood, thanks." in c.get(f"/console/replies/{second.pk}/").content.decode()


@pytest.mark.django_db
def test_suggest_a_reply_fills_the_box_billed_to_the_workspace(workspace, owner, settings):
    from billing.models import RequestRecord

    world = make_world(workspace)
    reply = _reply(world, body="Interested - can you send pricing?")
    c = _signed_in(owner)
    page = c.get(f"/console/replies/{reply.pk}/").content.decode()
    assert "Suggest a reply" in page
    resp = c.post(f"/console/replies/{reply.pk}/suggest", follow=True)
    page = resp.content.decode()
    assert "Suggested by vendor_a/model_large" in page
    box = page[page.index('id="answer-body"'):]
    assert "can you send pricing?" in box[:box.index("</textarea>")]  # the echo model repeats the prompt
    record = RequestRecord.objects.get(verb="draft_reply")
    assert record.channel == "console" and record.api_key_id is None and record.credits_charged_micros > 0
    assert ReplyAnswer.objects.count() == 0  # nothing is sent


@pytest.mark.django_db
def test_other_workspace_conversation_is_404(workspace, owner):
    world = make_world(workspace)
    reply = _reply(world)
    stranger = UserFactory()
    from accounts.services import workspace_create

    workspace_create(owner=stranger)
    c = _signed_in(stranger)
    assert c.get(f"/console/replies/{reply.pk}/").status_code == 404
    assert c.post(f"/console/replies/{reply.pk}/answer", {"body": "hi"}).status_code == 404
    assert c.post(f"/console/replies/{reply.pk}/suggest").status_code == 404
    assert ReplyAnswer.objects.count() == 0


# --- Chromium ---------------------------------------------------------------------------------------------------
in_chromium = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed")


from tests.console.test_e2e_browser import browser, playwright_api  # noqa: E402, F401 - the browser fixture


def _page(chromium, live_server, user, settings, width):
    session = _signed_in(user).cookies[settings.SESSION_COOKIE_NAME].value
    context = chromium.new_context(viewport={"width": width, "height": 900})
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    return context, context.new_page()


@in_chromium
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 390])
def test_inbox_conversation_and_reply_box_in_chromium(live_server, browser, workspace, owner, settings, width):  # noqa: F811
    world = make_world(workspace)
    reply = _reply(world, body="Sounds great - could you share pricing for 50 seats? " + "Details " * 60)
    context, page = _page(browser, live_server, owner, settings, width)
    try:
        page.goto(f"{live_server.url}/console/replies/")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "the inbox is wider than the screen"
        page.get_by_role("link", name=f"Open the conversation with {reply.from_email}").click()
        page.wait_for_url(f"**/console/replies/{reply.pk}/")
        assert page.locator('[data-testid="thread"] li').count() == 2
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.get_by_role("button", name="Suggest a reply").click()
        page.wait_for_url(f"**/console/replies/{reply.pk}/")
        assert "share pricing for 50 seats?" in page.get_by_label("Your answer").input_value()
        page.get_by_label("Your answer").fill("Pricing for 50 seats: see the attached sheet.\n\nAlex")
        page.get_by_role("button", name="Send answer").click()
        page.wait_for_url(f"**/console/replies/{reply.pk}/")
        assert "Answer sent to jane@acme.com" in page.content()
        states = page.locator('[data-testid="answer-state"]')
        assert states.count() == 1 and states.first.inner_text() == "sent"
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "wider than the screen"
        shots = Path(os.environ.get("CONSOLE_SCREENSHOTS_DIR") or settings.DATA_DIR)
        page.screenshot(path=str(shots / f"conversation-{width}.png"), full_page=True)
        page.goto(f"{live_server.url}/console/replies/?unanswered=1")
        assert page.locator(f'[id="{reply.pk}"]').count() == 0
    finally:
        context.close()
    assert [m["In-Reply-To"] for m in _sink(settings) if m["In-Reply-To"]] == ["<c1@acme.com>"]


@in_chromium
@pytest.mark.django_db(transaction=True)
def test_agent_draft_approved_in_chromium_then_sent(live_server, browser, api, workspace, owner, settings):  # noqa: F811
    world = make_world(workspace)
    reply = _reply(world, body="Interested. What does onboarding look like?")
    draft = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": "Onboarding takes a day: we set up..."}).json()
    result = draft["result"]
    context, page = _page(browser, live_server, owner, settings, 1280)
    try:
        page.goto(result["approval_url"].replace(settings.BASE_URL, live_server.url))
        thread = page.locator('[data-testid="thread"]')
        draft_box = page.locator('[data-testid="draft"]')
        assert "What does onboarding look like?" in thread.inner_text()
        assert "Onboarding takes a day" in draft_box.inner_text()
        assert thread.bounding_box()["y"] < draft_box.bounding_box()["y"]  # the conversation above the draft
        page.get_by_role("button", name="Approve").click()
        page.wait_for_load_state()
        assert page.locator('[data-testid="status"]').inner_text() == "approved"
    finally:
        context.close()
    sent = api.post("/v1/send_reply", {"reply_id": reply.pk, "body": "Onboarding takes a day: we set up...",
                                       "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "chromium-approved"})
    assert sent.json()["result"]["status"] == "sent"
    (msg,) = [m for m in _sink(settings) if m["In-Reply-To"]]
    assert msg["In-Reply-To"] == "<c1@acme.com>"

