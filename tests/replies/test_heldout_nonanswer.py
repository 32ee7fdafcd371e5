"""The default classifier on held-out mail that is not an answer to ours (`data/replies/heldout_nonanswer/`,
written by another author before the rules for such mail existed, and first read by them only after those rules
were committed): company newsletters and product updates, calendar invitations and answers, internal mail sent to
the wrong address, receipts and service notices (all `other`, CONTRACT 4.8b), with genuine answers mixed in.

Aggregates only, printed on every run. The floors are the figures of the first look (bench/RESULTS.md), so a
change that loses them fails; nobody tunes on this set.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from replies import classify as c

SET = Path(__file__).resolve().parents[2] / "data" / "replies" / "heldout_nonanswer" / "messages.jsonl"
FLOORS = {"all": 0.84, "class:other": 0.77, "class:unsubscribe": 1.0, "class:not_interested": 1.0,
          "class:interested": 0.83}


def _figures() -> dict[str, tuple[int, int]]:
    if not SET.exists():
        pytest.skip("the held-out set of mail that is not an answer is not in this checkout")
    hits, totals = Counter(), Counter()
    for line in SET.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        got = c.classify(row["raw"].encode("utf-8", "surrogateescape")).label
        for key in ("all", f"kind:{row['kind']}", f"class:{row['label']}", f"lang:{row.get('lang') or 'none'}"):
            totals[key] += 1
            hits[key] += int(got == row["label"])
    return {k: (hits[k], totals[k]) for k in sorted(totals)}


def test_heldout_nonanswer_figures(capsys):
    figures = _figures()
    with capsys.disabled():
        print(f"\nheld-out mail that is not an answer ({SET.parent.name}), default classifier:")
        for key, (hit, total) in figures.items():
            print(f"  {key:24} {hit:4}/{total:<4} {hit / total:6.1%}")
    lost = [f"{key} {figures[key][0] / figures[key][1]:.1%} < {floor:.0%}" for key, floor in FLOORS.items()
            if key in figures and figures[key][0] / figures[key][1] < floor - 1e-9]
    assert not lost, "first-look figures lost: " + "; ".join(lost)
