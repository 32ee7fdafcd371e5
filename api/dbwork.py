"""Where the money path's database steps run, for every door (the REST verbs, MCP, the LLM door):

- the write gate (`write`): the money statements of this process queue on it (SQLite: every one, one writer at a
  time, before it opens its transaction, a waiting settlement before a waiting admission; PostgreSQL: the
  admissions, a new record and hold, API_MONEY_WRITERS at a time, while settlements go straight to the database),
  so a burst of new calls does not keep answered calls from settling;
- SQLite's writing connection (`run_write`): the API threads' write steps run on one connection, borrowed in turn,
  whose page cache stays valid from one step to the next;
- the dedicated database threads of the async doors (`on_db_thread`), which keep their connection between steps
  (on PostgreSQL a gate of their own, outside the shared one), and the connection release between the two steps of
  a long call (`release_connection`);
- the work a process runs after its responses (settlements among them): one registry (`background`), waited for by
  the server's lifespan shutdown (`drain_background`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections

logger = logging.getLogger("core.errors")


# --- the money path's write gate ------------------------------------------------------------------------------
class WriterLock:
    """At most `slots` writers at a time, waiting settlements first and each kind in its order of arrival: a freed
    slot is handed to the longest-waiting settlement, else to the longest-waiting admission, and a newcomer never
    takes a slot while anybody waits. Admissions cannot starve: every settlement belongs to a hold already placed,
    so the settlements waiting run out.

    Why a gate at all. SQLite (one slot, every write): its own busy handler waits by sleeping in growing steps (up
    to 100 ms), which under many parallel calls costs far more than the transactions themselves, and serves whoever
    retries at the right moment: a settlement could wait behind a whole burst of new holds. PostgreSQL
    (API_MONEY_WRITERS slots, admissions only; see `write`): a burst of holds on one workspace's account row, each
    statement one transaction, queues in the server for the row's lock and for the CPU; with every API thread in a
    money statement at once each statement took 10 ms at the median and 100 ms at the 99th percentile (2 vCPUs, a
    300-call burst), and a settlement queued behind them all. A few admissions at a time halved the settlement's
    wait (bench/RESULTS.md, settlements under a burst).

    Why handed over rather than woken to race for it. Woken waiters compete for the slot and for the GIL, and the
    thread that has just released (or one arriving) usually wins: at 50 clients on SQLite some calls waited the whole
    3-second run for their hold while others went round hundreds of times (p99 3.1 s); handed over in order, p99 is
    0.15 s at the same throughput (bench/RESULTS.md, "the write gate's order")."""

    def __init__(self, slots: int = 1):
        self._lock = threading.Lock()
        self._slots = max(1, slots)
        self._used = 0
        self._settlements: collections.deque[threading.Lock] = collections.deque()
        self._admissions: collections.deque[threading.Lock] = collections.deque()

    def acquire(self, settlement: bool = False) -> None:
        with self._lock:
            if self._used < self._slots:  # a slot is free only while nobody waits (release hands it over)
                self._used += 1
                return
            waiter = threading.Lock()
            waiter.acquire()
            (self._settlements if settlement else self._admissions).append(waiter)
        waiter.acquire()  # released by `release`, which hands this thread its slot

    def release(self) -> None:
        with self._lock:
            queue = self._settlements or self._admissions
            if queue:
                queue.popleft().release()  # the slot passes to that waiter: `_used` is unchanged
            else:
                self._used -= 1

    def waiting(self) -> tuple[int, int]:
        """(settlements, admissions) waiting for a slot now."""
        with self._lock:
            return len(self._settlements), len(self._admissions)


writer_lock = WriterLock()  # SQLite
_gates: dict[int, WriterLock] = {}


def _gate() -> WriterLock:
    if connection.vendor == "sqlite":
        return writer_lock
    slots = settings.API_MONEY_WRITERS
    gate = _gates.get(slots)
    if gate is None:
        gate = _gates.setdefault(slots, WriterLock(slots))
    return gate


class _Locked:
    def __init__(self, gate: WriterLock, settlement: bool):
        self.gate, self.settlement = gate, settlement

    def __enter__(self):
        self.gate.acquire(self.settlement)

    def __exit__(self, *exc):
        self.gate.release()


def write(settlement: bool = False):
    """One write step of the money path (`settlement`: a settle) through this process's write gate. On SQLite
    every step, one writer at a time, around the step's own transaction (billing.ledger_sql.atomic), a waiting
    settlement before waiting admissions. On PostgreSQL, where each step is one statement (billing.ledger_sql),
    atomic by itself, the admissions (a record and a hold), at most API_MONEY_WRITERS at a time; a settlement takes
    no slot. What a settlement waits for there is the statements ahead of it on the account's row, and the gate
    keeps those to API_MONEY_WRITERS admissions plus the settlements of other answered calls (at most one per API
    thread): the hold-to-settle p99 under a 300-call burst is the same as when settlements took the slots first,
    while a steady load no longer queues its settlements and its admissions for the same two slots (REST and MCP
    at 50 clients: 0.90-0.92 of the throughput from before the one money path with shared slots, 0.99-1.09 with
    settlements outside them; bench/RESULTS.md, "settlements outside the PostgreSQL gate"). Not inside a caller's
    transaction on PostgreSQL: the statement is then part of it, and a transaction holding row locks must never
    wait for a slot held by one waiting for them.

    Nor on the async doors' dedicated database threads on PostgreSQL (`run_on_db_thread`): they are a gate of their
    own (LLM_DB_THREADS statements at most), and their steps run in the order they come. Both measured at 50
    concurrent non-streamed LLM calls (bench/RESULTS.md, "the LLM door's database threads"): taking the two slots
    shared with the API threads cost 0.2-0.4 ms of CPU per call, and letting settlements jump the queue of those
    threads ahead of new calls' holds added a third to the service's added p50; with neither, both figures are the
    ones from before the one money path."""
    if connection.vendor != "sqlite" and (settlement or connection.in_atomic_block or getattr(_thread, "keep", False)):
        return contextlib.nullcontext()
    return _Locked(_gate(), settlement)


class _WriterConnection:
    """SQLite: the one database connection on which the API threads (REST and MCP) run the money path's write steps,
    each thread borrowing it in turn under the write gate (`run_write`).

    Why one connection. SQLite keeps a page cache per connection and empties it when the next transaction finds that
    another connection has written since. With every API thread writing on its own connection, each admission and
    settlement found its cache stale and read its pages again (about thirty pages a call under load, where a warm
    cache needs a few): at 50 clients on REST verify_email that was a tenth of the server's CPU per call. On one
    connection that only these steps write, the pages stay cached: +12-18% throughput and -10-14% CPU per call at
    50 clients, p99 no higher (bench/RESULTS.md, "one writing connection on SQLite").

    Why borrowed rather than a writer thread that owns it. Handing each step to a thread of its own costs two thread
    switches per step, on the path of every call's answer: a lone MCP call took 3-5% longer that way, the load
    figures being the same.

    The gate allows one writer at a time on SQLite, so one thread at a time uses the connection (Django allows the
    sharing: `inc_thread_sharing`). During a step the borrowing thread's `django.db.connection` is this connection,
    so the ORM, `transaction.atomic` and billing.ledger_sql all write on it."""

    def __init__(self):
        self._wrapper = None

    def run(self, fn):
        """`fn()` on this connection (the caller holds the write gate)."""
        if self._wrapper is None:
            self._wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
            self._wrapper.inc_thread_sharing()
        own = connections[DEFAULT_DB_ALIAS]
        connections[DEFAULT_DB_ALIAS] = self._wrapper
        try:
            return fn()
        except BaseException:
            _after_error()
            raise
        finally:
            connections[DEFAULT_DB_ALIAS] = own

    def close(self) -> None:
        """Close the connection (tests, an orderly shutdown); the next step opens a new one."""
        if self._wrapper is None:
            return
        with _Locked(writer_lock, True):  # never while a step uses it
            wrapper, self._wrapper = self._wrapper, None
            wrapper.close()
            wrapper.dec_thread_sharing()


writer_connection = _WriterConnection()


def run_write(fn, settlement: bool = False):
    """`fn()`, one write step of the money path (`settlement`: a settle), through the write gate (`write`). On SQLite
    a step from an API thread runs on the one writing connection (`_WriterConnection`); one inside a caller's
    transaction (it must see, and not wait for, what that transaction wrote) or on the LLM door's database thread
    (one thread, with a connection of its own) runs on its thread's connection."""
    with write(settlement):
        if connection.vendor == "sqlite" and not connection.in_atomic_block and not getattr(_thread, "keep", False):
            return writer_connection.run(fn)
        return fn()


# --- connections --------------------------------------------------------------------------------------------
_thread = threading.local()


def release_connection() -> None:
    """Give the database connection back between the admission and the settlement of a long call: otherwise every
    open stream (and every call waiting on its provider) keeps a server connection until the response ends, and a
    few hundred parallel streams exhaust PostgreSQL's max_connections. SQLite keeps its (cheap, local) one: closing
    the last connection to a WAL database checkpoints it. Never inside an atomic block (tests). The dedicated
    database threads (`run_on_db_thread`) keep theirs: a fixed few threads, so a fixed few connections, and no pool
    checkout and return around every step."""
    if connection.vendor != "sqlite" and not connection.in_atomic_block and not getattr(_thread, "keep", False):
        connection.close()


def run_on_db_thread(fn, kwargs: dict):
    """Run one database step on a dedicated thread that keeps its connection between steps; a connection found
    unusable after an error is closed (the next step opens a new one)."""
    _thread.keep = True
    try:
        return fn(**kwargs)
    except BaseException:
        _after_error()
        raise


def _after_error() -> None:
    """After a step failed on a thread that keeps its connection: close the connection if it is no longer usable."""
    if connection.connection is not None and connection.errors_occurred:
        if connection.is_usable():
            connection.errors_occurred = False
        else:
            connection.close()


# --- database threads of the async doors ---------------------------------------------------------------------
# At most this many calls of one process are inside a database step at once under Django's handler. Each step
# holds a connection only while it runs (release_connection between steps), so a burst of calls cannot open more
# than this many connections, whatever the number of calls.
DB_CONCURRENCY = 32
_db_gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# Served by a fast door (no Django request context), the database steps run on a small dedicated pool of threads
# that keep their connections (one thread on SQLite: one writer anyway); under Django's handler (and its test
# client) they run where sync_to_async puts them.
fast_door: contextvars.ContextVar[bool] = contextvars.ContextVar("fast_door", default=False)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                threads = 1 if connection.vendor == "sqlite" else settings.LLM_DB_THREADS
                _pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="db")
    return _pool


def on_db_thread(fn):
    """`fn` (a sync database step) as a coroutine function with keyword arguments: on the dedicated database
    threads under a fast door, in the order the steps come (see `write` for why settlements take no turn ahead here),
    else through sync_to_async, at most DB_CONCURRENCY at once per event loop."""
    run = sync_to_async(fn)

    async def call(**kwargs):
        loop = asyncio.get_running_loop()
        if fast_door.get():
            return await loop.run_in_executor(_executor(), run_on_db_thread, fn, kwargs)
        gate = _db_gates.get(loop)
        if gate is None:
            gate = _db_gates.setdefault(loop, asyncio.Semaphore(DB_CONCURRENCY))
        async with gate:
            return await run(**kwargs)
    return call


def shutdown_pool(pool: ThreadPoolExecutor | None) -> None:
    """Close the database connection each thread of `pool` keeps and stop the threads (tests, orderly shutdowns)."""
    if pool is None:
        return
    count = pool._max_workers
    barrier = threading.Barrier(count)

    def close():
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=5)  # one task per thread
        connections.close_all()

    for future in [pool.submit(close) for _ in range(count)]:
        future.result()
    pool.shutdown(wait=True)


def close_db_threads() -> None:
    """Close the database threads' connections (the LLM door's, and SQLite's writing connection) and stop the threads
    (a new pool starts on the next call)."""
    global _pool
    pool, _pool = _pool, None
    shutdown_pool(pool)
    writer_connection.close()


# --- work after the responses ---------------------------------------------------------------------------------
# What a process runs after its responses (settlements, interrupted calls' records, the ends of provider streams):
# kept referenced until done, and waited for by the server's lifespan shutdown.
background: set[asyncio.Future] = set()


def shielded_background(coro) -> asyncio.Task:
    """Run `coro` as a task that nothing cancels (kept referenced until it ends)."""
    task = asyncio.ensure_future(coro)
    background.add(task)
    task.add_done_callback(background.discard)
    return task


async def shielded(coro):
    """Run `coro` to completion even if the request task is cancelled (client gone) meanwhile."""
    return await asyncio.shield(shielded_background(coro))


async def drain(futures, timeout: float, what: str) -> None:
    """Wait (at most `timeout` seconds) for `futures` (a set of work a process runs after its responses, which
    may grow while it is waited for: a finished verb starting its settlement); log what is left."""
    deadline = asyncio.get_running_loop().time() + timeout
    while pending := [future for future in futures if not future.done()]:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            logger.error("%d %s were still running after %g s of shutdown; their holds are left to the expiry "
                         "sweep", len(pending), what, timeout)
            return
        await asyncio.wait(pending, timeout=left)


async def drain_background(timeout: float = 10.0) -> None:
    """Wait for the work left after responses (settlements among them); the server's lifespan shutdown calls it,
    so an orderly stop finishes them."""
    await drain(background, timeout, "tasks left after responses (settlements among them)")
