"""The one function that sends a message from a mailbox.

`send_message(mailbox=..., message=...)`:
- sandbox mailboxes, and while SANDBOX=1 every mailbox whose SMTP server is not on this machine (bring-your-own
  included): the message is written to the Maildir sink (`core.mail.deliver_to_sink`); nothing leaves the machine;
- bring-your-own and vendor mailboxes: SMTP to the mailbox's server with TLS (STARTTLS or implicit TLS, per
  `smtp_security`), authenticated with the decrypted secret, or for `auth = oauth2` mailbox (Google, Microsoft)
  with SASL XOAUTH2 and an access token from `sending.oauth.access_token` (a refused token is dropped and a fresh
  one tried once; a refused refresh raises `MailboxNeedsReconnect`, a transient token failure
  `MailboxAuthUnavailable`).
Either way the message is DKIM-signed (rsa-sha256, relaxed/relaxed) when its sending domain has a key.

Errors: `TransientSendError` (4xx, connection failures, timeouts: retry later) and `PermanentSendError` (5xx:
do not retry this recipient), both carrying `smtp_code` (int or None) and `message`.
Only `active` mailboxes may send; anything else raises `PermanentSendError(smtp_code=None)`, as does a sandbox
mailbox while SANDBOX=0 (live mode never sends into the sink).
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


class MailboxNeedsReconnect(PermanentSendError):
    """OAuth mailbox: the grant is gone (consent revoked, refresh refused). Nothing was sent; the mailbox is now
    `needs_reconnect`. The message is not the recipient's fault: wait for the reconnect."""


class MailboxAuthUnavailable(TransientSendError):
    """OAuth mailbox: no access token right now (token endpoint down, backing off). Nothing was sent; `retry_at`
    says when a new attempt makes sense."""

    def __init__(self, message: str, retry_at=None):
        super().__init__(message, None)
        self.retry_at = retry_at


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
    if settings.SENDING_ALLOW_PRIVATE_NETWORKS:
        return
    allowed_address(host, port)


def allowed_address(host: str, port: int) -> str:
    """Resolve `host` once and vet every address it has (all public, unless SENDING_ALLOW_PRIVATE_NETWORKS);
    returns the address to connect to. Connecting to this address rather than the name means a second
    resolution (DNS rebinding) cannot swap in a private address after the check. Raises BlockedAddress."""
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise BlockedAddress(f"{host} does not resolve: {exc}") from exc
    if not infos:
        raise BlockedAddress(f"{host} does not resolve")
    if not settings.SENDING_ALLOW_PRIVATE_NETWORKS:
        for info in infos:
            addr = ipaddress.ip_address(info[4][0].split("%")[0])
            if not addr.is_global or addr.is_multicast:
                raise BlockedAddress(f"{host} resolves to a non-public address ({addr})")
    return infos[0][4][0]


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
    return _tls_context(settings.SENDING_TLS_CA_FILE or "",
                        bool(settings.SENDING_SMTP_TLS_INSECURE))


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
                 timeout: float = SMTP_TIMEOUT_SECONDS, xoauth2_token: str | None = None) -> smtplib.SMTP:
    """Open an authenticated SMTP session; raises SendError subclasses. Used by sends and connection tests.
    With `xoauth2_token` the session authenticates with SASL XOAUTH2 as `username` (never with a password)."""
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
        if xoauth2_token is not None:
            _auth_xoauth2(smtp, username, xoauth2_token)
        elif username:
            smtp.login(username, password)
        return smtp
    except smtplib.SMTPAuthenticationError as exc:
        raise PermanentSendError(_text(exc.smtp_error) or "authentication failed", exc.smtp_code) from exc
    except smtplib.SMTPResponseException as exc:
        cls = PermanentSendError if exc.smtp_code >= 500 else TransientSendError
        raise cls(_text(exc.smtp_error), exc.smtp_code) from exc
    except (smtplib.SMTPException, OSError) as exc:  # OSError covers timeouts and TLS errors
        raise TransientSendError(f"cannot connect to {host}:{port}: {exc}", None) from exc


def _auth_xoauth2(smtp: smtplib.SMTP, user: str, token: str) -> None:
    from sending.oauth import xoauth2_response

    def respond(challenge=None):
        # the initial response carries the token; after an error challenge (base64 JSON) the client answers
        # with an empty response and the server sends the final 535 (Google's and Microsoft's XOAUTH2)
        return xoauth2_response(user, token) if challenge is None else ""

    try:
        smtp.auth("XOAUTH2", respond, initial_response_ok=True)
    except smtplib.SMTPException:
        smtp.close()
        raise


def _smtp_for(mailbox: Mailbox) -> smtplib.SMTP:
    """An authenticated session for this mailbox: its password, or XOAUTH2 with a current access token."""
    host, port, security = mailbox.smtp_host, mailbox.smtp_port or 587, mailbox.smtp_security
    if mailbox.auth != Mailbox.Auth.OAUTH2:
        return smtp_connect(host=host, port=port, security=security, username=mailbox.smtp_username,
                            password=crypto.decrypt(mailbox.secret_encrypted))
    from sending import oauth

    user = mailbox.smtp_username or mailbox.email
    for attempt in (1, 2):
        try:
            token = oauth.access_token(mailbox)
        except oauth.NeedsReconnect as exc:
            raise MailboxNeedsReconnect(f"mailbox {mailbox.email} needs reconnecting: {exc}", None) from None
        except oauth.TokenUnavailable as exc:
            raise MailboxAuthUnavailable(f"no access token for {mailbox.email}: {exc}", exc.retry_at) from None
        try:
            return smtp_connect(host=host, port=port, security=security, username=user, password="",
                                xoauth2_token=token)
        except PermanentSendError as exc:
            if exc.smtp_code not in (334, 454, 535) or attempt == 2:
                raise
            oauth.token_invalidate(mailbox)  # refused although it looked valid (revoked?): refresh and retry once
    raise AssertionError("unreachable")


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def send_message(*, mailbox: Mailbox, message: EmailMessage) -> None:
    """Send `message` from `mailbox` (sink in sandbox, SMTP+TLS live). Adds From/Date/Message-ID if missing.

    Raises TransientSendError / PermanentSendError (attributes `smtp_code`, `message`).
    """
    if mailbox.status != Mailbox.Status.ACTIVE:
        raise PermanentSendError(f"mailbox {mailbox.email} is {mailbox.status}, not active", None)
    if mailbox.provider == Provider.SANDBOX and not settings.SANDBOX:
        # live mode never reports a message sent that only reached the sandbox sink (CONTRACT 4.14)
        raise PermanentSendError(f"mailbox {mailbox.email} is a sandbox mailbox: with SANDBOX=0 nothing is sent "
                                 "from it", None)
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
    smtp = _smtp_for(mailbox)
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
