"""The development sets: reply phrasings written by authors who never read the training corpus, the classifier
or the held-out set, in the training modules' format, never trained on. Whoever tunes the classifier measures on
them instead of the held-out set, which stays unseen.

- `dev` (data/replies/dev/<lang>.jsonl): every class, many boundary cases;
- `dev2` (data/replies/dev2/<lang>.jsonl): another author's `other` and its borders with `not_interested` and
  `interested` (redirects, who/what questions, acknowledgements, complaints about the email, neutral forwards);
- `dev3` (data/replies/dev3/messages.jsonl): whole messages by another author, in the shapes real clients
  write (empty and signature-only replies, forwards, answers below or inside the quote, long disclaimers), each
  with its shape named; reported per shape too.
- `dev4` (data/replies/dev4/): the first held-out set (654 whole messages), spent on 2026-11-26 once a second
  held-out set existed; its misses are read (`--errors` prints the text the classifier read).
- `dev5` (data/replies/dev5/): 719 whole messages by four more authors, written the way the second held-out
  set was (same brief, same assembler), for tuning without looking at that set.
- `dev6` (data/replies/dev6/): the second held-out set (925 whole messages), spent on 2026-11-26 after two looks,
  once a third held-out set (data/replies/heldout3/) had been commissioned.

`dev` and `dev2` are trained on since 2026-11-26 (replies/corpus/build.py CORPUS_AUTHORS): their figures
are training figures now. dev3 to dev6 are never trained on.

Each phrasing becomes complete messages with the training corpus's composer (greetings, signatures, quoted
pitch, HTML) under a different seed, and goes through the complete default classifier
(`replies.classify.classify`), so the figure is what a user would get.

    python -m replies.corpus.devset [dev|dev2|dev3|...|dev6]            # accuracy overall, per class, language
    python -m replies.corpus.devset [dev|dev2|dev3|...|dev6] --errors   # also every miss (expected -> got: text)
"""

from __future__ import annotations

import random
import sys
from collections import Counter

from replies.corpus.build import INTENTS, LANGS, _fill, message
from replies.corpus.files import DATA, language, phrasings, read_jsonl

SEED = 1616
COPIES = 2


WHOLE_MESSAGE_SETS = ("dev3", "dev4", "dev5", "dev6")


def _whole_messages(name: str) -> list[dict]:
    """dev3's hand-written JSONL; the others are assembled in memory from their sources (replies.corpus.assemble)."""
    if name != "dev3":
        from replies.corpus.assemble import set_rows

        return set_rows(name)
    return read_jsonl(DATA / "dev3" / "messages.jsonl")


def rows(name: str = "dev"):
    """(lang, label, what it is, shape, raw message) for every item of a dev set, in a fixed order: a phrasing
    becomes COPIES messages (shape None); dev3's messages are used as written (what it is = their shape)."""
    if name in WHOLE_MESSAGE_SETS:
        for row in _whole_messages(name):
            shape = row.get("shape") or row.get("kind", "")
            what = f"[{shape}]" if name == "dev3" else f"[{row['id']}]"
            yield row["lang"] or "-", row["label"], what, shape, row["raw"].encode("utf-8")
        return
    rng = random.Random(SEED)
    n = 0
    for lang in LANGS:
        pools = phrasings(DATA / name / f"{lang}.jsonl")
        if pools is None:
            continue
        for label in INTENTS:
            for phrase in pools[label]:
                for _ in range(COPIES):
                    n += 1
                    yield lang, label, phrase, None, message(lang, label, [_fill(phrase, language(lang), rng)], rng, n)


def evaluate(show_errors: bool = False, name: str = "dev") -> dict[str, tuple[int, int]]:
    from replies import classify as c

    hits, totals = Counter(), Counter()
    errors = []
    for lang, label, phrase, shape, raw in rows(name):
        got = c.classify(raw).label
        keys = ["all", f"class:{label}", f"lang:{lang}"] + ([f"shape:{shape}"] if shape else [])
        for key in keys:
            totals[key] += 1
            hits[key] += int(got == label)
        if got != label:
            if name in WHOLE_MESSAGE_SETS[1:]:  # whole messages named by id: show the text the classifier read
                from replies.mailtext import body_text, parse, strip_quotes_and_signature

                own = strip_quotes_and_signature(body_text(parse(raw)))
                phrase = f"{phrase} {' '.join(own.split())[:300]}"
            errors.append((lang, label, got, phrase))
    if show_errors:
        for lang, label, got, phrase in sorted(set(errors)):
            print(f"{lang} {label:>14} -> {got:<14} {phrase}")
    return {k: (hits[k], totals[k]) for k in sorted(totals)}


def main(argv: list[str]) -> int:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    import logging

    logging.getLogger("flufl.bounce").setLevel(logging.WARNING)
    name = next((a for a in argv[1:] if not a.startswith("--")), "dev")
    figures = evaluate("--errors" in argv, name)
    for key, (hit, total) in figures.items():
        print(f"{key:24} {hit:5}/{total:<5} {hit / total:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
