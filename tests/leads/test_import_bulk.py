"""import_leads at scale (issue 20): the good rows are staged (PostgreSQL COPY, SQLite executemany) and merged in one
transaction; a load that is big relative to the table rebuilds the person table's indexes (and on PostgreSQL its
foreign key, and its unique key when the table was empty) once at the end. Whatever path it takes, the table ends
with exactly the same indexes and constraints, the last row of a person wins, and new people keep file order."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from leads import importer
from leads.models import Company, Person


def _schema():
    """The person table's indexes and constraints, as the database describes them."""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'leads_person' ORDER BY 1")
            indexes = cur.fetchall()
            cur.execute("SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
                        "WHERE conrelid = 'leads_person'::regclass ORDER BY 1")
            return indexes, cur.fetchall()
        cur.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'leads_person' AND type = 'index' ORDER BY 1")
        indexes = cur.fetchall()
        cur.execute("SELECT sql FROM sqlite_master WHERE name = 'leads_person'")
        return indexes, cur.fetchall()


def _rows(n, *, start=0, title="VP Sales"):
    return [{"first_name": f"P{i}", "last_name": "Test", "title": title, "company_name": f"Co {i % 7}",
             "company_domain": f"co{i % 7}.example", "industry": "Software", "headcount": str(10 + i % 3),
             "city": "Berlin", "country": "Germany"} for i in range(start, start + n)]


def _load(rows):
    return importer.import_leads((i, r, None) for i, r in enumerate(rows, start=1))


@pytest.mark.parametrize("bulk_min", [1, 10**9], ids=["rebuild", "incremental"])
def test_both_paths_leave_the_same_table_and_the_same_rows(db, monkeypatch, bulk_min):
    monkeypatch.setattr(importer, "BULK_REBUILD_MIN", bulk_min)
    before = _schema()
    rows = _rows(30)
    rows.insert(10, {**rows[3], "title": "CRO"})  # P3 again, later in the file: its last row wins, its place stays
    report = _load(rows)
    assert (report.loaded, report.rejected) == (31, 0)
    assert _schema() == before
    people = list(Person.objects.order_by("id").values_list("first_name", "title", "title_key", "company__domain"))
    assert [p[0] for p in people] == [f"P{i}" for i in range(30)]  # file order of first appearance
    assert people[3] == ("P3", "CRO", "cro", "co3.example")
    assert Company.objects.count() == 7
    # again on a full table (the rebuild path keeps the unique key: it upserts), with changes: updated in place
    ids = dict(Person.objects.values_list("first_name", "id"))
    _load(_rows(30, title="Head of Growth") + _rows(5, start=30))
    assert _schema() == before
    assert Person.objects.count() == 35 and set(Person.objects.values_list("title", flat=True)) == {"Head of Growth",
                                                                                                     "VP Sales"}
    assert all(Person.objects.get(first_name=name).id == pk for name, pk in ids.items())
    # the dictionaries the search uses know the new title
    from leads.models import LeadTitle
    assert LeadTitle.objects.filter(key="head of growth").exists()


def test_search_finds_what_a_bulk_import_loaded(db, api, monkeypatch):
    monkeypatch.setattr(importer, "BULK_REBUILD_MIN", 1)
    _load(_rows(12))
    resp = api.post("/v1/find_leads", {"audience": "vp sales in germany", "titles": ["vp sales"],
                                        "locations": ["germany"], "limit": 5})
    assert resp.status_code == 200, resp.content
    assert resp.json()["result"]["total_found"] == 12


def test_an_import_that_fails_midway_leaves_nothing(db):
    def rows():
        yield from ((i, r, None) for i, r in enumerate(_rows(5), start=1))
        raise OSError("the file went away")

    with pytest.raises(OSError):
        importer.import_leads(rows())
    assert Person.objects.count() == 0 and Company.objects.count() == 0
    _load(_rows(2))  # and the next import works (no staging table left behind)
    assert Person.objects.count() == 2


def test_progress_bar_only_on_a_terminal(db, tmp_path, monkeypatch):
    import sys

    f = tmp_path / "leads.csv"
    f.write_text(",".join(importer.LEAD_COLUMNS) + "\nAda,Lovelace,,VP Sales,Acme,acme.com,,,,,,,,,,\n")

    class Tty(io.StringIO):
        def isatty(self):
            return True

    for stream, shown in ((io.StringIO(), False), (Tty(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        out = io.StringIO()
        call_command("import_leads", str(f), stdout=out)
        assert "1 rows loaded" in out.getvalue()
        assert ("import_leads" in stream.getvalue()) is shown, stream.getvalue()


def test_reimporting_unchanged_rows_writes_nothing(db):
    import time_machine
    from django.utils import timezone

    _load(_rows(4))
    first = dict(Person.objects.values_list("first_name", "updated_at"))
    with time_machine.travel(timezone.now() + timezone.timedelta(hours=1)):
        rows = _rows(4)
        rows[2]["title"] = "Chief Revenue Officer"
        _load(rows)
    after = dict(Person.objects.values_list("first_name", "updated_at"))
    assert [name for name in first if after[name] != first[name]] == ["P2"]
    assert Person.objects.get(first_name="P2").title_key == "chief revenue officer"
