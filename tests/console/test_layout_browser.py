"""The console's layout in a real browser (Debian's chromium, Playwright) on a 390 px phone and a 1280 px laptop:
on the phone the wide tables reflow (or show a scroll cue) so that the key's Revoke button, Overview's "Calls"
and "Charged" and Campaigns' "Replies" and "Next send" are on screen, and the navigation leaves room for the
page; on the laptop the Webhooks form looks like every other form, the Connect buttons do not touch, a lead
without a first name reads right, and /favicon.ico exists.  Screenshots go to CONSOLE_SCREENSHOTS_DIR (or the
test's DATA_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.campaigns.helpers import create as create_campaign
from tests.console.test_e2e_browser import CHROMIUM, _demo_usage, browser, playwright_api  # noqa: F401
from tests.screens import shot

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not __import__("shutil").which(CHROMIUM), reason="Debian chromium is not installed"),
]

# Where a cell is "on screen": its box lies inside the viewport and has a size (not clipped away by a card).
ON_SCREEN = """(el) => { const r = el.getBoundingClientRect();
  let p = el.parentElement, clip = {left: 0, right: window.innerWidth};
  while (p) { const s = getComputedStyle(p);
    if (s.overflowX !== 'visible') { const b = p.getBoundingClientRect();
      clip = {left: Math.max(clip.left, b.left), right: Math.min(clip.right, b.right)}; }
    p = p.parentElement; }
  return r.width > 0 && r.height > 0 && r.left >= clip.left - 1 && r.right <= clip.right + 1; }"""


@pytest.fixture
def signed_in(live_server, browser, owner, workspace, settings):  # noqa: F811
    from django.test import Client

    settings.BASE_URL = live_server.url
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    shots = Path(os.environ.get("CONSOLE_SCREENSHOTS_DIR") or settings.DATA_DIR)
    shots.mkdir(parents=True, exist_ok=True)
    contexts = []

    def open_page(width, height):
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
        contexts.append(context)
        return context.new_page()

    yield open_page, shots
    for context in contexts:
        context.close()


def _visible(page, selector: str) -> bool:
    handle = page.query_selector(selector)
    assert handle is not None, f"{selector} is not on the page"
    return page.evaluate(ON_SCREEN, handle)


def test_a_390px_phone_sees_every_column_and_the_page(signed_in, live_server, api, workspace):
    from sending.testing import make_active_mailbox

    _demo_usage(workspace)
    make_active_mailbox(workspace)
    assert create_campaign(api).status_code == 200
    open_page, shots = signed_in
    page = open_page(390, 844)

    page.goto(live_server.url + "/console/")
    # The navigation must not push the page down: the heading starts within the first screen's top fifth.
    top = page.evaluate("document.querySelector('main h1').getBoundingClientRect().top")
    assert top <= 170, f"the page's heading starts {top}px down a 844px screen"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert _visible(page, "td[data-label='Calls']") and _visible(page, "td[data-label='Charged']")
    shot(page, str(shots / "phone-overview-top.png"))
    page.evaluate("document.querySelector('td[data-label=Charged]').scrollIntoView()")
    shot(page, str(shots / "phone-overview-requests.png"))

    page.goto(live_server.url + "/console/keys/")
    assert _visible(page, "td[data-label] button:has-text('Revoke'), td button:has-text('Revoke')")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, str(shots / "phone-keys.png"))

    page.goto(live_server.url + "/console/campaigns/")
    assert _visible(page, "td[data-label='Replies']") and _visible(page, "td[data-label='Next send']")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, str(shots / "phone-campaigns.png"))

    # Any table still wider than its card shows that it scrolls: the card carries the scroll cue.
    for path in ("/console/", "/console/keys/", "/console/campaigns/", "/console/ledger/", "/console/mailboxes/",
                 "/console/webhooks/", "/console/members/", "/console/approvals/"):
        page.goto(live_server.url + path)
        uncued = page.evaluate("""[...document.querySelectorAll('table')].filter(t => {
              const box = t.closest('.card') || t.parentElement;
              return t.scrollWidth > box.clientWidth + 1 && !box.classList.contains('scrolls'); }).length""")
        assert uncued == 0, f"{path}: a table overflows its card without a scroll cue"
        if path == "/console/mailboxes/":
            shot(page, str(shots / "phone-mailboxes.png"))
    # The navigation is one scrolling line: the current page's link (Webhooks: near its end) is scrolled into it.
    page.goto(live_server.url + "/console/webhooks/")
    assert _visible(page, "nav.console a[aria-current=page]")
    shot(page, str(shots / "phone-webhooks.png"))


def test_a_1280px_laptop_sees_consistent_forms_and_names(signed_in, live_server, api, workspace, settings):
    import httpx

    from campaigns.models import Campaign
    from sending.testing import make_active_mailbox

    settings.GOOGLE_OAUTH_CLIENT_ID = "google-client"
    settings.MICROSOFT_OAUTH_CLIENT_ID = "microsoft-client"
    make_active_mailbox(workspace)
    resp = create_campaign(api, leads=[{"email": "ann@acme.test", "first_name": "Ann", "company_name": "Acme"},
                                       {"email": "carl@beta.test", "company_name": "Beta"},
                                       {"email": "dora@gamma.test", "last_name": "Stone"}])
    assert resp.status_code == 200, resp.json()
    campaign = Campaign.objects.get(pk=resp.json()["result"]["campaign_id"])
    open_page, shots = signed_in
    page = open_page(1280, 900)

    page.goto(live_server.url + "/console/webhooks/")
    style = "(el) => { const s = getComputedStyle(el); return [s.borderRadius, s.paddingLeft, s.borderTopColor]; }"
    url_input = page.evaluate(style, page.query_selector("input#url"))
    threshold = page.query_selector("input#threshold")
    reference = page.evaluate(style, threshold) if threshold else None
    page.goto(live_server.url + "/console/keys/")
    name_input = page.evaluate(style, page.query_selector("main input[type=text]"))
    assert url_input == name_input, f"the webhook URL field {url_input} differs from the other fields {name_input}"
    if reference is not None:
        assert reference == name_input
    page.goto(live_server.url + "/console/webhooks/")
    shot(page, str(shots / "laptop-webhooks.png"), full_page=True)

    page.goto(live_server.url + "/console/mailboxes/")
    google = page.query_selector("#connect-google").bounding_box()
    microsoft = page.query_selector("#connect-microsoft").bounding_box()
    gap_x = microsoft["x"] - (google["x"] + google["width"])
    gap_y = microsoft["y"] - (google["y"] + google["height"])
    assert gap_x >= 6 or gap_y >= 6, f"Connect Google and Connect Microsoft are {gap_x}px / {gap_y}px apart"
    shot(page, str(shots / "laptop-mailboxes.png"))

    page.goto(f"{live_server.url}/console/campaigns/{campaign.pk}/")
    names = page.evaluate("[...document.querySelectorAll('td .small.muted')].map(e => e.textContent.trim())")
    assert "Beta" in names and "Stone" in names and "Ann · Acme" in [" ".join(n.split()) for n in names], names
    assert not any(n.startswith("·") for n in names), names
    shot(page, str(shots / "laptop-campaign.png"), full_page=True)

    icon = httpx.get(live_server.url + "/favicon.ico", timeout=10)
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    page.goto(live_server.url + "/console/")
    assert page.evaluate("document.querySelector('link[rel~=icon]').href").endswith("/favicon.ico")
