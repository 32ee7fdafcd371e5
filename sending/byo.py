"""Bring your own mailbox: register an existing SMTP + IMAP account as sending capacity.

The connection is tested before the mailbox is accepted: an authenticated SMTP session (STARTTLS or implicit
TLS) and an IMAP login that can open INBOX read-only. The secret is stored Fernet-encrypted
(`sending.crypto`, key MAILBOX_SECRET_KEY) and never shown again. A BYO mailbox is `active` at once and counts
as sending capacity; it carries no monthly upkeep (the customer pays their own mail provider).
"""

from __future__ import annotations

import imaplib
import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from sending import crypto, transport
from sending.imap import ImapError
from sending.imap import connect as imap_connect
from sending.models import Mailbox, Provider

logger = logging.getLogger("sending.byo")
TEST_TIMEOUT_SECONDS = 15


class ConnectionTestFailed(Exception):
    def __init__(self, step: str, message: str):
        super().__init__(f"{step}: {message}")
        self.step = step
        self.message = message


@dataclass
class ByoSettings:
    email: str
    smtp_host: str
    smtp_port: int
    smtp_security: str
    smtp_username: str
    imap_host: str
    imap_port: int
    imap_security: str
    imap_username: str
    secret: str
    first_name: str = ""
    last_name: str = ""


def smtp_test(cfg: ByoSettings) -> None:
    try:
        smtp = transport.smtp_connect(host=cfg.smtp_host, port=cfg.smtp_port, security=cfg.smtp_security,
                                      username=cfg.smtp_username, password=cfg.secret, timeout=TEST_TIMEOUT_SECONDS)
    except transport.SendError as exc:
        raise ConnectionTestFailed("SMTP", exc.message) from exc
    try:
        code, _ = smtp.noop()
        if code != 250:
            raise ConnectionTestFailed("SMTP", f"NOOP answered {code}")
    finally:
        try:
            smtp.quit()
        except Exception:  # noqa: BLE001
            smtp.close()


def imap_test(cfg: ByoSettings) -> None:
    context = transport.tls_context()
    try:
        transport.check_host_allowed(cfg.imap_host, cfg.imap_port)
    except transport.BlockedAddress as exc:
        raise ConnectionTestFailed("IMAP", str(exc)) from exc
    try:
        if cfg.imap_security == Mailbox.Security.SSL:
            imap = imaplib.IMAP4_SSL(cfg.imap_host, cfg.imap_port, ssl_context=context, timeout=TEST_TIMEOUT_SECONDS)
        else:
            imap = imaplib.IMAP4(cfg.imap_host, cfg.imap_port, timeout=TEST_TIMEOUT_SECONDS)
            if cfg.imap_security == Mailbox.Security.STARTTLS:
                imap.starttls(ssl_context=context)
    except (OSError, imaplib.IMAP4.error) as exc:
        raise ConnectionTestFailed("IMAP", f"cannot connect to {cfg.imap_host}:{cfg.imap_port}: {exc}") from exc
    try:
        imap.login(cfg.imap_username, cfg.secret)
        status, _ = imap.select("INBOX", readonly=True)
        if status != "OK":
            raise ConnectionTestFailed("IMAP", "INBOX cannot be opened")
    except (OSError, imaplib.IMAP4.error) as exc:
        raise ConnectionTestFailed("IMAP", str(exc)) from exc
    finally:
        try:
            imap.logout()
        except Exception:  # noqa: BLE001
            pass


def connection_test(cfg: ByoSettings) -> None:
    """Raise ConnectionTestFailed naming the step (SMTP or IMAP) that failed."""
    smtp_test(cfg)
    imap_test(cfg)


def mailbox_byo_register(*, workspace, cfg: ByoSettings, test: bool = True) -> Mailbox:
    """Test the connection, then store the mailbox as active capacity. Raises ConnectionTestFailed, or
    ValueError when the address is already registered."""
    if test:
        connection_test(cfg)
    now = timezone.now()
    email = cfg.email.strip().lower()
    # a mailbox this workspace removed earlier may be registered again (the old row is dropped)
    Mailbox.objects.filter(workspace=workspace, email=email, status=Mailbox.Status.REMOVED,
                           provider=Provider.BYO).delete()
    try:
        with transaction.atomic():
            return Mailbox.objects.create(
                workspace=workspace, email=email, first_name=cfg.first_name,
                last_name=cfg.last_name, provider=Provider.BYO, status=Mailbox.Status.ACTIVE,
                smtp_host=cfg.smtp_host, smtp_port=cfg.smtp_port, smtp_security=cfg.smtp_security,
                smtp_username=cfg.smtp_username, imap_host=cfg.imap_host, imap_port=cfg.imap_port,
                imap_security=cfg.imap_security, imap_username=cfg.imap_username,
                secret_encrypted=crypto.encrypt(cfg.secret), activated_at=now, renews_at=None,
            )
    except IntegrityError as exc:
        raise ValueError("This address is already registered.") from exc


def mailbox_byo_retest(*, mailbox: Mailbox) -> None:
    """Re-run the connection test of a stored BYO mailbox (console button)."""
    if mailbox.auth == Mailbox.Auth.OAUTH2:
        oauth_connection_test(mailbox)
        return
    connection_test(settings_of(mailbox))


def oauth_connection_test(mailbox: Mailbox) -> None:
    """An OAuth mailbox's connection test: SMTP and IMAP sessions authenticated with XOAUTH2 only."""
    try:
        smtp = transport._smtp_for(mailbox)
    except transport.SendError as exc:
        raise ConnectionTestFailed("SMTP", exc.message) from exc
    try:
        code, _ = smtp.noop()
        if code != 250:
            raise ConnectionTestFailed("SMTP", f"NOOP answered {code}")
    finally:
        try:
            smtp.quit()
        except Exception:  # noqa: BLE001
            smtp.close()
    try:
        imap = imap_connect(mailbox, timeout=TEST_TIMEOUT_SECONDS)
    except ImapError as exc:
        raise ConnectionTestFailed("IMAP", str(exc)) from exc
    try:
        status, _ = imap.select("INBOX", readonly=True)
        if status != "OK":
            raise ConnectionTestFailed("IMAP", "INBOX cannot be opened")
    finally:
        try:
            imap.logout()
        except Exception:  # noqa: BLE001
            pass


def settings_of(mailbox: Mailbox) -> ByoSettings:
    return ByoSettings(
        email=mailbox.email, smtp_host=mailbox.smtp_host, smtp_port=mailbox.smtp_port or 587,
        smtp_security=mailbox.smtp_security, smtp_username=mailbox.smtp_username, imap_host=mailbox.imap_host,
        imap_port=mailbox.imap_port or 993, imap_security=mailbox.imap_security, imap_username=mailbox.imap_username,
        secret=crypto.decrypt(mailbox.secret_encrypted), first_name=mailbox.first_name, last_name=mailbox.last_name,
    )


def mailbox_remove(*, mailbox: Mailbox) -> None:
    """Stop using a mailbox (BYO: forget its secret). Bought mailboxes stop renewing; the vendor-side mailbox is
    deleted after the provider's grace period (`sending.services.mailbox_vendor_sync`)."""
    from django.utils import timezone

    from sending.models import MailboxToken

    MailboxToken.objects.filter(mailbox=mailbox).delete()  # OAuth: forget both tokens
    mailbox.status = Mailbox.Status.REMOVED
    mailbox.secret_encrypted = ""
    mailbox.renews_at = None
    mailbox.removed_at = timezone.now()
    mailbox.save(update_fields=["status", "secret_encrypted", "renews_at", "removed_at"])
