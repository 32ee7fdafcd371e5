"""Every header of campaign mail, built and checked in one place (issues 15.1 and 14.2).

Values are checked here and written as-is: the email package only stores the exact text built below
(`set_raw` under a policy that never refolds), so no interpreter's header parser can turn an RFC 2047
encoded-word into a line break (CVE-2024-6923) or re-encode a URI (`List-Unsubscribe` must stay plain
`<...>` for RFC 2369 parsers).

Rules, for every value that reaches a header:
- no control character (CR, LF, TAB, NUL, DEL, C1, U+2028/U+2029), neither raw nor inside an RFC 2047
  encoded-word once decoded: `header_text_problem` (also used at campaign creation, which answers 400 with the
  field);
- header lines are ASCII: non-ASCII display names and subjects become encoded-words produced here; addresses
  are ASCII (international domains in IDNA form); URIs and message ids are ASCII without spaces or `<>`;
- long values fold only at whitespace between elements (each URI, each message id on its own line when needed).

The exact list of headers a campaign message carries: From, To, Subject, Date, Message-ID, (In-Reply-To and
References for a follow-up in a thread), List-Unsubscribe, List-Unsubscribe-Post, then MIME-Version and
Content-Type from the MIME structure (plus DKIM-Signature, added by the transport when the domain has a key).
"""

from __future__ import annotations

import email.policy
import re
from email.utils import formatdate

from core.mailheaders import header_text_problem

MAX_LINE = 78  # RFC 5322 2.1.1: SHOULD
HARD_MAX_LINE = 998  # MUST

# A policy that writes header text exactly as stored (`refold_source="none"`) with CRLF line ends.
POLICY = email.policy.SMTP.clone(refold_source="none", max_line_length=MAX_LINE)

MSGID_RE = re.compile(r"^[A-Za-z0-9!#$%&'*+/=^_`{|}~.-]+@[A-Za-z0-9.-]+$")
LOCAL_RE = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$")
URI_RE = re.compile(r"^[\x21-\x7e]+$")


class UnsafeHeader(ValueError):
    def __init__(self, header: str, problem: str):
        super().__init__(f"{header}: {problem}")
        self.header = header
        self.problem = problem


def _check(header: str, value: str) -> str:
    problem = header_text_problem(value)
    if problem:
        raise UnsafeHeader(header, problem)
    return value


def _fold_words(header: str, words: list[str], sep: str = " ") -> str:
    """ASCII words joined by `sep` (" " or ", "), folded (a newline then a space) before a word that would
    pass MAX_LINE; a word is never split."""
    comma = sep.strip()
    lines: list[str] = []
    current = ""
    for i, word in enumerate(words):
        piece = word + (comma if i < len(words) - 1 else "")
        if not current:
            current = piece
            continue
        width = (len(header) + 2 if not lines else 0) + len(current) + 1 + len(piece)
        if width <= MAX_LINE:
            current += " " + piece
        else:
            lines.append(current)
            current = " " + piece
    lines.append(current)
    if len(header) + 2 + len(lines[0]) > HARD_MAX_LINE or any(len(x) > HARD_MAX_LINE for x in lines[1:]):
        raise UnsafeHeader(header, f"a line would be longer than {HARD_MAX_LINE} characters")
    return "\n".join(lines)


_Q_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!*+-/")
MAX_WORD = 75  # RFC 2047 2: an encoded-word is at most 75 characters


def _q(ch: str) -> str:
    if ch == " ":
        return "_"
    if ch in _Q_SAFE:
        return ch
    return "".join(f"={b:02X}" for b in ch.encode("utf-8"))


def _encoded_words(text: str) -> list[str]:
    """`text` as RFC 2047 Q encoded-words (UTF-8), safe in a phrase and in unstructured text. A space is
    encoded inside the word before it, so decoders that drop the whitespace between adjacent encoded-words
    (as RFC 2047 6.2 requires) and those that keep it read the same text; a character is never split."""
    prefix, suffix = "=?utf-8?q?", "?="
    room = MAX_WORD - len(prefix) - len(suffix)
    words, current = [], ""
    for i, part in enumerate(text.split(" ")):
        chunk = "".join(_q(c) for c in part + (" " if i < len(text.split(" ")) - 1 else ""))
        if current and len(current) + len(chunk) <= room:
            current += chunk
            continue
        if current:
            words.append(current)
            current = ""
        for ch in (part + (" " if i < len(text.split(" ")) - 1 else "")):
            q = _q(ch)
            if len(current) + len(q) > room:
                words.append(current)
                current = ""
            current += q
    if current:
        words.append(current)
    return [f"{prefix}{w}{suffix}" for w in words]


def _unstructured(header: str, text: str) -> str:
    text = _check(header, " ".join(text.split()))
    if not text:
        raise UnsafeHeader(header, "is empty")
    if text.isascii():
        return _fold_words(header, text.split(" "))
    return _fold_words(header, _encoded_words(text))


def _addr_spec(header: str, address: str) -> str:
    local, at, domain = (address or "").strip().rpartition("@")
    if not at or not local or not domain:
        raise UnsafeHeader(header, f"{address!r} is not an address")
    if not LOCAL_RE.match(local) or local.startswith(".") or local.endswith(".") or ".." in local:
        raise UnsafeHeader(header, f"the local part of {address!r} is not a plain ASCII dot-atom")
    try:
        ascii_domain = domain.encode("idna").decode("ascii") if not domain.isascii() else domain
    except UnicodeError as exc:
        raise UnsafeHeader(header, f"the domain of {address!r} cannot be written in IDNA form") from exc
    if not re.match(r"^[A-Za-z0-9.-]+$", ascii_domain):
        raise UnsafeHeader(header, f"the domain of {address!r} is not a host name")
    return f"{local}@{ascii_domain}"


def _phrase(header: str, name: str) -> str:
    """A display name as an RFC 5322 phrase: an atom run, a quoted string, or encoded-words (non-ASCII)."""
    name = _check(header, " ".join((name or "").split()))
    if not name:
        return ""
    if not name.isascii():
        return _fold_words(header, _encoded_words(name))
    if re.match(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$", name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mailbox_header(header: str, name: str, address: str) -> str:
    spec = _addr_spec(header, address)
    phrase = _phrase(header, name)
    if not phrase:
        return spec
    if "\n" in phrase or len(header) + len(phrase) + len(spec) + 5 > MAX_LINE:
        return f"{phrase}\n <{spec}>"
    return f"{phrase} <{spec}>"


def msg_id(header: str, value: str) -> str:
    value = _check(header, value)
    if not MSGID_RE.match(value):
        raise UnsafeHeader(header, f"{value!r} is not a message id")
    return f"<{value}>"


def uri(header: str, value: str) -> str:
    value = _check(header, value)
    if not URI_RE.match(value) or "<" in value or ">" in value:
        raise UnsafeHeader(header, f"{value!r} is not a URI of printable ASCII without spaces or <>")
    return f"<{value}>"


def campaign_headers(*, from_name: str, from_email: str, to_name: str, to_email: str, subject: str,
                     message_id: str, in_reply_to: str = "", references: list[str] | None = None,
                     unsubscribe_urls: list[str], date: str | None = None) -> list[tuple[str, str]]:
    """(name, exact value) of every header a campaign message carries before its MIME headers, checked and
    folded. Raises UnsafeHeader naming the header."""
    out = [
        ("From", mailbox_header("From", from_name, from_email)),
        ("To", mailbox_header("To", to_name, to_email)),
        ("Subject", _unstructured("Subject", subject)),
        ("Date", date or formatdate(usegmt=True)),
        ("Message-ID", msg_id("Message-ID", message_id)),
    ]
    if in_reply_to:
        out.append(("In-Reply-To", msg_id("In-Reply-To", in_reply_to)))
        out.append(("References", _fold_words("References", [msg_id("References", m) for m in references or []])))
    if unsubscribe_urls:  # an answer to a person who wrote to us carries none
        out.append(("List-Unsubscribe", _fold_words("List-Unsubscribe",
                                                    [uri("List-Unsubscribe", u) for u in unsubscribe_urls], sep=", ")))
        out.append(("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"))
    return out


def raw_header_block(raw: bytes) -> list[tuple[str, str]]:
    """The header fields of a serialized message as (name, unfolded value), read from the bytes themselves."""
    head = raw.split(b"\r\n\r\n", 1)[0]
    fields: list[tuple[str, str]] = []
    for line in head.split(b"\r\n"):
        text = line.decode("ascii")
        if text[:1] in (" ", "\t") and fields:
            fields[-1] = (fields[-1][0], fields[-1][1] + text)
        else:
            name, _, value = text.partition(":")
            fields.append((name, value.lstrip(" ")))
    return fields


def check_serialized(raw: bytes, expected: list[str]) -> None:
    """The last line of defence before a message leaves: the bytes' header block is ASCII, every line ends in
    CRLF (no bare CR or LF), no line passes 998 characters, the fields are exactly `expected` (in order, each
    once) and no value carries a control character or an encoded-word hiding one."""
    head = raw.split(b"\r\n\r\n", 1)[0]
    if not head.isascii():
        raise UnsafeHeader("(header block)", "is not ASCII")
    lines = head.split(b"\r\n")
    if any(b"\r" in x or b"\n" in x for x in lines):
        raise UnsafeHeader("(header block)", "has a bare CR or LF")
    if any(len(x) > HARD_MAX_LINE for x in lines):
        raise UnsafeHeader("(header block)", f"has a line longer than {HARD_MAX_LINE} characters")
    fields = raw_header_block(raw)
    names = [n for n, _ in fields]
    if names != expected:
        raise UnsafeHeader("(header block)", f"has the fields {names}, expected {expected}")
    for name, value in fields:
        _check(name, value.replace("\t", " "))
