from datetime import timedelta

from django.db.models import Sum
from django.utils import timezone

from accounts.models import Workspace
from billing.models import CreditAccount, RequestRecord, UsageDaily
from core import errors
from core.money import format_credits

USAGE_DAYS = 30


def usage_days_start(days: int = USAGE_DAYS):
    """The first UTC day of the last `days` days (today included)."""
    return timezone.now().date() - timedelta(days=days - 1)  # now() is UTC (USE_TZ)


def usage_daily(*, workspace: Workspace, days: int = USAGE_DAYS, by: str = "verb") -> list[dict]:
    """Calls and micro-credits charged over the last `days` UTC days, grouped `by` "verb" or "day": read from
    the per-day rollup (billing.models.UsageDaily), at most days x verbs rows whatever the number of records."""
    return list(
        UsageDaily.objects.filter(workspace=workspace, day__gte=usage_days_start(days), calls__gt=0)
        .values(by).annotate(calls=Sum("calls"), charged=Sum("charged_micros")).order_by(by)
    )


def usage_get(*, workspace: Workspace) -> dict:
    """SPEC 2.9. `last_30_days` is the current UTC day and the 29 before it."""
    account = CreditAccount.objects.get(pk=workspace.pk)
    rows = usage_daily(workspace=workspace)
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
