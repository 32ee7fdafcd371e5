from leads import importer
from leads.management.commands._importing import ImportCommand


class Command(ImportCommand):
    help = ("Load intent signals from CSV or JSON Lines (columns: " + ", ".join(importer.SIGNAL_COLUMNS)
            + "). Idempotent; bad rows are reported with their line numbers while good rows load.")
    kind = "signals"

    def load(self, rows, progress):
        return importer.import_signals(rows, progress=progress)
