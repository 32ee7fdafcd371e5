"""The whole loop with OAuth mailboxes in a real browser (Debian's chromium driven by Playwright) against a live
server, a local OAuth 2.0 / OpenID Connect authorization server, an XOAUTH2-only aiosmtpd peer and Dovecot with
passdb oauth2:

connect a Google-style and a Microsoft-style mailbox by clicking through the provider's consent page, launch a
campaign, mail arrives at the SMTP peer signed in with XOAUTH2, a reply is read over IMAP (XOAUTH2) and
classified, the access token expires and is refreshed mid-run, then consent is revoked: nothing more is sent,
the console and GET /v1/mailboxes say needs_reconnect, the Reconnect button restores the mailbox, and the
waiting step goes out exactly once (nothing lost, nothing sent twice)."""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import timedelta

import httpx
import pytest
from django.test import Client
from django.utils import timezone

from tests.screens import shot
from tests.sending.oauth_env import GOOGLE_ACCOUNT, MICROSOFT_ACCOUNT

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed"),
]
ALWAYS = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "start_hour": 0,
          "end_hour": 24}


@pytest.fixture(scope="module")
def browser():
    with pytest.MonkeyPatch.context() as mp:  # Playwright's sync API keeps an event loop in this thread
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with playwright_api.sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                                   "--disable-background-networking"])
            yield b
            b.close()


def _tick():
    from campaigns import scheduler

    return scheduler.tick(dispatch=scheduler.run_inline)


def test_oauth_mailboxes_whole_loop(live_server, oauth_settings, browser, google_as, microsoft_as, xoauth2_smtp,
                                    xoauth2_imap, tmp_path):
    from accounts.services import key_create
    from campaigns.models import CampaignLead, SentMessage, Suppression
    from replies import services as replies_services
    from replies.imap import mailbox_poll
    from replies.models import InboundMessage
    from sending.models import Mailbox, MailboxToken
    from tests.factories import make_workspace

    oauth_settings.BASE_URL = base = live_server.url
    workspace, owner, _ = make_workspace(email="owner@acme.test", name="Acme outbound")
    _, key = key_create(workspace=workspace, name="agent", scopes="all", created_by=owner)
    agent = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    signed_in = Client()
    signed_in.force_login(owner)
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    context.add_cookies([{"name": "sessionid", "value": signed_in.cookies["sessionid"].value, "url": base}])
    page = context.new_page()
    expect = playwright_api.expect
    _, smtp = xoauth2_smtp
    sent_before = len(smtp.messages)

    # --- connect both mailboxes through the providers' consent pages ----------------------------------------
    for label, server in (("Google", google_as), ("Microsoft", microsoft_as)):
        page.goto(f"{base}/console/mailboxes/")
        page.get_by_role("button", name=f"Connect {label}").click()
        expect(page.locator("#account")).to_have_text(server.account)  # the provider's own page
        assert page.url.startswith(server.base + "/authorize?")
        page.get_by_role("button", name="Allow").click()
        expect(page.get_by_text(f"{server.account} is connected with {label}, passed the SMTP and IMAP")).to_be_visible()
    shot(page, str(tmp_path / "mailboxes.png"), full_page=True)
    google_mb = Mailbox.objects.get(email=GOOGLE_ACCOUNT)
    assert Mailbox.objects.get(email=MICROSOFT_ACCOUNT).auth == "oauth2"

    # --- a campaign that only the Google mailbox sends (the Microsoft one is removed from the console) ----------
    ms = Mailbox.objects.get(email=MICROSOFT_ACCOUNT)
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name=f"Remove {MICROSOFT_ACCOUNT}").click()
    expect(page.get_by_text(f"{MICROSOFT_ACCOUNT} removed")).to_be_visible()
    assert not MailboxToken.objects.filter(mailbox=ms).exists()
    body = {"name": "OAuth loop", "sending_window": ALWAYS,
            "leads": [{"email": "ann@prospect.test", "first_name": "Ann"}, {"email": "bob@prospect.test",
                                                                            "first_name": "Bob"}],
            "steps": [{"subject": "Hello {{first_name}}", "body": "First", "wait_days": 0},
                      {"body": "Second", "wait_days": 0}, {"body": "Third", "wait_days": 0}]}
    cid = agent.post("/v1/campaigns", json=body, headers={"Idempotency-Key": "c1"}).json()["result"]["campaign_id"]
    preview = agent.post("/v1/launch_campaign", json={"campaign_id": cid}).json()["result"]
    page.goto(preview["approval_url"])
    page.get_by_role("button", name="Approve").click()
    launched = agent.post("/v1/launch_campaign", json={"campaign_id": cid,
                                                       "confirmation_token": preview["confirmation_token"]},
                          headers={"Idempotency-Key": "l1"})
    assert launched.status_code == 200, launched.text

    # --- step 1 goes out over SMTP, signed in with XOAUTH2 ------------------------------------------------------
    _tick()
    first = smtp.messages[sent_before:]
    assert len(first) == 2 and all(m["authenticated"] and m["mail_from"] == GOOGLE_ACCOUNT for m in first)
    assert smtp.xoauth2_logins[-1] == (GOOGLE_ACCOUNT, True)

    # --- Ann replies; the poller reads it over IMAP with XOAUTH2 and it is classified ----------------------------
    ann_sent = SentMessage.objects.get(to_email="ann@prospect.test", step_index=0)
    reply = (f"From: Ann <ann@prospect.test>\r\nTo: {GOOGLE_ACCOUNT}\r\nSubject: Re: Hello Ann\r\n"
             f"Message-ID: <reply-1@prospect.test>\r\nIn-Reply-To: <{ann_sent.message_id}>\r\n"
             f"References: <{ann_sent.message_id}>\r\n\r\nYes, interested - can we talk on Thursday?\r\n").encode()
    xoauth2_imap.append(GOOGLE_ACCOUNT, google_as.mint_access_token(GOOGLE_ACCOUNT), reply)
    assert mailbox_poll(mailbox=google_mb) == 1
    inbound = InboundMessage.objects.get(mailbox=google_mb)
    replies_services.inbound_classify(inbound_id=inbound.pk)
    inbound.refresh_from_db()
    assert inbound.classification and inbound.state == "processed"
    ann = CampaignLead.objects.get(email="ann@prospect.test")
    assert ann.state == "stopped" and Suppression.objects.filter(workspace=workspace, email=ann.email).exists()

    # --- the access token expires mid-run: refreshed, and Bob's step 2 goes out ---------------------------------
    refreshes = google_as.refreshes()
    google_as.expire_access_tokens()
    MailboxToken.objects.filter(mailbox=google_mb).update(access_expires_at=timezone.now() - timedelta(seconds=5))
    _tick()
    assert google_as.refreshes() == refreshes + 1
    assert len(smtp.messages) == sent_before + 3

    # --- consent revoked: Bob's step 3 is not sent, the state says so everywhere ---------------------------------
    google_as.revoke(GOOGLE_ACCOUNT)
    google_as.expire_access_tokens()
    _tick()
    assert len(smtp.messages) == sent_before + 3
    google_mb.refresh_from_db()
    assert google_mb.status == "needs_reconnect"
    listed = agent.get("/v1/mailboxes").json()["mailboxes"]
    assert [(m["email"], m["status"]) for m in listed] == [(GOOGLE_ACCOUNT, "needs_reconnect")]
    assert "invalid_grant" in listed[0]["reconnect_reason"]
    bob = CampaignLead.objects.get(email="bob@prospect.test")
    assert bob.state == "active" and bob.current_step == 2 and bob.attempts == 0
    _tick()  # nothing is due (Bob waits on his mailbox) and nothing is sent
    assert len(smtp.messages) == sent_before + 3
    page.goto(f"{base}/console/mailboxes/")
    expect(page.get_by_role("heading", name="Reconnect needed")).to_be_visible()
    shot(page, str(tmp_path / "needs-reconnect.png"), full_page=True)

    # --- Reconnect in the browser; the waiting step goes out exactly once -----------------------------------------
    page.get_by_role("button", name=f"Reconnect {GOOGLE_ACCOUNT}").click()
    page.get_by_role("button", name="Allow").click()
    expect(page.get_by_text(f"{GOOGLE_ACCOUNT} is reconnected with Google")).to_be_visible()
    CampaignLead.objects.filter(pk=bob.pk).update(next_send_at=timezone.now())  # its hour of waiting is over
    _tick()
    _tick()
    assert len(smtp.messages) == sent_before + 4
    sent = Counter(SentMessage.objects.filter(state="sent").values_list("to_email", "step_index"))
    assert sent == {("ann@prospect.test", 0): 1, ("bob@prospect.test", 0): 1, ("bob@prospect.test", 1): 1,
                    ("bob@prospect.test", 2): 1}
    ids = [m["data"] for m in smtp.messages[sent_before:]]
    assert len(set(ids)) == 4
    context.close()
