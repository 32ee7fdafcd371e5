"""Sandbox reply ingestion: an inbound SMTP listener (aiosmtpd) for the sandbox mailboxes.

RCPT TO is accepted only for a sandbox mailbox of this instance (`alex@…`, or a plus-address `alex+tag@…`);
any other recipient gets `550 5.1.1`. DATA is stored raw for each accepted mailbox (replies.services.
inbound_store), then classified by a Celery task queued on commit; `250` is answered only once the message is
stored, so a crash before that makes the sending MTA retry rather than lose the message.
"""

from __future__ import annotations

import logging

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections

from replies import services

logger = logging.getLogger("replies.smtp")

ACCEPTED_STATUSES = ("active", "suspended")  # a suspended mailbox still receives replies to what it sent


def resolve_mailbox(address: str):
    """The sandbox mailbox an RCPT address delivers to, or None."""
    from sending.models import Mailbox, Provider

    address = (address or "").strip().strip("<>").lower()
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        return None
    base = local.split("+", 1)[0]
    candidates = {address, f"{base}@{domain}"}
    return (Mailbox.objects.select_related("workspace")
            .filter(email__in=candidates, provider=Provider.SANDBOX, status__in=ACCEPTED_STATUSES).first())


def _resolve(address: str):
    close_old_connections()
    try:
        return resolve_mailbox(address)
    finally:
        close_old_connections()


def _deliver(raw: bytes, mail_from: str, rcpt_tos: list[str]) -> int:
    close_old_connections()
    try:
        stored = 0
        seen = set()
        for rcpt in rcpt_tos:
            mailbox = resolve_mailbox(rcpt)
            if mailbox is None or mailbox.pk in seen:
                continue
            seen.add(mailbox.pk)
            services.inbound_store(mailbox=mailbox, raw=raw, source="smtp", envelope_from=mail_from or "",
                                   envelope_to=rcpt)
            stored += 1
        return stored
    finally:
        close_old_connections()


class InboundHandler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        mailbox = await sync_to_async(_resolve, thread_sensitive=False)(address)
        if mailbox is None:
            return "550 5.1.1 No such mailbox here: this listener accepts mail for sandbox mailboxes only"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        try:
            await sync_to_async(_deliver, thread_sensitive=False)(raw, envelope.mail_from, list(envelope.rcpt_tos))
        except Exception:  # noqa: BLE001 - tell the client to retry; never lose a message silently
            logger.exception("could not store an inbound message")
            return "451 4.3.0 Temporary failure storing the message; try again later"
        return "250 2.0.0 Message accepted"


def make_controller(*, host: str | None = None, port: int | None = None) -> Controller:
    host = host or settings.HOST
    port = settings.SANDBOX_SMTP_PORT if port is None else port
    return Controller(InboundHandler(), hostname=host, port=port,
                      data_size_limit=services.MAX_MESSAGE_BYTES, enable_SMTPUTF8=True,
                      server_kwargs={"ident": "outbound-service sandbox inbound"}, server_hostname=host)


__all__ = ["InboundHandler", "make_controller", "resolve_mailbox", "SMTP"]
