"""`make test` names the optional peers it skipped and why (issue 14)."""

from tests.peers import summarize


def test_summary_groups_skip_reasons_by_peer_and_says_how_to_run_them():
    lines = summarize([
        "Debian dovecot-imapd is not installed", "Debian dovecot-imapd is not installed",
        "Dovecot is not installed or did not start", "Debian chromium is not installed",
        "synchronous_commit is a PostgreSQL setting (SQLite has no asynchronous commit)",
        "cross-process sharing needs REDIS_URL (runs in the PostgreSQL + Redis CI pass)",
        "not a query parameter",
    ])
    assert lines[0] == "optional peers skipped in this run:"
    dovecot = next(line for line in lines if "Dovecot (IMAP)" in line)
    assert "3 tests skipped" in dovecot and "Dovecot is not installed or did not start" in dovecot
    assert "apt-get install dovecot-imapd" in dovecot
    assert any("Chromium (Playwright): 1 test skipped" in line for line in lines)
    assert any(line.strip().startswith("PostgreSQL:") and "DATABASE_URL=" in line for line in lines)
    assert not any("query parameter" in line for line in lines)  # not a peer


def test_summary_says_when_nothing_was_skipped():
    assert summarize(["not a query parameter"]) == [
        "optional peers: none skipped (Dovecot, Chromium, PostgreSQL and Redis as this run configured them)"]


def test_make_test_installs_the_debian_peers_through_the_one_path_ci_uses():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text()
    test_target = makefile[makefile.index("\ntest:"):].split("\n\n")[0]
    assert "peers" in test_target.splitlines()[1] and "@.ci/peers" in makefile
    script = (root / ".ci" / "peers").read_text()
    assert "dovecot-imapd" in script and "chromium" in script
    assert "apt-get" not in (root / ".ci" / "run").read_text()  # .ci/run runs make test, which runs .ci/peers


def test_a_run_ends_by_naming_the_peers_it_skipped(tmp_path):
    """The conftest hook, in a real pytest run: on SQLite the PostgreSQL-only tests skip and the run says so."""
    import os
    import subprocess
    import sys

    from django.db import connection

    target = "tests/billing/test_async_commit.py"
    expected = "optional peers: none skipped" if connection.vendor == "postgresql" else "PostgreSQL: 4 tests skipped"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", target], env=env,
                          capture_output=True, text=True, timeout=600,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert "optional peers" in done.stdout and expected in done.stdout, done.stdout[-2000:]
