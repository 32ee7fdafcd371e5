from datetime import timedelta

from django.db.models import Count, Sum
from django.utils import timezone

from accounts.models import Workspace
from billing.models import CreditAccount, RequestRecord
from core import errors
from core.money import format_credits


def usage_get(*, workspace: Workspace) -> dict:
    """SPEC 2.9."""
    account = CreditAccount.objects.get(pk=workspace.pk)
    since = timezone.now() - timedelta(days=30)
    rows = (
        RequestRecord.objects.filter(workspace=workspace, created_at__gte=since)
        .values("verb")
        .annotate(calls=Count("id"), charged=Sum("credits_charged_micros"))
        .order_by("verb")
    )
    return {
        "credits_balance": format_credits(account.balance_micros),
        "credits_reserved": format_credits(account.reserved_micros),
        "credits_available": format_credits(account.available_micros),
        "last_30_days": [
            {"verb": r["verb"], "calls": r["calls"], "credits_charged": format_credits(int(r["charged"] or 0))} for r in rows
        ],
    }


def request_get(*, workspace: Workspace, request_id: str) -> dict:
    """CONTRACT 4.10. Another workspace's id is 404."""
    record = RequestRecord.objects.filter(workspace=workspace, pk=request_id).first()
    if record is None:
        raise errors.NotFound("No such request in this workspace.")
    out = {
        "request_id": record.id,
        "verb": record.verb,
        "status": record.status,
        "credits_charged": format_credits(record.credits_charged_micros),
        "created_at": record.created_at,
        "completed_at": record.completed_at,
    }
    if record.error:
        out["error"] = record.error
    if record.usage is not None:
        out["usage"] = record.usage
    return out
