"""setup_sending (SPEC 4.5, CONTRACT 4.5) and GET /v1/operations/:id (CONTRACT 4.10)."""

from __future__ import annotations

from rest_framework import serializers

from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register
from sending import selectors, services
from sending.models import HEALTH_REASONS, HEALTH_STATES, HOST_PROVIDERS


class StrictIntegerField(serializers.IntegerField):
    """An integer that must be a JSON number without a fraction: "100", 100.5 and true are rejected."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float) or (isinstance(data, float) and not data.is_integer()):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class SenderIn(StrictSerializer):
    first_name = StrictCharField(max_length=100, required=False, allow_blank=True, default="")
    last_name = StrictCharField(max_length=100, required=False, allow_blank=True, default="")


class SetupSendingIn(StrictSerializer):
    emails_per_week = StrictIntegerField(min_value=50, max_value=50000,
                                         help_text="50 to 50000. About 25 sends a day per mailbox, 5 mailboxes a domain.")
    brand_hint = StrictCharField(max_length=100, required=False, allow_null=True, allow_blank=True,
                                 help_text="Brand word used to derive sending-domain candidates.")
    sender = SenderIn(required=False, allow_null=True, help_text="Identity stamped on the mailboxes.")
    provider = serializers.ChoiceField(
        choices=["google", "microsoft"], required=False, allow_null=True,
        help_text="Which kind of mailbox to buy: Google Workspace or Microsoft 365. Absent: the operator's default "
                  "(SENDING_PROVIDER). The quote states which; a kind the operator has not set up is 502 "
                  "provider_unavailable.")
    confirmation_token = StrictCharField(max_length=200, required=False,
                                         help_text="Absent: a quote and a token. Present and approved: the purchase.")


class QuoteOut(serializers.Serializer):
    domains = serializers.IntegerField()
    mailboxes = serializers.IntegerField()
    setup_credits = serializers.CharField()
    upkeep_credits_per_month = serializers.CharField()
    renewal_cadence = serializers.CharField()
    provider = serializers.ChoiceField(choices=["google", "microsoft", "sandbox"],
                                       help_text="The kind of mailbox delivered (sandbox: the built-in local one).")
    ready_estimate = serializers.CharField()
    quote_expires_at = serializers.DateTimeField()


class SetupSendingOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["quote", "purchased"])
    quote = QuoteOut(required=False)
    confirmation_token = serializers.CharField(required=False)
    confirmation_expires_at = serializers.DateTimeField(required=False)
    approval_url = serializers.URLField(required=False)
    operation_id = serializers.CharField(required=False)
    domains = serializers.ListField(child=serializers.CharField(), required=False)
    mailboxes = serializers.ListField(child=serializers.CharField(), required=False)


def run_setup_sending(ctx, *, emails_per_week: int, brand_hint=None, sender=None, provider=None,
                      confirmation_token=None) -> Outcome:
    if confirmation_token is None:
        return Outcome(result=services.setup_sending_quote(workspace=ctx.workspace, request_id=ctx.request_id,
                                                           emails_per_week=emails_per_week, brand_hint=brand_hint,
                                                           sender=sender, provider=provider))
    result, charge = services.setup_sending_purchase(workspace=ctx.workspace, request_id=ctx.request_id,
                                                     confirmation_token=confirmation_token,
                                                     emails_per_week=emails_per_week, brand_hint=brand_hint,
                                                     sender=sender, provider=provider, hold=ctx.hold)
    return Outcome(result=result, charge=charge)


def setup_sending_hold(ctx, data: dict) -> int:
    """Quotes are free; a purchase holds setup + first month, after the token has been checked."""
    if data.get("confirmation_token") is None:
        return 0
    params = services.canonical_params(emails_per_week=data["emails_per_week"], brand_hint=data.get("brand_hint"),
                                       sender=data.get("sender"), provider=data.get("provider"))
    services.token_precheck(workspace=ctx.workspace, params=params, plaintext=data["confirmation_token"])
    return services.purchase_price(data["emails_per_week"])


setup_sending = register(Verb(
    name="setup_sending", path="/v1/setup_sending", run=run_setup_sending, input=SetupSendingIn,
    output=SetupSendingOut, scope="assets:purchase", idempotency=lambda raw: "confirmation_token" in raw,
    max_charge=setup_sending_hold, tags=("sending",),
    errors=(errors.ConfirmationInvalid, errors.InsufficientCredits, errors.ConfirmationDenied,
            errors.ConfirmationPending, errors.ConfirmationUsed, errors.ConfirmationExpired,
            errors.IdempotencyKeyRequired, errors.IdempotencyKeyReused, errors.IdempotencyInProgress,
            errors.ProviderUnavailable),
    summary="Buy sending capacity (domains and mailboxes): quote, human approval, purchase",
    description=(
        "Without `confirmation_token`: a free quote (mailboxes = ceil(emails_per_week / 125), domains = "
        "ceil(mailboxes / 5), 1500 credits per domain once, 750 per mailbox per month) and a single-use token "
        "valid 15 minutes, with an `approval_url` for a human. With the approved token, the same parameters and "
        "an `Idempotency-Key`: the purchase, charging setup plus the first month; provisioning is asynchronous, "
        "poll GET /v1/operations/{operation_id}."
    ),
))


class OperationOut(serializers.Serializer):
    operation_id = serializers.CharField()
    kind = serializers.CharField()
    status = serializers.ChoiceField(choices=["queued", "running", "waiting_external", "succeeded",
                                              "partially_succeeded", "failed"])
    request_id = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    result = serializers.DictField(required=False)
    error = serializers.DictField(required=False)


class OperationIdIn(StrictSerializer):
    operation_id = serializers.CharField(max_length=40, help_text="The operation_id of a purchase.")


def run_get_operation(ctx, *, operation_id: str) -> Outcome:
    op = selectors.operation_get(workspace=ctx.workspace, operation_id=operation_id)
    if op.outcome_unknown and not op.is_final:
        raise errors.OperationUnknownState(
            "The outcome of an external provisioning step is unknown; it is being read back from the provider. "
            "Poll this operation again; do not repeat the purchase.",
            details={"operation_id": op.id, "request_id": op.request_id, "status": op.status},
        )
    return Outcome(result=services.operation_render(op))


get_operation = register(Verb(
    name="get_operation", path="/v1/operations/<str:operation_id>", method="GET", run=run_get_operation,
    input=OperationIdIn, output=OperationOut, envelope=False, record=False, tags=("state",),
    errors=(errors.NotFound, errors.OperationUnknownState),
    summary="Progress of an asynchronous operation (a setup_sending purchase)",
    description=("Free. Status moves queued -> running -> waiting_external -> succeeded | partially_succeeded | "
                 "failed. 502 operation_unknown_state while an external step's outcome is being read back. "
                 "Another workspace's id is 404."),
))


class MailboxHealthOut(serializers.Serializer):
    state = serializers.ChoiceField(choices=HEALTH_STATES,
                                    help_text="`paused`: nothing is sent from it until an owner or admin resumes it.")
    reasons = serializers.ListField(child=serializers.ChoiceField(choices=HEALTH_REASONS))
    bounce_rate = serializers.FloatField(allow_null=True, help_text="Hard bounces over the last 50 sends.")
    sends_recent = serializers.IntegerField(help_text="Sends counted in bounce_rate (at most 50).")
    complaints_7d = serializers.IntegerField()
    changed_at = serializers.DateTimeField(allow_null=True)


class MailboxOut(serializers.Serializer):
    mailbox_id = serializers.CharField()
    email = serializers.EmailField()
    source = serializers.ChoiceField(choices=["sandbox", "byo", "vendor"],
                                     help_text="sandbox, bought from a vendor, or the customer's own (byo).")
    auth = serializers.ChoiceField(choices=["password", "oauth2"],
                                   help_text="How the service signs in: a stored password, or OAuth 2.0 (XOAUTH2).")
    oauth_provider = serializers.CharField(allow_null=True, help_text="google or microsoft for oauth2 mailboxes.")
    mail_provider = serializers.ChoiceField(choices=HOST_PROVIDERS,
                                            help_text="Who hosts the mailbox: Google, Microsoft, or another server.")
    status = serializers.ChoiceField(
        choices=["provisioning", "active", "suspended", "needs_reconnect", "failed"],
        help_text="Only `active` mailboxes send. `needs_reconnect`: the OAuth consent was revoked or the refresh "
                  "refused; an owner must reconnect it in the console (Mailboxes page).")
    reconnect_reason = serializers.CharField(allow_null=True)
    needs_reconnect_since = serializers.DateTimeField(allow_null=True)
    daily_limit = serializers.IntegerField()
    activated_at = serializers.DateTimeField(allow_null=True)
    renews_at = serializers.DateTimeField(allow_null=True)
    health = MailboxHealthOut(help_text="Deliverability (CONTRACT 4.13, docs/deliverability.md).")


class MailboxListOut(serializers.Serializer):
    mailboxes = MailboxOut(many=True)


def run_list_mailboxes(ctx) -> Outcome:
    return Outcome(result={"mailboxes": [selectors.mailbox_render(m) for m in selectors.mailboxes_list(workspace=ctx.workspace)]})


list_mailboxes = register(Verb(
    name="list_mailboxes", path="/v1/mailboxes", method="GET", run=run_list_mailboxes, input=None,
    output=MailboxListOut, envelope=False, record=False, tags=("state",),
    summary="The workspace's mailboxes and their state (removed ones are not listed)",
    description=("Free. `status: needs_reconnect` means an OAuth mailbox (Google, Microsoft) lost its consent: "
                 "nothing is sent from it until an owner reconnects it on the console's Mailboxes page; campaign "
                 "leads assigned to it wait. `health.state: paused` (hard bounces, complaints, DNS "
                 "authentication or a blocklist listing, docs/deliverability.md): nothing is sent from it until an "
                 "owner or admin resumes it on the console's Deliverability page; campaigns send from their other "
                 "mailboxes meanwhile. Oldest first."),
))
