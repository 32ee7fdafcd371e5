from django.core.management.base import BaseCommand, CommandError

from accounts.models import Workspace
from billing.services import credits_grant
from core.money import InvalidCreditString, format_credits, parse_credits


class Command(BaseCommand):
    help = "Grant credits to a workspace (a ledger entry of kind grant)."

    def add_arguments(self, parser):
        parser.add_argument("workspace_id")
        parser.add_argument("amount", help="credit string, e.g. 100 or 2.5")
        parser.add_argument("--memo", default="")

    def handle(self, *args, **opts):
        try:
            amount = parse_credits(opts["amount"])
        except InvalidCreditString as exc:
            raise CommandError(f"amount {exc}") from exc
        if amount <= 0:
            raise CommandError("amount must be positive")
        workspace = Workspace.objects.filter(pk=opts["workspace_id"]).first() if _is_uuid(opts["workspace_id"]) else None
        if workspace is None:
            raise CommandError(f"no workspace {opts['workspace_id']}")
        entry = credits_grant(workspace=workspace, amount=amount, memo=opts["memo"] or "grant_credits")
        self.stdout.write(f"granted {format_credits(amount)}; balance {format_credits(entry.balance_after_micros)}")


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
        return True
    except ValueError:
        return False
