"""The reply classifier's training corpus: hand-written base phrasings (data/replies/train/<lang>.jsonl, one
file per language, plus extra/<lang>.jsonl by a second author with other idioms and the other authors' folders)
composed into complete RFC 5322 messages with realistic variations, deterministically. The composer's material
per language (greetings, names, signatures, quote headers, pitches) is data/replies/train/compose/<lang>.jsonl.

Every base phrasing becomes several messages: with or without a greeting, a neutral opening sentence, an emoji,
a sign-off, a name and a signature block, a mobile footer, an external-mail banner; with the quoted pitch below
(Gmail `>` style, Outlook header block, unprefixed), as an inline answer under a quoted line, or none; as
text/plain, multipart/alternative or HTML only; in lower or upper case now and then. Compound messages teach
the labelling rules of docs/replies.md: an unsubscribe request wins over a decline in the same message, an
absence sentence inside a reply about the offer does not make it an out-of-office notice, a referral with an
interest signal is interested.

The split is by base phrasing: about one in seven phrasings (chosen by a hash, so stable) appears only in the
validation split, so validation figures measure phrasings the model never saw.

    python -m replies.corpus.build            # counts per split, label and language
    python -m replies.corpus.build out.jsonl  # also writes the messages (not committed: generated)
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from replies.corpus.files import DATA, language, phrasings

LANGS = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "pl", "ja", "zh")
INTENTS = {"interested": "INTERESTED", "not_interested": "NOT_INTERESTED", "unsubscribe": "UNSUBSCRIBE",
           "other": "OTHER", "out_of_office": "OUT_OF_OFFICE"}
SEED = 16
COPIES = {"en": 7, "ja": 6, "zh": 6}
DEFAULT_COPIES = 5
VALIDATION_MODULO = 7

COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Soylent", "Tyrell"]
COMPETITORS = ["Outreach", "Salesloft", "Apollo", "HubSpot", "Lemlist", "Reply.io", "Pipedrive", "Instantly"]
EMOJI = ["👍", "🙏", "😊", "🙂", "👋", "🚀", "✅", "😅", "🤝", "👀"]
BANNERS = [
    "CAUTION: This email originated from outside of the organization. Do not click links or open attachments "
    "unless you recognize the sender.",
    "[EXTERNAL] This message came from outside your organization.",
    "ACHTUNG: Diese E-Mail stammt von einem externen Absender.",
    "ATTENTION : Ce courriel provient de l'extérieur de l'organisation.",
    "[EXTERNO] Este correo procede de fuera de la organización.",
    "【外部メール】社外から送信されたメールです。",
    "【外部邮件】此邮件来自组织外部，请谨慎点击链接。",
]
FORWARD_HEADERS = {
    "en": "---------- Forwarded message ---------", "de": "---------- Weitergeleitete Nachricht ----------",
    "fr": "---------- Message transféré ---------", "es": "---------- Mensaje reenviado ---------",
    "pt": "---------- Mensagem encaminhada ---------", "it": "---------- Messaggio inoltrato ---------",
    "nl": "---------- Doorgestuurd bericht ---------", "sv": "---------- Vidarebefordrat meddelande ---------",
    "da": "---------- Videresendt meddelelse ----------", "pl": "---------- Przekazana wiadomość ---------",
    "ja": "---------- 転送されたメッセージ ---------", "zh": "---------- 转发的邮件 ---------",
}
TICKET_ACKS = [
    ("en", "Thank you for contacting us. Your request (#{n}) has been received and is being reviewed by our "
           "support staff. To add additional comments, reply to this email."),
    ("en", "We've received your message and created ticket {n}. A member of our team will get back to you "
           "within 2 business days."),
    ("en", "##- Please type your reply above this line -##\nYour request {n} has been received."),
    ("de", "Vielen Dank für Ihre Anfrage. Wir haben Ihr Ticket #{n} erstellt und melden uns schnellstmöglich."),
    ("fr", "Nous avons bien reçu votre demande (ticket n° {n}). Notre équipe vous répondra rapidement."),
    ("es", "Hemos recibido su solicitud. Su número de caso es {n}. Le responderemos lo antes posible."),
    ("pt", "Recebemos sua solicitação. O número do seu chamado é {n}."),
    ("it", "Abbiamo ricevuto la sua richiesta. Il numero del ticket è {n}."),
    ("nl", "Wij hebben uw verzoek ontvangen onder ticketnummer {n}."),
    ("sv", "Vi har tagit emot ditt ärende med nummer {n} och återkommer så snart vi kan."),
    ("da", "Vi har modtaget din henvendelse med sagsnummer {n}."),
    ("pl", "Otrzymaliśmy Twoje zgłoszenie nr {n}. Odpowiemy najszybciej, jak to możliwe."),
    ("ja", "お問い合わせありがとうございます。受付番号{n}で承りました。担当者より順次ご連絡いたします。"),
    ("zh", "感谢您的来信，我们已收到您的请求，工单号为{n}，客服将尽快回复。"),
]


def _stable(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def is_validation(lang: str, label: str, phrase: str) -> bool:
    return _stable(lang, label, phrase) % VALIDATION_MODULO == 0


class _Slots(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def _fill(text: str, mod, rng: random.Random) -> str:
    name = rng.choice(mod.NAMES)
    slots = _Slots(
        day=rng.choice(mod.DAYS), time=rng.choice(mod.TIMES), comp=rng.choice(COMPETITORS),
        colleague=rng.choice(mod.COLLEAGUES), role=rng.choice(mod.ROLES), month=rng.choice(mod.MONTHS),
        company=rng.choice(COMPANIES), name=name.split()[0], last=name.split()[-1],
    )
    try:
        return text.format_map(slots)
    except (ValueError, IndexError):
        return text


def _capitalize(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _body(mod, lang: str, label: str, sentences: list[str], rng: random.Random, me_first: str) -> tuple[str, str]:
    """(plain text, the reply's own text) of a person-written reply."""
    lines: list[str] = []
    if rng.random() < 0.05:
        lines += [rng.choice(BANNERS), ""]
    emoji_first = rng.random() < 0.08
    if rng.random() < 0.55:
        greeting = _fill(rng.choice(mod.GREETINGS), mod, rng).replace("{name}", me_first)
        lines += [(rng.choice(EMOJI) + " " if emoji_first else "") + greeting, ""]
        emoji_first = False
    own = []
    if label != "out_of_office" and rng.random() < 0.25:
        own.append(rng.choice(mod.NEUTRAL))
    own += sentences
    sep = "" if lang in ("ja", "zh") else " "
    text = sep.join(own)
    if rng.random() < 0.2 and len(own) > 1:
        text = "\n\n".join(own)
    if emoji_first:
        text = rng.choice(EMOJI) + " " + text
    if rng.random() < 0.07:
        text = text.lower()
    elif rng.random() < 0.02:
        text = text.upper()
    if rng.random() < 0.1:
        text = text.rstrip(".。") + rng.choice([" 🙂", "!", "!!", " :)", ""])
    lines.append(text)
    if rng.random() < 0.65:
        name = rng.choice(mod.NAMES)
        lines += ["", rng.choice(mod.SIGNOFFS), name]
        if rng.random() < 0.5:
            lines += [rng.choice(mod.TITLES) + " | " + rng.choice(COMPANIES),
                      rng.choice(["+1 415 555 0100", "+49 30 901820", "+33 1 42 68 53 00", "+81 3-1234-5678",
                                  "+86 10 8888 6666", "+46 8 123 456 00", "www.example.com"])]
    elif rng.random() < 0.3:
        lines += ["", rng.choice(mod.NAMES).split()[0]]
    if rng.random() < 0.15:
        lines += ["", rng.choice(mod.MOBILE)]
    return "\n".join(lines), text


def _pitch(mod, rng: random.Random, first: str, company: str) -> str:
    pitch_mod = mod if rng.random() < 0.7 else language("en")  # replies in one language to a pitch in English
    return rng.choice(pitch_mod.PITCHES).format_map(_Slots(first=first, company=company))


def _quote(mod, body: str, pitch: str, subject: str, me: str, when: datetime, rng: random.Random) -> str:
    date = when.strftime(rng.choice(["%a, %b %d, %Y at %H:%M", "%d.%m.%Y %H:%M", "%Y-%m-%d %H:%M", "%d/%m/%Y"]))
    sender = f"Alex Rivera <{me}>"
    style = rng.random()
    if style < 0.5:
        head = rng.choice(mod.QUOTE_HEADERS).format_map(_Slots(date=date, sender=sender))
        quoted = "\n".join("> " + ln if ln else ">" for ln in pitch.split("\n"))
        return f"{body}\n\n{head}\n{quoted}\n"
    if style < 0.8:
        head = mod.OUTLOOK_HEADER.format_map(_Slots(sender=sender, date=date, me=me, subject=subject))
        return f"{body}\n\n{'_' * 32 if rng.random() < 0.5 else ''}\n{head}\n\n{pitch}\n"
    head = rng.choice(mod.QUOTE_HEADERS).format_map(_Slots(date=date, sender=sender))
    return f"{body}\n\n{head}\n\n{pitch}\n"


def _inline(mod, reply: str, pitch: str, rng: random.Random, me: str, when: datetime) -> str:
    """An inline answer: the pitch quoted line by line with the reply under the question it answers."""
    lines = [ln for ln in pitch.split("\n") if ln.strip()]
    cut = max(1, len(lines) - 1)
    head = rng.choice(mod.QUOTE_HEADERS).format_map(
        _Slots(date=when.strftime("%d.%m.%Y %H:%M"), sender=f"Alex Rivera <{me}>"))
    quoted_top = "\n".join("> " + ln for ln in lines[:cut])
    quoted_rest = "\n".join("> " + ln for ln in lines[cut:])
    return f"{head}\n{quoted_top}\n\n{reply}\n\n{quoted_rest}\n"


def _html(text: str, rng: random.Random) -> str:
    import html as _h

    paras = text.split("\n\n")
    out = []
    for p in paras:
        if p.startswith(">") or "\n>" in p:
            inner = "<br>".join(_h.escape(ln.lstrip("> ")) for ln in p.split("\n"))
            out.append(f'<blockquote style="margin:0 0 0 .8ex;border-left:1px #ccc solid">{inner}</blockquote>')
        else:
            out.append("<div>" + "<br>".join(_h.escape(ln) for ln in p.split("\n")) + "</div>")
    style = '<div dir="ltr" style="font-family:Arial,sans-serif">' if rng.random() < 0.5 else "<div>"
    return f"<html><head><meta charset=\"utf-8\"></head><body>{style}{''.join(out)}</div></body></html>"


def message(lang: str, label: str, sentences: list[str], rng: random.Random, n: int) -> bytes:
    mod = language(lang)
    company = rng.choice(COMPANIES)
    me_first = "Alex"
    me = f"alex@outreach-{rng.randint(1, 9)}.example"
    when = datetime(2026, 10, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 80000))
    pitch_subject = _fill(rng.choice(mod.SUBJECTS), mod, rng).replace("{company}", company)
    sender_name = rng.choice(mod.NAMES)
    msg = EmailMessage()
    msg["From"] = f"{sender_name} <person{n}@{company.lower()}.example>"
    msg["To"] = me
    msg["Date"] = format_datetime(when + timedelta(hours=rng.randint(1, 72)))
    msg["Message-ID"] = f"<train-{lang}-{label}-{n}@{company.lower()}.example>"
    ooo = label == "out_of_office"
    if ooo and rng.random() < 0.6:
        msg["Subject"] = rng.choice(mod.AUTO_SUBJECT).format_map(_Slots(subject=pitch_subject))
        if rng.random() < 0.5:
            msg["Auto-Submitted"] = "auto-replied"
    else:
        msg["Subject"] = (mod.REPLY_PREFIX if rng.random() < 0.9 else "") + pitch_subject
    if rng.random() < 0.8:
        msg["In-Reply-To"] = f"<pitch-{n}@{me.split('@')[1]}>"
    body, own = _body(mod, lang, label, sentences, rng, me_first)
    pitch = _pitch(mod, rng, sender_name.split()[0], company)
    r = rng.random()
    if ooo:
        text = body if r < 0.7 else _quote(mod, body, pitch, pitch_subject, me, when, rng)
    elif r < 0.55:
        text = _quote(mod, body, pitch, pitch_subject, me, when, rng)
    elif r < 0.65:
        text = _inline(mod, own, pitch, rng, me, when)
    else:
        text = body
    shape = rng.random()
    if shape < 0.15:
        msg.set_content(_html(text, rng), subtype="html")
    elif shape < 0.35:
        msg.set_content(text)
        msg.add_alternative(_html(text, rng), subtype="html")
    else:
        msg.set_content(text)
    return bytes(msg)


# Other authors' phrasings (data/replies/train/<folder>/<lang>.jsonl): other idioms and regional variants; very short
# replies (1-6 words); puzzled replies ("what is this about?", `other`) beside product questions; declines that give
# a reason, neutral redirects and conditional interest; remarks about the email or the sender's data (`other`)
# beside the same with a request to stop.
AUTHORS = ("extra", "short", "confused", "reasons", "complaints")
# The first development sets' phrasings (data/replies/<folder>/, two more authors), trained on since the first
# held-out set was spent and replaced (see replies/corpus/devset.py).
CORPUS_AUTHORS = ("dev", "dev2")


def _author_path(folder: str, code: str):
    """Another author's file for a language: data/replies/train/<folder>/<code>.jsonl or, for CORPUS_AUTHORS,
    data/replies/<folder>/<code>.jsonl."""
    return (DATA if folder in CORPUS_AUTHORS else DATA / "train") / folder / f"{code}.jsonl"


def _phrases(lang: str, label: str) -> list[str]:
    """The language's phrasings for a label: the first author's, then the others' in AUTHORS order, each once."""
    phrases = list(getattr(language(lang), INTENTS[label]))
    for folder in AUTHORS + CORPUS_AUTHORS:
        phrases += (phrasings(_author_path(folder, lang)) or {}).get(label, [])
    return list(dict.fromkeys(phrases))


def corpus():
    """Yield dicts {id, label, lang, split, raw} in a fixed order."""
    rng = random.Random(SEED)
    n = 0
    for lang in LANGS:
        mod = language(lang)
        pools = {label: _phrases(lang, label) for label in INTENTS}
        for label, phrases in pools.items():
            for phrase in phrases:
                split = "validation" if is_validation(lang, label, phrase) else "train"
                for _ in range(COPIES.get(lang, DEFAULT_COPIES)):
                    n += 1
                    sentence = _fill(phrase, mod, rng)
                    yield {"id": f"t{n}", "label": label, "lang": lang, "split": split,
                           "raw": message(lang, label, [sentence], rng, n)}
        # compound messages that teach the precedence rules (each part keeps its own split)
        same = {label: [p for p in pools[label]] for label in pools}
        for _ in range(len(same["unsubscribe"]) * 2):  # a decline and a request to stop: unsubscribe
            a, b = rng.choice(same["not_interested"]), rng.choice(same["unsubscribe"])
            n += 1
            split = "validation" if is_validation(lang, "unsubscribe", b) else "train"
            parts = [_fill(a, mod, rng), _fill(b, mod, rng)]
            yield {"id": f"t{n}", "label": "unsubscribe", "lang": lang, "split": split,
                   "raw": message(lang, "unsubscribe", parts, rng, n)}
        for label in ("interested", "not_interested", "unsubscribe"):  # an absence sentence inside a reply
            for _ in range(8):
                a, b = rng.choice(same["out_of_office"]), rng.choice(same[label])
                n += 1
                split = "validation" if is_validation(lang, label, b) else "train"
                parts = [_fill(b, mod, rng), _fill(a, mod, rng)] if rng.random() < 0.5 else \
                    [_fill(a, mod, rng), _fill(b, mod, rng)]
                yield {"id": f"t{n}", "label": label, "lang": lang, "split": split,
                       "raw": message(lang, label, parts, rng, n)}
        for _ in range(10):  # interest after a neutral or "other" opening stays interest
            a, b = rng.choice(same["other"]), rng.choice(same["interested"])
            n += 1
            split = "validation" if is_validation(lang, "interested", b) else "train"
            yield {"id": f"t{n}", "label": "interested", "lang": lang, "split": split,
                   "raw": message(lang, "interested", [_fill(a, mod, rng), _fill(b, mod, rng)], rng, n)}
        for _ in range(12):  # a forward with no comment or a neutral one: other
            n += 1
            comment = _fill(rng.choice(same["other"]), mod, rng) if rng.random() < 0.5 else ""
            pitch = _pitch(mod, rng, rng.choice(mod.NAMES).split()[0], rng.choice(COMPANIES))
            body = f"{comment}\n\n{FORWARD_HEADERS[lang]}\nFrom: Alex Rivera <alex@outreach.example>\n" \
                   f"Date: 2026-10-02 09:14\nSubject: {_fill(rng.choice(mod.SUBJECTS), mod, rng)}\n\n{pitch}"
            yield {"id": f"t{n}", "label": "other", "lang": lang, "split": "train" if n % 7 else "validation",
                   "raw": message(lang, "other", [body], rng, n)}
    for i, (lang, text) in enumerate(TICKET_ACKS):  # help-desk acknowledgements: other
        for _ in range(6):
            n += 1
            split = "validation" if i % VALIDATION_MODULO == 3 else "train"
            yield {"id": f"t{n}", "label": "other", "lang": lang, "split": split,
                   "raw": message(lang, "other", [text.format(n=rng.randint(10000, 999999))], rng, n)}


def sources_digest() -> str:
    """sha256 over the corpus sources: this builder, the module that reads the data files, and every data file the
    training corpus is composed from (data/replies/train/**, dev/, dev2/), each with its path."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in (here / "build.py", here / "files.py"):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    files = sorted(DATA.glob("train/**/*.jsonl")) + \
        [p for folder in CORPUS_AUTHORS for p in sorted(DATA.glob(f"{folder}/*.jsonl"))]
    for path in files:
        h.update(path.relative_to(DATA).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def main(argv: list[str]) -> int:
    from collections import Counter

    counts = Counter()
    out = open(argv[1], "w", encoding="utf-8") if len(argv) > 1 else None  # noqa: SIM115
    for row in corpus():
        counts[(row["split"], row["label"], row["lang"])] += 1
        if out:
            out.write(json.dumps({**row, "raw": row["raw"].decode("utf-8", "replace")}, ensure_ascii=False) + "\n")
    if out:
        out.close()
    for split in ("train", "validation"):
        total = sum(v for k, v in counts.items() if k[0] == split)
        print(f"{split}: {total}")
        for label in INTENTS:
            print(f"  {label}: {sum(v for k, v in counts.items() if k[0] == split and k[1] == label)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
