"""A small SMTP client for probing (no message is ever sent), and the classification of SMTP replies.

Why not smtplib: a prober must tell a timeout from a closed connection from a protocol error, bound every step by
its own deadline, and keep the enhanced status code; smtplib folds all of these into SMTPServerDisconnected.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from dataclasses import dataclass

MAX_LINE = 2048  # RFC 5321 4.5.3.1.5: 512 octets per reply line; be lenient
MAX_LINES = 100


class SmtpTimeout(Exception):
    pass


class SmtpClosed(Exception):
    pass


class SmtpProtocolError(Exception):
    pass


class SmtpTlsError(Exception):
    pass


_ENHANCED = re.compile(r"^([245])\.(\d{1,3})\.(\d{1,3})\b")


@dataclass
class Reply:
    code: int
    lines: list[str]

    @property
    def text(self) -> str:
        return " ".join(line.strip() for line in self.lines).strip()

    @property
    def enhanced(self) -> str | None:
        """The RFC 3463 enhanced status code ("5.1.1"), when the reply carries one."""
        m = _ENHANCED.match(self.lines[0].strip()) if self.lines else None
        return m.group(0) if m else None

    @property
    def summary(self) -> str:
        return f"{self.code} {self.text}"[:500]


class Session:
    """One SMTP connection. Every step (connect, each reply) has its own deadline of `timeout` seconds."""

    def __init__(self, ip: str, port: int, timeout: float):
        self.timeout = timeout
        self.tls = False
        try:
            self.sock = socket.create_connection((ip, port), timeout=timeout)
        except TimeoutError as exc:
            raise SmtpTimeout(f"connect {ip}:{port}: timed out") from exc
        self.file = self.sock.makefile("rb")

    def read_reply(self) -> Reply:
        deadline = time.monotonic() + self.timeout
        lines: list[str] = []
        code = None
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SmtpTimeout("reply timed out")
                self.sock.settimeout(remaining)
                raw = self.file.readline(MAX_LINE + 1)
                if not raw:
                    raise SmtpClosed("connection closed")
                if len(raw) > MAX_LINE:
                    raise SmtpProtocolError("reply line too long")
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if len(line) < 3 or not line[:3].isdigit() or (len(line) > 3 and line[3] not in " -"):
                    raise SmtpProtocolError(f"malformed reply line {line[:80]!r}")
                if code is not None and int(line[:3]) != code:
                    raise SmtpProtocolError("reply code changed inside a multi-line reply")
                code = int(line[:3])
                lines.append(line[4:])
                if len(line) == 3 or line[3] == " ":
                    return Reply(code, lines)
                if len(lines) >= MAX_LINES:
                    raise SmtpProtocolError("too many reply lines")
        except TimeoutError as exc:
            raise SmtpTimeout("reply timed out") from exc
        except (ConnectionError, ssl.SSLError) as exc:
            raise SmtpClosed(str(exc)) from exc

    def command(self, line: str) -> Reply:
        self.sock.settimeout(self.timeout)
        try:
            self.sock.sendall(line.encode("utf-8") + b"\r\n")
        except TimeoutError as exc:
            raise SmtpTimeout("send timed out") from exc
        except OSError as exc:
            raise SmtpClosed(str(exc)) from exc
        return self.read_reply()

    def starttls(self, server_name: str) -> Reply:
        """STARTTLS then the handshake. Opportunistic TLS as between MTAs: certificates are not verified (an MX
        certificate rarely matches; the probe sends no message and no secret)."""
        reply = self.command("STARTTLS")
        if reply.code != 220:
            return reply
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        self.sock.settimeout(self.timeout)
        try:
            self.sock = ctx.wrap_socket(self.sock, server_hostname=server_name or None)
        except TimeoutError as exc:
            raise SmtpTimeout("TLS handshake timed out") from exc
        except (ssl.SSLError, OSError) as exc:
            raise SmtpTlsError(str(exc)) from exc
        self.file = self.sock.makefile("rb")
        self.tls = True
        return reply

    def quit(self) -> None:
        try:
            self.sock.settimeout(min(self.timeout, 2.0))
            self.sock.sendall(b"QUIT\r\n")
            self.file.readline(MAX_LINE)
        except Exception:  # noqa: BLE001 - QUIT is a courtesy
            pass
        self.close()

    def close(self) -> None:
        for closer in (self.file.close, self.sock.close):
            try:
                closer()
            except Exception:  # noqa: BLE001
                pass


def ehlo_features(reply: Reply) -> set[str]:
    """Upper-cased extension keywords of an EHLO reply (the first line is the greeting)."""
    return {line.split()[0].upper() for line in reply.lines[1:] if line.strip()}


# --- reply classification -------------------------------------------------------------------------------
ACCEPTED = "accepted"
USER_UNKNOWN = "user_unknown"
REJECTED = "rejected"
MAILBOX_FULL = "mailbox_full"
BLOCKED = "blocked"
GREYLISTED = "greylisted"
TEMPORARY = "temporary_failure"

_FULL = re.compile(
    r"mailbox (is )?full|over ?quota|quota (exceeded|full)|exceeded (its |the )?(storage|quota)"
    r"|insufficient (system )?storage|out of storage|mailbox size limit|storage (space|limit)", re.I)
_STRONG_UNKNOWN = re.compile(
    r"user ?unknown|unknown (user|recipient|mailbox)|no such (user|mailbox|recipient|address|account)"
    r"|does ?n[o']t exist|not exist|user not found|recipient (not found|unknown)|mailbox not found"
    r"|invalid (recipient|mailbox|address)|unrouteable address|no mailbox|address unknown", re.I)
_UNKNOWN = re.compile(
    r"mailbox unavailable|recipient (address )?rejected|address rejected|not a valid mailbox|undeliverable"
    r"|account (has been |is )?(disabled|deactivated|suspended|inactive)|mailbox (is )?(disabled|inactive)"
    r"|no longer (active|available)|not (our|a local) (user|customer)", re.I)
_BLOCK = re.compile(
    r"block|black ?list|spamhaus|spamcop|sorbs|barracuda|\b(rbl|dnsbl)\b|\blisted\b|reputation|policy|banned"
    r"|denied|not (allowed|permitted|authori[sz]ed)|prohibited|refused|relay|spam|abuse|your (ip|host|server)"
    r"|client host|reverse dns|\bptr\b|rate limit|too many|helo|sender", re.I)
_GREYLIST = re.compile(r"gr[ae]y ?list|try (again )?later|come back later|deferred|temporar|retry", re.I)


def classify_rcpt(reply: Reply) -> str:
    """What a reply to RCPT TO says about the mailbox: accepted, user_unknown, rejected (a 5xx that names no
    reason), mailbox_full, blocked (policy or blocklist rejection of the prober), greylisted or
    temporary_failure (4xx)."""
    code, text, enhanced = reply.code, reply.text, reply.enhanced or ""
    subject_detail = enhanced[2:] if enhanced else ""
    if 200 <= code < 300:
        return ACCEPTED
    if subject_detail == "2.2" or (code in (452, 552) and _FULL.search(text)):
        return MAILBOX_FULL
    if 400 <= code < 500:
        return GREYLISTED if _GREYLIST.search(text) or subject_detail in ("7.1", "2.0") else TEMPORARY
    if code < 500:
        return TEMPORARY
    # 5xx: permanent
    if subject_detail in ("1.7", "1.8"):  # bad sender mailbox / sender domain: about the prober
        return BLOCKED
    if subject_detail.startswith("1.") or subject_detail == "2.1":
        return USER_UNKNOWN
    if subject_detail == "4.1" and re.search(r"access denied|recipient address rejected", text, re.I):
        return USER_UNKNOWN  # Exchange Online directory-based edge blocking: the recipient does not exist
    if subject_detail.startswith("7."):
        return USER_UNKNOWN if _STRONG_UNKNOWN.search(text) and not _BLOCK.search(text) else BLOCKED
    if _STRONG_UNKNOWN.search(text):
        return USER_UNKNOWN
    if _BLOCK.search(text):
        return BLOCKED
    if _UNKNOWN.search(text):
        return USER_UNKNOWN
    return REJECTED


def classify_transient(reply: Reply) -> str:
    """A non-2xx reply to the banner, EHLO or MAIL FROM: blocked (5xx: our prober is refused) or a 4xx."""
    if reply.code >= 500:
        return BLOCKED
    return GREYLISTED if _GREYLIST.search(reply.text) else TEMPORARY
