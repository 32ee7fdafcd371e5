"""Secrets kept out of the access log: an OAuth callback's or authorization request's query string carries a
one-time `code` and the `state` that guards it (the mailbox connection's callback, /oauth/authorize); the web
server's access log (uvicorn.access) would write them verbatim. Their values are replaced by `[redacted]`."""

from __future__ import annotations

import logging
import re

_SECRET_PARAM = re.compile(r"([?&](?:code|state)=)[^&\s\"]*")


def redact(path: str) -> str:
    if "oauth" not in path or "?" not in path:
        return path
    return _SECRET_PARAM.sub(r"\1[redacted]", path)


class RedactOAuthQuery(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, str) and "oauth" in a for a in record.args):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


def install() -> None:
    """On the access logger of the web server (once per process)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactOAuthQuery) for f in logger.filters):
        logger.addFilter(RedactOAuthQuery())
