"""End to end in a real browser: Debian's chromium driven by Playwright against a live server.

Sign in with the code read from the Maildir sink, create a key and call the API with it, approve one
agent request and deny another (the agent then executes / is refused over HTTP), download the ledger CSV.
Set CONSOLE_SCREENSHOTS_DIR=docs/screenshots to refresh the README screenshots from this run.
"""

import csv
import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.screens import shot

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed"),
]


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API keeps an event loop in this thread, which Django's async-safety check would
    # take for async code; allowed for this module only, so other tests keep the check.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield from _browser()


def _browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM,
                              args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()


def _demo_usage(workspace):
    """Some metered history so the overview chart and the ledger have rows (recorded through the
    same billing services the verb pipeline uses)."""
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    from billing import services
    from core.ids import new_id
    from core.money import credits

    now = timezone.now()
    calls = [("find_leads", 3, "5"), ("enrich", 4, "5"), ("verify_email", 6, "1"), ("find_intent", 1, "126")]
    day = 0
    for verb, n, price in calls:
        for _ in range(n):
            day += 1  # spread over the last two weeks, oldest first
            with time_machine.travel(now - timedelta(days=15 - day, hours=2), tick=False):
                rid = new_id("req_")
                services.request_open(request_id=rid, workspace=workspace, verb=verb)
                hold = services.hold_place(workspace=workspace, amount=credits(price), request_id=rid)
                charged = services.hold_settle(hold=hold, charge=credits(price), verb=verb)
                services.request_close(request_id=rid, status="succeeded", http_status=200, charged=charged)


def test_console_end_to_end(live_server, settings, browser, tmp_path):
    from accounts.models import ConfirmationToken
    from tests.console.helpers import last_code
    from tests.factories import make_workspace

    base = live_server.url
    settings.BASE_URL = base
    shots = Path(os.environ.get("CONSOLE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    workspace, owner, agent_key = make_workspace(email="ada@example.com", name="Acme outbound")
    _demo_usage(workspace)
    agent = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {agent_key}"}, timeout=30)

    context = browser.new_context(viewport={"width": 1200, "height": 860}, accept_downloads=True)
    page = context.new_page()
    expect = playwright_api.expect

    # --- sign in by the emailed code ---------------------------------------------------------------
    page.goto(f"{base}/console/")
    assert "/console/auth/login/" in page.url
    page.get_by_label("Email address").fill(owner.email)
    shot(page, str(shots / "sign-in.png"))
    page.get_by_role("button", name="Email me a sign-in code").click()
    page.locator("input[name=code]").fill(last_code(owner.email))
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_test_id("available")).to_have_text("133")  # 300 - 167 of demo usage

    # --- a real setup_sending quote: the approval page states what will be bought ----------------------
    quote = agent.post("/v1/setup_sending", json={"emails_per_week": 1000, "brand_hint": "acme"})
    if quote.status_code == 200:  # the sending app is installed
        page.goto(quote.json()["result"]["approval_url"])
        expect(page.get_by_role("heading", name="Buy sending capacity")).to_be_visible()
        expect(page.get_by_role("row", name="Mailboxes")).to_contain_text("8")
        shot(page, str(shots / "approval.png"), full_page=True)
    # the README's hero image: only what a user's own calls produce (no test-only verbs yet)
    page.goto(f"{base}/console/")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    assert "test_confirm" not in page.content()
    shot(page, str(shots / "overview.png"), full_page=True)

    # --- the agent asks for two approvals ------------------------------------------------------------
    first = agent.post("/v1/test_confirm", json={"amount": 5_000_000}).json()["result"]
    second = agent.post("/v1/test_confirm", json={"amount": 9_000_000}).json()["result"]
    page.goto(f"{base}/console/")
    expect(page.get_by_role("link", name="test_confirm").first).to_be_visible()

    # --- create a key and call the API with it -------------------------------------------------------
    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Name").fill("reporting agent")
    page.get_by_label("campaign:write").check()
    page.get_by_role("button", name="Create key").click()
    new_key = page.get_by_test_id("new-key").input_value()
    assert new_key.startswith("service_sk_live_")
    page.get_by_role("button", name="Copy").click()
    expect(page.locator("#copy-status")).not_to_be_empty()
    shot(page, str(shots / "api-keys.png"), full_page=True)
    usage = httpx.get(f"{base}/v1/usage", headers={"Authorization": f"Bearer {new_key}"})
    assert usage.status_code == 200 and usage.json()["credits_available"] == "133"
    page.reload()
    assert new_key not in page.content()  # shown once

    # --- approve one, deny the other -----------------------------------------------------------------
    page.goto(first["approval_url"])
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_test_id("status")).to_have_text("approved")
    page.goto(second["approval_url"])
    page.get_by_role("button", name="Deny").click()
    expect(page.get_by_test_id("status")).to_have_text("denied")

    done = agent.post("/v1/test_confirm", json={"amount": 5_000_000, "confirmation_token": first["confirmation_token"]},
                      headers={"Idempotency-Key": "e2e-approve"})
    assert done.status_code == 200 and done.json()["service"]["credits_charged"] == "5"
    refused = agent.post("/v1/test_confirm", json={"amount": 9_000_000, "confirmation_token": second["confirmation_token"]},
                         headers={"Idempotency-Key": "e2e-deny"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "confirmation_denied"
    statuses = dict(ConfirmationToken.objects.filter(verb="test_confirm").values_list("params__amount", "status"))
    assert statuses == {5_000_000: "used", 9_000_000: "denied"}
    page.get_by_role("link", name="Approvals").click()
    expect(page.get_by_text(owner.email).first).to_be_visible()
    shot(page, str(shots / "approvals.png"), full_page=True)

    # --- ledger and CSV export -----------------------------------------------------------------------
    page.get_by_role("link", name="Ledger").click()
    shot(page, str(shots / "ledger.png"), full_page=True)
    with page.expect_download() as info:
        page.get_by_role("link", name="Export CSV").click()
    download = info.value
    assert download.suggested_filename == f"ledger-{workspace.pk}.csv"
    rows = list(csv.DictReader(open(download.path(), encoding="utf-8")))
    assert rows[0]["kind"] == "charge" and rows[0]["amount_credits"] == "-5" and rows[0]["balance_after_credits"] == "128"
    assert rows[-1]["kind"] == "signup_grant" and rows[-1]["amount_credits"] == "300"

    # --- top-ups (sandbox) and members ---------------------------------------------------------------
    settings.STRIPE_SECRET_KEY = "sk_test_e2e"  # card packs shown (nothing is bought: no button is pressed)
    page.get_by_role("link", name="Top up").click()
    expect(page.get_by_role("button", name="Buy 1000 credits for USD 10.00")).to_be_visible()
    page.get_by_label("Test credits").fill("1000")
    page.get_by_role("button", name="Add test credits").click()
    expect(page.get_by_text("Added 1,000 sandbox test credits.")).to_be_visible()
    shot(page, str(shots / "top-up.png"), full_page=True)
    page.get_by_role("link", name="Members").click()
    page.get_by_label("Email", exact=True).fill("grace@example.com")
    page.get_by_label("Role", exact=True).select_option("admin")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_text("Invited grace@example.com as admin.")).to_be_visible()
    shot(page, str(shots / "members.png"), full_page=True)

    # --- responsive: a phone-sized viewport never scrolls sideways ---------------------------------------
    for path in ("/console/", "/console/keys/", "/console/ledger/", first["approval_url"]):
        page.set_viewport_size({"width": 375, "height": 740})
        page.goto(path if path.startswith("http") else f"{base}{path}")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path
    page.goto(f"{base}/console/")
    shot(page, str(shots / "overview-phone.png"))
    context.close()
