"""Text bound for a mail header: the one check that it carries no control character, raw or hidden in an RFC 2047
encoded-word (which a mail reader or a lenient parser would decode into a line break). Campaign mail
(campaigns.headers) and the console's own mail (accounts.console_auth.header_safe) both apply it."""

from __future__ import annotations

import base64
import binascii
import quopri
import re
import unicodedata

ENCODED_WORD_RE = re.compile(r"=\?([^?\s]*)\?([^?\s]*)\?([^?]*?)\?=")


def _forbidden(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" or ch in "\u2028\u2029"


def _decode_word(charset: str, encoding: str, text: str) -> tuple[bytes, str]:
    enc = encoding.lower()
    if enc == "q":
        raw = quopri.decodestring(text.replace("_", " ").encode("ascii", "replace"), header=True)
    elif enc == "b":
        padded = text + "=" * (-len(text) % 4)
        try:
            raw = base64.b64decode(padded.encode("ascii", "replace"), validate=False)
        except (binascii.Error, ValueError):
            raw = b""
    else:
        return b"", ""
    try:
        decoded = raw.decode(charset.split("*")[0] or "ascii", "replace")
    except LookupError:
        decoded = raw.decode("latin-1")
    return raw, decoded


def header_text_problem(value: str) -> str | None:
    """Why `value` may not reach a mail header, or None. Looks inside RFC 2047 encoded-words (nested ones
    too): what a mail reader or a lenient parser would decode them to must be free of control characters."""
    if any(_forbidden(c) for c in value):
        return "must not contain control characters (CR, LF, TAB, NUL, ...)"
    pending, seen = [value], 0
    while pending and seen < 100:
        text = pending.pop()
        seen += 1
        for m in ENCODED_WORD_RE.finditer(text):
            raw, decoded = _decode_word(*m.groups())
            if any(b < 0x20 or b == 0x7F for b in raw) or any(_forbidden(c) for c in decoded):
                return "must not contain an RFC 2047 encoded-word that decodes to a control character"
            if "=?" in decoded:
                pending.append(decoded)
    return None
