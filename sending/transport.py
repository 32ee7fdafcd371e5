"""The one function that sends a message from a mailbox.

`send_message(mailbox=..., message=...)`:
- sandbox mailboxes, and while SANDBOX=1 every mailbox whose SMTP server is not on this machine (bring-your-own
  included): the message is written to the Maildir sink (`core.mail.deliver_to_sink`); nothing leaves the machine;
- bring-your-own and vendor mailboxes: SMTP to the mailbox's server with TLS (STARTTLS or implicit TLS, per
  `smtp_security`), authenticated with the decrypted secret.
Either way the message is DKIM-signed (rsa-sha256, relaxed/relaxed) when its sending domain has a key.

Errors: `TransientSendError` (4xx, connection failures, timeouts: retry later) and `PermanentSendError` (5xx:
do not retry this recipient), both carrying `smtp_code` (int or None) and `message`.
Only `active` mailboxes may send; anything else raises `PermanentSendError(smtp_code=None)`.
"""

from __future__ import annotations

import functools
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from django.conf import settings

from core.mail import deliver_to_sink
from sending import crypto
from sending.models import Mailbox, Provider


class SendError(Exception):
    def __init__(self, message: str, smtp_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.smtp_code = smtp_code


class TransientSendError(SendError):
    """Temporary failure (4xx reply, network error, timeout): the message may be retried later."""


class PermanentSendError(SendError):
    """Permanent failure (5xx reply, mailbox not active): do not retry."""


SMTP_TIMEOUT_SECONDS = 30


def _prepare(mailbox: Mailbox, message: EmailMessage) -> None:
    if "From" not in message:
        message["From"] = mailbox.from_header
    if "Date" not in message:
        message["Date"] = formatdate(localtime=False, usegmt=True)
    if "Message-ID" not in message:
        message["Message-ID"] = make_msgid(domain=mailbox.domain_name)


def uses_sink(mailbox: Mailbox) -> bool:
    """SANDBOX=1: no email leaves the machine (CONTRACT 1). Sandbox mailboxes always write to the sink; in sandbox
    mode any other mailbox does too, unless its SMTP server is on this machine (loopback only, e.g. a local test
    server), where delivering to it leaves nothing."""
    if mailbox.provider == Provider.SANDBOX:
        return True
    return bool(settings.SANDBOX) and not _loopback_only(mailbox.smtp_host)


def _loopback_only(host: str) -> bool:
    import ipaddress
    import socket

    if not host:
        return False
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


class BlockedAddress(Exception):
    pass


def check_host_allowed(host: str, port: int) -> None:
    """Refuse mail servers on loopback, private or link-local addresses (an SSRF guard for operator-entered
    hosts) unless SENDING_ALLOW_PRIVATE_NETWORKS is on (default: on in sandbox mode only)."""
    import ipaddress
    import socket

    if getattr(settings, "SENDING_ALLOW_PRIVATE_NETWORKS", False):
        return
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise BlockedAddress(f"{host} does not resolve: {exc}") from exc
    for info in infos:
        addr = ipaddress.ip_address(info[4][0])
        if not addr.is_global or addr.is_multicast:
            raise BlockedAddress(f"{host} resolves to a non-public address ({addr})")


def _dkim_sign(mailbox: Mailbox, raw: bytes) -> bytes:
    """Prepend a DKIM-Signature (rsa-sha256, relaxed/relaxed) when the mailbox's domain has a key and the From
    address is on that domain."""
    domain = mailbox.domain
    if domain is None or not domain.dkim_private_key_encrypted or not domain.dkim_selector:
        return raw
    if mailbox.domain_name.lower() != domain.name.lower():
        return raw
    import dkim

    key = crypto.decrypt(domain.dkim_private_key_encrypted).encode()
    headers = [b"from", b"to", b"cc", b"subject", b"date", b"message-id", b"reply-to", b"in-reply-to",
               b"references", b"list-unsubscribe", b"list-unsubscribe-post", b"mime-version", b"content-type"]
    sig = dkim.sign(raw, domain.dkim_selector.encode(), domain.name.encode(), key,
                    canonicalize=(b"relaxed", b"relaxed"), include_headers=headers)
    return sig + raw


def tls_context() -> ssl.SSLContext:
    """Certificate-verifying TLS for mailbox servers. SENDING_TLS_CA_FILE adds a private CA (e.g. a company's own
    mail server); SENDING_SMTP_TLS_INSECURE=1 disables verification (local development only).

    Contexts are built once per configuration and shared (an SSLContext is safe to share between threads;
    loading the system CA store for every message cost more than the SMTP dialogue itself)."""
    return _tls_context(getattr(settings, "SENDING_TLS_CA_FILE", "") or "",
                        bool(getattr(settings, "SENDING_SMTP_TLS_INSECURE", False)))


@functools.lru_cache(maxsize=8)
def _tls_context(ca_file: str, insecure: bool) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def smtp_connect(*, host: str, port: int, security: str, username: str, password: str,
                 timeout: float = SMTP_TIMEOUT_SECONDS) -> smtplib.SMTP:
    """Open an authenticated SMTP session; raises SendError subclasses. Used by sends and connection tests."""
    try:
        check_host_allowed(host, port)
    except BlockedAddress as exc:
        raise PermanentSendError(str(exc), None) from exc
    try:
        if security == Mailbox.Security.SSL:
            smtp = smtplib.SMTP_SSL(host, port, timeout=timeout, context=tls_context())
        else:
            smtp = smtplib.SMTP(host, port, timeout=timeout)
            smtp.ehlo()
            if security == Mailbox.Security.STARTTLS:
                if not smtp.has_extn("starttls"):
                    smtp.close()
                    raise PermanentSendError(f"{host}:{port} does not offer STARTTLS", None)
                smtp.starttls(context=tls_context())
                smtp.ehlo()
        if username:
            smtp.login(username, password)
        return smtp
    except smtplib.SMTPAuthenticationError as exc:
        raise PermanentSendError(_text(exc.smtp_error) or "authentication failed", exc.smtp_code) from exc
    except smtplib.SMTPResponseException as exc:
        cls = PermanentSendError if exc.smtp_code >= 500 else TransientSendError
        raise cls(_text(exc.smtp_error), exc.smtp_code) from exc
    except (smtplib.SMTPException, OSError) as exc:  # OSError covers timeouts and TLS errors
        raise TransientSendError(f"cannot connect to {host}:{port}: {exc}", None) from exc


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def send_message(*, mailbox: Mailbox, message: EmailMessage) -> None:
    """Send `message` from `mailbox` (sink in sandbox, SMTP+TLS live). Adds From/Date/Message-ID if missing.

    Raises TransientSendError / PermanentSendError (attributes `smtp_code`, `message`).
    """
    if mailbox.status != Mailbox.Status.ACTIVE:
        raise PermanentSendError(f"mailbox {mailbox.email} is {mailbox.status}, not active", None)
    _prepare(mailbox, message)
    raw = _dkim_sign(mailbox, message.as_bytes(policy=message.policy.clone(linesep="\r\n")))
    if uses_sink(mailbox):
        deliver_to_sink(raw)
        return
    recipients = [addr for header in ("To", "Cc", "Bcc") for addr in message.get_all(header, [])]
    from email.utils import getaddresses

    rcpts = [a for _, a in getaddresses(recipients) if a]
    if not rcpts:
        raise PermanentSendError("message has no recipients", None)
    smtp = smtp_connect(host=mailbox.smtp_host, port=mailbox.smtp_port or 587, security=mailbox.smtp_security,
                        username=mailbox.smtp_username, password=crypto.decrypt(mailbox.secret_encrypted))
    try:
        refused = smtp.sendmail(mailbox.email, rcpts, raw)
    except smtplib.SMTPRecipientsRefused as exc:
        code, text = next(iter(exc.recipients.values()))
        cls = PermanentSendError if code >= 500 else TransientSendError
        raise cls(_text(text), code) from exc
    except smtplib.SMTPResponseException as exc:
        cls = PermanentSendError if exc.smtp_code >= 500 else TransientSendError
        raise cls(_text(exc.smtp_error), exc.smtp_code) from exc
    except (smtplib.SMTPException, OSError) as exc:
        raise TransientSendError(f"SMTP session failed: {exc}", None) from exc
    finally:
        try:
            smtp.quit()
        except Exception:  # noqa: BLE001
            smtp.close()
    if refused:
        code, text = next(iter(refused.values()))
        cls = PermanentSendError if code >= 500 else TransientSendError
        raise cls(_text(text), code)
