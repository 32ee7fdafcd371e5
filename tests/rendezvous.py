"""Force an interleaving between real threads on PostgreSQL without guessing at timing.

`Rendezvous(n).wait()` returns once all n threads have arrived, or once every thread that has not arrived is
blocked waiting for a PostgreSQL lock (so it cannot arrive until the waiting thread commits). Placed between a
check and the write that relies on it, it makes the racy version run every check before any write, while the
fixed version (which locks before checking) goes through one thread at a time; no sleep decides the outcome.
"""

from __future__ import annotations

import threading
import time

from django.db import connection


def lock_waiters() -> int:
    """Sessions of this database blocked on a heavyweight lock (a row lock, a FOR UPDATE)."""
    with connection.cursor() as cursor:
        # inside a transaction PostgreSQL keeps the first read of pg_stat_activity for the whole transaction:
        # without clearing it, a thread that blocks after the first poll would never be seen
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


class Rendezvous:
    def __init__(self, parties: int, timeout: float = 30.0):
        self.parties, self.timeout = parties, timeout
        self.arrived = 0
        self.cond = threading.Condition()

    def wait(self) -> None:
        with self.cond:
            self.arrived += 1
            self.cond.notify_all()
        deadline = time.monotonic() + self.timeout
        while True:
            with self.cond:
                missing = self.parties - self.arrived
                if missing <= 0:
                    return
            if lock_waiters() >= missing:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{missing} thread(s) neither arrived nor blocked on a lock")
            with self.cond:
                self.cond.wait(0.01)  # poll: woken at once by an arrival


def in_threads(*targets) -> list[Exception]:
    """Run each callable in its own thread (each with its own database connection, closed after) and return
    the exceptions they raised, for the caller to assert on."""
    failures: list[Exception] = []

    def run(fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - returned to the caller
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(fn,)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return failures
