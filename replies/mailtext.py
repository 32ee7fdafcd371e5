"""A mail's own text, as the reply classifier and its model read it: parsing that never raises, header values,
the message's body text (text/plain, else HTML made text), and the new text of a reply with the quoted history,
forwarded parts, signatures and sign-offs removed.

The local model (replies.model) is trained on the text these functions extract from its corpus messages and the
classifier (replies.classify) gives it the text they extract from incoming mail: one extraction for both, in
its own module so that neither imports the other; the model's cache digest covers this file.
"""

from __future__ import annotations

import email
import email.message
import email.parser
import email.policy
import html
import re
from email.message import Message
from email.utils import getaddresses, parseaddr

MAX_BODY_CHARS = 200_000


# --- parsing (never raises) ------------------------------------------------------------------------------
def parse(raw: bytes) -> Message:
    """Parse with the modern policy; header values are read through `header()` which tolerates garbage."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    try:
        return email.message_from_bytes(raw, policy=email.policy.default)
    except Exception:  # noqa: BLE001 - e.g. RecursionError on thousands of nested multiparts
        try:
            return email.parser.BytesParser(policy=email.policy.default).parsebytes(raw, headersonly=True)
        except Exception:  # noqa: BLE001
            return email.message.EmailMessage(policy=email.policy.default)


def header(msg: Message, name: str) -> str:
    """A header's value as a plain string, '' when absent; malformed values fall back to the raw text."""
    try:
        value = msg.get(name)
        return "" if value is None else _clean(str(value))
    except Exception:  # noqa: BLE001 - a header the policy cannot parse
        for key, raw_value in _raw_items(msg):
            if key.lower() == name.lower():
                return _clean(str(raw_value))
        return ""


def header_all(msg: Message, name: str) -> list[str]:
    try:
        return [_clean(str(v)) for v in (msg.get_all(name) or [])]
    except Exception:  # noqa: BLE001
        return [_clean(str(v)) for k, v in _raw_items(msg) if k.lower() == name.lower()]


def _raw_items(msg: Message):
    try:
        return list(msg.raw_items())
    except Exception:  # noqa: BLE001
        return []


def _clean(value: str) -> str:
    value = value.encode("utf-8", "replace").decode("utf-8", "replace")
    return re.sub(r"\s+", " ", value).strip()


def address(value: str) -> str:
    """The bare lower-cased address of a From/To-style header value ('' if none)."""
    try:
        _, addr = parseaddr(value)
    except Exception:  # noqa: BLE001
        addr = ""
    addr = addr.strip().strip("<>").lower()
    return addr if "@" in addr and not CONTROL_RE.search(addr) else ""


CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\s]")


def addresses(values: list[str]) -> list[str]:
    try:
        pairs = getaddresses(values)
    except Exception:  # noqa: BLE001
        return []
    return [a.lower() for _, a in pairs if "@" in a and not CONTROL_RE.search(a)]


MSGID_RE = re.compile(r"<([^<>\s@\x00-\x1f\x7f]+@[^<>\s\x00-\x1f\x7f]+)>")


def message_ids(value: str) -> list[str]:
    """Message-IDs in a Message-ID / In-Reply-To / References value, normalized to `<local@domain>`."""
    return [f"<{m}>" for m in MSGID_RE.findall(value or "")]


def normalize_message_id(value: str) -> str:
    ids = message_ids(value)
    if ids:
        return ids[0][:900]
    value = CONTROL_RE.sub("", (value or "").strip())
    return f"<{value}>"[:900] if value else ""


def content_type(part: Message) -> str:
    try:
        return (part.get_content_type() or "text/plain").lower()
    except Exception:  # noqa: BLE001
        return "text/plain"


def walk(msg: Message):
    """`msg.walk()` that stops quietly at a broken structure."""
    try:
        yield from msg.walk()
    except Exception:  # noqa: BLE001
        return


def part_text(part: Message) -> str:
    """Decoded text of a leaf part (charset errors replaced), '' for anything unreadable."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001
        payload = None
    if payload is None:
        try:
            value = part.get_payload()
            return value if isinstance(value, str) else ""
        except Exception:  # noqa: BLE001
            return ""
    charset = "utf-8"
    try:
        charset = part.get_content_charset() or "utf-8"
    except Exception:  # noqa: BLE001
        pass
    try:
        return payload.decode(charset, "replace")
    except (LookupError, TypeError):
        return payload.decode("utf-8", "replace")


def body_text(msg: Message) -> str:
    """The message's own text: the first text/plain part outside attached messages, else stripped HTML."""
    plain, htmls = [], []
    for part in _own_parts(msg):
        ctype = content_type(part)
        if ctype == "text/plain":
            plain.append(part_text(part))
        elif ctype == "text/html":
            htmls.append(html_to_text(part_text(part)))
    text = plain[0] if plain else (htmls[0] if htmls else "")
    return text[:MAX_BODY_CHARS]


def all_text(msg: Message) -> str:
    """Every text part, attached messages included (bounce bodies quote the original)."""
    chunks = []
    for part in walk(msg):
        ctype = content_type(part)
        if ctype.startswith("text/"):
            chunks.append(part_text(part))
        elif ctype in ("message/delivery-status", "message/rfc822", "message/global-delivery-status"):
            chunks.append(_as_text(part))
    return "\n".join(chunks)[:MAX_BODY_CHARS]


def _as_text(part: Message) -> str:
    try:
        return part.as_string(policy=email.policy.compat32)
    except Exception:  # noqa: BLE001
        try:
            return str(part.get_payload())
        except Exception:  # noqa: BLE001
            return ""


def _own_parts(msg: Message):
    """Leaf parts of the message itself, not of messages attached to it."""
    stack = [msg]
    while stack:
        part = stack.pop(0)
        try:
            multipart = part.is_multipart()
        except Exception:  # noqa: BLE001
            multipart = False
        ctype = content_type(part)
        if ctype.startswith("message/") and part is not msg:
            continue
        if multipart and not ctype.startswith("message/"):
            try:
                stack[:0] = list(part.iter_parts())
            except Exception:  # noqa: BLE001
                continue
        elif not multipart:
            yield part


TAG_RE = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.S | re.I)
BLOCK_RE = re.compile(r"<\s*(br|/p|/div|/li|/tr|/h\d|blockquote|/blockquote)\b[^>]*>", re.I)


INNER_BLOCKQUOTE_RE = re.compile(r"<blockquote\b(?:(?!<blockquote\b).)*?</blockquote\s*>", re.S | re.I)


def html_to_text(value: str) -> str:
    # the quoted thread: blockquotes nest (each earlier message inside the one after it), so the innermost goes
    # first, until none is left; each becomes one ">" line
    value, n = INNER_BLOCKQUOTE_RE.subn("\n>\n\n", value)
    while n:
        value, n = INNER_BLOCKQUOTE_RE.subn("\n>\n\n", value)
    value = BLOCK_RE.sub("\n", value)
    value = TAG_RE.sub("", value)
    return html.unescape(value)


# --- quoted text and signatures ----------------------------------------------------------------------------
# a reply header ("On … wrote:", "Am … schrieb …:", Gmail's dated "<address>:" line): what follows is the quoted
# message, its lines marked with ">" (an HTML reply's <blockquote> becomes one ">" line in html_to_text)
REPLY_HEADER_RES = [
    re.compile(p, re.I | re.M)
    for p in (
        r"^\s*On\b.{0,200}\bwrote:\s*$",
        r"^\s*On\b.{0,200}\n.{0,200}\bwrote:\s*$",
        r"^\s*Am\b.{0,200}\bschrieb\b.{0,80}:\s*$",
        r"^\s*Le\b.{0,200}\ba écrit\s*:\s*$",
        r"^\s*El\b.{0,200}\bescribió\s*:\s*$",
        r"^\s*Il giorno\b.{0,200}\bha scritto\s*:\s*$",
        r"^\s*Em\b.{0,200}\bescreveu\s*:\s*$",
        r"^\s*Op\b.{0,200}\bschreef\b.{0,80}:\s*$",
        r"^\s*Den\b.{0,200}\bskrev\b.{0,80}:\s*$",
        r"^.{0,200}\bskrev\b.{0,120}:\s*$",
        r"^\s*(W dniu|Dnia)\b.{0,200}\b(napisał|napisała|pisze)\b.{0,40}:\s*$",
        r"^.{0,200}\bnapisał(a|\(a\))?:\s*$",
        r"^.{0,200}\bwrote:\s*$",
        r"^.{0,200}(のメッセージ|さんは書きました|は書きました)\s*[:：]\s*$",
        r"^.{0,200}(写道|寫道)\s*[:：]\s*$",
        # any client's "<date> <name> <address>:" line (Gmail in Japanese has no "wrote" word at all)
        r"^(?=.*\d).{0,200}<[^<>\s]+@[^<>\s]+>\s*[:：]\s*$",
        r"^\s*Op\b.{0,200}\bgeschreven\s*:\s*$", r"^\s*Wiadomość napisana przez\b.{0,200}:\s*$",
        r"^.{0,200}のメール\s*[:：]\s*$",
        r"^.{0,40}\d{4}年\d{1,2}月\d{1,2}日.{0,160}[:：]\s*$",
    )
]
# separators of quoted or forwarded mail: what follows is not ">"-quoted and never read
SEPARATOR_RES = [
    re.compile(p, re.I | re.M)
    for p in (
        r"^\s*-{3,}\s*(原始邮件|原始郵件|Oprindelig meddelelse|Ursprungligt meddelande|Oryginalna wiadomość|"
        r"元のメッセージ)\s*-{3,}\s*$",
        r"^\s*-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|"
        r"Messaggio originale|Mensagem original|Oorspronkelijk bericht)\s*-{2,}\s*$",
        # forward separators of Gmail, Thunderbird and others in the twelve languages, with any short tail
        # ("Wiadomość przekazana dalej", "Forwarded Message")
        r"^\s*-{3,}\s*(Forwarded message|Weitergeleitete Nachricht|Message transféré|Mensaje reenviado|"
        r"Mensagem encaminhada|Mensagem reencaminhada|Messaggio inoltrato|Doorgestuurd bericht|"
        r"Vidarebefordrat meddelande|Videresendt meddelelse|Videresendt besked|Przekazana wiadomość|"
        r"Wiadomość przekazana|転送されたメッセージ|転送メッセージ|转发的邮件|轉寄的郵件|转发邮件|轉發郵件)"
        r"[^-\n]{0,24}-{3,}\s*$",
        # Apple Mail's and others' forward openers
        r"^\s*(Begin forwarded message|Inizio messaggio inoltrato|Début du message (réenvoyé|réexpédié|transféré)|"
        r"Anfang der weitergeleiteten (Nachricht|E-Mail)|Comienzo del mensaje reenviado|Inicio del mensaje reenviado|"
        r"Início da mensagem (reencaminhada|encaminhada)|Begin doorgestuurd bericht|Vidarebefordrat brev|"
        r"Början av vidarebefordrat meddelande|Start på videresendt (besked|meddelelse)|"
        r"Początek przekazywanej wiadomości|Początek przekazanej wiadomości|転送されたメッセージ|以下是转发的邮件|"
        r"开始转发的邮件|開始轉寄的郵件)\s*[:：]\s*$",
        r"^_{10,}\s*$",
        # Outlook's header block: a sender line, then a sent/date line ("Enviado el:", "Enviada em:")
        r"^\s*(From|Von|De|Da|Van|Från|Fra|Od|差出人|发件人|寄件者|寄件人|送信者)\s*[:：]\s*.+\n\s*(Sent|Gesendet|"
        r"Envoyé|Enviado|Enviada|Inviato|Verzonden|Skickat|Sendt|Date|Datum|Dato|Fecha|Wysłano|Data|送信日時|送信日|"
        r"日時|日付|发送时间|發送時間|寄件日期|发送日期|日期|時間)[^:：\n]{0,12}[:：]",
    )
]
QUOTE_HEADER_RES = REPLY_HEADER_RES + SEPARATOR_RES
SIGNATURE_RES = [
    re.compile(p, re.I | re.M)
    for p in (
        r"^-- ?$",
        r"^—\s*$",
        r"^\s*Sent from (my \w+|Mail for Windows|Outlook|Yahoo Mail|Samsung)",
        r"^\s*(Envoyé depuis|Verstuurd (vanaf|met) mijn|Enviado desde)\b",
        r"^\s*(Get|Download) Outlook for ",
        r"^\s*Von meinem \w+ gesendet",
        r"^\s*Envoyé de mon \w+",
        r"^\s*Enviado desde mi \w+",
        r"^\s*(Enviado do meu|Inviato da|Verzonden (met|vanaf) mijn|Skickat från min|Sendt fra min|"
        r"Wysłane z)\b",
        r"^\s*(iPhoneから送信|发自我的|發自我的)",
    )
]
SIGN_OFF_RE = re.compile(
    r"^\s*(best|best regards|kind regards|regards|warm regards|many thanks|thanks|thank you|thx|cheers|"
    r"sincerely|all the best|talk soon|br|mit freundlichen grüßen|viele grüße|beste grüße|grüße|lg|vg|"
    r"cordialement|bien à vous|bien cordialement|merci|saludos|un saludo|atentamente|cordiali saluti|saluti|"
    r"distinti saluti|atenciosamente|abraços|met vriendelijke groet|groeten|hälsningar|med vänlig hälsning|"
    r"mvh|vänliga hälsningar|med vänliga hälsningar|venlig hilsen|med venlig hilsen|bedste hilsner|hilsen|pozdrawiam|"
    r"pozdrawiam serdecznie|z poważaniem|pozdr|met vriendelijke groeten|hartelijke groet|groet|mvg|"
    r"un saludo|saludos cordiales|un abrazo|abs|att|um abraço|distinti saluti|un saluto|a presto|"
    r"bonne journée|à bientôt|schöne grüße|freundliche grüße|gruß|よろしくお願いいたします|よろしくお願いします|"
    r"以上、よろしくお願いします|祝好|此致|顺祝商祺)\s*[,.!。]?\s*$",
    re.I,
)


def _first_cut(text: str) -> tuple[int, re.Match | None]:
    """Where the quoted history or the signature starts, and the reply header found there (None when the
    text is cut at a forward or Outlook separator, a signature, or not at all)."""
    cut, header = len(text), None
    for i, rx in enumerate(QUOTE_HEADER_RES + SIGNATURE_RES):
        m = rx.search(text)
        if m and m.start() < cut:
            cut, header = m.start(), (m if i < len(REPLY_HEADER_RES) else None)
    return cut, header


CONTACT_TOKEN_RE = re.compile(r"\+?\d[\d ()./-]{6,}\d|https?://[!-~]+|\bwww\.[!-~]+|"
                              r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
CONTACT_LABEL_RE = re.compile(r"^\s*(tel|phone|mobile|mobil|móvil|mob|cell|fax|direct|office|handy|kom|komórka|port|"
                              r"portable|celular|m|t|p|"
                              r"e|w|tlf|telefon|tél|cel|携帯|電話|电话|手机|手機|传真|傳真|e-?mail|web)\b\.?\s*[:：]?",
                              re.I)
DISCLAIMER_RE = re.compile(r"confidential|intended (solely )?for|vertraulich|confidentiel|confidencial|riservat|"
                           r"vertrouwelijk|fortrolig|konfidentiell|poufn|機密|保密|免责|免責|\bCVR\b|\bKRS\b|\bNIP\b|"
                           r"\bVAT\b|\bUSt-?Id|\bP\.?IVA\b|\bCIF\b|\bSIREN\b|\bRCS\b|\bCNPJ\b|\bKvK\b|\bOrg\.? ?nr|"
                           r"au capital de|registergericht|handelsregister|intended recipient", re.I)
# the first line of a legal or confidentiality footer under a reply: what follows is not the person's text
DISCLAIMER_START_RE = re.compile(
    r"^\s*(\**\s*)?(confidentiality notice|disclaimer|haftungsausschluss|avertissement|aviso legal|"
    r"avviso di riservatezza|this (e-?mail|message|communication)( and any (attachments|files)[^.]{0,40})? "
    r"(is|are|may contain|contains) (confidential|privileged|intended (only |solely |exclusively )?for the (use|"
    r"addressee|named|recipient|person))|diese (e-?mail|nachricht) (enthält|ist) "
    r"vertraulich|ce (message|courriel|e-?mail)( et (ses|toutes les) pièces jointes)? (est|sont|peut contenir) "
    r"(confidentiel|strictement|destiné)|este (mensaje|correo)( y sus (anexos|adjuntos))? (es|son|puede contener|"
    r"contiene) (confidencial|información confidencial|para uso)|questo messaggio( e i suoi allegati)? (è|sono|"
    r"contiene|può contenere) (riservat|indirizzat|destinat|informazioni riservate)|dit (e-?mail)?bericht is "
    r"(vertrouwelijk|uitsluitend)|denna? (e-?post|e-?mail|meddelande)( och eventuella bilagor)? (är|kan innehålla) "
    r"(konfidentiell|avsedd)|denne (e-?mail|mail|meddelelse) (er|kan indeholde) (fortrolig|udelukkende)|"
    r"(ta )?wiadomość( e-?mail)? (jest|może zawierać) (poufn|przeznaczona))",
    re.I)
ADDRESS_LINE_RE = re.compile(
    r"^\s*(〒\s?\d{3}-?\d{4}.*|[^\d,]{2,40}\s\d{1,5}\s?\w?\s?,\s*(\d{2,3} ?\d{2,3}|\d{2}-\d{3}|\d{4} ?[A-Z]{2}|"
    r"[A-Z]{1,2}-?\d{4,5}|\d{4,5}(-\d{3,4})?)\s+\S.{0,40}|\d{4,5}\s+\S+)\s*$")
RULE_LINE_RE = re.compile(r"^\s*[-_=*~─━—–―‐‑‒·•.＝－ー]{3,}\s*$")
REPLY_WORD_RE = re.compile(r"\b(no|not|yes|thanks|please|we|our|nein|nicht|ja|danke|bitte|wir|non|oui|merci|nous|"
                           r"sí|si|gracias|nosotros|não|sim|obrigad[oa]|grazie|nee|niet|bedankt|nej|tack|tak|nie|"
                           r"dziękuję|ikke|inte)\b", re.I)
# words of job titles in the twelve languages: a title line may be lower case ("Responsable administrative")
TITLE_WORD_RE = re.compile(
    r"manager|director|directeur|directrice|directora|gerente|responsable|responsabile|direttore|direttrice|head|"
    r"chief|officer|leiter|chef|geschäftsführer|vorstand|kierownik|dyrektor|księgow|prezes|specjalist|coordinat|"
    r"coordenador|coordinador|analyst|engineer|consultant|assistant|assistente|asistente|advisor|adviseur|"
    r"medewerker|hoofd|ekonom|økonom|controller|einkäufer|acheteur|comprador|procurement|cfo|ceo|cto|coo|"
    r"founder|fondateur|fundador|owner|partner|president|presidente|amministrat|boekhoud|bogholder|finans|"
    r"finance|finanz|financ|contab|compta|accountant|accounting|sales|ventas|vendas|vertrieb|marketing", re.I)
SIG_WORDS_OK = {"of", "and", "&", "de", "der", "des", "du", "la", "le", "für", "van", "von", "y", "e", "et", "i",
                "og", "och", "en", "di", "do", "da", "del", "dla", "ds.", "-", "–"}
CJK_SIG_RE = re.compile(r"株式会社|有限会社|合同会社|部|課|公司|集团|集團|经理|經理|总监|總監|部长|部長|主任|代表|様")
CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def _name_or_title(line: str) -> bool:
    """A signature's name, title or company line: short, no sentence punctuation, every word capitalised (or a
    small linking word); in Chinese or Japanese a few characters or a company/title word."""
    value = line.strip()
    if value.endswith(".") and re.search(r"\b(Inc|Ltd|Ltda|Co|Corp|S\.?L|S\.?A|S\.?p\.?A|B\.?V|GmbH|Sp\. z o\.o|"
                                         r"S\.?r\.?l|N\.?V|Oy|AB|AG|SAS|SARL|LLC|PLC)\.$", value):
        value = value[:-1]
    if not value or len(value) > 60 or re.search(r"[.?!。？！,，:：;]\s*$|[?？!！]", value):
        return False
    if CJK_RE.search(value):
        return len(value.replace(" ", "").replace("\u3000", "")) <= 5 or bool(CJK_SIG_RE.search(value))
    words = value.split()
    if len(words) <= 6 and "," not in value and TITLE_WORD_RE.search(value) and not REPLY_WORD_RE.search(value):
        return True
    if len(words) == 1 and not value.isupper():  # "CEO" is a title; "Interested" is a reply
        return False
    return len(words) <= 6 and all(w[:1].isupper() or w.lower() in SIG_WORDS_OK or not w[:1].isalpha()
                                   for w in words)


def _contact_line(line: str) -> bool:
    """A phone number, a web or mail address (with at most a label and a word or two around it), or a
    "Title | Company" line; never a sentence that mentions a number or an address."""
    value = line.strip()
    if len(value) > 200:  # a contact line is short (and the token patterns are slow on a very long line)
        return False
    if re.search(r"[.?!。？！]$", value) and not CONTACT_TOKEN_RE.search(value[-30:]):
        return False
    if re.search(r"\s[|•·/–-]\s|\s{2,}", value):
        return all(_name_or_title(part) or _contact_line(part) or DISCLAIMER_RE.search(part) or
                   ADDRESS_LINE_RE.match(part)
                   for part in re.split(r"\s[|•·/–-]\s|\s{2,}", value) if part.strip())
    if not CONTACT_TOKEN_RE.search(value):
        return False
    rest = CONTACT_TOKEN_RE.sub(" ", CONTACT_LABEL_RE.sub(" ", value))
    if len(CJK_RE.findall(rest)) > 6:  # a Chinese or Japanese sentence around the address
        return False
    return len(rest.split()) <= 2 and not re.search(r"[?？!！]", value)


GREETING_ONLY_RE = re.compile(r"^\s*(\S+\s*){0,4}[,，!！]?\s*$")


def _signature_only(lines: list[str]) -> bool:
    """True when the text is only a signature block (and at most a greeting): name, title and company lines,
    contact lines (a phone number, a web or mail address, "Title | Company"), a company's legal or confidentiality
    footer, with at least one contact line. That is an empty reply with an automatic signature. A block under a
    sentence stays: the sentence may name the person to contact ("Please write to:" and an address), and the
    model reads it whole."""
    rest = [ln for ln in lines if ln.strip() and not RULE_LINE_RE.match(ln)]
    if rest and len(rest) > 1 and GREETING_ONLY_RE.match(rest[0]) and rest[0].rstrip().endswith((",", "，")):
        rest = rest[1:]
    if rest and len(rest) > 1 and SIGN_OFF_RE.match(rest[0]):  # "Mit freundlichen Grüßen" and the block
        rest = rest[1:]
    contact = False
    for line in rest:
        if DISCLAIMER_RE.search(line) or DISCLAIMER_START_RE.match(line):
            return contact  # a legal footer under the contact lines runs to the end, over lines of its own words
        if _contact_line(line):
            contact = True
        elif not (_name_or_title(line) or ADDRESS_LINE_RE.match(line)):
            return False
    return contact


def _own_lines(text: str) -> tuple[str, int, re.Match | None]:
    """The text above the first cut, quoted lines dropped, cut at a sign-off line ("Best,", "Merci": what
    follows is a name and a signature); empty when only a signature block is left. Also where the cut is and
    the reply header found there, if any."""
    cut, header = _first_cut(text)
    lines = [ln for ln in text[:cut].split("\n") if not ln.lstrip().startswith(">")]
    for i, line in enumerate(lines):
        if i > 0 and (SIGN_OFF_RE.match(line) or DISCLAIMER_START_RE.match(line)):
            lines = lines[:i]
            break
    return ("" if _signature_only(lines) else "\n".join(lines).strip()), cut, header


def _below_quote(text: str) -> str:
    """A bottom-posted or inline answer: the paragraphs a person wrote below or between the ">" lines that
    follow a reply header. A paragraph counts only after a quoted line and a blank line (an unquoted line
    right under a quoted one is a wrapped quote line); reading stops at the next header or signature."""
    out: list[str] = []
    seen_quote = blank = reading = False
    for line in text.split("\n"):
        if line.lstrip().startswith(">"):
            seen_quote, reading, blank = True, False, False
        elif not line.strip():
            blank = True
            if reading:
                out.append("")
        elif reading or (seen_quote and blank):
            reading = True
            out.append(line)
    # a paragraph that is a legal or confidentiality footer (a mail gateway appends it below everything) is
    # not the person's answer
    paragraphs = [p for p in "\n".join(out).split("\n\n")
                  if not (DISCLAIMER_RE.search(p) and len(p.split()) >= 12)]
    return _own_lines("\n\n".join(paragraphs))[0]


def strip_quotes_and_signature(text: str) -> str:
    """The new text of a reply: quoted history, forwarded parts, signatures and sign-offs removed; an empty
    reply that carries only an automatic signature block is empty. A reply with nothing above its reply header
    is read below it: the answer written under (or between) the quoted lines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    own, cut, header = _own_lines(text)
    if not own and header is None:  # cut at a mobile footer or a signature: a reply header may follow it
        later = [m for rx in REPLY_HEADER_RES if (m := rx.search(text, cut))]
        header = min(later, key=lambda m: m.start()) if later else None
    if not own and header is not None:
        own = _below_quote(text[header.end():])
    return own
