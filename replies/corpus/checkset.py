"""Validate a whole-message reply set (a held-out set or dev4-dev6) and print its counts; replies.corpus.assemble
names each set's targets and runs this on the file it writes.

    python -m replies.corpus.assemble <set> --check

Checks: every line is a JSON object with the five fields; ids are unique; labels, languages and kinds are
from the allowed sets (lang is null only for machine mail); every `raw` parses with the standard library's
email parser, has From/To/Subject/Date/Message-ID, and every text part decodes with its declared charset;
bounces carry a failure report (DSN action=failed or a mailer-daemon text).  Then prints counts per label x
language and checks the set's targets (per language: a minimum of person-written messages for each of
interested, not_interested, unsubscribe and other, and of out_of_office notices; a minimum of machine messages
without a language, absence notices not counted).  Exit status 1 when any check fails.
"""

from __future__ import annotations

import email
import json
from collections import Counter
from email import policy
from pathlib import Path

LABELS = ["interested", "not_interested", "unsubscribe", "other", "out_of_office", "bounce"]
LANGS = ["en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "pl", "ja", "zh"]


def parse(raw: str):
    """The corpus stores each message as text; its bytes are raw.encode("utf-8") (8bit bodies are UTF-8)."""
    return email.message_from_bytes(raw.encode("utf-8"), policy=policy.default)


def check_raw(raw: str) -> list[str]:
    problems = []
    email.message_from_string(raw)  # the text form parses too
    msg = parse(raw)
    for name in ("From", "To", "Subject", "Date", "Message-ID"):
        if msg.get(name) is None:
            problems.append(f"missing {name}")
    if msg.defects:
        problems.append(f"defects {msg.defects}")
    for part in msg.walk():
        if part.get_content_maintype() == "text":
            try:
                text = part.get_content()
                if "\ufffd" in text:
                    problems.append(f"replacement characters in {part.get_content_type()}")
            except (LookupError, UnicodeDecodeError) as exc:
                problems.append(f"undecodable part {part.get_content_type()}: {exc}")
            if part.defects:
                problems.append(f"part defects {part.defects}")
    return problems


def features(raw: str) -> set[str]:
    msg = parse(raw)
    out = {msg.get_content_type()}
    for part in msg.walk():
        cte = (part.get("Content-Transfer-Encoding") or "").lower()
        if cte in ("quoted-printable", "base64"):
            out.add(cte)
        cs = part.get_content_charset()
        if cs and cs not in ("utf-8", "us-ascii"):
            out.add(cs)
    if "\n> " in raw or "gmail_quote" in raw or "border-top:solid #E1E1E1" in raw:
        out.add("quoted-reply")
    return out


def main(path: Path, person_min: dict[str, int], ooo_min: int, machine_min: int = 60) -> int:
    errors = []
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"line {i}: not JSON: {exc}")
            continue
        if set(row) != {"id", "label", "lang", "kind", "raw"}:
            errors.append(f"line {i}: fields {sorted(row)}")
            continue
        if row["label"] not in LABELS:
            errors.append(f"{row['id']}: label {row['label']!r}")
        if row["kind"] not in ("person", "machine"):
            errors.append(f"{row['id']}: kind {row['kind']!r}")
        if row["lang"] is not None and row["lang"] not in LANGS:
            errors.append(f"{row['id']}: lang {row['lang']!r}")
        if row["lang"] is None and row["kind"] != "machine":
            errors.append(f"{row['id']}: person-written message without a language")
        if row["kind"] == "person" and row["label"] in ("bounce", "out_of_office"):
            errors.append(f"{row['id']}: a person-written message labelled {row['label']}")
        errors.extend(f"{row['id']}: {p}" for p in check_raw(row["raw"]))
        if row["label"] == "bounce":
            low = row["raw"].lower()
            if "action: failed" not in low and "mailer-daemon" not in low and "failure notice" not in low:
                errors.append(f"{row['id']}: bounce without a failure report")
        rows.append(row)
    ids = Counter(r["id"] for r in rows)
    errors.extend(f"duplicate id {k}" for k, v in ids.items() if v > 1)

    table = Counter((r["label"], r["lang"] or "-", r["kind"]) for r in rows)
    cols = LANGS + ["-"]
    print(f"{len(rows)} messages ({sum(r['kind'] == 'person' for r in rows)} person-written, "
          f"{sum(r['kind'] == 'machine' for r in rows)} machine)\n")
    print("label x language (person-written + machine; '-' = no language)")
    print(f"{'':15}" + "".join(f"{c:>5}" for c in cols) + f"{'total':>7}")
    for label in LABELS:
        counts = [sum(v for (lb, lg, _), v in table.items() if lb == label and lg == c) for c in cols]
        print(f"{label:15}" + "".join(f"{n:>5}" for n in counts) + f"{sum(counts):>7}")
    totals = [sum(v for (_, lg, _), v in table.items() if lg == c) for c in cols]
    print(f"{'total':15}" + "".join(f"{n:>5}" for n in totals) + f"{sum(totals):>7}")

    feats = Counter(f for r in rows for f in features(r["raw"]))
    print("\nformats: " + ", ".join(f"{k} {v}" for k, v in sorted(feats.items())))

    for lang in LANGS:
        for label, need in person_min.items():
            have = table[(label, lang, "person")]
            if have < need:
                errors.append(f"target: {lang} {label} person-written {have} < {need}")
        have = sum(v for (lb, lg, _), v in table.items() if lb == "out_of_office" and lg == lang)
        if have < ooo_min:
            errors.append(f"target: {lang} out_of_office {have} < {ooo_min}")
    machine = sum(1 for r in rows if r["kind"] == "machine" and r["label"] != "out_of_office")
    if machine < machine_min:
        errors.append(f"target: machine messages other than absence notices {machine} < {machine_min}")
    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors[:200]:
            print("  " + e)
        return 1
    print("\nall checks passed")
    return 0
