"""What a reply says, read once from the raw message at ingestion (and by the migration for older replies).

- `text`: the person's own words, the cut the classifier makes (`classify.strip_quotes_and_signature`): quoted
  history, forwarded parts and the signature removed; the whole text when that cut leaves nothing.
- `full_text`: the whole body as plain text (the first text/plain part, else the HTML converted).
- `attachments`: `[{"filename", "content_type", "size"}]` of every attached part; never the content, which stays
  in the raw message kept on `InboundMessage`.

Never raises on malformed MIME: what cannot be read is left out.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from replies import classify as cl

TEXT_LIMIT = 100_000  # what is stored; get_replies rows carry at most ROW_TEXT_LIMIT of it
ROW_TEXT_LIMIT = 5_000
MAX_ATTACHMENTS = 100


@dataclass
class Content:
    text: str = ""
    full_text: str = ""
    attachments: list[dict] = field(default_factory=list)


def _clean(value: str, limit: int) -> str:
    """No NUL (PostgreSQL refuses it), no lone surrogates, trailing blanks trimmed, bounded length."""
    value = (value or "").replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    value = re.sub(r"[ \t]+\n", "\n", value.replace("\r\n", "\n").replace("\r", "\n"))
    return value.strip()[:limit]


def html_to_plain(value: str) -> str:
    """HTML as plain text for reading: paragraphs and line breaks kept, quoted blocks kept with "> " marks
    (innermost first, so nested quotes get one mark per level), scripts and styles dropped, entities decoded."""

    def quote(match: re.Match) -> str:
        inner = match.group(0)
        inner = re.sub(r"^<blockquote\b[^>]*>|</blockquote\s*>$", "", inner, flags=re.I)
        inner = cl.BLOCK_RE.sub("\n", inner)
        text = cl.TAG_RE.sub("", inner).strip("\n")
        return "\n" + "\n".join("> " + line.strip() if line.strip() else ">" for line in text.split("\n")) + "\n"

    value, n = cl.INNER_BLOCKQUOTE_RE.subn(quote, value)
    while n:
        value, n = cl.INNER_BLOCKQUOTE_RE.subn(quote, value)
    value = cl.BLOCK_RE.sub("\n", value)
    value = re.sub(r"<\s*p\b[^>]*>", "\n", value, flags=re.I)
    value = html.unescape(cl.TAG_RE.sub("", value))
    value = re.sub(r"[ \t]+", " ", value)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.strip() for line in value.split("\n")))


def whole_text(msg) -> str:
    """The whole body: the first text/plain part outside attached messages, else the first HTML converted."""
    htmls = []
    for part in cl._own_parts(msg):
        ctype = cl.content_type(part)
        if _is_attachment(part, ctype):
            continue
        if ctype == "text/plain":
            return cl.part_text(part)
        if ctype == "text/html":
            htmls.append(part)
    return html_to_plain(cl.part_text(htmls[0])) if htmls else ""


def _is_attachment(part, ctype: str) -> bool:
    try:
        disposition = (part.get_content_disposition() or "").lower()
    except Exception:  # noqa: BLE001
        disposition = ""
    try:
        filename = part.get_filename()
    except Exception:  # noqa: BLE001
        filename = None
    return disposition == "attachment" or bool(filename) or ctype.startswith("message/")


def attachments(msg) -> list[dict]:
    out = []
    for part in cl.walk(msg):
        if part is msg:
            continue
        ctype = cl.content_type(part)
        try:
            multipart = part.is_multipart() and not ctype.startswith("message/")
        except Exception:  # noqa: BLE001
            multipart = False
        if multipart or not _is_attachment(part, ctype):
            continue
        try:
            filename = part.get_filename() or ""
        except Exception:  # noqa: BLE001
            filename = ""
        try:
            payload = part.get_payload(decode=True)
            size = len(payload) if isinstance(payload, bytes) else len(part.as_bytes())
        except Exception:  # noqa: BLE001
            size = 0
        out.append({"filename": _clean(filename, 255), "content_type": ctype[:255], "size": size})
        if len(out) >= MAX_ATTACHMENTS:
            break
    return out


def extract(raw: bytes) -> Content:
    msg = cl.parse(raw)
    try:
        whole = whole_text(msg)
    except Exception:  # noqa: BLE001
        whole = ""
    try:  # the classifier's own cut, on the classifier's own reading of the body
        own = cl.strip_quotes_and_signature(cl.body_text(msg))
    except Exception:  # noqa: BLE001
        own = ""
    full_text = _clean(whole, TEXT_LIMIT)
    return Content(text=_clean(own, TEXT_LIMIT) or full_text, full_text=full_text, attachments=attachments(msg))
