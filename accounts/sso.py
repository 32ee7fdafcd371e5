"""Console single sign-on (django-allauth's social accounts, OpenID Connect): allauth makes its HTTP calls with
`requests` through the adapter's session; here that session is core.outbound's, so each call (discovery, token,
user info, key set) is done within SOCIALACCOUNT_REQUESTS_TIMEOUT seconds in all, not per read."""

from __future__ import annotations

from allauth.socialaccount import app_settings
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter

from core.outbound_requests import Session


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def get_requests_session(self):
        # the identity provider is the operator's (OIDC_SERVER_URL), possibly on a private network
        return Session(total=app_settings.REQUESTS_TIMEOUT, allow_private=True)
