"""SQLite's writer thread (api.dbwork.SQLiteWriter, entered by api.dbwork.run_write): the money path's write steps of
the API threads run on one thread, on its own connection, a queued settlement before queued admissions, each kind in
its order of arrival; a step inside its caller's transaction, or on the LLM door's database thread, runs where it
is; on PostgreSQL every step runs on its caller's thread. Order is observed, never timed."""

import contextvars
import threading
import time

import pytest
from django.db import connection, transaction

from api import dbwork
from billing.models import CreditAccount

sqlite_only = pytest.mark.skipif("connection.vendor != 'sqlite'", reason="the writer thread is SQLite's")


def _until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.001)


def _in_thread(fn):
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


@pytest.fixture
def writer():
    yield dbwork.sqlite_writer
    dbwork.sqlite_writer.stop()


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_api_threads_write_steps_run_on_the_one_writer_thread(writer, workspace):
    """Steps from several threads run on one thread, not theirs, whose connection sees what earlier steps committed;
    the result comes back to the caller, and so does what a step raises."""
    where = []

    def step():
        where.append(threading.current_thread().name)
        CreditAccount.objects.filter(workspace=workspace).update(balance_micros=CreditAccount.objects.get(
            workspace=workspace).balance_micros + 1)
        return CreditAccount.objects.get(workspace=workspace).balance_micros

    start = CreditAccount.objects.get(workspace=workspace).balance_micros
    threads = [_in_thread(lambda: dbwork.run_write(step)) for _ in range(8)]
    for thread, _ in threads:
        thread.join(10)
    assert sorted(box["result"] for _, box in threads) == [start + n for n in range(1, 9)]
    assert set(where) == {"db-writer"}
    assert CreditAccount.objects.get(workspace=workspace).balance_micros == start + 8

    def failing():
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        dbwork.run_write(failing)
    assert dbwork.run_write(lambda: "still running") == "still running"


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_a_step_runs_in_its_callers_context_variables(writer):
    var = contextvars.ContextVar("var", default="unset")
    var.set("the caller's")
    assert dbwork.run_write(var.get) == "the caller's"


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_queued_settlements_run_before_queued_admissions(writer):
    """With the writer busy, two admissions and then two settlements queue: the settlements run first, then the
    admissions, each kind in its order of arrival."""
    busy, order = threading.Event(), []
    first, _ = _in_thread(lambda: dbwork.run_write(lambda: busy.wait(10)))
    _until(lambda: dbwork.writer_lock._used == 1)  # the writer thread is inside the first step
    queued = []
    for name, settlement in (("admission 1", False), ("admission 2", False), ("settlement 1", True),
                             ("settlement 2", True)):
        queued.append(_in_thread(lambda name=name, settlement=settlement: dbwork.run_write(
            lambda: order.append(name), settlement=settlement))[0])
        expected = (max(0, len(queued) - 2), min(2, len(queued)))  # (settlements, admissions) queued
        _until(lambda expected=expected: writer.waiting() == expected)
    busy.set()
    for thread in [first, *queued]:
        thread.join(10)
    assert order == ["settlement 1", "settlement 2", "admission 1", "admission 2"]


@pytest.mark.django_db(transaction=True)
def test_a_step_inside_the_callers_transaction_runs_on_the_callers_thread(writer):
    """It must see what that transaction wrote, and on SQLite the transaction holds the one write lock: handed to
    another connection, the step would wait for it for ever."""
    with transaction.atomic():
        assert dbwork.run_write(threading.current_thread) is threading.current_thread()


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_every_step_runs_on_its_callers_thread(writer):
    here = dbwork.run_write(threading.current_thread)
    if connection.vendor == "sqlite":
        assert here.name == "db-writer"
    else:
        assert here is threading.current_thread()


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_llm_doors_database_thread_writes_where_it_is_under_the_gate(writer):
    seen = {}

    def step():
        seen["thread"] = threading.current_thread()
        seen["gate"] = dbwork.writer_lock._used
        return True

    def on_db_thread():
        return dbwork.run_on_db_thread(lambda: dbwork.run_write(step), {})

    thread, box = _in_thread(on_db_thread)
    thread.join(10)
    assert box["result"] is True and seen["thread"] is thread and seen["gate"] == 1


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_stop_closes_the_writers_connection_and_the_next_step_starts_a_new_thread(writer):
    first = dbwork.run_write(threading.current_thread)
    connections = []
    dbwork.run_write(lambda: (connection.ensure_connection(), connections.append(connection.connection)))
    writer.stop()
    assert not first.is_alive()
    assert connections[0] is not None
    with pytest.raises(Exception, match="closed"):
        connections[0].execute("select 1")
    second = dbwork.run_write(threading.current_thread)
    assert second is not first and second.name == "db-writer" and second.is_alive()
