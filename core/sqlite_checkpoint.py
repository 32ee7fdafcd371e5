"""SQLite WAL checkpoints off the request path, in the web server process.

By default SQLite checkpoints inside a write: the commit that takes the write-ahead log past 1,000 pages copies
the log into the database file and syncs it before it returns. On the LLM door at one client (SQLite, the
`make run` default) that was about one call in a hundred taking 4-5 ms instead of 1.1: the whole of its p99
(bench/RESULTS.md, eleventh session), and the same stall falls on any write verb.

So while the web server runs (config.asgi's lifespan calls `start` and `stop`), the connections that process
opens get `PRAGMA wal_autocheckpoint=0`, and one background thread of its own checkpoints every
CHECKPOINT_SECONDS in PASSIVE mode, which never waits for a reader or a writer (SQLite releases the GIL while it
copies and syncs). Other processes (Celery workers, management commands such as import_leads) keep SQLite's
default, so the log never grows without bound for want of a web server. A connection the process opened
before `start` keeps the default too. Nothing changes on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading

from django.db import connections
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 0.5

_lock = threading.Lock()
_thread: threading.Thread | None = None
_stop: threading.Event | None = None  # the running thread's own


def _database_path() -> str | None:
    """The default database's file, or None when it is not a file-backed SQLite database."""
    conn = connections["default"]
    if conn.vendor != "sqlite":
        return None
    name = str(conn.settings_dict["NAME"])
    if not name or name == ":memory:" or name.startswith("file:"):
        return None
    return name


def _no_autocheckpoint(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite":
        connection.connection.execute("PRAGMA wal_autocheckpoint=0")


def _identity(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def checkpoint(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """One PASSIVE checkpoint: (busy, frames in the log, frames checkpointed)."""
    return tuple(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())


def _run(stop: threading.Event) -> None:
    conn = None
    opened = None  # (path, file identity) of `conn`: a database file replaced under the same name is reopened
    try:
        while True:
            stopping = stop.wait(CHECKPOINT_SECONDS)
            try:
                path = _database_path()
                current = (path, _identity(path)) if path else None
                if current != opened or current is None or current[1] is None:
                    if conn is not None:
                        conn.close()
                    conn = opened = None
                    if current is not None and current[1] is not None:
                        conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
                        opened = current
                if conn is not None:
                    checkpoint(conn)
            except Exception as exc:  # noqa: BLE001 - a busy or vanished file: the next round tries again
                log = logger.debug if isinstance(exc, sqlite3.Error) else logger.exception
                log("sqlite checkpoint skipped: %s", exc)
                if conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        conn.close()
                conn = opened = None
            if stopping:
                return
    finally:
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def start() -> bool:
    """Take checkpoints off this process's writes (a file-backed SQLite default database only); idempotent.
    Returns whether the checkpointer runs."""
    global _thread, _stop
    if _database_path() is None:
        return False
    with _lock:
        if _thread is None:
            _stop = threading.Event()
            connection_created.connect(_no_autocheckpoint, dispatch_uid="core.sqlite_checkpoint")
            _thread = threading.Thread(target=_run, args=(_stop,), name="sqlite-checkpoint", daemon=True)
            _thread.start()
    return True


def stop() -> None:
    """Stop the checkpointer after one last checkpoint. Connections opened from now on checkpoint themselves; the
    ones opened while it ran keep wal_autocheckpoint=0 until they close (in a server, stop runs at exit)."""
    global _thread, _stop
    with _lock:
        thread, stop_event, _thread, _stop = _thread, _stop, None, None
        if thread is None:
            return
        connection_created.disconnect(dispatch_uid="core.sqlite_checkpoint")
        stop_event.set()
        thread.join(timeout=10)


def running() -> bool:
    return _thread is not None
