"""The default classifier (`replies.classify.classify`: rules plus the local model, no LLM) on held-out mail.

Two sets, each reported as aggregate figures only (never a message, never a misclassified text):

- `data/replies/heldout3/` (assembled in memory from its hand-written sources): written by five authors who
  read no classifier code, training, development or earlier held-out data; the rules, the model and the training
  corpus were tuned without reading it (the first two held-out sets, spent, are development sets dev4 and dev6).
  Thresholds of issue #16: at least 95% overall, at least 90% on person-written replies, at least 85% recall for
  every class and every language.
- the validation split of the shipped training corpus (phrasings the train split never contains), with a model
  trained on the train split only (`replies.model.evaluate`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from replies import classify as c

HELDOUT = Path(__file__).resolve().parents[2] / "data" / "replies" / "heldout3"
LANGS = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "pl", "ja", "zh")


def _figures(rows) -> dict[str, tuple[int, int]]:
    hits, totals = Counter(), Counter()
    for row in rows:
        got = c.classify(row["raw"].encode("utf-8", "surrogateescape")).label
        keys = ["all", f"kind:{row['kind']}", f"class:{row['label']}"]
        if row.get("lang"):
            keys.append(f"lang:{row['lang']}")
        for key in keys:
            totals[key] += 1
            hits[key] += int(got == row["label"])
    return {k: (hits[k], totals[k]) for k in sorted(totals)}


def _print(title: str, figures: dict[str, tuple[int, int]]) -> None:
    print(f"\n{title}")
    for key, (hit, total) in figures.items():
        print(f"  {key:24} {hit:4}/{total:<4} {hit / total:6.1%}")


def _shortfalls(figures: dict[str, tuple[int, int]]) -> list[str]:
    def rate(key):
        hit, total = figures.get(key, (0, 0))
        return hit / total if total else None

    out = []
    for key, floor in (("all", 0.95), ("kind:person", 0.90)):
        if rate(key) is not None and rate(key) < floor:
            out.append(f"{key} {rate(key):.1%} < {floor:.0%}")
    for key in figures:
        if key.startswith(("class:", "lang:")) and rate(key) < 0.85:
            out.append(f"{key} {rate(key):.1%} < 85%")
    return out


def _heldout_rows():
    if not (HELDOUT / "src").exists():
        pytest.skip("the held-out set is not in this checkout")
    from replies.corpus.assemble import set_rows

    return set_rows("heldout3")


# The test measures and prints the figures on every run and fails naming each shortfall: the thresholds were met
# on this set's first look (bench/RESULTS.md), so a change that loses them is a regression. Whoever tunes the
# classifier measures on the development sets (replies/corpus/devset.py), not here.
def test_heldout_thresholds(capsys):
    figures = _figures(_heldout_rows())
    with capsys.disabled():
        _print(f"held-out set ({HELDOUT.name}), default classifier:", figures)
    shortfalls = _shortfalls(figures)
    with capsys.disabled():
        print("  shortfalls: " + ("; ".join(shortfalls) or "none"))
    assert not shortfalls, "issue #16 held-out thresholds lost: " + "; ".join(shortfalls)


def test_heldout_figures_are_aggregates_over_every_language(capsys):
    """The evaluation covers the twelve languages and both kinds of mail, and the machine mail (decided by the
    protocol rules) stays reliable."""
    figures = _figures(_heldout_rows())
    assert {f"lang:{lang}" for lang in LANGS} <= set(figures)
    hit, total = figures["kind:machine"]
    assert hit / total >= 0.90, figures["kind:machine"]
