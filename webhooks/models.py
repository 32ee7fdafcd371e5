"""Webhook endpoints of a workspace, the events that happened, and one delivery per (endpoint, event).

The delivery row is the durable truth of at-least-once delivery: a worker claims it with a lease
(`claimed_until`), makes one attempt, and records the outcome; a delivery whose worker died is claimed again
once the lease has passed (the periodic sweep), so an event is never lost, and may arrive twice.
"""

from django.db import models
from django.utils import timezone

from accounts.models import User, Workspace


class WebhookEndpoint(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        DISABLED = "disabled"

    id = models.CharField(primary_key=True, max_length=40)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    secret = models.TextField(help_text="The signing secret, encrypted (webhooks.services._seal).")
    previous_secret = models.TextField(blank=True, default="")
    previous_secret_until = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    failing_since = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    # One delivery at a time per endpoint: the worker sending to it holds this lease (a slow receiver holds one
    # worker, not all of them); a worker that died leaves it to expire.
    busy_until = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    deleted_at = models.DateTimeField(null=True, blank=True)


class WebhookEvent(models.Model):
    id = models.CharField(primary_key=True, max_length=40)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=64)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"  # first attempt or a retry is due at next_attempt_at
        SUCCEEDED = "succeeded"
        FAILED = "failed"  # gave up after WEBHOOK_RETRY_HOURS, or the endpoint was disabled

    id = models.CharField(primary_key=True, max_length=40)  # the webhook-id header (msg_…)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    retry_until = models.DateTimeField(help_text="No retry after this (WEBHOOK_RETRY_HOURS after creation or replay).")
    claimed_until = models.DateTimeField(null=True, blank=True)
    # Queued: a task message for this delivery is in the broker since this time (None: none is). A delivery is
    # queued at most once at a time; the sweep queues it again only once this is older than
    # WEBHOOK_QUEUED_STALE_SECONDS (a message the broker lost).
    queued_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True, default="")
    last_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [models.Index(fields=["status", "next_attempt_at"]),
                   models.Index(fields=["endpoint", "-created_at"])]
