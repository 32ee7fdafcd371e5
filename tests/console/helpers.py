"""Helpers for console tests: read the Maildir sink like a person reading their inbox."""

import email
import email.policy
import mailbox
import re

from django.conf import settings


def messages_to(address: str) -> list[email.message.EmailMessage]:
    box = mailbox.Maildir(str(settings.MAIL_SINK_DIR), create=True)
    out = []
    for key in box.keys():
        msg = email.message_from_bytes(box.get_bytes(key), policy=email.policy.default)
        if address.lower() in (msg.get("To") or "").lower():
            out.append(msg)
    out.sort(key=lambda m: email.utils.parsedate_to_datetime(m["Date"]))
    return out


def body(msg) -> str:
    part = msg.get_body(preferencelist=("plain",))
    return part.get_content()


def last_code(address: str) -> str:
    """The one-time code of the newest sign-in/verification mail to `address`."""
    for msg in reversed(messages_to(address)):
        match = re.search(r"^\s*([A-Z0-9]{4,8}(?:-[A-Z0-9]{3,4})?)\s*$", body(msg), re.M)
        if match:
            return match.group(1)
    raise AssertionError(f"no code mailed to {address}")


def last_link(address: str) -> str:
    for msg in reversed(messages_to(address)):
        match = re.search(r"(https?://\S+/console/auth/link/[\w-]+/)", body(msg))
        if match:
            return match.group(1)
    raise AssertionError(f"no sign-in link mailed to {address}")
