"""The Deliverability page on a 390 px phone and the New campaign form's `verify_leads` option, in Debian's chromium
driven by Playwright: on the phone the domain, mailbox and history tables reflow like the other console pages (no
sideways page scroll, no table wider than its card, the state and Resume on screen); the form offers "Verify the
leads at launch" with its cost explained beside it, and the draft it creates has `verify_leads`. Screenshots go to
CONSOLE_SCREENSHOTS_DIR (or the test's DATA_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.console.test_e2e_browser import CHROMIUM, browser, playwright_api  # noqa: F401 - the browser fixture
from tests.screens import shot

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not __import__("shutil").which(CHROMIUM), reason="Debian chromium is not installed"),
]

# A cell is on screen when its box lies inside the viewport and every box that clips it (as in test_layout_browser)
ON_SCREEN = """(el) => { const r = el.getBoundingClientRect();
  let p = el.parentElement, clip = {left: 0, right: window.innerWidth};
  while (p) { const s = getComputedStyle(p);
    if (s.overflowX !== 'visible') { const b = p.getBoundingClientRect();
      clip = {left: Math.max(clip.left, b.left), right: Math.min(clip.right, b.right)}; }
    p = p.parentElement; }
  return r.width > 0 && r.height > 0 && r.left >= clip.left - 1 && r.right <= clip.right + 1; }"""


@pytest.fixture
def open_page(live_server, browser, owner, settings):  # noqa: F811
    from django.test import Client

    settings.BASE_URL = live_server.url
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    contexts = []

    def open_(width, height):
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
        contexts.append(context)
        return context.new_page()

    yield open_
    for context in contexts:
        context.close()


def _shots(settings) -> Path:
    path = Path(os.environ.get("CONSOLE_SCREENSHOTS_DIR") or settings.DATA_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_the_deliverability_page_fits_a_390px_phone(open_page, live_server, workspace, settings):
    from deliverability import services as health
    from sending.models import SendingDomain
    from sending.testing import make_active_mailbox
    from tests.deliverability.conftest import add_sends

    long_mailbox = make_active_mailbox(
        workspace, email="alexandra.montgomery-fitzgerald@outbound-sales-team.example-company-mail.test")
    add_sends(long_mailbox, sent=19, bounced=1)
    assert health.mailbox_evaluate(mailbox_id=long_mailbox.pk) == "paused"
    other = make_active_mailbox(workspace, email="sam@second-sending-domain-with-a-long-name.test")
    SendingDomain.objects.filter(pk=other.domain_id).update(
        checks={"spf": "pass", "dkim": "fail", "dmarc": "missing", "mx": "pass",
                "postmaster_compliance": {"DMARC_ALIGNMENT": "", "ONE_CLICK_UNSUBSCRIBE": "NO_UNSUB_SPAM_REPORTS"},
                "postmaster_compliance_checked_at": "2026-11-28T10:00:00+00:00"},
        check_failing_since={"dkim": "2026-11-20T10:00:00+00:00", "dmarc": "2026-11-28T09:00:00+00:00"},
        blocklists=["dbl.spamhaus.org"], blocklist_checked_at="2026-11-28T10:00:00+00:00")
    health.domain_evaluate(domain_id=other.domain_id)

    page = open_page(390, 844)
    page.goto(live_server.url + "/console/deliverability/")
    assert "/login" not in page.url
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    wide = page.evaluate("""[...document.querySelectorAll('main table')].filter(t => {
          const box = t.closest('.card') || t.parentElement;
          return t.scrollWidth > box.clientWidth + 1; }).length""")
    assert wide == 0, "a Deliverability table is wider than its card on a 390px screen"
    for selector in ("td[data-label='Domain']", "td[data-label='State']", "td[data-label='Last check']",
                     "td[data-label='Mailbox']", "td[data-label='Bounce rate (last 50 sends)']",
                     "td[data-label='Reasons']", f"button[aria-label='Resume {long_mailbox.email}']",
                     "[data-testid=gmail-compliance]"):
        handle = page.query_selector(selector)
        assert handle is not None, f"{selector} is not on the page"
        assert page.evaluate(ON_SCREEN, handle), f"{selector} is cut off on a 390px screen"
    text = page.inner_text("main")
    assert "DMARC_ALIGNMENT" in text and "NO_UNSUB_SPAM_REPORTS" in text
    label = page.evaluate("getComputedStyle(document.querySelector(\"td[data-label='Domain']\"), '::before').content")
    assert label == '"Domain: "', label  # the stacked rows name their column, as on the other console pages
    shot(page, str(_shots(settings) / "phone-deliverability.png"), full_page=True)


def test_the_new_campaign_form_offers_verify_leads_with_its_cost(open_page, live_server, workspace, settings):
    from campaigns.models import Campaign
    from sending.testing import make_active_mailbox

    make_active_mailbox(workspace)
    page = open_page(1280, 900)
    page.goto(live_server.url + "/console/campaigns/new")
    box = page.get_by_label("Verify the leads at launch")
    assert box.is_visible() and not box.is_checked()
    cost = page.locator("#" + box.get_attribute("aria-describedby"))
    words = " ".join(cost.inner_text().split())
    assert cost.is_visible()
    assert "1 credit per lead without a verification from the last 30 days" in words, words
    assert "unknown result is free" in words and "launch preview" in words and "invalid_email" in words, words

    page.fill("#name", "Verified launch")
    page.fill("#leads", "email,first_name\nann@acme.test,Ann\nbob@beta.test,Bob\n")
    page.fill("#steps", '[{"subject": "Hi {{first_name|there}}", "body": "Hello", "wait_days": 0}]')
    box.check()
    shot(page, str(_shots(settings) / "laptop-new-campaign-verify.png"), full_page=True)
    page.click("button:has-text('Create draft')")
    page.wait_for_url("**/console/campaigns/*/")
    campaign = Campaign.objects.get(workspace=workspace, name="Verified launch")
    assert campaign.verify_leads is True and campaign.leads_accepted == 2

    page.goto(live_server.url + "/console/campaigns/new")  # unticked by default: a plain draft
    page.fill("#name", "Plain launch")
    page.fill("#leads", "email\ncarl@gamma.test\n")
    page.fill("#steps", '[{"subject": "Hi", "body": "Hello", "wait_days": 0}]')
    page.click("button:has-text('Create draft')")
    page.wait_for_url("**/console/campaigns/*/")
    assert Campaign.objects.get(workspace=workspace, name="Plain launch").verify_leads is False
