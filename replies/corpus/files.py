"""Where the reply corpus lives and how its files read: data/replies/ at the top of the repository, outside the
importable package (data/replies/README.md describes every folder). The phrasings are JSON Lines, one object a
line: `{"label": ..., "text": ...}` (and `"note"`, the author's group heading), after an optional first
`{"about": ...}` line that says who wrote the file; the composer's parts per language are `{"part": ...,
"text": ...}`. Strings are read exactly as written, in file order: the order is part of the corpus (the
training messages are composed from it with a seeded generator).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from types import SimpleNamespace

DATA = Path(__file__).resolve().parents[2] / "data" / "replies"
LABELS = ("interested", "not_interested", "unsubscribe", "other", "out_of_office")
# the composer's parts that are one string, not a list to choose from
SINGLE_PARTS = ("outlook_header", "reply_prefix")


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def phrasings(path: Path) -> dict[str, list[str]] | None:
    """{label: [phrasing, ...]} of one author's file for a language, every label present; None when there is
    no such file (not every author wrote every language)."""
    if not path.exists():
        return None
    out: dict[str, list[str]] = {label: [] for label in LABELS}
    for row in read_jsonl(path):
        if "label" in row:
            out[row["label"]].append(row["text"])
    return out


@cache
def language(code: str) -> SimpleNamespace:
    """A language's first-author phrasings (`INTERESTED`, `NOT_INTERESTED`, ...) and the composer's parts
    (`GREETINGS`, `NAMES`, `PITCHES`, `OUTLOOK_HEADER`, ...): data/replies/train/<code>.jsonl and
    data/replies/train/compose/<code>.jsonl."""
    values: dict[str, object] = {label.upper(): texts
                                 for label, texts in phrasings(DATA / "train" / f"{code}.jsonl").items()}
    for row in read_jsonl(DATA / "train" / "compose" / f"{code}.jsonl"):
        name = row["part"]
        if name in SINGLE_PARTS:
            values[name.upper()] = row["text"]
        else:
            values.setdefault(name.upper(), []).append(row["text"])
    return SimpleNamespace(**values)
