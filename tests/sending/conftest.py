import pytest

from accounts import services as accounts
from tests.factories import make_workspace


@pytest.fixture
def rich(db):
    """A workspace with 20,000 extra credits (plus the 300 signup), its owner and an all-scopes key."""
    from core.money import credits

    return make_workspace(extra_credits=credits("20000"))


@pytest.fixture
def rich_api(rich):
    from tests.conftest import Api

    return Api(rich[2])


def approve(plaintext, user):
    token = accounts.token_lookup(plaintext=plaintext)
    return accounts.token_approve(token=token, user=user)


# OAuth mailbox peers (issue 17): local authorization servers, an XOAUTH2-only SMTP peer and Dovecot
from tests.sending.oauth_env import (  # noqa: E402, F401
    google_as,
    microsoft_as,
    oauth_certs,
    oauth_settings,
    xoauth2_imap,
    xoauth2_smtp,
)
