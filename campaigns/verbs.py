"""Campaign verbs (SPEC 4.6, 4.7): create_campaign and launch_campaign, both free."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rest_framework import serializers

from campaigns import headers, services, templating
from campaigns.models import DEFAULT_WINDOW
from campaigns.window import DAY_NAMES
from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register

MAX_LEADS = 5000
MAX_STEPS = 8
MAX_NAME = 120


def _header_safe(value):
    """Lead values may land in the Subject and To headers: line breaks and tabs are folded to a space when the
    message is built, anything else that is a control character (raw, or inside an RFC 2047 encoded-word once
    decoded) is refused here (issue 15.1)."""
    if isinstance(value, str):
        problem = headers.header_text_problem(" ".join(value.split()))
        if problem:
            raise serializers.ValidationError(f"Values used in mail headers {problem}.")
    return value


class LeadIn(StrictSerializer):
    email = serializers.CharField(allow_blank=True, trim_whitespace=True, max_length=1000,
                                  help_text="Normalized; invalid syntax is filtered out (counted as invalid_email).")
    first_name = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=200)
    last_name = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=200)
    company_name = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=300)
    custom = serializers.DictField(required=False, allow_empty=True,
                                   help_text="Extra template variables: {\"key\": string | number | boolean}.")

    def validate_first_name(self, value):
        return _header_safe(value)

    def validate_last_name(self, value):
        return _header_safe(value)

    def validate_company_name(self, value):
        return _header_safe(value)

    def validate_email(self, value):
        return _header_safe(value)

    def validate_custom(self, value):
        for key, item in value.items():
            try:
                _header_safe(item)
            except serializers.ValidationError:
                raise serializers.ValidationError({key: ["Values used in mail headers must not contain control "
                                                         "characters, raw or RFC 2047-encoded."]}) from None
        bad = [k for k, v in value.items()
               if not templating.NAME_RE.match(k) or not (v is None or isinstance(v, str | int | float | bool))]
        if bad:
            raise serializers.ValidationError(
                f"Keys must be identifiers ([A-Za-z_][A-Za-z0-9_]*) with string, number or boolean values: {', '.join(sorted(bad)[:10])}.")
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 custom keys.")
        return value


class StepIn(StrictSerializer):
    subject = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=998,
                                    help_text="Required on the first step. A later step without one continues the thread.")
    body = serializers.CharField(max_length=100_000, trim_whitespace=False)
    wait_days = serializers.IntegerField(required=False, default=0, min_value=0, max_value=365,
                                         help_text="Days after the previous step's send (the first step's: after launch).")

    def validate_subject(self, value):
        problem = headers.header_text_problem(value) if value else None
        if problem:
            raise serializers.ValidationError(f"The subject {problem}.")
        return value

    def validate_body(self, value):
        if not value.strip():
            raise serializers.ValidationError("This field may not be blank.")
        return value


class WindowIn(StrictSerializer):
    timezone = serializers.CharField(required=False, default="UTC", max_length=64, help_text="IANA time zone name.")
    days = serializers.ListField(child=serializers.ChoiceField(choices=list(DAY_NAMES)), required=False,
                                 min_length=1, max_length=7, default=list(DEFAULT_WINDOW["days"]))
    start_hour = serializers.IntegerField(required=False, default=9, min_value=0, max_value=23)
    end_hour = serializers.IntegerField(required=False, default=17, min_value=1, max_value=24)

    def validate_timezone(self, value):
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise serializers.ValidationError(f"Unknown IANA time zone {value!r}.") from None
        return value

    def validate(self, attrs):
        if attrs["start_hour"] >= attrs["end_hour"]:
            raise serializers.ValidationError({"end_hour": ["end_hour must be after start_hour."]})
        attrs["days"] = [d for d in DAY_NAMES if d in set(attrs["days"])]
        return attrs


class CreateCampaignIn(StrictSerializer):
    name = serializers.CharField(max_length=MAX_NAME)
    leads = LeadIn(many=True, min_length=1, max_length=MAX_LEADS, allow_empty=False)
    steps = StepIn(many=True, min_length=1, max_length=MAX_STEPS, allow_empty=False)
    sending_window = WindowIn(required=False)
    stop_on_reply = serializers.BooleanField(required=False, default=True,
                                             help_text="Always true: a reply stops that lead's sequence.")

    def validate_stop_on_reply(self, value):
        if value is not True:
            raise serializers.ValidationError("Replies always stop the sequence; stop_on_reply cannot be false.")
        return value

    def validate(self, attrs):
        steps = attrs["steps"]
        problems: list[dict] = [{} for _ in steps]
        if not (steps[0].get("subject") or "").strip():
            problems[0]["subject"] = ["The first step needs a subject."]
        allowed = set(templating.STANDARD_VARIABLES)
        for lead in attrs["leads"]:
            allowed.update((lead.get("custom") or {}).keys())
        for i, step in enumerate(steps):
            for field in ("subject", "body"):
                unknown = templating.unknown_variables(step.get(field) or "", allowed)
                if unknown:
                    problems[i].setdefault(field, []).append(
                        "Unknown variable(s): " + ", ".join("{{" + u + "}}" for u in unknown)
                        + ". Known: " + ", ".join(sorted(allowed)) + ".")
        if any(problems):
            raise serializers.ValidationError({"steps": {i: p for i, p in enumerate(problems) if p}})
        return attrs


class CampaignOut(serializers.Serializer):
    campaign_id = serializers.UUIDField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=["draft", "launched", "completed"])
    leads_accepted = serializers.IntegerField()
    leads_suppressed = serializers.IntegerField(help_text="Suppressed or invalid leads filtered out.")
    suppressed_reasons = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="unsubscribed, bounced, replied, invalid_email, duplicate (and manual when present).")
    created_at = serializers.DateTimeField()
    steps = serializers.IntegerField()
    sending_window = serializers.DictField()
    stop_on_reply = serializers.BooleanField()


def run_create(ctx, *, name, leads, steps, sending_window=None, stop_on_reply=True) -> Outcome:
    window = dict(sending_window) if sending_window else dict(DEFAULT_WINDOW)
    clean_steps = [{"subject": (s.get("subject") or None), "body": s["body"], "wait_days": s.get("wait_days", 0)}
                   for s in steps]
    campaign = services.campaign_create(workspace=ctx.workspace, name=name.strip() or name, leads=leads,
                                        steps=clean_steps, sending_window=window)
    return Outcome(result=services.campaign_record(campaign))


create_campaign = register(Verb(
    name="create_campaign", path="/v1/campaigns", run=run_create, input=CreateCampaignIn, output=CampaignOut,
    scope="campaign:write", idempotency="required", max_charge=0, tags=("campaigns",),
    summary="Create a draft campaign (drafts never send)",
    description=(
        "Free. Leads are normalized; invalid syntax, duplicates and suppressed addresses are filtered out and "
        "counted in `suppressed_reasons`. Steps support `{{first_name}}`, `{{last_name}}`, `{{company_name}}`, "
        "`{{email}}`, any `custom` key, and fallbacks such as `{{first_name|there}}`; an unknown variable is 400. "
        "The first step needs a subject; a later step without one is sent as a reply in the same thread. "
        "`sending_window` defaults to mon-fri 9-17 UTC."
    ),
))


class LaunchIn(StrictSerializer):
    campaign_id = serializers.UUIDField()
    confirmation_token = serializers.CharField(required=False, max_length=200,
                                               help_text="Absent: preview + token. Present and approved: launch.")


class LaunchOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["preview", "launched"])
    campaign_id = serializers.UUIDField()
    mailboxes_active = serializers.IntegerField(required=False, help_text="preview")
    leads_active = serializers.IntegerField()
    leads_suppressed_since_draft = serializers.IntegerField(required=False, help_text="preview")
    confirmation_token = serializers.CharField(required=False, help_text="preview; single use, 24 hours")
    confirmation_expires_at = serializers.DateTimeField(required=False, help_text="preview")
    approval_url = serializers.URLField(required=False, help_text="preview: a human approves here")
    mailboxes_attached = serializers.IntegerField(required=False, help_text="launched")
    leads_suppressed_at_launch = serializers.IntegerField(required=False, help_text="launched")


def run_launch(ctx, *, campaign_id, confirmation_token=None) -> Outcome:
    if confirmation_token is None:
        result = services.launch_preview(workspace=ctx.workspace, campaign_id=campaign_id, request_id=ctx.request_id)
    else:
        result = services.campaign_launch(workspace=ctx.workspace, campaign_id=campaign_id,
                                          confirmation_token=confirmation_token, request_id=ctx.request_id)
    return Outcome(result=result)


launch_campaign = register(Verb(
    name="launch_campaign", path="/v1/launch_campaign", run=run_launch, input=LaunchIn, output=LaunchOut,
    scope="campaign:launch", idempotency=lambda raw: "confirmation_token" in raw, max_charge=0,
    tags=("campaigns",),
    errors=(errors.NotFound, errors.ConfirmationInvalid, errors.ConfirmationDenied, errors.ConfirmationPending,
            errors.ConfirmationUsed, errors.ConfirmationExpired, errors.SendingCapacityRequired,
            errors.CampaignNotDraft, errors.LaunchAborted, errors.IdempotencyKeyRequired),
    summary="Preview a launch (token for human approval), then launch with the approved token",
    description=(
        "Free. Without `confirmation_token`: `status: preview` with `mailboxes_active`, `leads_active`, "
        "`leads_suppressed_since_draft` and a single-use 24-hour token plus `approval_url`. With the approved "
        "token (and an Idempotency-Key): `status: launched`; every active mailbox is attached and leads "
        "suppressed since drafting are removed (`leads_suppressed_at_launch`). If a removal cannot be "
        "confirmed the launch aborts (409 `launch_aborted`) and the campaign stays a draft."
    ),
))
