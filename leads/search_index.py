"""Title contains-matching that uses indexes on both databases.

Titles repeat a lot (a million people share a few thousand titles), so every distinct lower-cased title is kept
in `leads_leadtitle` (written by the importer). A title fragment is matched against that small table through a
trigram index (PostgreSQL: pg_trgm GIN; SQLite: an FTS5 trigram table kept in step by a trigger), and people are
then filtered by `title_key IN (...)` on the ordinary (title_key, id) index.

Migration 0002 put the trigram index on the people table itself; 0003 moved it to the dictionary (the per-row
FTS trigger made imports slow and phrase matching over a million rows was too slow on SQLite).
"""

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

OLD_FTS_TABLE = "leads_person_title_fts"
FTS_TABLE = "leads_leadtitle_fts"
MAX_TITLES = 20_000  # a fragment matching more distinct titles than this is matched with LIKE on people directly

SQLITE_SQL = [
    "DROP TRIGGER IF EXISTS leads_person_title_ai",
    "DROP TRIGGER IF EXISTS leads_person_title_ad",
    "DROP TRIGGER IF EXISTS leads_person_title_au",
    f"DROP TABLE IF EXISTS {OLD_FTS_TABLE}",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(key, content='leads_leadtitle', "
    "content_rowid='id', tokenize='trigram')",
    f"""CREATE TRIGGER IF NOT EXISTS leads_leadtitle_ai AFTER INSERT ON leads_leadtitle BEGIN
        INSERT INTO {FTS_TABLE}(rowid, key) VALUES (new.id, new.key);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS leads_leadtitle_ad AFTER DELETE ON leads_leadtitle BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, key) VALUES ('delete', old.id, old.key);
    END""",
    "INSERT OR IGNORE INTO leads_leadtitle (key) SELECT DISTINCT title_key FROM leads_person",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS leads_leadtitle_ai",
    "DROP TRIGGER IF EXISTS leads_leadtitle_ad",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
POSTGRES_SQL = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "DROP INDEX IF EXISTS leads_person_title_trgm",
    "CREATE INDEX IF NOT EXISTS leads_leadtitle_key_trgm ON leads_leadtitle USING gin (key gin_trgm_ops)",
    "INSERT INTO leads_leadtitle (key) SELECT DISTINCT title_key FROM leads_person ON CONFLICT (key) DO NOTHING",
]
POSTGRES_REVERSE = ["DROP INDEX IF EXISTS leads_leadtitle_key_trgm"]

def install(schema_editor, reverse=False, version=3):
    vendor = schema_editor.connection.vendor
    if version == 2:
        return  # superseded by 0003, which also removes what an earlier 0002 created
    statements = {("sqlite", False): SQLITE_SQL, ("sqlite", True): SQLITE_REVERSE,
                  ("postgresql", False): POSTGRES_SQL, ("postgresql", True): POSTGRES_REVERSE}.get((vendor, reverse), [])
    for sql in statements:
        schema_editor.execute(sql)


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def matching_titles(terms: list[str]) -> list[str] | None:
    """Distinct title keys containing any term, or None when there are too many to list."""
    from leads.models import LeadTitle

    if connection.vendor == "sqlite":
        long_terms = [t for t in terms if len(t) >= 3]
        cond = Q(pk__in=[])
        if long_terms:
            match = " OR ".join(_fts_phrase(t) for t in long_terms)
            cond |= Q(id__in=RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", (match,)))
        for t in terms:
            if len(t) < 3:
                cond |= Q(key__contains=t)
    else:
        cond = Q(pk__in=[])
        for t in terms:
            cond |= Q(key__contains=t)
    keys = list(LeadTitle.objects.filter(cond).values_list("key", flat=True)[: MAX_TITLES + 1])
    return None if len(keys) > MAX_TITLES else keys


def title_condition(terms: list[str]) -> Q:
    """Any term is a substring of the lower-cased title (terms are already lower-cased)."""
    keys = matching_titles(terms)
    if keys is not None:
        return Q(title_key__in=keys)
    cond = Q()
    for t in terms:
        cond |= Q(title_key__contains=t)
    return cond


def titles_rebuild() -> None:
    """Fill the dictionary from the people table (after loading people by other means than the importer)."""
    with connection.cursor() as cur:
        if connection.vendor == "sqlite":
            cur.execute("INSERT OR IGNORE INTO leads_leadtitle (key) SELECT DISTINCT title_key FROM leads_person")
        else:
            cur.execute("INSERT INTO leads_leadtitle (key) SELECT DISTINCT title_key FROM leads_person "
                        "ON CONFLICT (key) DO NOTHING")


LEVELS = ("city", "region", "country")


def location_condition(values: list[str]) -> Q:
    """Any value equals the lead's city, region or country (values are lower-cased). The place dictionary says
    which levels hold each value, so the condition names only those columns (usually one indexed equality)."""
    from leads.models import LeadPlace

    by_level: dict[str, list[str]] = {}
    for key, level in LeadPlace.objects.filter(key__in=values).values_list("key", "level"):
        by_level.setdefault(level, []).append(key)
    cond = Q(pk__in=[])
    for level in LEVELS:
        if level in by_level:
            cond |= Q(**{f"{level}_key__in": sorted(by_level[level])})
    return cond


def places_record(rows) -> None:
    """Add (key, level) pairs to the place dictionary (the importer calls this for every batch)."""
    from leads.models import LeadPlace

    pairs = {(k, lvl) for k, lvl in rows if k}
    if pairs:
        LeadPlace.objects.bulk_create([LeadPlace(key=k, level=lvl) for k, lvl in pairs], ignore_conflicts=True)


def places_rebuild() -> None:
    """Fill the place dictionary from the people table."""
    conflict = "" if connection.vendor == "sqlite" else " ON CONFLICT (key, level) DO NOTHING"
    verb = "INSERT OR IGNORE" if connection.vendor == "sqlite" else "INSERT"
    with connection.cursor() as cur:
        for level in LEVELS:
            cur.execute(f"{verb} INTO leads_leadplace (key, level) SELECT DISTINCT {level}_key, '{level}' "
                        f"FROM leads_person WHERE {level}_key <> ''{conflict}")


def titles_record(keys) -> None:
    """Add title keys to the dictionary (the importer calls this for every batch)."""
    from leads.models import LeadTitle

    keys = {k for k in keys if k}
    if keys:
        LeadTitle.objects.bulk_create([LeadTitle(key=k) for k in keys], ignore_conflicts=True)
