"""Writes: run and store verifications, remember catch-all domains, record evidence of delivery."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from leads.verification import engine, selectors
from leads.verification.models import DeliveryEvidence, DomainProbe, Status, Verification


class DatabaseMemory(engine.Memory):
    """The engine's memory backed by the database (shared by every process)."""

    def catch_all(self, domain):
        return selectors.domain_catch_all(domain=domain)

    def remember_catch_all(self, domain, is_catch_all, mx_host):
        DomainProbe.objects.update_or_create(
            domain=domain.lower(),
            defaults={"is_catch_all": is_catch_all, "mx_host": mx_host or "", "checked_at": timezone.now()},
        )

    def has_delivery_evidence(self, email_key):
        return selectors.delivery_evidence_exists(email=email_key)


def record_delivery_evidence(*, email: str, source: str, workspace=None, observed_at: datetime | None = None
                             ) -> DeliveryEvidence:
    """Positive evidence that mail to `email` is delivered, e.g. `source="reply"` when the address replied to a
    campaign (the replies feature calls this). Idempotent per (email, source, workspace): a repeat moves
    `observed_at` forward. A catch-all domain's address then verifies as `catch_all_valid`."""
    key = selectors.email_key(email)
    when = observed_at or timezone.now()
    for _ in range(2):
        try:
            with transaction.atomic():
                row, created = DeliveryEvidence.objects.select_for_update().get_or_create(
                    email=key, source=source, workspace=workspace, defaults={"observed_at": when})
                if not created and row.observed_at < when:
                    row.observed_at = when
                    row.save(update_fields=["observed_at"])
                return row
        except IntegrityError:  # a concurrent first insert won; update theirs
            continue
    return DeliveryEvidence.objects.get(email=key, source=source, workspace=workspace)


def _row(res: engine.Result, *, workspace, request_id: str) -> Verification:
    return Verification(
        email=res.key or selectors.email_key(res.email)[:320], domain=res.domain, status=res.status,
        reason=res.reason, mx_host=res.mx_host, is_catch_all_domain=res.is_catch_all_domain,
        is_disposable=res.is_disposable, is_role_account=res.is_role_account,
        is_free_provider=res.is_free_provider, smtp_code=res.smtp_code, smtp_message=res.smtp_message[:500],
        workspace=workspace, request_id=request_id or "",
    )


def _reusable(key: str) -> Verification | None:
    seconds = settings.VERIFIER_REUSE_SECONDS
    if not seconds or not key:
        return None
    return selectors.latest_verification(email=key, max_age=timedelta(seconds=seconds))


def verification_run(*, email: str, workspace=None, request_id: str = "", reuse: bool = True,
                     store: bool = True) -> Verification:
    """Verify `email` and store the result. A conclusive result younger than VERIFIER_REUSE_SECONDS is reused
    (the MX hosts are not asked again), except that a catch-all address is upgraded to `catch_all_valid` as
    soon as evidence of delivery exists. Returns the stored (or reused) row; with `store=False` a new result is
    returned unsaved (`pk` None), for the caller to write (verify_email: with its settlement, Outcome.writes)."""
    if reuse:
        parsed = engine.parse_address(email)
        key = parsed[2] if parsed else ""
        row = _reusable(key)
        if row is not None:
            if (row.status == Status.CATCH_ALL_UNKNOWN
                    and selectors.delivery_evidence_exists(email=key)):
                row = None  # probe again: the result will now be catch_all_valid (or whatever changed)
            else:
                return row
    res = engine.verify(email, memory=DatabaseMemory())
    row = _row(res, workspace=workspace, request_id=request_id)
    if store:
        row.save(force_insert=True)
    return row


def result_payload(row: Verification, *, email: str) -> dict:
    """The verify_email result object (SPEC 2.4 + CONTRACT 4.3 extra fields)."""
    return {
        "email": email,
        "status": row.status,
        "is_catch_all_domain": row.is_catch_all_domain,
        "checked_at": row.checked_at.isoformat().replace("+00:00", "Z"),
        "reason": row.reason,
        "mx_host": row.mx_host,
        "is_disposable": row.is_disposable,
        "is_role_account": row.is_role_account,
        "is_free_provider": row.is_free_provider,
    }


def verification_prune(*, now: datetime | None = None) -> int:
    """Delete verification results older than VERIFIER_RESULT_RETENTION_DAYS and expired catch-all memories."""
    now = now or timezone.now()
    deleted, _ = Verification.objects.filter(
        checked_at__lt=now - timedelta(days=settings.VERIFIER_RESULT_RETENTION_DAYS)).delete()
    DomainProbe.objects.filter(checked_at__lt=now - timedelta(seconds=settings.VERIFIER_CATCH_ALL_TTL_SECONDS)).delete()
    return deleted
