"""Campaigns: the campaign, its leads (one row per recipient), the messages sent, and the suppression list.

Lifecycle (SPEC 3.1): a campaign is created as `draft` (its leads `pending`), launched with an approved
confirmation token (`launched`, leads `active` with a sticky mailbox and a `next_send_at`), may be `paused`
(its leads keep their state and due times; the scheduler and the send claim skip them) and resumed, and becomes
`completed` once every lead has finished its sequence or been stopped.

At most one message per (lead, step): a `SentMessage` row is claimed (`claimed`) in the same transaction
that re-checks suppression, flipped to `sending` right before SMTP is spoken, and to `sent` after. A row
left in `sending` is reported, never re-sent. The partial unique constraint below is the database's
guarantee of that rule (failed attempts do not count: they are known not to have been delivered).
"""

import uuid

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import Workspace

DEFAULT_WINDOW = {"timezone": "UTC", "days": ["mon", "tue", "wed", "thu", "fri"], "start_hour": 9, "end_hour": 17}


class Campaign(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft"
        LAUNCHED = "launched"
        PAUSED = "paused"  # launched, then paused: nothing more is claimed for sending until resumed
        COMPLETED = "completed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="campaigns")
    name = models.CharField(max_length=120)
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    # [{"subject": str | None, "body": str, "wait_days": int}, ...] (1 to 8)
    steps = models.JSONField(default=list)
    # {"timezone": IANA name, "days": ["mon", ...], "start_hour": 0-23, "end_hour": 1-24}
    sending_window = models.JSONField(default=dict)
    leads_accepted = models.IntegerField(default=0)
    leads_suppressed = models.IntegerField(default=0)
    suppressed_reasons = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    launched_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    mailboxes_attached = models.IntegerField(default=0)
    leads_suppressed_at_launch = models.IntegerField(default=0)
    launch_request_id = models.CharField(max_length=64, blank=True, default="")
    verify_leads = models.BooleanField(default=False, help_text="Verify leads without a recent verification at launch.")
    mailboxes = models.ManyToManyField("sending.Mailbox", blank=True, related_name="campaigns",
                                       help_text="Every active mailbox at launch.")
    # {"metric": "interested_rate" | "reply_rate", "min_sends_per_variant": n} or null (docs/campaigns.md)
    auto_winner = models.JSONField(null=True, blank=True)
    # {"<step index>": {"variant": i, "chosen_at": iso, "metric", "sent": [...], "rates": [...], "p_values": [...]}}
    winners = models.JSONField(default=dict, blank=True)
    stop_on_company_reply = models.BooleanField(default=False)
    match_mailbox_provider = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"]), models.Index(fields=["state"])]

    def __str__(self):
        return f"{self.name} ({self.id})"


class CampaignLead(models.Model):
    class State(models.TextChoices):
        PENDING = "pending"  # in a draft campaign; never contacted
        ACTIVE = "active"  # launched; next step due at next_send_at
        FINISHED = "finished"  # every step sent
        STOPPED = "stopped"  # reply, unsubscribe, bounce, suppression, or an unknown send outcome
        REMOVED = "removed"  # suppressed between drafting and launch; never contacted

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="leads")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    email = models.CharField(max_length=254, help_text="Normalized (lower-case) address.")
    first_name = models.CharField(max_length=200, blank=True, default="")
    last_name = models.CharField(max_length=200, blank=True, default="")
    company_name = models.CharField(max_length=300, blank=True, default="")
    custom = models.JSONField(default=dict, blank=True)
    timezone = models.CharField(max_length=64, blank=True, default="", help_text="IANA name, optional.")
    position = models.IntegerField(default=0, help_text="Order in the create request.")
    variants = models.JSONField(default=list, blank=True,
                                help_text="Assigned variant index per step (null for a step without variants).")
    recipient_provider = models.CharField(max_length=16, blank=True, default="",
                                          help_text="google, microsoft or other (MX of the lead's domain), when "
                                                    "the campaign matches mailbox providers.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    stop_reason = models.CharField(max_length=32, blank=True, default="")
    mailbox = models.ForeignKey("sending.Mailbox", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                help_text="Sticky: every step to this lead goes from this mailbox.")
    current_step = models.IntegerField(default=0, help_text="Index of the next step to send.")
    next_send_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0, help_text="Temporary failures of the current step.")
    last_error = models.TextField(blank=True, default="")
    stopped_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "email"], name="uniq_campaign_lead_email")]
        indexes = [
            # The scheduler's only query: due active leads, through this partial index (never a full scan).
            models.Index(fields=["next_send_at"], condition=Q(state="active"), name="campaignlead_due_idx"),
            models.Index(fields=["workspace", "email"], name="campaignlead_ws_email_idx"),
            models.Index(fields=["campaign", "state"], name="campaignlead_camp_state_idx"),
            # campaign stats: leads by (state, stop_reason) as an index-only GROUP BY
            models.Index(fields=["campaign", "state", "stop_reason"], name="campaignlead_camp_stats_idx"),
        ]

    def __str__(self):
        return f"{self.email} in {self.campaign_id}"


class SentMessage(models.Model):
    class State(models.TextChoices):
        CLAIMED = "claimed"  # reserved in the suppression re-check transaction; SMTP not yet spoken
        SENDING = "sending"  # SMTP in progress; if found stuck here: reported, never re-sent
        SENT = "sent"
        FAILED = "failed"  # known not delivered (temporary failure, bounce, stop before SMTP)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="sent_messages")
    campaign_lead = models.ForeignKey(CampaignLead, on_delete=models.CASCADE, related_name="messages")
    step_index = models.IntegerField()
    variant = models.IntegerField(null=True, blank=True, help_text="Index of the step's variant sent, if it has variants.")
    mailbox = models.ForeignKey("sending.Mailbox", null=True, on_delete=models.SET_NULL, related_name="+")
    message_id = models.CharField(max_length=255, unique=True, help_text="RFC 5322 Message-ID without <>.")
    to_email = models.CharField(max_length=254)
    subject = models.CharField(max_length=998, blank=True, default="")
    in_reply_to = models.CharField(max_length=255, blank=True, default="")
    state = models.CharField(max_length=16, choices=State.choices, default=State.CLAIMED)
    error = models.TextField(blank=True, default="")
    bounced = models.BooleanField(default=False)
    claimed_at = models.DateTimeField(default=timezone.now)
    sending_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    stuck_reported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign_lead", "step_index"], condition=~Q(state="failed"), name="uniq_send_per_lead_step"
            )
        ]
        indexes = [
            models.Index(fields=["state", "claimed_at"], name="sentmessage_state_idx"),
            models.Index(fields=["campaign_lead", "step_index"], name="sentmessage_lead_step_idx"),
            models.Index(fields=["mailbox", "claimed_at"], name="sentmessage_mailbox_day_idx"),
            # campaign stats: messages by (state, step, bounced, variant) as an index-only GROUP BY
            models.Index(fields=["campaign", "state", "step_index", "bounced", "variant"],
                         name="sentmessage_camp_stats_idx"),
        ]

    def __str__(self):
        return f"<{self.message_id}> step {self.step_index} to {self.to_email} ({self.state})"


class Suppression(models.Model):
    """Never contact this address again from this workspace. Permanent: there is no removal path."""

    class Reason(models.TextChoices):
        UNSUBSCRIBED = "unsubscribed"
        BOUNCED = "bounced"
        REPLIED = "replied"
        MANUAL = "manual"
        INVALID_EMAIL = "invalid_email"  # verified invalid at launch (`verify_leads`)

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="suppressions")
    email = models.CharField(max_length=254, help_text="Normalized (lower-case) address.")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    source = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "email"], name="uniq_suppression_ws_email")]

    def __str__(self):
        return f"{self.email} ({self.reason})"
