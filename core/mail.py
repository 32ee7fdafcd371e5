"""Sandbox mail: every message goes to the Maildir sink (CONTRACT section 1, MAIL_SINK_DIR)."""

import mailbox
from pathlib import Path

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend


def sink() -> mailbox.Maildir:
    path = Path(settings.MAIL_SINK_DIR)
    for sub in ("tmp", "new", "cur"):  # Maildir(create=True) only makes these when the folder is new
        (path / sub).mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(str(path), create=True)


def deliver_to_sink(raw: bytes) -> str:
    """Store one RFC 5322 message in the sink; returns its Maildir key."""
    return sink().add(mailbox.MaildirMessage(raw))


class MaildirEmailBackend(BaseEmailBackend):
    def send_messages(self, email_messages):
        sent = 0
        for message in email_messages:
            deliver_to_sink(message.message().as_bytes(linesep="\r\n"))
            sent += 1
        return sent
