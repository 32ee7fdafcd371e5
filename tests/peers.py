"""Which optional peers a test run went without, and why: the end of `make test` names them (issue 14).

The suite uses real peers where one can run here (Dovecot, Chromium, PostgreSQL, Redis); a test whose peer is
missing skips with a reason. `summarize` groups those skip reasons by peer so a run says plainly what it did not
exercise, instead of leaving it to a list of skip lines.
"""

from __future__ import annotations

# (peer, words in a skip reason that name it, how to get it), first match wins
PEERS = [
    ("Dovecot (IMAP)", ("dovecot",), "apt-get install dovecot-imapd (make test installs it when run as root)"),
    ("Chromium (Playwright)", ("chromium", "playwright"),
     "apt-get install chromium (make test installs it when run as root)"),
    ("Redis", ("redis",), "REDIS_URL=redis://127.0.0.1:6379/15 make test"),
    ("PostgreSQL", ("postgresql", "synchronous_commit"),
     "DATABASE_URL=postgres://postgres@127.0.0.1:5432/test make test"),
]


def peer_of(reason: str) -> tuple[str, str] | None:
    text = reason.lower()
    for name, words, how in PEERS:
        if any(word in text for word in words):
            return name, how
    return None


def summarize(reasons: list[str]) -> list[str]:
    """Lines for the end of a run: one per missing peer (tests skipped, the reasons given, how to get it)."""
    grouped: dict[str, tuple[str, int, set[str]]] = {}
    for reason in reasons:
        found = peer_of(reason)
        if found is None:
            continue
        name, how = found
        _, count, why = grouped.get(name, (how, 0, set()))
        grouped[name] = (how, count + 1, why | {reason.strip()})
    if not grouped:
        return ["optional peers: none skipped (Dovecot, Chromium, PostgreSQL and Redis as this run configured them)"]
    lines = ["optional peers skipped in this run:"]
    for name, _, _ in PEERS:
        if name in grouped:
            how, count, why = grouped[name]
            lines.append(f"  {name}: {count} test{'s' if count != 1 else ''} skipped ({'; '.join(sorted(why))}); "
                         f"to run them: {how}")
    return lines


def skip_reason(report) -> str:
    """The reason text of a skipped test report (pytest stores (path, line, 'Skipped: reason'))."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)
