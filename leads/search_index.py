"""Title contains-matching that uses an index on both databases.

PostgreSQL: `title_key LIKE '%term%'`, served by a pg_trgm GIN index (migration 0002).
SQLite: an FTS5 trigram table `leads_person_title_fts` kept in step with `leads_person.title_key` by triggers
(migration 0002); terms of 3 characters or more are matched through it, shorter ones by LIKE.
"""

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

FTS_TABLE = "leads_person_title_fts"

SQLITE_SQL = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(title_key, content='leads_person', "
    "content_rowid='id', tokenize='trigram')",
    f"""CREATE TRIGGER IF NOT EXISTS leads_person_title_ai AFTER INSERT ON leads_person BEGIN
        INSERT INTO {FTS_TABLE}(rowid, title_key) VALUES (new.id, new.title_key);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS leads_person_title_ad AFTER DELETE ON leads_person BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title_key) VALUES ('delete', old.id, old.title_key);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS leads_person_title_au AFTER UPDATE OF title_key ON leads_person BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title_key) VALUES ('delete', old.id, old.title_key);
        INSERT INTO {FTS_TABLE}(rowid, title_key) VALUES (new.id, new.title_key);
    END""",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS leads_person_title_ai",
    "DROP TRIGGER IF EXISTS leads_person_title_ad",
    "DROP TRIGGER IF EXISTS leads_person_title_au",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
POSTGRES_SQL = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS leads_person_title_trgm ON leads_person USING gin (title_key gin_trgm_ops)",
]
POSTGRES_REVERSE = ["DROP INDEX IF EXISTS leads_person_title_trgm"]


def install(schema_editor, reverse=False):
    vendor = schema_editor.connection.vendor
    statements = {("sqlite", False): SQLITE_SQL, ("sqlite", True): SQLITE_REVERSE,
                  ("postgresql", False): POSTGRES_SQL, ("postgresql", True): POSTGRES_REVERSE}.get((vendor, reverse), [])
    for sql in statements:
        schema_editor.execute(sql)


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def title_condition(terms: list[str]) -> Q:
    """Any term is a substring of the lower-cased title (terms are already lower-cased)."""
    if connection.vendor == "sqlite":
        long_terms = [t for t in terms if len(t) >= 3]
        cond = Q()
        if long_terms:
            match = " OR ".join(_fts_phrase(t) for t in long_terms)
            cond |= Q(id__in=RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", (match,)))
        for t in terms:
            if len(t) < 3:
                cond |= Q(title_key__contains=t)
        return cond
    cond = Q()
    for t in terms:
        cond |= Q(title_key__contains=t)
    return cond


def sqlite_title_index_rebuild() -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cur:
            cur.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
