"""One token refresh at a time per mailbox, across threads with their own database connections: the refresh lease
(a conditional UPDATE) lets one refresher talk to the token endpoint while the others wait for its result. The
Microsoft-style server rotates refresh tokens and refuses a used one, so a second, concurrent refresh would turn
into invalid_grant and a false needs_reconnect."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from sending import oauth
from sending.models import Mailbox, MailboxToken
from tests.factories import make_workspace
from tests.sending.oauth_env import MICROSOFT_ACCOUNT


@pytest.mark.django_db(transaction=True)
def test_concurrent_token_requests_refresh_once(settings, microsoft_as, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("needs several real database connections (PostgreSQL)")
    settings.MICROSOFT_OAUTH_CLIENT_ID, settings.MICROSOFT_OAUTH_CLIENT_SECRET = "ms-client", "ms-secret"
    settings.MICROSOFT_OAUTH_TOKEN_URL = f"{microsoft_as.base}/token"
    settings.MICROSOFT_OAUTH_AUTHORIZE_URL = f"{microsoft_as.base}/authorize"
    ws, _, _ = make_workspace()
    provider = oauth.provider_get("microsoft")
    flow = oauth.authorization_start(provider=provider, redirect_uri="http://127.0.0.1/cb")
    code = dict(p.split("=", 1) for p in microsoft_as.approve(flow.url).split("?", 1)[1].split("&"))["code"]
    grant = oauth.authorization_finish(provider=provider, code=code, flow=vars(flow))
    mailbox = oauth.mailbox_oauth_connect(workspace=ws, provider=provider, grant=grant)
    MailboxToken.objects.filter(mailbox=mailbox).update(access_expires_at=timezone.now() - timedelta(seconds=1))

    waiting = threading.Semaphore(0)
    real_sleep = oauth._sleep

    def observed_sleep(seconds):
        waiting.release()
        real_sleep(seconds)

    monkeypatch.setattr(oauth, "_sleep", observed_sleep)
    microsoft_as.hold_refresh = threading.Event()
    microsoft_as.refresh_arrived.clear()
    before = microsoft_as.refreshes()
    results, errors = [], []

    def fetch():
        try:
            results.append(oauth.access_token(Mailbox.objects.get(pk=mailbox.pk)))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connections.close_all()

    first = threading.Thread(target=fetch)
    first.start()
    assert microsoft_as.refresh_arrived.wait(30)  # the first refresher is at the token endpoint, held there
    others = [threading.Thread(target=fetch) for _ in range(3)]
    for t in others:
        t.start()
    for _ in others:  # each of the others found the lease taken and is waiting for the result
        assert waiting.acquire(timeout=30)
    microsoft_as.hold_refresh.set()
    for t in [first, *others]:
        t.join(60)
    microsoft_as.hold_refresh = None
    assert errors == [] and len(results) == 4 and len(set(results)) == 1
    assert microsoft_as.refreshes() == before + 1
    assert Mailbox.objects.get(pk=mailbox.pk).status == "active"
    assert MICROSOFT_ACCOUNT == mailbox.email
