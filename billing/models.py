"""Money: integer micro-credits, an append-only ledger, holds that resolve once.

The balance is a cached sum of the ledger, updated in the same transaction as the entry. Database
constraints guarantee the available balance (balance - reserved) never goes below zero.
"""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import ApiKey, Workspace


class CreditAccount(models.Model):
    workspace = models.OneToOneField(Workspace, on_delete=models.PROTECT, primary_key=True, related_name="credit_account")
    balance_micros = models.BigIntegerField(default=0)
    reserved_micros = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # balance.low: the threshold (None: no alert) and when the alert fired for the current dip below it. Moved
    # by the same UPDATE that moves the balance (billing.ledger_sql._MOVE): a charge that takes the available
    # balance below the threshold sets it (once), any move back to or above it clears it (re-arms).
    low_balance_threshold_micros = models.BigIntegerField(null=True, blank=True)
    low_balance_fired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(reserved_micros__gte=0), name="reserved_not_negative"),
            models.CheckConstraint(condition=Q(balance_micros__gte=F("reserved_micros")), name="available_not_negative"),
        ]

    @property
    def available_micros(self) -> int:
        return self.balance_micros - self.reserved_micros

    def __str__(self):
        return f"account {self.workspace_id}"


class AppendOnly(Exception):
    pass


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        SIGNUP_GRANT = "signup_grant"
        GRANT = "grant"
        TOPUP = "topup"
        CHARGE = "charge"
        REFUND = "refund"
        UPKEEP = "upkeep"
        ADJUSTMENT = "adjustment"

    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="entries")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    amount_micros = models.BigIntegerField(help_text="Signed: credits in are positive, charges negative.")
    balance_after_micros = models.BigIntegerField()
    request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    verb = models.CharField(max_length=64, blank=True, default="")
    memo = models.CharField(max_length=500, blank=True, default="")
    external_ref = models.CharField(max_length=200, null=True, blank=True, help_text="e.g. a payment event id")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "external_ref"], condition=Q(external_ref__isnull=False), name="uniq_ledger_external_ref"),
        ]
        indexes = [models.Index(fields=["account", "kind", "-id"])]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnly("ledger entries are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("ledger entries are append-only")


class Hold(models.Model):
    """Authorize / capture / void: a hold resolves exactly once."""

    class Status(models.TextChoices):
        HELD = "held"
        CAPTURED = "captured"
        RELEASED = "released"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(CreditAccount, on_delete=models.PROTECT, related_name="holds")
    request_id = models.CharField(max_length=64, blank=True, default="")
    amount_micros = models.BigIntegerField()
    captured_micros = models.BigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.HELD)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    # The key whose budget (KeyBudget) this hold counts against, set by the reserve when the key has one: the
    # settlement gives back to that budget whatever it does not capture. The periods are those of `created_at`.
    budget_key_id = models.UUIDField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "expires_at"])]
        constraints = [models.CheckConstraint(condition=Q(amount_micros__gt=0), name="hold_positive")]


class KeyBudget(models.Model):
    """An API key's (or OAuth connection's, whose principal is a key) daily and monthly spend limits and what it
    has spent plus holds still held in the current UTC day and calendar month (CONTRACT 4.12).

    The counters move only inside the money statements of billing.ledger_sql: the reserve adds a hold's amount
    (only if no limit is passed, in the same statement or transaction as the balance check, under this row's
    lock), the settlement gives back what the hold did not capture, a refund gives back what it refunds. A
    counter whose `day` / `month` is not the current one counts zero: periods roll over at midnight UTC without
    a job. A key without a row has no limits and costs the money statements nothing."""

    api_key = models.OneToOneField(ApiKey, on_delete=models.CASCADE, primary_key=True, related_name="budget")
    daily_limit_micros = models.BigIntegerField(null=True, blank=True)
    monthly_limit_micros = models.BigIntegerField(null=True, blank=True)
    day = models.DateField(help_text="The UTC day day_micros counts.")
    day_micros = models.BigIntegerField(default=0, help_text="Spent plus held in `day`.")
    month = models.DateField(help_text="The first day of the month month_micros counts.")
    month_micros = models.BigIntegerField(default=0, help_text="Spent plus held in `month`.")
    # The periods for which key.budget_warning / key.budget_exceeded were sent (each at most once per period).
    warned_day = models.DateField(null=True, blank=True)
    warned_month = models.DateField(null=True, blank=True)
    exceeded_day = models.DateField(null=True, blank=True)
    exceeded_month = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)


class RequestRecord(models.Model):
    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        INTERRUPTED = "interrupted"

    id = models.CharField(max_length=64, primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="requests")
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    verb = models.CharField(max_length=64)
    channel = models.CharField(max_length=8, default="rest")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.IN_PROGRESS)
    http_status = models.IntegerField(null=True, blank=True)
    credits_charged_micros = models.BigIntegerField(default=0)
    error = models.JSONField(null=True, blank=True)
    usage = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            models.Index(fields=["workspace", "verb", "created_at"]),
        ]


class UsageDaily(models.Model):
    """Calls and credits charged per workspace, verb and UTC day of the request records' `created_at`: what
    GET /v1/usage and the console's charts read (O(days x verbs), whatever the number of records).

    Maintained by database triggers on the request record table (migration 0003), so every write path (the
    ORM, the single-statement money SQL of billing.ledger_sql, deletes) moves it in the same statement and
    transaction as the record itself: exactly the aggregate of the records, never a separate step to forget."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    verb = models.CharField(max_length=64)
    day = models.DateField()
    calls = models.BigIntegerField(default=0)
    charged_micros = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "daily usage rows"
        constraints = [models.UniqueConstraint(fields=["workspace", "verb", "day"], name="uniq_usage_daily")]


class UsageKeyDaily(models.Model):
    """Calls and credits charged per API key (or OAuth connection) and UTC day of the request records'
    `created_at`: what `GET /v1/usage` `by_key` and the console's spend-per-key chart read. Maintained by database
    triggers on the request record table (migration 0006), as UsageDaily is; records without a key are not in it."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    api_key_id = models.UUIDField()
    day = models.DateField()
    calls = models.BigIntegerField(default=0)
    charged_micros = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "daily usage rows per key"
        constraints = [models.UniqueConstraint(fields=["api_key_id", "day"], name="uniq_usage_key_daily")]


class IdempotencyRecord(models.Model):
    class State(models.TextChoices):
        IN_PROGRESS = "in_progress"
        COMPLETED = "completed"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    verb = models.CharField(max_length=64)
    body_hash = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.IN_PROGRESS)
    request_id = models.CharField(max_length=64)
    response_status = models.IntegerField(null=True, blank=True)
    response_body = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "key"], name="uniq_idempotency_key")]


class CheckoutSession(models.Model):
    """A Stripe Checkout session opened from the console's top-up page; credited once by the webhook."""

    class Status(models.TextChoices):
        OPEN = "open"
        PAID = "paid"
        EXPIRED = "expired"

    id = models.CharField(max_length=255, primary_key=True, help_text="Stripe's cs_… id")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="checkout_sessions")
    credits_micros = models.BigIntegerField()
    amount_cents = models.IntegerField()
    currency = models.CharField(max_length=8, default="usd")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    url = models.URLField(max_length=2000, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    paid_event_id = models.CharField(max_length=255, blank=True, default="")
    paid_at = models.DateTimeField(null=True, blank=True)
