"""Shared body of import_leads / import_signals."""

import os
import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from leads import importer

MAX_ERRORS_SHOWN = 50
ANALYZE_AFTER = 10_000


def refresh_statistics() -> None:
    """After a big load: fresh planner statistics, and on PostgreSQL a visibility map so that find_leads gets
    index-only scans from its covering indexes."""
    from django.db import connection

    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("VACUUM ANALYZE leads_person")
        elif connection.vendor == "sqlite":
            cur.execute("ANALYZE")


class ImportCommand(BaseCommand):
    kind = ""
    columns: tuple = ()

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV with a header row, or JSON Lines (.jsonl/.ndjson); '-' for stdin")
        parser.add_argument("--format", choices=["csv", "jsonl"], help="default: from the extension, else sniffed")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")

    def load(self, rows, progress):
        raise NotImplementedError

    def handle(self, *args, file, format=None, no_progress=False, **options):
        fmt = format
        if fmt is None and file != "-":
            ext = os.path.splitext(file)[1].lower()
            fmt = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}.get(ext)
        try:
            stream = sys.stdin if file == "-" else open(file, encoding="utf-8-sig", newline="")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot open {file}: {exc}") from exc
        total = None
        with stream:
            # on a terminal only (disable=None: tqdm checks isatty), so logs and pipes get no carriage returns
            progress = tqdm(unit=" rows", file=sys.stderr, disable=True if no_progress else None,
                            desc=f"import_{self.kind}", total=total, mininterval=0.5)
            try:
                report = self.load(importer.read_rows(stream, fmt=fmt), progress)
            finally:
                progress.close()
        for lineno, message in report.errors[:MAX_ERRORS_SHOWN]:
            self.stderr.write(f"line {lineno}: {message}")
        if len(report.errors) > MAX_ERRORS_SHOWN:
            self.stderr.write(f"... and {len(report.errors) - MAX_ERRORS_SHOWN} more bad rows")
        if report.loaded >= ANALYZE_AFTER:
            refresh_statistics()
        self.stdout.write(f"{self.kind}: {report.loaded} rows loaded, {report.rejected} rows rejected")
