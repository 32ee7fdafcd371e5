"""The console under its Content-Security-Policy in a real browser (Debian chromium via Playwright): the page
script (copy a new key, confirm before revoking) runs from /static, and the browser reports no CSP violation
(issue 15.6)."""

import shutil

import pytest
from django.conf import settings as django_settings
from django.test import Client

playwright_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed"),
]


def test_console_scripts_run_under_the_csp_without_violations(live_server, settings, monkeypatch):
    from accounts.models import ApiKey
    from tests.factories import make_workspace

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop in this thread
    settings.BASE_URL = live_server.url
    workspace, owner, _ = make_workspace(email="csp@example.com")
    client = Client()
    client.force_login(owner)
    session = client.cookies[django_settings.SESSION_COOKIE_NAME].value

    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            context = browser.new_context()
            context.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": session,
                                  "url": live_server.url}])
            page = context.new_page()
            violations = []
            page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
            page.goto(f"{live_server.url}/console/keys/")
            page.get_by_label("Name").fill("csp-key")
            page.get_by_role("button", name="Create key").click()
            page.get_by_role("button", name="Copy").click()
            # the script ran: either the clipboard took it or the fallback asks for Ctrl+C
            playwright_api.expect(page.locator("#copy-status")).not_to_be_empty()
            key = ApiKey.objects.get(name="csp-key")
            dialogs = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.locator("form[data-confirm]").filter(has_text="Revoke").first.get_by_role("button").click()
            assert dialogs and dialogs[0].startswith("Revoke this key?")
            key.refresh_from_db()
            assert key.revoked_at is None  # dismissed: nothing happened
            assert violations == []
        finally:
            browser.close()
