"""Assemble a whole-message reply set (the held-out sets and development sets dev4-dev6) from hand-written texts.

The texts (bodies, pitches, attribution lines, absence notices, machine mail) are written by hand in
data/replies/<set>/src/<lang>.txt and src/machine.txt; this script only wraps them into RFC 5322 / MIME messages (headers,
quoted pitch below top-posted replies, HTML or multipart/alternative parts, quoted-printable / base64 /
ISO-2022-JP / GB2312 / ISO-8859 encodings) and writes one JSON object per line.

Deterministic: the same sources give byte-identical output. SETS names each set's folder, id prefix and targets;
tests and replies.corpus.devset assemble a set in memory (`set_rows(name)`); the command writes its JSONL under
var/ (generated, not committed) and validates it with replies.corpus.checkset:

    python -m replies.corpus.assemble heldout3          # writes var/replies_corpus/heldout3.jsonl
    python -m replies.corpus.assemble heldout3 --check  # and validates it, printing its counts
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
from datetime import UTC, datetime, timedelta, timezone
from email.charset import BASE64, QP, Charset
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import format_datetime, formataddr
from pathlib import Path

from replies.corpus.files import DATA

LABELS = {
    "i": "interested",
    "n": "not_interested",
    "u": "unsubscribe",
    "o": "other",
    "ooo": "out_of_office",
    "bounce": "bounce",
    "other": "other",
    "out_of_office": "out_of_office",
}
LANGS = ["en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "pl", "ja", "zh"]
TZ = {
    "en": -5, "de": 1, "fr": 1, "es": 1, "pt": 0, "it": 1, "nl": 1, "sv": 1, "da": 1, "pl": 1, "ja": 9, "zh": 8,
}
# 8-bit legacy charsets some mail clients still use for these languages (tried before UTF-8 on some messages).
LEGACY = {
    "de": "iso-8859-1", "fr": "windows-1252", "es": "iso-8859-1", "pt": "iso-8859-1", "it": "iso-8859-15",
    "nl": "iso-8859-1", "sv": "iso-8859-1", "da": "iso-8859-1", "pl": "iso-8859-2", "ja": "iso-2022-jp",
    "zh": "gb2312", "en": "us-ascii",
}
MAILERS = [
    ("X-Mailer", "Microsoft Outlook 16.0"),
    ("User-Agent", "Mozilla Thunderbird"),
    ("X-Mailer", "Apple Mail (2.3774.200.91.1.1)"),
    None,
    ("X-Mailer", "iPhone Mail (21G93)"),
    ("User-Agent", "Roundcube Webmail/1.6.9"),
    None,
    ("X-Mailer", "Zimbra 10.0.8_GA_4611 (ZimbraWebClient - FF132)"),
]
SENDER = ("Tom Becker", "tom.becker@reach-loop.example")


def h(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def parse_lang_file(path: Path):
    """Header lines '@key value' (and an '@pitch' ... '@end' block), then records '=== code [flags]'."""
    meta: dict[str, str] = {}
    records = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) and not lines[i].startswith("==="):
        line = lines[i]
        if line.startswith("@pitch"):
            block = []
            i += 1
            while lines[i] != "@end":
                block.append(lines[i])
                i += 1
            meta["pitch"] = "\n".join(block)
        elif line.startswith("@"):
            key, _, val = line[1:].partition(" ")
            meta[key] = val
        i += 1
    cur = None
    for line in lines[i:]:
        if line.startswith("=== "):
            if cur:
                records.append(cur)
            parts = line[4:].split()
            cur = {"code": parts[0], "flags": set(parts[1:]), "body": []}
        elif line.startswith("#") and cur is not None and not cur["body"] and line.startswith("#!"):
            continue
        elif cur is not None:
            cur["body"].append(line)
    if cur:
        records.append(cur)
    for r in records:
        r["body"] = "\n".join(r["body"]).strip("\n")
    return meta, records


def ascii_local(name: str) -> str:
    import unicodedata

    for a, b in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"), ("ł", "l"), ("ø", "oe"), ("å", "aa"), ("æ", "ae")):
        name = name.lower().replace(a, b)
    name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z.]", "", name.replace(" ", "."))


def encodable(text: str, charset: str) -> bool:
    try:
        text.encode(charset)
        return True
    except UnicodeEncodeError:
        return False


def text_part(text: str, subtype: str, charset: str, cte: str) -> MIMEText:
    if charset == "us-ascii" or (encodable(text, "ascii") and charset not in ("iso-2022-jp",)):
        return MIMEText(text, subtype, "us-ascii")
    cs = Charset(charset)
    if charset == "iso-2022-jp":
        return MIMEText(text, subtype, cs)
    cs.body_encoding = {"qp": QP, "b64": BASE64, "8bit": None}[cte]
    if cte == "8bit" and charset != "utf-8":
        cs.body_encoding = QP
    return MIMEText(text, subtype, cs)


def to_html(body: str, quote_attr: str | None, quote: str | None, style: int) -> str:
    paras = [p for p in re.split(r"\n\s*\n", body) if p.strip()]

    def para(p: str) -> str:
        inner = "<br>\n".join(html.escape(x) for x in p.split("\n"))
        if style == 0:
            return f'<p class="MsoNormal">{inner}<o:p></o:p></p>'
        if style == 1:
            return f"<div>{inner}</div><div><br></div>"
        return f"<p>{inner}</p>"

    out = [para(p) for p in paras] or ["<div><br></div>"]
    if quote is not None:
        q = "<br>\n".join(html.escape(x) for x in quote.split("\n"))
        if style == 0:
            out.append(
                '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">'
                f'<p class="MsoNormal"><b>{html.escape(quote_attr or "")}</b></p></div>'
                f'<p class="MsoNormal">{q}</p>'
            )
        else:
            out.append(
                f'<div class="gmail_quote"><div dir="ltr" class="gmail_attr">{html.escape(quote_attr or "")}'
                '<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
                f'border-left:1px solid rgb(204,204,204);padding-left:1ex">{q}</blockquote></div>'
            )
    head = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head>'
    if style == 0:
        return head + '<body lang="EN-US"><div class="WordSection1">\n' + "\n".join(out) + "\n</div></body></html>"
    return head + '<body><div dir="ltr">\n' + "\n".join(out) + "\n</div></body></html>"


def hdr(value: str, charset: str) -> str | Header:
    if encodable(value, "ascii"):
        return value
    if not encodable(value, charset) or charset in ("us-ascii",):
        charset = "utf-8"
    return Header(value, charset)


def build_person(lang: str, meta: dict, rec: dict, n: int, prefix: str) -> dict:
    rid = f"{prefix}-{lang}-{n:03d}"
    seed = h(rid)
    flags = rec["flags"]
    code = rec["code"]
    label = LABELS[code]
    names = meta["names"].split("|")
    domains = meta["domains"].split("|")
    idx = seed % len(names)
    # a signature in the body names its writer: use that person as the sender.
    tail = " ".join(rec["body"].split("\n")[-4:])
    for j, cand in enumerate(names):
        tokens = [cand] + [t for t in cand.split() if len(t) >= 3 or lang in ("ja", "zh")]
        if any(re.search(r"(?<!\w)" + re.escape(t) + r"(?!\w)", tail) for t in tokens):
            idx = j
            break
    name = names[idx]
    dom = domains[(seed >> 8) % len(domains)]
    if lang in ("ja", "zh"):
        local = meta["locals"].split("|")[idx]
    else:
        local = ascii_local(name) or f"info{seed % 97}"
    addr = f"{local}@{dom}"
    tz = timezone(timedelta(hours=TZ[lang]))
    pitch_dt = datetime(2026, 11, 2, 9, 0, tzinfo=tz) + timedelta(days=(seed >> 12) % 12, minutes=(seed >> 3) % 300)
    dt = pitch_dt + timedelta(hours=1 + (seed >> 20) % 70, minutes=(seed >> 30) % 59)
    pitch_id = f"<{(seed >> 7) % 10**10:010d}.pitch@reach-loop.example>"

    # quoting: 'q' forces, 'nq' forbids, otherwise about half of replies quote the pitch.
    is_ooo = code == "ooo"
    quote = ("q" in flags) or ("nq" not in flags and not is_ooo and (seed >> 40) % 2 == 0)
    months = meta["months"].split("|")
    attr = meta["attr"].format(
        d=pitch_dt.day, m=months[pitch_dt.month - 1], mm=pitch_dt.month, y=pitch_dt.year,
        t=pitch_dt.strftime("%H:%M"), name=SENDER[0], addr=SENDER[1],
        wd=meta.get("weekdays", "Mon|Tue|Wed|Thu|Fri|Sat|Sun").split("|")[pitch_dt.weekday()],
    )
    pitch = meta["pitch"]
    body = rec["body"]
    plain = body
    if quote:
        quoted = "\n".join(">" if not x else "> " + x for x in pitch.split("\n"))
        plain = (body + "\n\n" if body else "\n") + attr + "\n" + quoted + "\n"
    elif plain:
        plain = plain + "\n"

    # body format: 'h' html only, 'a' alternative, 't' plain; otherwise chosen from the seed.
    fmt = next((f for f in ("h", "a", "t") if f in flags), None)
    if fmt is None:
        fmt = ["t", "t", "t", "a", "t", "h", "a", "t", "t", "a"][(seed >> 16) % 10]
    if is_ooo and "h" not in flags and "a" not in flags:
        fmt = ["t", "a", "t", "h"][(seed >> 16) % 4]
    cte = next((f for f in ("qp", "b64", "8bit") if f in flags), None) or ["qp", "8bit", "b64", "qp", "8bit"][(seed >> 24) % 5]
    charset = "utf-8"
    legacy = LEGACY[lang]
    if ("legacy" in flags or (seed >> 36) % 3 == 0) and encodable(plain, legacy):
        charset = legacy
    if "utf8" in flags:
        charset = "utf-8"
    style = (seed >> 44) % 3
    if fmt == "t":
        msg = text_part(plain, "plain", charset, cte)
    else:
        html_body = to_html(body, attr if quote else None, pitch if quote else None, style)
        hcs = charset if encodable(html_body, charset) else "utf-8"
        html_body = html_body.replace("charset=utf-8", f"charset={hcs}")
        hp = text_part(html_body, "html", hcs, cte if cte != "8bit" else "qp")
        if fmt == "h":
            msg = hp
        else:
            msg = MIMEMultipart("alternative", boundary=f"_000_{seed % 10**12:012d}_")
            msg.attach(text_part(plain, "plain", charset, cte))
            msg.attach(hp)
    subj = meta["subject"]
    if is_ooo:
        subject = meta["autosubj"] + " " + subj
    elif "fwd" in flags:
        subject = meta.get("fw", "Fwd:") + " " + subj
    else:
        subject = meta["re"] + " " + subj
    if "subj" in meta and "newsubj" in flags:
        subject = meta["subj"]
    msg["From"] = formataddr((name, addr), charset="utf-8") if not encodable(name, "ascii") else formataddr((name, addr))
    msg["To"] = formataddr(SENDER)
    msg["Subject"] = hdr(subject, charset)
    msg["Date"] = format_datetime(dt)
    msg["Message-ID"] = f"<{seed % 10**14:014d}.{n}@{dom}>"
    if not is_ooo or (seed >> 50) % 2 == 0:
        msg["In-Reply-To"] = pitch_id
        msg["References"] = pitch_id
    mailer = MAILERS[(seed >> 52) % len(MAILERS)]
    if mailer:
        msg[mailer[0]] = mailer[1]
    if is_ooo:
        kind_auto = (seed >> 56) % 4
        if "noauto" in flags:
            msg["X-Auto-Response-Suppress"] = "All"
        elif kind_auto == 0:
            msg["Auto-Submitted"] = "auto-replied"
            msg["X-Auto-Response-Suppress"] = "All"
            msg["Precedence"] = "bulk"
        elif kind_auto == 1:
            msg["Auto-Submitted"] = "auto-replied (vacation)"
            msg["X-Autoreply"] = "yes"
        elif kind_auto == 2:
            msg["Auto-Submitted"] = "auto-replied"
        else:
            msg["Precedence"] = "auto_reply"
            msg["X-Autorespond"] = "yes"
    # Content-Language on some Outlook-ish messages.
    if (seed >> 58) % 4 == 0 and not is_ooo:
        msg["Content-Language"] = {"en": "en-US", "ja": "ja-JP", "zh": "zh-CN", "pt": "pt-BR"}.get(lang, lang)
    order = {"mime-version": 0, "content-type": 1, "content-transfer-encoding": 2}
    content = sorted((x for x in msg._headers if x[0].lower() in order), key=lambda x: order[x[0].lower()])
    msg._headers = [x for x in msg._headers if x[0].lower() not in order] + content
    for part in msg.walk():
        if part is not msg:
            del part["MIME-Version"]
    raw = msg.as_bytes().decode("utf-8").replace("=?eucgb2312_cn?", "=?gb2312?")
    return {"id": rid, "label": label, "lang": lang, "kind": "machine" if is_ooo else "person", "raw": raw}


def parse_machine(path: Path):
    """'@@template NAME' ... '@@end' blocks, then records '=== label lang TEMPLATE' whose body is either a
    complete raw message (TEMPLATE '-') or 'key=value' lines (a value may continue on following lines)."""
    text = path.read_text(encoding="utf-8")
    templates = dict(re.findall(r"^@@template (\S+)\n(.*?)\n@@end$", text, flags=re.M | re.S))
    text = re.sub(r"^@@template .*?^@@end\n", "", text, flags=re.M | re.S)
    out = []
    for c in re.split(r"^=== ", text, flags=re.M)[1:]:
        head, _, body = c.partition("\n")
        label, lang, tpl = head.split()
        rec = {"label": LABELS[label], "lang": None if lang == "-" else lang}
        if tpl == "-":
            rec["raw"] = body.strip("\n") + "\n"
            rec["vars"] = {}
        else:
            vars_: dict[str, str] = {}
            key = None
            for line in body.strip("\n").split("\n"):
                m = re.match(r"^([a-z_]+)=(.*)$", line)
                if m:
                    key = m.group(1)
                    vars_[key] = m.group(2)
                elif key is not None:
                    vars_[key] += "\n" + line
            rec["raw"] = templates[tpl].strip("\n") + "\n"
            rec["vars"] = {k: v.strip("\n") for k, v in vars_.items()}
            rec["template"] = tpl
        out.append(rec)
    return out


def _encode_fn(m: re.Match) -> str:
    fn, _, rest = m.group(1).partition(":")
    if fn == "jis":
        return rest.replace("\\n", "\n").encode("iso-2022-jp").decode("ascii")
    charset, _, text = rest.partition(":")
    text = text.replace("\\n", "\n")
    if fn == "hdr":
        return Header(text, charset).encode()
    if fn == "b64":
        import base64

        data = base64.b64encode(text.encode(charset)).decode("ascii")
        return "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    raise ValueError(fn)


def _encode_header_lines(raw: str) -> str:
    """From/To/Subject lines that carry non-ASCII text get RFC 2047 encoded words (UTF-8)."""
    out = []
    for line in raw.split("\n"):
        m = re.match(r"^(From|To|Subject): (.*)$", line)
        if m and not encodable(m.group(2), "ascii"):
            name, value = m.groups()
            am = re.match(r'^"?(.*?)"? (<[^>]+>)$', value)
            if name != "Subject" and am:
                line = f"{name}: {Header(am.group(1), 'utf-8').encode()} {am.group(2)}"
            else:
                line = f"{name}: {Header(value, 'utf-8', header_name=name).encode()}"
        out.append(line)
    return "\n".join(out)


def build_machine(rec: dict, n: int, prefix: str) -> dict:
    rid = f"{prefix}-mx-{n:03d}"
    seed = h(rid)
    dt = datetime(2026, 11, 3, 8, 0, tzinfo=UTC) + timedelta(minutes=seed % 20000)
    vals = {
        "date": format_datetime(dt),
        "date2": format_datetime(dt - timedelta(minutes=3 + seed % 50)),
        "msgid": f"<{seed % 10**15:015d}.mx{n}@mx.example.net>",
        "pitchid": f"<{(seed >> 9) % 10**10:010d}.pitch@reach-loop.example>",
        "qid": f"{seed % 16**10:010X}",
        "n": str(n),
        "ip": f"{['192.0.2', '198.51.100', '203.0.113'][seed % 3]}.{(seed >> 8) % 250 + 2}",
    }
    vals.update(rec["vars"])
    if vals.get("extra"):
        vals["extra"] += "\n"
    raw = rec["raw"]
    for _ in range(2):
        for k, v in vals.items():
            raw = raw.replace("{" + k + "}", v)
    raw = re.sub(r"\{=([a-z0-9]+:[^}]*)\}", _encode_fn, raw)
    left = re.findall(r"\{[a-z_0-9]+\}", raw)
    if left:
        raise SystemExit(f"{rid}: unfilled placeholders {left}")
    raw = _encode_header_lines(raw)
    return {"id": rid, "label": rec["label"], "lang": rec["lang"], "kind": "machine", "raw": raw}


def rows(src: Path, prefix: str) -> list[dict]:
    """Every message of the set whose texts are in `src`, ids `<prefix>-<lang>-NNN` / `<prefix>-mx-NNN`, in a fixed
    order (what main() writes, one dict per line)."""
    out = []
    for lang in LANGS:
        p = src / f"{lang}.txt"
        if not p.exists():
            print(f"missing {p}", file=sys.stderr)
            continue
        meta, recs = parse_lang_file(p)
        for n, rec in enumerate(recs, 1):
            out.append(build_person(lang, meta, rec, n, prefix))
    mp = src / "machine.txt"
    if mp.exists():
        for n, rec in enumerate(parse_machine(mp), 1):
            out.append(build_machine(rec, n, prefix))
    return out


def main(src: Path, out: Path, prefix: str) -> int:
    rows_ = rows(src, prefix)
    with out.open("w", encoding="utf-8") as fh:
        for r in rows_:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows_)} messages to {out}")
    return 0


# where the command writes a set's messages (generated: never committed)
OUT = DATA.parents[1] / "var" / "replies_corpus"
# set -> (id prefix, person-written minimum per label and language, absence notices per language)
SETS = {
    "dev4": ("ho", {"interested": 8, "not_interested": 8, "unsubscribe": 8, "other": 8}, 4),
    "dev5": ("d5", {"interested": 10, "not_interested": 10, "unsubscribe": 8, "other": 14}, 5),
    "dev6": ("h2", {"interested": 14, "not_interested": 12, "unsubscribe": 12, "other": 16}, 6),
    "heldout3": ("h3", {"interested": 14, "not_interested": 12, "unsubscribe": 12, "other": 16}, 6),
}


def set_rows(name: str) -> list[dict]:
    """The messages of one of SETS, assembled in memory from data/replies/<name>/src/."""
    return rows(DATA / name / "src", SETS[name][0])


def cli(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("--")]
    if len(names) != 1 or names[0] not in SETS:
        print(f"usage: python -m replies.corpus.assemble {{{'|'.join(SETS)}}} [--check]", file=sys.stderr)
        return 2
    name = names[0]
    prefix, person_min, ooo_min = SETS[name]
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"{name}.jsonl"
    status = main(DATA / name / "src", out, prefix)
    if status == 0 and "--check" in argv:
        from replies.corpus import checkset

        status = checkset.main(out, person_min, ooo_min)
    return status


if __name__ == "__main__":
    raise SystemExit(cli(sys.argv[1:]))
