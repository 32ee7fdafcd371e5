"""Campaigns and Replies in a real browser: Debian's chromium driven by Playwright against a live server.

An agent creates and launches a campaign over HTTP; the owner signs in, reads it on the Campaigns pages, pauses
it (the scheduler then sends nothing), resumes it, reads the replies and corrects a label, then exports the
labelled replies. Set CONSOLE_SCREENSHOTS_DIR=docs/screenshots to refresh the README screenshots from this run.
"""

import json
import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.campaigns.conftest import sink_messages
from tests.screens import shot

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed"),
]
ALWAYS = {"timezone": "Europe/Berlin", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
          "end_hour": 24}


@pytest.fixture(scope="module")
def browser():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with playwright_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            yield b
            b.close()


def _reply(mb, sent, text, n):
    from replies import services

    raw = (f"From: {sent.to_email}\r\nTo: {mb.email}\r\nSubject: Re: {sent.subject}\r\n"
           f"Message-ID: <browser-{n}@lead.example>\r\nIn-Reply-To: <{sent.message_id}>\r\n"
           f"Content-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n").encode()
    stored = services.inbound_store(mailbox=mb, raw=raw, source="smtp")
    services.inbound_classify(inbound_id=stored.inbound.pk)


def test_campaigns_and_replies_in_the_browser(live_server, settings, browser, tmp_path):
    from campaigns import scheduler
    from campaigns.models import Campaign, SentMessage, Suppression
    from replies.models import Reply, ReplyCorrection
    from sending.testing import make_active_mailbox
    from tests.campaigns.helpers import approve
    from tests.factories import make_workspace

    base = live_server.url
    settings.BASE_URL = base
    shots = Path(os.environ.get("CONSOLE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    workspace, owner, key = make_workspace(email="ada@example.com", name="Acme outbound")
    mb = make_active_mailbox(workspace, email="alex@getacme.example")
    agent = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    # --- the agent drafts and launches (a human approves) -------------------------------------------
    leads = [{"email": "ann@acme-labs.example", "first_name": "Ann", "company_name": "Acme Labs"},
             {"email": "bob@beta.example", "first_name": "Bob", "company_name": "Beta"},
             {"email": "cy@corvid.example", "first_name": "Cy", "company_name": "Corvid"}]
    body = {"name": "Fintech VPs, November", "leads": leads, "sending_window": ALWAYS, "steps": [
        {"subject": "{{company_name}} and outbound", "body": "Hi {{first_name|there}},\n\nQuick question about {{company_name}}."},
        {"body": "Following up on my note, {{first_name|there}}.", "wait_days": 3}]}
    cid = agent.post("/v1/campaigns", json=body, headers={"Idempotency-Key": "b-1"}).json()["result"]["campaign_id"]
    preview = agent.post("/v1/launch_campaign", json={"campaign_id": cid}).json()["result"]
    approve(preview["confirmation_token"], owner)
    launched = agent.post("/v1/launch_campaign", json={"campaign_id": cid,
                                                        "confirmation_token": preview["confirmation_token"]},
                          headers={"Idempotency-Key": "b-2"})
    assert launched.json()["result"]["status"] == "launched"
    scheduler.tick(dispatch=scheduler.run_inline)  # step 1 to all three
    assert len(sink_messages(settings)) == 3
    sent = {m.to_email: m for m in SentMessage.objects.all()}
    _reply(mb, sent["ann@acme-labs.example"], "Sounds interesting - can we talk on Thursday? Ann", 1)
    _reply(mb, sent["bob@beta.example"], "Please take me off your list.", 2)

    context = browser.new_context(viewport={"width": 1200, "height": 860}, accept_downloads=True)
    # signed in as the owner (the sign-in flow itself is tested in tests/console/test_e2e_browser.py)
    from django.conf import settings as dj
    from django.test import Client

    client = Client()
    client.force_login(owner)
    context.add_cookies([{"name": dj.SESSION_COOKIE_NAME, "value": client.cookies[dj.SESSION_COOKIE_NAME].value,
                          "url": base}])
    page = context.new_page()
    expect = playwright_api.expect
    page.goto(f"{base}/console/")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()

    # --- Campaigns: list and detail ------------------------------------------------------------------
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Campaigns").click()
    expect(page.get_by_role("heading", name="Campaigns")).to_be_visible()
    row = page.get_by_role("row", name="Fintech VPs, November")
    expect(row).to_contain_text("launched")
    shot(page, str(shots / "campaigns.png"), full_page=True)
    row.get_by_role("link", name="Fintech VPs, November").click()
    expect(page.get_by_role("heading", name="Fintech VPs, November")).to_be_visible()
    expect(page.get_by_text("Hi Ann,")).to_be_visible()  # steps as rendered for a sample lead
    expect(page.get_by_text("Mon, Tue, Wed, Thu, Fri, Sat, Sun, 00:00–24:00 (Europe/Berlin)")).to_be_visible()
    expect(page.get_by_role("row", name="cy@corvid.example")).to_contain_text("In sequence")
    expect(page.get_by_role("row", name="ann@acme-labs.example")).to_contain_text("Replied")
    shot(page, str(shots / "campaign.png"), full_page=True)

    # --- Pause: the scheduler sends nothing; Resume ---------------------------------------------------
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_test_id("waiting-reason")).to_have_text("Paused: nothing is sent until it is resumed.")
    assert Campaign.objects.get(pk=cid).state == "paused"
    from django.utils import timezone

    from campaigns.models import CampaignLead

    CampaignLead.objects.filter(campaign_id=cid, state="active").update(next_send_at=timezone.now())  # due now
    assert scheduler.tick(dispatch=scheduler.run_inline)["dispatched"] == 0
    assert len(sink_messages(settings)) == 3
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_role("status").first).to_contain_text("Campaign resumed")
    assert Campaign.objects.get(pk=cid).state == "launched"
    assert agent.get(f"/v1/campaigns/{cid}").json()["state"] == "launched"

    # --- Replies: read, correct a label, export -------------------------------------------------------
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Replies").click()
    expect(page.get_by_role("heading", name="Replies", exact=True)).to_be_visible()
    bob = Reply.objects.get(from_email="bob@beta.example")
    assert bob.classification == "unsubscribe"
    card = page.locator(f"article#{bob.pk}")
    expect(card).to_contain_text("Please take me off your list.")
    shot(page, str(shots / "replies.png"), full_page=True)
    card.get_by_label("Correct label").select_option("not_interested")
    card.get_by_role("button", name="Save label").click()
    expect(page.get_by_role("status").first).to_contain_text("Label corrected from unsubscribe to not_interested")
    expect(page.locator(f"article#{bob.pk}").get_by_test_id("correction")).to_contain_text("ada@example.com")
    assert Suppression.objects.get(email="bob@beta.example").reason == "replied"  # re-applied, not lifted
    fix = ReplyCorrection.objects.get()
    assert (fix.from_label, fix.to_label, fix.corrected_by_id) == ("unsubscribe", "not_interested", owner.pk)
    got = agent.post("/v1/get_replies", json={"campaign_id": cid}).json()["result"]["replies"]
    assert {r["reply_id"]: r["correction"] and r["correction"]["to"] for r in got}[bob.pk] == "not_interested"

    with page.expect_download() as info:
        page.get_by_role("link", name="Export corrections (JSON Lines)").click()
    lines = Path(info.value.path()).read_text().splitlines()
    row = json.loads(lines[0])
    assert len(lines) == 1 and row["reply_id"] == bob.pk and row["label"] == "not_interested"
    assert "Please take me off your list." in row["raw"]
    context.close()


def test_new_campaign_with_variants_in_the_browser(live_server, settings, browser):
    """The owner drafts a campaign with variants on the New campaign page: a broken spintax is refused with the
    API's message; the fixed draft's page shows the variants side by side."""
    from campaigns.models import Campaign
    from tests.factories import make_workspace

    base = live_server.url
    settings.BASE_URL = base
    workspace, owner, key = make_workspace(email="vera@example.com", name="Variants")
    from django.conf import settings as dj
    from django.test import Client

    client = Client()
    client.force_login(owner)
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    context.add_cookies([{"name": dj.SESSION_COOKIE_NAME, "value": client.cookies[dj.SESSION_COOKIE_NAME].value,
                          "url": base}])
    page = context.new_page()
    expect = playwright_api.expect
    page.goto(f"{base}/console/campaigns/")
    page.get_by_role("link", name="New campaign").click()
    expect(page.get_by_role("heading", name="New campaign")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("Subject test")
    page.get_by_role("textbox", name="Leads (CSV").fill("email,first_name\nann@acme.example,Ann\nbob@beta.example,Bob\n")
    steps = [{"variants": [{"subject": "{{RANDOM | Hi | }} {{first_name}}", "body": "Text A"},
                           {"subject": "Quick one, {{first_name}}", "body": "Text B"}]}]
    page.get_by_role("textbox", name="Steps (JSON").fill(json.dumps(steps))
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_test_id("form-errors")).to_contain_text(
        "steps.0.variants.0.subject: Spintax at character 1: option 2 is empty.")
    steps[0]["variants"][0]["subject"] = "{{RANDOM | Hi | Hello}} {{first_name}}"
    page.get_by_role("textbox", name="Steps (JSON").fill(json.dumps(steps))
    page.get_by_role("button", name="Create draft").click()
    expect(page.get_by_role("heading", name="Subject test")).to_be_visible()
    campaign = Campaign.objects.get(name="Subject test")
    assert campaign.state == "draft" and campaign.leads_accepted == 2
    a, b = page.get_by_test_id("variant-1-A"), page.get_by_test_id("variant-1-B")
    expect(a).to_contain_text("Text A")
    expect(b).to_contain_text("Quick one, Ann")
    box_a, box_b = a.bounding_box(), b.bounding_box()
    assert abs(box_a["y"] - box_b["y"]) < 2 and box_b["x"] > box_a["x"] + box_a["width"] - 2  # side by side
    context.close()
