"""Reads of the verification store (results are world facts shared by every workspace; see models.py)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from core.emails import normalize_address as email_key  # noqa: F401 - the shared address rule
from leads.verification.models import DeliveryEvidence, DomainProbe, Status, Verification


def latest_verification(*, email: str, max_age: timedelta, conclusive_only: bool = True) -> Verification | None:
    """The newest stored verification of `email` not older than `max_age` (enrich uses 30 days), or None.

    With `conclusive_only` (the default) results with status `unknown` are skipped: an earlier conclusive answer
    is worth more than a later timeout."""
    qs = Verification.objects.filter(email=email_key(email), checked_at__gte=timezone.now() - max_age)
    if conclusive_only:
        qs = qs.exclude(status=Status.UNKNOWN)
    return qs.order_by("-checked_at", "-id").first()


def delivery_evidence_exists(*, email: str) -> bool:
    """An address counts as delivered-to when it replied (or similar evidence) within the evidence window."""
    since = timezone.now() - timedelta(days=settings.VERIFIER_EVIDENCE_MAX_AGE_DAYS)
    return DeliveryEvidence.objects.filter(email=email_key(email), observed_at__gte=since).exists()


def domain_catch_all(*, domain: str) -> bool | None:
    """The remembered catch-all behaviour of a domain, or None when unknown or older than the TTL."""
    since = timezone.now() - timedelta(seconds=settings.VERIFIER_CATCH_ALL_TTL_SECONDS)
    row = DomainProbe.objects.filter(domain=domain.lower(), checked_at__gte=since).first()
    return None if row is None else row.is_catch_all
