from datetime import UTC, datetime, timedelta

from django.db.models import Sum
from django.utils import timezone

from accounts.models import ApiKey, Workspace
from billing import ledger_sql
from billing.models import CreditAccount, KeyBudget, RequestRecord, UsageDaily, UsageKeyDaily
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


def usage_get(*, workspace: Workspace, api_key=None) -> dict:
    """SPEC 2.9. `last_30_days` is the current UTC day and the 29 before it. With `api_key` (the caller), `key`
    (its limits, spent and remaining per period) and `by_key` (CONTRACT 4.12)."""
    account = CreditAccount.objects.get(pk=workspace.pk)
    rows = usage_daily(workspace=workspace)
    extra = {}
    if api_key is not None:
        extra = {"key": {"key_id": str(api_key.pk), "name": key_display_name(api_key),
                         "limits": key_budget_view(api_key=api_key)},
                 "by_key": usage_by_key(workspace=workspace)}
    return {
        "credits_balance": format_credits(account.balance_micros),
        "credits_reserved": format_credits(account.reserved_micros),
        "credits_available": format_credits(account.available_micros),
        "last_30_days": [
            {"verb": r["verb"], "calls": r["calls"], "credits_charged": format_credits(int(r["charged"] or 0))} for r in rows
        ],
        **extra,
    }


def key_display_name(api_key) -> str:
    """A key's name, or its OAuth connection's client name."""
    grant = getattr(api_key, "oauth_grant", None) if _has_grant(api_key) else None
    return grant.client_name if grant is not None else api_key.name


def _has_grant(api_key) -> bool:
    try:
        return api_key.oauth_grant is not None
    except ApiKey.oauth_grant.RelatedObjectDoesNotExist:
        return False


def usage_by_key(*, workspace: Workspace, days: int = USAGE_DAYS) -> list[dict]:
    """Every key and OAuth connection of the workspace (revoked ones only if they were used in the period) with
    its calls and credits charged over the last `days` UTC days, most credits first."""
    used = {row["api_key_id"]: row for row in UsageKeyDaily.objects.filter(
        workspace=workspace, day__gte=usage_days_start(days)).values("api_key_id").annotate(
        calls=Sum("calls"), charged=Sum("charged_micros"))}
    out = []
    for key in ApiKey.objects.filter(workspace=workspace).select_related("oauth_grant").order_by("created_at"):
        row = used.get(key.pk)
        if (row is None or not row["calls"]) and key.revoked_at is not None:
            continue
        grant = key.oauth_grant if _has_grant(key) else None
        out.append({"key_id": str(key.pk), "name": grant.client_name if grant is not None else key.name,
                    "kind": "oauth_connection" if grant is not None else "api_key",
                    "calls": int(row["calls"]) if row else 0, "charged_micros": int(row["charged"] or 0) if row else 0})
    out.sort(key=lambda r: -r["charged_micros"])
    return [{**{k: v for k, v in r.items() if k != "charged_micros"},
             "credits_charged": format_credits(r["charged_micros"])} for r in out]


KEEP_LOOKUP = object()  # key_budget_view: read the key's budget row (else the one passed, None for none)


def period_resets_at(period: str, now) -> datetime:
    """When the UTC `period` ("day" | "month") holding `now` ends."""
    day, month = ledger_sql.periods(now)
    if period == "day":
        end = day + timedelta(days=1)
    else:
        end = (month + timedelta(days=32)).replace(day=1)
    return datetime(end.year, end.month, end.day, tzinfo=UTC)


def iso_utc(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def key_budget_view(*, api_key, now=None, budget=KEEP_LOOKUP) -> dict:
    """`GET /v1/usage` `key.limits`: per period, the limit, what is spent (held included), what remains and when
    it resets; null for a period without a limit."""
    now = now or timezone.now()
    if budget is KEEP_LOOKUP:
        budget = KeyBudget.objects.filter(pk=api_key.pk).first()
    day, month = ledger_sql.periods(now)
    out = {"day": None, "month": None}
    if budget is None:
        return out
    for period, limit, current, start, spent in (
            ("day", budget.daily_limit_micros, day, budget.day, budget.day_micros),
            ("month", budget.monthly_limit_micros, month, budget.month, budget.month_micros)):
        if limit is None:
            continue
        spent = spent if start == current else 0
        out[period] = {"limit": format_credits(limit), "spent": format_credits(spent),
                       "remaining": format_credits(max(0, limit - spent)),
                       "resets_at": iso_utc(period_resets_at(period, now))}
    return out


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
