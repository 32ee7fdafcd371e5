"""The async doors' database threads (api.dbwork.DbThreads): steps submitted `first` (settlements, a failed or
interrupted call's close, a hold's heartbeat) run before the steps queued without it (new calls' admissions),
whatever their order of arrival; the others keep theirs. Order is observed with gates, never timed."""

import threading

import pytest

from api.dbwork import DbThreads


def test_a_step_submitted_first_runs_before_the_steps_queued_ahead_of_it():
    pool = DbThreads(1, "test-db")
    busy, release = threading.Event(), threading.Event()
    order: list[str] = []
    try:
        blocker = pool.submit(lambda: (busy.set(), release.wait(10)))
        assert busy.wait(10)  # the only thread is taken: everything below queues
        admissions = [pool.submit(order.append, f"admit{i}") for i in range(3)]
        settlement = pool.submit(order.append, "settle", first=True)
        release.set()
        for future in (blocker, *admissions, settlement):
            future.result(10)
        assert order == ["settle", "admit0", "admit1", "admit2"]
    finally:
        release.set()
        pool.shutdown()


def test_results_and_exceptions_reach_the_future_and_a_closed_pool_takes_nothing():
    pool = DbThreads(2, "test-db")
    assert pool.submit(lambda a, b: a + b, 2, 3).result(10) == 5
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0, first=True).result(10)
    pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(print)
