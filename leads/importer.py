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
from leads.search_index import places_record, titles_record

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
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RowError(f"{key}: must be a string")
    return str(value).strip()


def _date(row: dict, key: str, *, required: bool = False) -> date | None:
    raw = _s(row, key)
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


def _upsert_sql(table: str, columns: tuple[str, ...], key: str) -> str:
    """One INSERT ... ON CONFLICT DO UPDATE statement (SQLite 3.24+ and PostgreSQL), run with executemany: Django's
    bulk_create compiles SQL per batch of ~40 rows on SQLite, which cost more than the database work."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != key)
    placeholders = ", ".join(["%s"] * len(columns))
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders}) "
            f"ON CONFLICT ({key}) DO UPDATE SET {updates}")


def _flush_leads(batch: list[dict]) -> None:
    if not batch:
        return
    now = timezone.now()
    companies: dict[str, dict] = {}
    for d in batch:
        if d["company_domain"]:
            companies[d["company_domain"]] = d
    with transaction.atomic(), connection.cursor() as cur:
        ids: dict[str, int] = {}
        if companies:
            cur.executemany(_upsert_sql(Company._meta.db_table, COMPANY_COLUMNS, "domain"), [
                (dom, d["company_name"], d["industry"], d["headcount"], d["city"], d["region"], d["country"], now)
                for dom, d in sorted(companies.items())
            ])
            ids = dict(Company.objects.filter(domain__in=list(companies)).values_list("domain", "id"))
        people: dict[str, tuple] = {}
        titles, places = set(), set()
        for d in batch:  # the last row of a person wins
            keys = {"title_key": norm_text(d["title"]), "city_key": norm_text(d["city"]),
                    "region_key": norm_text(d["region"]), "country_key": norm_text(d["country"])}
            titles.add(keys["title_key"])
            places.update((keys[f"{lvl}_key"], lvl) for lvl in ("city", "region", "country"))
            values = {**d, **keys, "company_id": ids.get(d["company_domain"]), "industry_key": norm_text(d["industry"]),
                      "name_key": norm_text(d["full_name"]), "social_key": norm_social(d["social_url"]),
                      "email_key": norm_email(d["work_email"]), "updated_at": now}
            people[d["fingerprint"]] = tuple(values[c] for c in PERSON_COLUMNS)
        titles_record(titles)
        places_record(places)
        cur.executemany(_upsert_sql(Person._meta.db_table, PERSON_COLUMNS, "fingerprint"),
                        list(people.values()))  # file order: it is the order find_leads returns


def _import(rows: Iterable[tuple[int, dict | None, str | None]], clean, flush, progress=None) -> ImportReport:
    """Clean each (line number, row, parse error) and flush in batches; a bad row is reported with its line
    number and the good rows still load."""
    report = ImportReport()
    batch: list[dict] = []
    for lineno, row, parse_error in rows:
        if progress is not None:
            progress.update(1)
        try:
            if parse_error:
                raise RowError(parse_error)
            batch.append(clean(row))
        except RowError as exc:
            report.rejected += 1
            report.errors.append((lineno, str(exc)))
            continue
        report.loaded += 1
        if len(batch) >= BATCH:
            flush(batch)
            batch = []
    flush(batch)
    return report


def import_leads(rows: Iterable[tuple[int, dict | None, str | None]], *, progress=None) -> ImportReport:
    return _import(rows, clean_lead, _flush_leads, progress)


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
