"""Loading the local dataset: CSV (header row) or JSON Lines with the columns of CONTRACT section 6.

Idempotent upserts in bulk (companies by domain, people by fingerprint, signals by a content key); a bad row
is reported with its line number and the good rows still load.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime

from django.db import connection, transaction
from django.utils import timezone

from leads.identity import fingerprint, full_name_of, norm_domain, norm_email, norm_social, norm_text
from leads.models import Company, IntentSignal, Person
from leads.providers.base import EMAIL_STATUSES, SIGNAL_TYPES

LEAD_COLUMNS = ("first_name", "last_name", "full_name", "title", "company_name", "company_domain", "industry",
                "headcount", "city", "region", "country", "social_url", "work_email", "work_email_status",
                "work_email_verified_at", "mobile_phone")
SIGNAL_COLUMNS = ("company_domain", "signal", "summary", "observed_at", "evidence_url")
DOMAIN_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$")
BATCH = 2000


class RowError(ValueError):
    pass


@dataclass
class ImportReport:
    loaded: int = 0
    rejected: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


# --- reading --------------------------------------------------------------------------------------
def read_rows(stream: io.TextIOBase, *, fmt: str | None = None) -> Iterator[tuple[int, dict | None, str | None]]:
    """Yield (line number, row dict or None, parse error or None). `fmt` is "csv", "jsonl" or None (sniff)."""
    lines: Iterable[str] = stream
    if fmt is None:
        first = stream.readline()
        fmt = "jsonl" if first.lstrip().startswith("{") else "csv"
        lines = itertools.chain([first], stream)
    if fmt == "jsonl":
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                yield lineno, None, f"not valid JSON ({exc.msg})"
                continue
            if not isinstance(obj, dict):
                yield lineno, None, "not a JSON object"
                continue
            yield lineno, obj, None
    else:
        reader = csv.DictReader(lines)
        for row in reader:
            if None in row:
                yield reader.line_num, None, "more values than header columns"
                continue
            yield reader.line_num, row, None


def _s(row: dict, key: str) -> str:
    value = row.get(key)
    if value.__class__ is str:  # the common case (every CSV value), checked first: the import's hot loop
        return value.strip()
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowError(f"{key}: must be a string")
    return str(value).strip()


def _date(row: dict, key: str, *, required: bool = False) -> date | None:
    raw = _s(row, key)
    if len(raw) == 10 and raw[4] == "-":
        try:
            return date.fromisoformat(raw)
        except ValueError:
            pass
    if not raw:
        if required:
            raise RowError(f"{key}: required")
        return None
    try:
        return date.fromisoformat(raw[:10]) if len(raw) == 10 else datetime.fromisoformat(raw.replace("Z", "+00:00")).date()
    except ValueError as exc:
        raise RowError(f"{key}: not an ISO 8601 date ({raw!r})") from exc


# --- leads ----------------------------------------------------------------------------------------
def clean_lead(row: dict) -> dict:
    first, last = _s(row, "first_name"), _s(row, "last_name")
    full = full_name_of(_s(row, "full_name"), first, last)
    if not full:
        raise RowError("full_name (or first_name and last_name): required")
    if not first and not last and " " in full:
        first, last = full.split(" ", 1)
    domain_raw = _s(row, "company_domain")
    domain = norm_domain(domain_raw)
    if domain_raw and not DOMAIN_RE.match(domain):
        raise RowError(f"company_domain: not a domain name ({domain_raw!r})")
    social = _s(row, "social_url")
    if not domain and not social:
        raise RowError("company_domain or social_url: one is required to identify the person")
    headcount_raw = row.get("headcount")
    headcount = None
    if headcount_raw not in (None, ""):
        try:
            if isinstance(headcount_raw, bool) or (isinstance(headcount_raw, float) and not headcount_raw.is_integer()):
                raise ValueError
            headcount = int(str(headcount_raw).strip()) if not isinstance(headcount_raw, float) else int(headcount_raw)
        except ValueError as exc:
            raise RowError(f"headcount: not an integer ({headcount_raw!r})") from exc
        if headcount < 0:
            raise RowError("headcount: must not be negative")
    email = _s(row, "work_email")
    if email and (email.count("@") != 1 or "." not in email.split("@")[1] or " " in email):
        raise RowError(f"work_email: not an email address ({email!r})")
    status = _s(row, "work_email_status").lower()
    if status and status not in EMAIL_STATUSES:
        raise RowError(f"work_email_status: one of {', '.join(EMAIL_STATUSES)} ({status!r})")
    if email and not status:
        status = "unknown"
    verified = _date(row, "work_email_verified_at")
    data = {
        "first_name": first[:150], "last_name": last[:150], "full_name": full[:300], "title": _s(row, "title")[:300],
        "company_name": _s(row, "company_name")[:300], "company_domain": domain,
        "city": _s(row, "city")[:200], "region": _s(row, "region")[:200], "country": _s(row, "country")[:200],
        "social_url": social[:500], "work_email": email[:320], "work_email_status": status if email else "",
        "work_email_verified_at": verified if email else None, "mobile_phone": _s(row, "mobile_phone")[:40],
        "industry": _s(row, "industry")[:200], "headcount": headcount,
    }
    data["fingerprint"] = fingerprint(social_url=social, full_name=full, company_domain=domain)
    return data


COMPANY_COLUMNS = ("domain", "name", "industry", "headcount", "city", "region", "country", "updated_at")
PERSON_COLUMNS = ("fingerprint", "company_id", "first_name", "last_name", "full_name", "title", "company_name",
                  "company_domain", "city", "region", "country", "social_url", "work_email", "work_email_status",
                  "work_email_verified_at", "mobile_phone", "title_key", "industry_key", "city_key", "region_key",
                  "country_key", "headcount", "name_key", "social_key", "email_key", "updated_at")
# The staging table: every good row of the file in file order (`seq`), person columns plus the company's industry.
STAGE_COLUMNS = ("seq",) + tuple(c for c in PERSON_COLUMNS if c not in ("company_id", "updated_at")) + ("industry",)
STAGE = "leads_import_stage"
# A load at least this big, and at least a quarter of the people already there, rebuilds the person table's search
# indexes once at the end instead of updating them row by row (CREATE INDEX sorts once: about 4x faster at 1M rows).
BULK_REBUILD_MIN = 50_000


def _stage_row(seq: int, d: dict) -> tuple:
    """The staging row of one cleaned lead: its search keys computed once, here."""
    return (seq, d["fingerprint"], d["first_name"], d["last_name"], d["full_name"], d["title"], d["company_name"],
            d["company_domain"], d["city"], d["region"], d["country"], d["social_url"], d["work_email"],
            d["work_email_status"], d["work_email_verified_at"], d["mobile_phone"], norm_text(d["title"]),
            norm_text(d["industry"]), norm_text(d["city"]), norm_text(d["region"]), norm_text(d["country"]),
            d["headcount"], norm_text(d["full_name"]), norm_social(d["social_url"]), norm_email(d["work_email"]),
            d["industry"])


class _Stage:
    """The whole file's good rows in a temporary table, then merged into companies and people with a few set-based
    statements (last row of a person or a company wins; new people get ids in the order of their first row, which
    is the order find_leads returns). PostgreSQL receives the rows through one COPY, streamed while the file is
    still being read and checked; SQLite through executemany in large batches (its fastest bulk path)."""

    FLUSH = 20_000

    def __init__(self, cur):
        self.cur = cur
        self.pg = connection.vendor == "postgresql"
        self.rows = 0
        self._copy = None
        self._copy_cm = None
        self._pending: list[tuple] = []
        types = {"seq": "bigint", "headcount": "integer", "work_email_verified_at": "date"}
        cols = ", ".join(f"{c} {types.get(c, 'text')}" for c in STAGE_COLUMNS)
        self.temp = "pg_temp" if self.pg else "temp"
        cur.execute(f"DROP TABLE IF EXISTS {self.temp}.{STAGE}")  # one left by an earlier import in this transaction
        if self.pg:
            cur.execute(f"CREATE TEMP TABLE {STAGE} ({cols}) ON COMMIT DROP")
            self._copy_cm = cur.cursor.copy(f"COPY {STAGE} ({', '.join(STAGE_COLUMNS)}) FROM STDIN")
            self._copy = self._copy_cm.__enter__()
        else:
            cur.execute(f"CREATE TEMP TABLE {STAGE} ({cols})")

    def add(self, d: dict) -> None:
        self.rows += 1
        row = _stage_row(self.rows, d)
        if self._copy is not None:
            self._copy.write_row(row)
        else:
            self._pending.append(row)
            if len(self._pending) >= self.FLUSH:
                self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.cur.executemany(f"INSERT INTO {STAGE} VALUES ({', '.join(['%s'] * len(STAGE_COLUMNS))})",
                                 self._pending)
            self._pending = []

    def close(self) -> None:
        if self._copy_cm is not None:
            cm, self._copy_cm, self._copy = self._copy_cm, None, None
            cm.__exit__(None, None, None)
        self._flush()

    def abort(self) -> None:
        if self._copy_cm is not None:
            cm, self._copy_cm, self._copy = self._copy_cm, None, None
            try:
                cm.__exit__(RuntimeError, RuntimeError("import aborted"), None)
            except Exception:  # noqa: BLE001 - the transaction is rolled back anyway
                pass

    def merge(self) -> None:
        cur, now = self.cur, timezone.now()
        if not self.rows:
            cur.execute(f"DROP TABLE {self.temp}.{STAGE}")
            return
        company, person = Company._meta.db_table, Person._meta.db_table
        if self.pg:  # the merge sorts the staged rows (last row wins); in memory rather than in temporary files
            cur.execute("SET LOCAL work_mem = '64MB'")
        cur.execute(f"ANALYZE {STAGE}")
        cur.execute(
            f"INSERT INTO {company} ({', '.join(COMPANY_COLUMNS)}) "
            f"SELECT company_domain, company_name, industry, headcount, city, region, country, %s FROM ("
            f"  SELECT s.*, row_number() OVER (PARTITION BY company_domain ORDER BY seq DESC) AS rn"
            f"  FROM {STAGE} s WHERE company_domain <> '') x "
            f"WHERE rn = 1 ORDER BY company_domain "
            f"ON CONFLICT (domain) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in COMPANY_COLUMNS if c != "domain")
            + self._changed(company, [c for c in COMPANY_COLUMNS if c not in ("domain", "updated_at")]),
            [now],
        )
        cur.execute(f"INSERT INTO leads_leadtitle (key) SELECT DISTINCT title_key FROM {STAGE} WHERE title_key <> '' "
                    f"ON CONFLICT (key) DO NOTHING")
        for level in ("city", "region", "country"):
            cur.execute(f"INSERT INTO leads_leadplace (key, level) SELECT DISTINCT {level}_key, '{level}' FROM {STAGE} "
                        f"WHERE {level}_key <> '' ON CONFLICT (key, level) DO NOTHING")
        rebuild = self._rebuild_indexes()
        empty = rebuild and not Person.objects.exists()
        restore = self._drop_indexes(constraints=empty) if rebuild else []
        person_cols = [c for c in PERSON_COLUMNS if c not in ("company_id", "updated_at")]
        cur.execute(
            f"INSERT INTO {person} ({', '.join(person_cols)}, company_id, updated_at) "
            f"SELECT {', '.join('x.' + c for c in person_cols)}, c.id, %s FROM ("
            f"  SELECT s.*, row_number() OVER (PARTITION BY fingerprint ORDER BY seq DESC) AS rn,"
            f"         min(seq) OVER (PARTITION BY fingerprint) AS first_seq FROM {STAGE} s) x "
            f"LEFT JOIN {company} c ON c.domain = x.company_domain AND x.company_domain <> '' "
            f"WHERE x.rn = 1 ORDER BY x.first_seq "
            + ("" if empty else "ON CONFLICT (fingerprint) DO UPDATE SET "
               + ", ".join(f"{c} = excluded.{c}" for c in PERSON_COLUMNS if c != "fingerprint")
               + self._changed(person, [c for c in PERSON_COLUMNS if c not in ("fingerprint", "updated_at")])),
            [now],
        )
        if restore:
            if self.pg:
                cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
            for sql in restore:
                cur.execute(sql)
        cur.execute(f"DROP TABLE {self.temp}.{STAGE}")

    def _changed(self, table: str, columns: list[str]) -> str:
        """The upsert's guard: a row whose values are all unchanged is left alone (no new row version, no index
        entries, `updated_at` kept), so re-importing the same file costs reads, not writes."""
        op = "IS DISTINCT FROM" if self.pg else "IS NOT"
        return " WHERE " + " OR ".join(f"{table}.{c} {op} excluded.{c}" for c in columns)

    def _rebuild_indexes(self) -> bool:
        """Whether to rebuild the people table's indexes after the merge: when the load adds at least
        BULK_REBUILD_MIN new people and at least a quarter of those already there (updates of existing people
        keep the indexes: unchanged rows write nothing, see `_changed`)."""
        if self.rows < BULK_REBUILD_MIN:
            return False
        table = Person._meta.db_table
        if not Person.objects.exists():
            return True
        self.cur.execute(f"SELECT count(*) FROM {table}")
        existing = self.cur.fetchone()[0]
        self.cur.execute(f"SELECT count(DISTINCT fingerprint) FROM {STAGE} s WHERE NOT EXISTS "
                         f"(SELECT 1 FROM {table} p WHERE p.fingerprint = s.fingerprint)")
        new = self.cur.fetchone()[0]
        return new >= BULK_REBUILD_MIN and new * 4 >= existing

    def _drop_indexes(self, *, constraints: bool) -> list[str]:
        """Drop the person table's plain indexes (and on PostgreSQL its foreign key, checked again by one join when
        it is re-added instead of once per row; with `constraints`, on an empty table, its unique fingerprint too:
        the staged rows are already unique); returns the statements that put them back, in order."""
        table, cur = Person._meta.db_table, self.cur
        if self.pg:
            cur.execute("SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                        "WHERE x.indrelid = %s::regclass AND NOT x.indisunique AND NOT x.indisprimary", [table])
            indexes = cur.fetchall()
            cur.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = %s::regclass "
                        "AND contype IN (%s, %s) ORDER BY contype DESC", [table, "f", "u" if constraints else "f"])
            found = cur.fetchall()
            cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks may remain when the table is altered
            for name, _ in found:
                cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
            restore = [f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}' for name, definition in found]
            restore.sort(key=lambda sql: "FOREIGN KEY" in sql)  # the unique key first, the foreign key last
        else:
            cur.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s "
                        "AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%%'", [table])
            indexes = cur.fetchall()
            restore = []
        for name, _ in indexes:
            cur.execute(f'DROP INDEX "{name}"')
        return [sql for _, sql in indexes] + restore


def _checked(rows: Iterable[tuple[int, dict | None, str | None]], clean, report: ImportReport,
             progress=None) -> Iterator[dict]:
    """The cleaned good rows of (line number, row, parse error); a bad row is counted and reported in `report`
    with its line number, and the good rows go on."""
    for lineno, row, parse_error in rows:
        if progress is not None:
            progress.update(1)
        try:
            if parse_error:
                raise RowError(parse_error)
            cleaned = clean(row)
        except RowError as exc:
            report.rejected += 1
            report.errors.append((lineno, str(exc)))
            continue
        report.loaded += 1
        yield cleaned


def _import(rows: Iterable[tuple[int, dict | None, str | None]], clean, flush, progress=None) -> ImportReport:
    """Check every row and flush the good ones in batches."""
    report = ImportReport()
    batch: list[dict] = []
    for cleaned in _checked(rows, clean, report, progress):
        batch.append(cleaned)
        if len(batch) >= BATCH:
            flush(batch)
            batch = []
    flush(batch)
    return report


def import_leads(rows: Iterable[tuple[int, dict | None, str | None]], *, progress=None) -> ImportReport:
    """Check every row (bad ones are reported by line number, the good ones still load), stage the good ones and
    merge them in one transaction: an import lands whole or not at all."""
    report = ImportReport()
    with transaction.atomic(), connection.cursor() as cur:
        stage = _Stage(cur)
        try:
            for cleaned in _checked(rows, clean_lead, report, progress):
                stage.add(cleaned)
        except BaseException:
            stage.abort()
            raise
        stage.close()
        stage.merge()
    return report


# --- signals --------------------------------------------------------------------------------------
def clean_signal(row: dict) -> dict:
    domain_raw = _s(row, "company_domain")
    domain = norm_domain(domain_raw)
    if not DOMAIN_RE.match(domain):
        raise RowError(f"company_domain: not a domain name ({domain_raw!r})")
    signal = _s(row, "signal").lower()
    if signal not in SIGNAL_TYPES:
        raise RowError(f"signal: one of {', '.join(SIGNAL_TYPES)} ({signal!r})")
    observed = _date(row, "observed_at", required=True)
    summary, evidence = _s(row, "summary"), _s(row, "evidence_url")[:1000]
    key = hashlib.sha256("\x1f".join([domain, signal, observed.isoformat(), summary, evidence]).encode()).hexdigest()
    return {"company_domain": domain, "signal": signal, "observed_at": observed, "summary": summary,
            "evidence_url": evidence, "dedupe_key": key}


def _flush_signals(batch: list[dict]) -> None:
    if batch:
        unique = {d["dedupe_key"]: d for d in batch}
        IntentSignal.objects.bulk_create([IntentSignal(**d) for d in unique.values()], ignore_conflicts=True)


def import_signals(rows: Iterable[tuple[int, dict | None, str | None]], *, progress=None) -> ImportReport:
    return _import(rows, clean_signal, _flush_signals, progress)
