"""The SQLite writer lock of the money path (api.dbwork.WriterLock): one writer at a time, and a waiting settlement
goes before every waiting admission, whatever their order of arrival. Order is observed, never timed."""

import threading
import time

from api.dbwork import WriterLock


def _waiting(lock: WriterLock, settlements: int, admissions: int, timeout: float = 5.0) -> None:
    """Until `settlements` settlements and `admissions` admissions are blocked on `lock`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with lock._cond:
            blocked = len(lock._cond._waiters)
            if lock._settlements_waiting == settlements and blocked == settlements + admissions:
                return
        time.sleep(0.001)
    raise AssertionError("the writers never queued")


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
    assert sorted(order[:2]) == ["settle0", "settle1"]
    assert sorted(order[2:]) == ["admit0", "admit1", "admit2"]


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
