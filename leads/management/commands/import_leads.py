from leads import importer
from leads.management.commands._importing import ImportCommand


class Command(ImportCommand):
    help = ("Load people and companies from CSV or JSON Lines (columns: " + ", ".join(importer.LEAD_COLUMNS)
            + "). Idempotent upserts; bad rows are reported with their line numbers while good rows load.")
    kind = "leads"

    def load(self, rows, progress):
        return importer.import_leads(rows, progress=progress)
