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
