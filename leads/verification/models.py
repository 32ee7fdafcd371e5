"""Verification results, per-domain catch-all memory, positive delivery evidence, and DNS technology scans.

All of these are facts about the outside world (an address, a domain), not workspace data: they are stored
globally so that every workspace's later calls (and enrich) reuse them. `workspace` on a row only records who
caused it, for audit; it is never used to widen what a workspace can read.
"""

from django.db import models
from django.utils import timezone


class Status(models.TextChoices):
    VALID = "valid"
    INVALID = "invalid"
    CATCH_ALL_VALID = "catch_all_valid"
    CATCH_ALL_UNKNOWN = "catch_all_unknown"
    UNKNOWN = "unknown"
    RISKY = "risky"


class Verification(models.Model):
    """One verification outcome (CONTRACT 4.3). `email` is the lower-cased lookup key."""

    email = models.CharField(max_length=320)
    domain = models.CharField(max_length=255, db_index=True)
    status = models.CharField(max_length=20, choices=Status.choices)
    reason = models.CharField(max_length=40)
    mx_host = models.CharField(max_length=255, null=True, blank=True)
    is_catch_all_domain = models.BooleanField(default=False)
    is_disposable = models.BooleanField(default=False)
    is_role_account = models.BooleanField(default=False)
    is_free_provider = models.BooleanField(default=False)
    smtp_code = models.IntegerField(null=True, blank=True)
    smtp_message = models.CharField(max_length=500, blank=True)
    checked_at = models.DateTimeField(default=timezone.now)
    workspace = models.ForeignKey("accounts.Workspace", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        indexes = [models.Index(fields=["email", "-checked_at"], name="verif_email_checked")]

    def __str__(self):
        return f"{self.email}: {self.status} ({self.reason})"


class DomainProbe(models.Model):
    """What the last random-address probe said about a domain: remembered for VERIFIER_CATCH_ALL_TTL_SECONDS."""

    domain = models.CharField(max_length=255, unique=True)
    is_catch_all = models.BooleanField()
    mx_host = models.CharField(max_length=255, blank=True)
    checked_at = models.DateTimeField(default=timezone.now)


class DeliveryEvidence(models.Model):
    """Positive evidence that mail to an address is delivered (e.g. the address replied to a campaign).

    Filled by `services.record_delivery_evidence`; the verifier upgrades a catch-all domain's address to
    `catch_all_valid` only when such evidence exists."""

    email = models.CharField(max_length=320, db_index=True)
    source = models.CharField(max_length=40)
    workspace = models.ForeignKey("accounts.Workspace", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["email", "source", "workspace"], name="verif_evidence_once"),
        ]


class TechnologyScan(models.Model):
    """The mail and SaaS stack seen in a domain's DNS (MX and TXT records) at one moment."""

    domain = models.CharField(max_length=255)
    technologies = models.JSONField(default=list)  # sorted technology names
    records = models.JSONField(default=dict)  # {"mx": [...], "txt": [...]} the evidence
    scanned_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["domain", "-scanned_at"], name="verif_techscan_domain")]


class TechnologyChange(models.Model):
    """A change of stack between two consecutive scans of a domain: the `technology` intent signal."""

    domain = models.CharField(max_length=255)
    scan = models.ForeignKey(TechnologyScan, on_delete=models.CASCADE, related_name="changes")
    previous_scan = models.ForeignKey(TechnologyScan, on_delete=models.CASCADE, related_name="+")
    added = models.JSONField(default=list)
    removed = models.JSONField(default=list)
    summary = models.CharField(max_length=500)
    observed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["domain", "-observed_at"], name="verif_techchange_domain")]
