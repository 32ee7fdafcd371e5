"""The money path's write gate (api.dbwork.WriterLock): at most its slots of writers at a time (SQLite: one, every
write; PostgreSQL: API_MONEY_WRITERS admissions, while settlements take no slot), a waiting settlement goes before
every waiting admission, whatever their order of arrival, each kind is served in its order of arrival, and nobody
takes a slot ahead of those waiting for one. Order is observed, never timed."""

import threading
import time

import pytest
from django.db import connection, transaction

from api import dbwork
from api.dbwork import WriterLock


def _waiting(lock: WriterLock, settlements: int, admissions: int, timeout: float = 5.0) -> None:
    """Until `settlements` settlements and `admissions` admissions are blocked on `lock`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock.waiting() == (settlements, admissions):
            return
        time.sleep(0.001)
    raise AssertionError("the writers never queued")


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.001)


def test_waiting_settlements_go_before_waiting_admissions():
    lock = WriterLock()
    order: list[str] = []
    inside = []

    def writer(name: str, settlement: bool):
        lock.acquire(settlement)
        try:
            inside.append(name)
            assert len(inside) == 1, inside  # one writer at a time
            order.append(name)
        finally:
            inside.remove(name)
            lock.release()

    lock.acquire()  # a writer holds the lock while the others arrive: admissions first, then settlements
    threads = []
    for i in range(3):
        threads.append(threading.Thread(target=writer, args=(f"admit{i}", False)))
        threads[-1].start()
    _waiting(lock, 0, 3)
    for i in range(2):
        threads.append(threading.Thread(target=writer, args=(f"settle{i}", True)))
        threads[-1].start()
    _waiting(lock, 2, 3)
    lock.release()
    for thread in threads:
        thread.join(5)
    assert order == ["settle0", "settle1", "admit0", "admit1", "admit2"]  # settlements first, each in arrival order


def _queue_admissions(lock: WriterLock, names: list[str], order: list[str]) -> list[threading.Thread]:
    def writer(name: str):
        lock.acquire()
        order.append(name)
        lock.release()

    threads = []
    for i, name in enumerate(names):
        threads.append(threading.Thread(target=writer, args=(name,)))
        threads[-1].start()
        _waiting(lock, 0, i + 1)  # queued in this order
    return threads


def test_a_freed_slot_goes_to_the_longest_waiter_and_a_newcomer_queues_behind_those_waiting():
    """A release hands the slot over: an acquire that comes between the release and the waiter's wake-up (here the
    releasing thread itself, at once) does not take it, and waits behind everybody already waiting."""
    lock = WriterLock()
    order: list[str] = []
    lock.acquire()
    threads = _queue_admissions(lock, ["first", "second", "third"], order)
    lock.release()
    lock.acquire()  # the releaser comes straight back: it is served after the three waiters
    order.append("releaser")
    lock.release()
    for thread in threads:
        thread.join(5)
    assert order == ["first", "second", "third", "releaser"]
    lock.acquire()  # free again, nobody waiting: taken at once
    assert lock.waiting() == (0, 0)
    lock.release()


def test_an_admission_takes_a_free_lock_at_once_and_a_settlement_waits_for_the_holder():
    lock = WriterLock()
    lock.acquire()
    got = threading.Event()
    thread = threading.Thread(target=lambda: (lock.acquire(True), got.set(), lock.release()))
    thread.start()
    _waiting(lock, 1, 0)
    assert not got.is_set()
    lock.release()
    thread.join(5)
    assert got.is_set()
    lock.acquire()  # free again: taken at once
    lock.release()


def test_with_more_slots_that_many_write_at_once_and_a_waiting_settlement_still_goes_first():
    lock = WriterLock(2)
    lock.acquire()
    lock.acquire()  # both slots taken at once
    order: list[str] = []
    leave = threading.Event()

    def writer(name: str, settlement: bool):
        lock.acquire(settlement)
        order.append(name)
        assert leave.wait(10)  # holds its slot until the test lets it go
        lock.release()

    threads = [threading.Thread(target=writer, args=("admit", False))]
    threads[0].start()
    _waiting(lock, 0, 1)
    threads.append(threading.Thread(target=writer, args=("settle", True)))
    threads[1].start()
    _waiting(lock, 1, 1)
    lock.release()  # one slot frees: the settlement takes it, though the admission came first
    _until(lambda: order == ["settle"])
    _waiting(lock, 0, 1)  # the admission still waits: both slots are held
    assert order == ["settle"]
    lock.release()
    _until(lambda: order == ["settle", "admit"])
    leave.set()
    for thread in threads:
        thread.join(5)


@pytest.mark.django_db
def test_write_uses_the_gate_of_its_database(settings):
    """SQLite: the one writer lock. PostgreSQL: API_MONEY_WRITERS slots, and no gate at all for a statement inside a
    caller's transaction (it may hold row locks that a slot holder waits for)."""
    if connection.vendor == "sqlite":
        with dbwork.write():
            assert dbwork.writer_lock._used == 1
        assert dbwork.writer_lock._used == 0
        return
    settings.API_MONEY_WRITERS = 3
    gate = dbwork._gate()
    assert gate._slots == 3
    with transaction.atomic():  # (the test's own transaction)
        with dbwork.write():
            assert gate._used == 0


@pytest.mark.django_db(transaction=True)
def test_a_settlement_waits_for_the_sqlite_writer_but_takes_no_postgresql_slot(settings):
    """With every slot of the gate held by admissions, a settlement on SQLite waits for the one writer (and then goes
    before the admissions waiting); on PostgreSQL it goes straight to its statement: what it waits for there is the
    few admissions ahead of it on the account's row, not a slot."""
    settings.API_MONEY_WRITERS = 2
    gate = dbwork.writer_lock if connection.vendor == "sqlite" else dbwork._gate()
    holders = [threading.Thread(target=gate.acquire) for _ in range(gate._slots)]  # the slots, taken by admissions
    for thread in holders:
        thread.start()
        thread.join(5)
    assert gate._used == gate._slots
    entered = threading.Event()

    def settle():
        with dbwork.write(settlement=True):
            entered.set()

    settler = threading.Thread(target=settle)
    try:
        settler.start()
        if connection.vendor == "sqlite":
            _waiting(gate, 1, 0)
            assert not entered.is_set()
            gate.release()  # the writer is free: the settlement takes it
            assert entered.wait(5)
        else:
            assert entered.wait(5)
            assert gate._used == gate._slots and gate.waiting() == (0, 0)
    finally:
        settler.join(5)
        while gate._used:
            gate.release()


def test_the_async_doors_database_threads_are_their_own_gate_on_postgresql(settings):
    """On PostgreSQL a step on the LLM door's dedicated database threads (run_on_db_thread) takes no slot of the gate
    the API threads share (those threads are LLM_DB_THREADS at most, in the order their steps come); any other thread
    does. On SQLite every writer, a database thread's too, takes the one writer lock."""
    settings.API_MONEY_WRITERS = 2
    seen = {}

    def step(name):
        with dbwork.write():  # an admission (a settlement takes no slot on PostgreSQL anyway)
            gate = dbwork.writer_lock if connection.vendor == "sqlite" else dbwork._gate()
            seen[name] = gate._used

    def on_a_db_thread():
        dbwork.run_on_db_thread(step, {"name": "db thread"})

    for target in (on_a_db_thread, lambda: step("api thread")):
        thread = threading.Thread(target=target)
        thread.start()
        thread.join(5)
    if connection.vendor == "sqlite":
        assert seen == {"db thread": 1, "api thread": 1}
    else:
        assert seen == {"db thread": 0, "api thread": 1}
