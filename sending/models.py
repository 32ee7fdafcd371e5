"""Sending capacity: sending domains, mailboxes and the async operations that provision them.

Public interface other apps rely on (campaigns, replies):
- `Mailbox` rows with `status == active` are sending capacity; read them through
  `sending.selectors.mailboxes_active(workspace=...)`.
- `sending.transport.send_message(mailbox=..., message=...)` sends one message from a mailbox.
- `Operation` is the record behind GET /v1/operations/:id (CONTRACT 4.10).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import Workspace
from core.ids import new_id


def _domain_id() -> str:
    return new_id("dom_")


def _mailbox_id() -> str:
    return new_id("mbx_")


def _operation_id() -> str:
    return new_id("op_")


#: who hosts a mailbox (or a recipient's domain): `Mailbox.host_provider`, campaign leads' `recipient_provider`
HOST_PROVIDERS = ("google", "microsoft", "other")
GOOGLE_SMTP_HOSTS = ("smtp.gmail.com", "smtp.google.com", "smtp-relay.gmail.com")
MICROSOFT_SMTP_HOSTS = ("smtp.office365.com", "smtp-mail.outlook.com", "smtp.live.com")


class Provider(models.TextChoices):
    SANDBOX = "sandbox"  # built-in local provider (SANDBOX=1): mail goes to the Maildir sink
    BYO = "byo"  # bring your own mailbox: an existing SMTP/IMAP account registered in the console
    VENDOR = "vendor"  # bought from a live vendor through a `sending.providers` adapter


class Operation(models.Model):
    """An asynchronous, provider-driven piece of work (today: provisioning a setup_sending purchase).

    Status moves queued -> running -> waiting_external -> succeeded | partially_succeeded | failed and never
    backwards. `outcome_unknown` is set when an external call's outcome could not be learned (a timeout after the
    request was sent): the operation then stays where it was, the API answers 502 `operation_unknown_state`, and
    nothing is re-executed until the provider's state has been read back.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        WAITING_EXTERNAL = "waiting_external"
        SUCCEEDED = "succeeded"
        PARTIALLY_SUCCEEDED = "partially_succeeded"
        FAILED = "failed"

    FINAL = (Status.SUCCEEDED, Status.PARTIALLY_SUCCEEDED, Status.FAILED)

    class Kind(models.TextChoices):
        SETUP_SENDING = "setup_sending"

    id = models.CharField(max_length=40, primary_key=True, default=_operation_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="operations")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.QUEUED)
    provider = models.CharField(max_length=200, default="sandbox", help_text="SENDING_PROVIDER name at purchase.")
    request_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    params = models.JSONField(default=dict, blank=True, help_text="What was bought (sizing, names, sender).")
    progress = models.JSONField(default=dict, blank=True, help_text="Provider-side state between task runs.")
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    outcome_unknown = models.BooleanField(default=False)
    charged_micros = models.BigIntegerField(default=0)
    refunded_micros = models.BigIntegerField(default=0)
    next_step_at = models.DateTimeField(null=True, blank=True, db_index=True)
    attempts = models.IntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "next_step_at"])]

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL

    def __str__(self):
        return f"{self.id} {self.kind} {self.status}"


class HealthState(models.TextChoices):
    HEALTHY = "healthy"
    WARNING = "warning"
    PAUSED = "paused"  # nothing is sent until an owner or admin resumes it in the console


#: the API's names for the health states and their reasons (CONTRACT 4.13)
HEALTH_STATES = tuple(HealthState.values)
HEALTH_REASONS = ("bounce_rate", "complaint_rate", "dns_spf", "dns_dkim", "dns_dmarc", "dns_mx", "blocklisted",
                  "postmaster")
#: the result of one DNS authentication check of a sending domain
DNS_CHECK_RESULTS = ("pass", "fail", "missing")


class SendingDomain(models.Model):
    """A domain mail is sent from. Bought domains come from an operation; BYO mailboxes may have none."""

    class Status(models.TextChoices):
        PENDING = "pending"
        REGISTERING = "registering"
        DNS_PENDING = "dns_pending"
        ACTIVE = "active"
        FAILED = "failed"

    id = models.CharField(max_length=40, primary_key=True, default=_domain_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="sending_domains")
    name = models.CharField(max_length=253, unique=True)
    provider = models.CharField(max_length=16, choices=Provider.choices, default=Provider.SANDBOX)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    operation = models.ForeignKey(Operation, null=True, blank=True, on_delete=models.SET_NULL, related_name="domains")
    vendor_ref = models.CharField(max_length=200, blank=True, default="")
    dkim_selector = models.CharField(max_length=63, blank=True, default="")
    dkim_private_key_encrypted = models.TextField(blank=True, default="", help_text="Fernet-encrypted PEM.")
    created_at = models.DateTimeField(default=timezone.now)
    activated_at = models.DateTimeField(null=True, blank=True)
    # deliverability (the `deliverability` app owns the rules; CONTRACT 4.13): a paused domain pauses its mailboxes
    health_state = models.CharField(max_length=8, choices=HealthState.choices, default=HealthState.HEALTHY)
    health_reasons = models.JSONField(default=list, blank=True)
    health_changed_at = models.DateTimeField(null=True, blank=True)
    health_armed_at = models.DateTimeField(null=True, blank=True,
                                           help_text="Signals before this (the last resume) no longer count.")
    checks = models.JSONField(default=dict, blank=True, help_text="{spf, dkim, dmarc, mx}: pass | fail | missing.")
    check_failing_since = models.JSONField(default=dict, blank=True, help_text="{check: ISO time it first failed}.")
    blocklists = models.JSONField(default=list, blank=True, help_text="Zones listing the domain at the last check.")
    dns_checked_at = models.DateTimeField(null=True, blank=True)
    blocklist_checked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return self.name


class Mailbox(models.Model):
    """One sending identity. Only `status == active` mailboxes are ever sent from.

    `renews_at` is when the next monthly upkeep (750 credits) is due, counted from `activated_at`. A renewal the
    balance cannot cover sets `status = suspended`; topping up and renewing sets it back to `active`.

    `auth` is how the service signs in to the mailbox's SMTP and IMAP servers: `password` (the Fernet-encrypted
    `secret_encrypted`) or `oauth2` (SASL XOAUTH2 with an access token from `sending.oauth`; the refresh token
    lives encrypted in the mailbox's `MailboxToken`). An OAuth mailbox whose consent was revoked, or whose
    refresh the provider refused, is `status = needs_reconnect` (`reconnect_reason` says why): it is never sent
    from or polled until its owner reconnects it in the console, which sets it back to `active`. Like every
    status other than `active`, the send claim re-checks it under the mailbox row lock.
    """

    class Status(models.TextChoices):
        PROVISIONING = "provisioning"
        ACTIVE = "active"
        SUSPENDED = "suspended"
        NEEDS_RECONNECT = "needs_reconnect"  # OAuth consent revoked / refresh refused: reconnect in the console
        FAILED = "failed"
        REMOVED = "removed"

    class Auth(models.TextChoices):
        PASSWORD = "password"
        OAUTH2 = "oauth2"  # SASL XOAUTH2 with a refreshed access token (sending.oauth)

    class Security(models.TextChoices):
        STARTTLS = "starttls"
        SSL = "ssl"  # implicit TLS (SMTPS 465 / IMAPS 993)
        NONE = "none"  # plain: only for local test peers

    id = models.CharField(max_length=40, primary_key=True, default=_mailbox_id, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="mailboxes")
    domain = models.ForeignKey(SendingDomain, null=True, blank=True, on_delete=models.PROTECT, related_name="mailboxes")
    email = models.EmailField(max_length=254, unique=True)
    first_name = models.CharField(max_length=100, blank=True, default="")
    last_name = models.CharField(max_length=100, blank=True, default="")
    display_name = models.CharField(max_length=200, blank=True, default="")
    provider = models.CharField(max_length=16, choices=Provider.choices, default=Provider.SANDBOX)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROVISIONING)
    operation = models.ForeignKey(Operation, null=True, blank=True, on_delete=models.SET_NULL, related_name="mailboxes")
    vendor_ref = models.CharField(max_length=200, blank=True, default="")
    daily_limit = models.PositiveIntegerField(default=25, help_text="Max messages a day (CONTRACT 5).")
    # bring-your-own (and vendor-provided) connection details; the secret is Fernet-encrypted at rest
    smtp_host = models.CharField(max_length=253, blank=True, default="")
    smtp_port = models.PositiveIntegerField(null=True, blank=True)
    smtp_security = models.CharField(max_length=8, choices=Security.choices, default=Security.STARTTLS)
    smtp_username = models.CharField(max_length=254, blank=True, default="")
    imap_host = models.CharField(max_length=253, blank=True, default="")
    imap_port = models.PositiveIntegerField(null=True, blank=True)
    imap_security = models.CharField(max_length=8, choices=Security.choices, default=Security.SSL)
    imap_username = models.CharField(max_length=254, blank=True, default="")
    secret_encrypted = models.TextField(blank=True, default="")
    auth = models.CharField(max_length=16, choices=Auth.choices, default=Auth.PASSWORD)
    oauth_provider = models.CharField(max_length=32, blank=True, default="",
                                      help_text="Token source of an oauth2 mailbox (sending.oauth): google, microsoft.")
    mail_provider = models.CharField(max_length=16, blank=True, default="",
                                     help_text="Who hosts a bought mailbox (google, microsoft), as chosen at purchase; "
                                               "empty: derived from how it signs in (`host_provider`).")
    reconnect_reason = models.CharField(max_length=300, blank=True, default="",
                                        help_text="Why the mailbox needs reconnecting (never a token).")
    needs_reconnect_at = models.DateTimeField(null=True, blank=True)
    reconnect_notified_at = models.DateTimeField(null=True, blank=True,
                                                 help_text="When the owners were emailed about it (once per episode).")
    # lifecycle
    created_at = models.DateTimeField(default=timezone.now)
    activated_at = models.DateTimeField(null=True, blank=True)
    renews_at = models.DateTimeField(null=True, blank=True, db_index=True)
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.CharField(max_length=200, blank=True, default="")
    removed_at = models.DateTimeField(null=True, blank=True)
    vendor_suspended = models.BooleanField(default=False, help_text="Whether the vendor-side mailbox is suspended.")
    vendor_deleted_at = models.DateTimeField(null=True, blank=True,
                                             help_text="When the vendor-side mailbox was deleted (removed capacity).")
    renewals = models.PositiveIntegerField(default=0, help_text="Months paid in the current cycle (the first with the purchase); renews_at = activated_at + renewals months.")
    # deliverability (the `deliverability` app owns the rules; CONTRACT 4.13): a paused mailbox is never sent from, whatever its status
    health_state = models.CharField(max_length=8, choices=HealthState.choices, default=HealthState.HEALTHY)
    health_reasons = models.JSONField(default=list, blank=True)
    health_changed_at = models.DateTimeField(null=True, blank=True)
    health_armed_at = models.DateTimeField(null=True, blank=True,
                                           help_text="Sends before this (the last resume) no longer count.")
    health_dirty = models.BooleanField(default=False, help_text="A signal arrived since the last evaluation.")
    health_figures = models.JSONField(default=dict, blank=True,
                                      help_text="bounce_rate, sends_recent, complaints_7d at the last evaluation.")
    health_evaluated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "status"])]
        constraints = [
            models.CheckConstraint(condition=~Q(email=""), name="mailbox_email_not_empty"),
        ]

    @property
    def host_provider(self) -> str:
        """Who hosts the mailbox: `google`, `microsoft` or `other` (the kind a recipient's provider is matched
        with, and what `GET /v1/mailboxes` shows as `mail_provider`)."""
        if self.mail_provider:
            return self.mail_provider
        oauth = (self.oauth_provider or "").lower()
        host = (self.smtp_host or "").lower().rstrip(".")
        if oauth in ("google", "google_workspace") or host in GOOGLE_SMTP_HOSTS:
            return "google"
        if oauth in ("microsoft", "microsoft365") or host in MICROSOFT_SMTP_HOSTS:
            return "microsoft"
        return "other"

    @property
    def from_header(self) -> str:
        from email.headerregistry import Address

        name = self.display_name or " ".join(p for p in (self.first_name, self.last_name) if p)
        local, _, domain = self.email.partition("@")
        return str(Address(display_name=name, username=local, domain=domain))

    @property
    def domain_name(self) -> str:
        return self.email.rpartition("@")[2]

    def __str__(self):
        return self.email


class MailboxToken(models.Model):
    """OAuth 2.0 tokens of an `auth = oauth2` mailbox. Both tokens are Fernet-encrypted (`sending.crypto`), never
    logged, never shown. `refresh_lease_until` is the cross-process refresh lock (claimed by a conditional UPDATE:
    one refresh at a time per mailbox, on SQLite and PostgreSQL alike); `retry_after` / `failures` are the
    backoff after a transient provider error (which never turns into `needs_reconnect`)."""

    mailbox = models.OneToOneField(Mailbox, on_delete=models.CASCADE, primary_key=True, related_name="token")
    provider = models.CharField(max_length=32)
    subject = models.CharField(max_length=255, blank=True, default="", help_text="The identity's `sub` claim.")
    scope = models.TextField(blank=True, default="")
    refresh_token_encrypted = models.TextField(blank=True, default="")
    access_token_encrypted = models.TextField(blank=True, default="")
    access_expires_at = models.DateTimeField(null=True, blank=True)
    refresh_lease_until = models.DateTimeField(null=True, blank=True)
    retry_after = models.DateTimeField(null=True, blank=True)
    failures = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True, default="")
    refreshed_at = models.DateTimeField(null=True, blank=True)
    refreshes = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"token of {self.mailbox_id}"

