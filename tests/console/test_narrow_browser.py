"""Console tables on a phone: the ledger and the suppression list fit a 390 px wide screen (no sideways page
scroll), in Debian's chromium driven by Playwright (issue 14, console polish)."""

import pytest

from tests.console.test_e2e_browser import CHROMIUM, browser, playwright_api  # noqa: F401 - the browser fixture
from tests.screens import shot

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not __import__("shutil").which(CHROMIUM), reason="Debian chromium is not installed"),
]


def test_ledger_and_suppressions_fit_a_390px_screen(live_server, browser, owner, workspace, settings):  # noqa: F811
    from django.test import Client

    from billing.services import credits_grant
    from campaigns.models import Suppression
    from core.money import credits

    credits_grant(workspace=workspace, amount=credits("1234.5"),
                  memo="Goodwill for the outage of the long weekend, as agreed with the account manager on the phone")
    Suppression.objects.create(workspace=workspace, email="a.very.long.address.of.a.prospect@subdomain.example-company.test",
                               reason="unsubscribed")
    client = Client()
    client.force_login(owner)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    page = context.new_page()
    shots = __import__("pathlib").Path(__import__("os").environ.get("CONSOLE_SCREENSHOTS_DIR") or settings.DATA_DIR)
    try:
        for path in ("/console/ledger/", "/console/suppressions/"):
            page.goto(live_server.url + path)
            assert "/login" not in page.url
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{path} is {width}px wide on a 390px screen"
            overflowing = page.evaluate(
                "[...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).length")
            assert overflowing == 0, f"{path}: a table is wider than its card"
            shot(page, str(shots / f"narrow-{path.strip('/').split('/')[-1]}.png"), full_page=True)
    finally:
        context.close()
