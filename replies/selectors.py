"""Reply reads. Every selector takes the workspace first: there is no unscoped path."""

from __future__ import annotations

from datetime import UTC, datetime

from django.db.models import QuerySet

from replies.models import Reply


def replies_list(*, workspace, campaign=None, since: datetime | None = None, before: datetime | None = None,
                 limit: int = 50) -> list[Reply]:
    """This workspace's replies, newest first; `since` and `before` are exclusive bounds on received_at."""
    qs: QuerySet[Reply] = Reply.objects.filter(workspace=workspace).select_related("campaign_lead")
    if campaign is not None:
        qs = qs.filter(campaign=campaign)
    if since is not None:
        qs = qs.filter(received_at__gt=since)
    if before is not None:
        qs = qs.filter(received_at__lt=before)
    from django.db.models import Prefetch

    from replies.models import ReplyCorrection

    latest = Prefetch("corrections", queryset=ReplyCorrection.objects.order_by("-corrected_at", "-pk"),
                      to_attr="latest_fix")
    return list(qs.order_by("-received_at", "-id").prefetch_related(latest)[:limit])


def timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with microseconds, so a client's `since` = the newest `received_at` it has read skips
    exactly what it has read."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def reply_record(reply: Reply) -> dict:
    """A Reply of SPEC 2.8 (plus `lead_email`: the campaign lead it was attributed to, useful for bounces)."""
    return {
        "reply_id": reply.pk,
        "campaign_id": str(reply.campaign_id) if reply.campaign_id else None,
        "from_email": reply.from_email,
        "subject": reply.subject,
        "snippet": reply.snippet,
        "classification": reply.classification,
        "language": reply.language,
        "received_at": timestamp(reply.received_at),
        "lead_email": reply.campaign_lead.email if reply.campaign_lead_id else None,
        "correction": _correction(reply),
    }


def _correction(reply: Reply) -> dict | None:
    """The latest human correction of the label (console), or None: {"from", "to", "by", "at"}."""
    from replies.corrections import correction_record

    fixes = getattr(reply, "latest_fix", None)
    if fixes is None:
        fixes = list(reply.corrections.order_by("-corrected_at", "-pk")[:1])
    return correction_record(fixes[0] if fixes else None)
