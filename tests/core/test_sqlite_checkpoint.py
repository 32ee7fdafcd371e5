"""core.sqlite_checkpoint: while the web server runs, its SQLite connections do not checkpoint inside their
writes; one thread of its own does (PASSIVE). Observed through SQLite itself (the pragma each connection
reports, the log's frames) and through the checkpointer's calls; waits are for conditions, never timed."""

import threading

import pytest
from django.db import connection, connections

from core import sqlite_checkpoint
from tests.llmproxy.test_live import wait_for

pytestmark = pytest.mark.django_db(transaction=True)



def _autocheckpoint_of_a_new_connection(writes: int = 0) -> int:
    """PRAGMA wal_autocheckpoint as a connection opened now (on a thread of its own) sees it, after `writes`
    writes through that connection."""
    out = []

    def run():
        from accounts.services import user_get_or_create

        try:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA wal_autocheckpoint")
                out.append(cursor.fetchone()[0])
            for i in range(writes):
                user_get_or_create(email=f"u{i}@example.com")
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


@pytest.fixture
def checkpoints(monkeypatch):
    calls = []
    real = sqlite_checkpoint.checkpoint

    def spy(conn):
        result = real(conn)
        calls.append(result)
        return result

    monkeypatch.setattr(sqlite_checkpoint, "checkpoint", spy)
    monkeypatch.setattr(sqlite_checkpoint, "CHECKPOINT_SECONDS", 0.05)
    yield calls
    sqlite_checkpoint.stop()


def test_while_it_runs_new_connections_leave_checkpoints_to_its_thread(checkpoints):
    if connection.vendor != "sqlite":
        assert sqlite_checkpoint.start() is False and not sqlite_checkpoint.running()  # nothing on PostgreSQL
        return
    connections.close_all()  # no other connection of this process holds the file open (as in CI's order)
    assert _autocheckpoint_of_a_new_connection() == 1000  # SQLite's default
    assert sqlite_checkpoint.start() is True and sqlite_checkpoint.running()
    assert sqlite_checkpoint.start() is True  # idempotent: still one thread
    assert [t.name for t in threading.enumerate()].count("sqlite-checkpoint") == 1
    # Its connection is open once it has run a round: the writer below is then never the last connection to
    # close, which would checkpoint and delete the log itself (SQLite's rule for the last connection).
    wait_for(lambda: len(checkpoints) > 0, "the checkpointer's first round")
    # writes that fill the log through a connection opened now, which never checkpoints: the thread does
    assert _autocheckpoint_of_a_new_connection(writes=50) == 0
    wait_for(lambda: any(frames > 0 and done == frames for _, frames, done in checkpoints),
             "a checkpoint of the whole log by the checkpointer")

    sqlite_checkpoint.stop()
    assert not sqlite_checkpoint.running()
    assert "sqlite-checkpoint" not in [t.name for t in threading.enumerate()]
    assert _autocheckpoint_of_a_new_connection() == 1000  # stopped: connections checkpoint themselves again


def test_the_web_servers_lifespan_starts_and_stops_it():
    import asyncio

    from config.asgi import application

    async def lifespan():
        messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
        sent = []
        seen_running = []

        async def receive():
            return next(messages)

        async def send(message):
            sent.append(message["type"])
            if message["type"] == "lifespan.startup.complete":
                seen_running.append(sqlite_checkpoint.running())

        await application({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
        return sent, seen_running

    sent, seen_running = asyncio.run(lifespan())
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert seen_running == [connection.vendor == "sqlite"]
    assert not sqlite_checkpoint.running()
