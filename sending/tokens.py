"""What an OAuth mailbox's token source returns or raises (`sending.oauth.register_token_source`). Kept apart from
`sending.oauth` so that the providers that supply a source (Google Workspace, Microsoft 365) do not import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class AccessToken:
    token: str
    expires_at: datetime | None = None


class TokenUnavailable(Exception):
    """No access token right now for a transient reason (provider down, backoff, a refresh in flight)."""

    def __init__(self, message: str, retry_at: datetime | None = None):
        super().__init__(message)
        self.retry_at = retry_at
