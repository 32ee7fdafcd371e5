"""SQLite's writing connection (api.dbwork.writer_connection, entered by api.dbwork.run_write): the money path's write
steps of the API threads run, each on its own thread, on one connection that they borrow in turn under the write gate;
a step inside its caller's transaction, or on the LLM door's database thread, runs on its thread's own connection; on
PostgreSQL every step runs on its thread's own connection. (The gate's order, settlements first, is
tests/core/test_writer_lock.py's.)"""

import contextvars
import threading

import pytest
from django.db import connection, connections, transaction

from api import dbwork
from billing.models import CreditAccount

sqlite_only = pytest.mark.skipif("connection.vendor != 'sqlite'", reason="the writing connection is SQLite's")


def _in_thread(fn):
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


@pytest.fixture
def writer():
    yield dbwork.writer_connection
    dbwork.writer_connection.close()


def _step_connection():
    connection.ensure_connection()
    return threading.current_thread(), connection.connection


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_api_threads_write_steps_share_one_connection(writer, workspace):
    """Steps from several threads run on those threads, on one connection that none of them owns, and commit what
    they write; the result comes back to the caller, and so does what a step raises; the caller's own connection is
    its again afterwards."""
    def step():
        account = CreditAccount.objects.get(workspace=workspace)
        CreditAccount.objects.filter(workspace=workspace).update(balance_micros=account.balance_micros + 1)
        return _step_connection()

    own = _step_connection()[1]
    start = CreditAccount.objects.get(workspace=workspace).balance_micros
    threads = [_in_thread(lambda: (threading.current_thread(), dbwork.run_write(step))) for _ in range(8)]
    for thread, _ in threads:
        thread.join(10)
    seen = [box["result"] for _, box in threads]
    assert all(caller is ran for caller, (ran, _) in seen)  # each step ran on its caller's thread
    assert len({id(conn) for _, (_, conn) in seen}) == 1  # on one connection
    assert seen[0][1][1] is not own
    assert CreditAccount.objects.get(workspace=workspace).balance_micros == start + 8  # committed, none lost

    def failing():
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        dbwork.run_write(failing)
    assert _step_connection()[1] is own
    assert dbwork.run_write(lambda: "still writing") == "still writing"
    assert dbwork.writer_lock._used == 0


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_a_step_runs_in_its_callers_context_variables(writer):
    var = contextvars.ContextVar("var", default="unset")
    var.set("the caller's")
    assert dbwork.run_write(var.get) == "the caller's"


@pytest.mark.django_db(transaction=True)
def test_a_step_inside_the_callers_transaction_writes_on_the_callers_connection(writer):
    """It must see what that transaction wrote, and on SQLite the transaction holds the one write lock: on another
    connection the step would wait for it for ever."""
    own = _step_connection()[1]
    with transaction.atomic():
        assert dbwork.run_write(_step_connection)[1] is own


@pytest.mark.django_db(transaction=True)
def test_on_postgresql_every_step_writes_on_its_threads_connection(writer):
    own = _step_connection()[1]
    used = dbwork.run_write(_step_connection)[1]
    assert (used is own) == (connection.vendor != "sqlite")


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_the_llm_doors_database_thread_writes_on_its_own_connection_under_the_gate(writer):
    seen = {}

    def step():
        seen["gate"] = dbwork.writer_lock._used
        return _step_connection()[1]

    def on_db_thread():
        own = _step_connection()[1]
        return own, dbwork.run_on_db_thread(lambda: dbwork.run_write(step), {})

    thread, box = _in_thread(on_db_thread)
    thread.join(10)
    own, used = box["result"]
    assert used is own and seen["gate"] == 1


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_close_closes_the_writing_connection_and_the_next_step_opens_a_new_one(writer):
    first = dbwork.run_write(_step_connection)[1]
    writer.close()
    with pytest.raises(Exception, match="closed"):
        first.execute("select 1")
    second = dbwork.run_write(_step_connection)[1]
    assert second is not first
    second.execute("select 1")
