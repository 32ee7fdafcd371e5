"""Inbound mail and the replies made of it.

`InboundMessage` is the raw message exactly as received (SMTP DATA or IMAP BODY[]), stored before anything
else is done with it, once per (workspace, Message-ID) (a message without a Message-ID is keyed by the
SHA-256 of its bytes). `Reply` is what get_replies shows: created in the same transaction as the raw row
with `classification = null`, classified afterwards by `replies.tasks.classify_inbound`. The mailbox's own
sent copies are stored raw (state `ignored`) and never become replies.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import Workspace
from core.ids import new_id


def _inbound_id() -> str:
    return new_id("inb_")


def _reply_id() -> str:
    return new_id("rpl_")


class Classification(models.TextChoices):
    INTERESTED = "interested"
    NOT_INTERESTED = "not_interested"
    OUT_OF_OFFICE = "out_of_office"
    UNSUBSCRIBE = "unsubscribe"
    BOUNCE = "bounce"
    OTHER = "other"


class InboundMessage(models.Model):
    class State(models.TextChoices):
        RECEIVED = "received"  # stored; not classified yet
        PROCESSED = "processed"  # classified, threaded, effects applied
        IGNORED = "ignored"  # the mailbox's own sent copy: never a reply

    class Source(models.TextChoices):
        SMTP = "smtp"  # sandbox inbound listener
        IMAP = "imap"  # live mailbox poll

    id = models.CharField(max_length=40, primary_key=True, default=_inbound_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    mailbox = models.ForeignKey("sending.Mailbox", null=True, on_delete=models.SET_NULL, related_name="+")
    source = models.CharField(max_length=8, choices=Source.choices)
    dedupe_key = models.CharField(max_length=300, help_text="Normalized Message-ID, or sha256:<hex> of the bytes.")
    message_id = models.CharField(max_length=998, blank=True, default="")
    raw = models.BinaryField()
    size = models.IntegerField(default=0)
    envelope_from = models.CharField(max_length=998, blank=True, default="")
    envelope_to = models.CharField(max_length=998, blank=True, default="")
    imap_uidvalidity = models.BigIntegerField(null=True, blank=True)
    imap_uid = models.BigIntegerField(null=True, blank=True)
    state = models.CharField(max_length=12, choices=State.choices, default=State.RECEIVED)
    classification = models.CharField(max_length=16, choices=Classification.choices, null=True, blank=True)
    rule = models.CharField(max_length=40, blank=True, default="", help_text="The classifier rule that decided.")
    detail = models.JSONField(default=dict, blank=True, help_text="Bounced recipients, effects applied.")
    attempts = models.IntegerField(default=0)
    received_at = models.DateTimeField(default=timezone.now)
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "dedupe_key"], name="replies_inbound_once")]
        indexes = [models.Index(fields=["state", "received_at"], name="replies_inbound_state_idx")]

    def __str__(self):
        return f"{self.id} {self.message_id} ({self.state})"


class Reply(models.Model):
    id = models.CharField(max_length=40, primary_key=True, default=_reply_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    inbound = models.OneToOneField(InboundMessage, on_delete=models.CASCADE, related_name="reply")
    mailbox = models.ForeignKey("sending.Mailbox", null=True, on_delete=models.SET_NULL, related_name="+")
    campaign = models.ForeignKey("campaigns.Campaign", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="replies")
    campaign_lead = models.ForeignKey("campaigns.CampaignLead", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="replies")
    sent_message = models.ForeignKey("campaigns.SentMessage", null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="replies")
    matched_by = models.CharField(max_length=16, blank=True, default="",
                                  help_text="in_reply_to, references, returned_message, address, or ''.")
    from_email = models.CharField(max_length=254, blank=True, default="")
    subject = models.CharField(max_length=998, blank=True, default="")
    snippet = models.TextField(blank=True, default="")
    text = models.TextField(blank=True, default="", help_text=(
        "The person's own words: quoted history and signature removed (the classifier's cut)."))
    full_text = models.TextField(blank=True, default="", help_text="The whole body as plain text, HTML converted.")
    attachments = models.JSONField(default=list, blank=True,
                                   help_text="[{filename, content_type, size}]; the content stays in the raw message.")
    classification = models.CharField(max_length=16, choices=Classification.choices, null=True, blank=True)
    language = models.CharField(max_length=8, null=True, blank=True,
                                help_text="ISO 639-1 of the person's text; null for machine mail or while unclassified.")
    received_at = models.DateTimeField(default=timezone.now, help_text="When the service accepted it; never changes.")
    updated_at = models.DateTimeField(default=timezone.now, help_text=(
        "Moves when the label is set or corrected and when the reply is answered; get_replies `since` reads it."))

    class Meta:
        verbose_name_plural = "replies"
        indexes = [
            models.Index(fields=["workspace", "-received_at"], name="replies_ws_recv_idx"),
            models.Index(fields=["workspace", "updated_at"], name="replies_ws_updated_idx"),
            models.Index(fields=["campaign", "-received_at"], name="replies_camp_recv_idx"),
        ]

    def __str__(self):
        return f"{self.id} from {self.from_email} ({self.classification})"


class ImapCursor(models.Model):
    """How far a mailbox's INBOX has been read: every UID <= last_uid under this UIDVALIDITY is stored.

    A changed UIDVALIDITY means the server renumbered the folder: the cursor restarts at 0 and the
    (workspace, Message-ID) uniqueness keeps already-stored messages from being stored twice."""

    mailbox = models.OneToOneField("sending.Mailbox", on_delete=models.CASCADE, related_name="imap_cursor")
    folder = models.CharField(max_length=200, default="INBOX")
    uidvalidity = models.BigIntegerField(null=True, blank=True)
    last_uid = models.BigIntegerField(default=0)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True, help_text="A poll in progress holds the mailbox.")
    last_error = models.TextField(blank=True, default="")
    failures = models.IntegerField(default=0)
    stuck_uid = models.BigIntegerField(null=True, blank=True, help_text="A message that failed to store.")
    stuck_attempts = models.IntegerField(default=0)
    skipped_uids = models.JSONField(default=list, blank=True,
                                    help_text="Messages passed over after repeated storage failures (the last 100).")

    def __str__(self):
        return f"{self.mailbox_id} {self.folder} {self.uidvalidity}:{self.last_uid}"


class ReplyCorrection(models.Model):
    """A human's correction of a reply's label in the console: who, when, from, to. Kept as labelled data (the
    raw message stays on the InboundMessage) that the classifier's training can use (console export, JSON
    Lines). The reply's `classification` is the latest `to_label`; the classifier's own label stays on
    `InboundMessage.classification`."""

    reply = models.ForeignKey(Reply, on_delete=models.CASCADE, related_name="corrections")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    from_label = models.CharField(max_length=16, choices=Classification.choices)
    to_label = models.CharField(max_length=16, choices=Classification.choices)
    corrected_by = models.ForeignKey("accounts.User", null=True, on_delete=models.SET_NULL, related_name="+")
    corrected_by_email = models.CharField(max_length=254, help_text="Kept if the user is deleted.")
    corrected_at = models.DateTimeField(default=timezone.now)
    suppression_reason = models.CharField(max_length=16, blank=True, default="",
                                          help_text="The suppression reason re-applied for this label.")

    class Meta:
        indexes = [models.Index(fields=["workspace", "-corrected_at"], name="replies_correction_ws_idx")]

    def __str__(self):
        return f"{self.reply_id}: {self.from_label} -> {self.to_label} by {self.corrected_by_email}"


def _answer_id() -> str:
    return new_id("ans_")


class ReplyAnswer(models.Model):
    """Our answer to a reply, sent in its thread from the mailbox that carried the conversation, at most once.

    States: `pending_approval` (an agent's draft waiting for a human: `confirmation_token` names it), `queued`
    (approved or allowed, not yet handed to SMTP), `sending` (handed to SMTP: a row found here after a crash is
    shown as `send_unknown` and never sent again), `sent`, `send_unknown`, `failed` (known not delivered),
    `denied` (the human said no, or the approval expired)."""

    class State(models.TextChoices):
        PENDING_APPROVAL = "pending_approval"
        QUEUED = "queued"
        SENDING = "sending"
        SENT = "sent"
        SEND_UNKNOWN = "send_unknown"
        FAILED = "failed"
        DENIED = "denied"

    id = models.CharField(max_length=40, primary_key=True, default=_answer_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    reply = models.ForeignKey(Reply, on_delete=models.CASCADE, related_name="answers")
    mailbox = models.ForeignKey("sending.Mailbox", null=True, on_delete=models.SET_NULL, related_name="+")
    from_email = models.CharField(max_length=254)
    to_email = models.CharField(max_length=254)
    subject = models.CharField(max_length=998)
    body = models.TextField()
    message_id = models.CharField(max_length=255, unique=True, help_text="RFC 5322 Message-ID without <>.")
    in_reply_to = models.CharField(max_length=998)
    references = models.JSONField(default=list, blank=True, help_text="Message-IDs without <>, oldest first.")
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING_APPROVAL)
    confirmation_token = models.OneToOneField("accounts.ConfirmationToken", null=True, blank=True,
                                              on_delete=models.SET_NULL, related_name="+")
    api_key = models.ForeignKey("accounts.ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    member = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    sent_by = models.CharField(max_length=254, help_text="The key's name or the member's email (kept if deleted).")
    without_approval = models.BooleanField(default=False, help_text="Sent under the owner's answers_per_day policy.")
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    request_id = models.CharField(max_length=64, blank=True, default="")
    idempotency_key = models.CharField(max_length=255, blank=True, default="", help_text=(
        "The Idempotency-Key of the call that sent it: a retry of that call finds this row and sends nothing."))
    created_at = models.DateTimeField(default=timezone.now)
    sending_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "idempotency_key"], condition=~Q(idempotency_key=""),
                                               name="replies_answer_idem_once")]
        indexes = [
            models.Index(fields=["reply", "created_at"], name="replies_answer_reply_idx"),
            models.Index(fields=["state", "next_attempt_at"], name="replies_answer_due_idx"),
            models.Index(fields=["api_key", "created_at"], name="replies_answer_key_day_idx"),
        ]

    def __str__(self):
        return f"{self.id} to {self.to_email} ({self.state})"


class AnswerNotice(models.Model):
    """An owner or admin who asked for an email on every `interested` reply of this workspace."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey("accounts.User", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="replies_notice_once")]
