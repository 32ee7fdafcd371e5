"""Deliverability records: the history of health changes and the complaints received.

The health state itself lives on `sending.Mailbox` and `sending.SendingDomain` (`health_*` fields), so the send
claim in campaigns reads it under the mailbox row lock without importing this app; the rules that set it are
`deliverability.services`.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import Workspace
from sending.models import HealthState, Mailbox, SendingDomain


class HealthEvent(models.Model):
    """One change of a mailbox's or a domain's health state (the history shown in the console)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    mailbox = models.ForeignKey(Mailbox, null=True, blank=True, on_delete=models.CASCADE, related_name="health_events")
    domain = models.ForeignKey(SendingDomain, null=True, blank=True, on_delete=models.CASCADE,
                               related_name="health_events")
    from_state = models.CharField(max_length=8, choices=HealthState.choices)
    to_state = models.CharField(max_length=8, choices=HealthState.choices)
    reasons = models.JSONField(default=list, blank=True)
    actor = models.CharField(max_length=254, blank=True, default="",
                             help_text="Empty: the detector; else the member who resumed it.")
    detail = models.JSONField(default=dict, blank=True, help_text="The figures behind the change.")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-at"], name="healthevent_ws_at_idx")]


class Complaint(models.Model):
    """A recipient marked a message as spam: an ARF feedback report (RFC 5965) or a Postmaster figure."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    mailbox = models.ForeignKey(Mailbox, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    domain_name = models.CharField(max_length=253, help_text="The sending domain the complaint counts against.")
    source = models.CharField(max_length=16, default="arf")
    feedback_type = models.CharField(max_length=32, blank=True, default="")
    recipient = models.CharField(max_length=254, blank=True, default="")
    message_id = models.CharField(max_length=255, blank=True, default="", help_text="The complained-of message.")
    inbound_id = models.CharField(max_length=40, blank=True, default="")
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["workspace", "domain_name", "received_at"], name="complaint_ws_dom_idx")]
        constraints = [models.UniqueConstraint(fields=["workspace", "inbound_id"], condition=~Q(inbound_id=""),
                                               name="complaint_once_per_report")]
