"""The README tour works when followed literally on a fresh clone (issue 14): what it links to is in the
repository, the commands it names exist, and its campaign sends whenever the tour is run."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_and_docs_link_only_inside_the_repository():
    bad = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # absolute URLs (the running service, vendors' pages) and anchors
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{doc.name}: {target}")
    assert bad == []


def test_readme_and_docs_cite_no_documents_outside_the_repository():
    cited = [f"{doc.name}: {m}" for doc in DOCS
             for m in re.findall(r"\b(?:SPEC|CONTRACT|DESIGN)(?:\.md| \d| section)", doc.read_text())]
    assert cited == []


def test_every_manage_py_command_the_readme_names_exists():
    text = (ROOT / "README.md").read_text()
    named = set(re.findall(r"manage\.py ([a-z_]+)", text))
    assert {"seed_demo", "approve", "grant_credits", "sandbox_reply"} <= named
    assert named - set(get_commands()) == set()


def test_the_tour_campaign_window_is_open_whenever_the_tour_runs():
    from campaigns.verbs import WindowIn
    from campaigns.window import in_window

    text = (ROOT / "README.md").read_text()
    step6 = text[text.index("**6. Draft a campaign**"):text.index("**7. Launch**")]
    window = json.loads(re.search(r'"sending_window": (\{[^}]*\})', step6).group(1))
    monday = datetime(2026, 11, 23, tzinfo=UTC)
    for minutes in range(0, 7 * 24 * 60, 17):
        assert in_window(window, monday + timedelta(minutes=minutes))
    serializer = WindowIn(data=window)
    assert serializer.is_valid(), serializer.errors
