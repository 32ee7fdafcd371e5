"""Campaign verbs (SPEC 4.6, 4.7): create_campaign and launch_campaign, both free."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rest_framework import serializers

from campaigns import headers, selectors, services, templating, verify_leads
from campaigns.models import DEFAULT_WINDOW
from campaigns.window import DAY_NAMES, LEAD_ZONE
from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register
from sending.models import HOST_PROVIDERS

MAX_LEADS = 5000
MAX_STEPS = 8
MAX_NAME = 120
MIN_VARIANTS, MAX_VARIANTS = 2, 5
MIN_SENDS_PER_VARIANT = 20


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
    timezone = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=64,
                                     help_text="IANA time zone of the lead (used by `sending_window.timezone: lead`).")

    def validate_timezone(self, value):
        if value:
            _check_zone(value)
        return value or ""

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


def _check_zone(value: str) -> None:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise serializers.ValidationError(f"Unknown IANA time zone {value!r}.") from None


def _check_subject(value):
    problem = headers.header_text_problem(value) if value else None
    if problem:
        raise serializers.ValidationError(f"The subject {problem}.")
    return value


def _check_body(value):
    if not value.strip():
        raise serializers.ValidationError("This field may not be blank.")
    return value


class VariantIn(StrictSerializer):
    subject = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=998,
                                    help_text="Required in every variant of the first step.")
    body = serializers.CharField(max_length=100_000, trim_whitespace=False)

    def validate_subject(self, value):
        return _check_subject(value)

    def validate_body(self, value):
        return _check_body(value)


class StepIn(StrictSerializer):
    subject = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=998,
                                    help_text="Required on the first step. A later step without one continues the thread.")
    body = serializers.CharField(required=False, max_length=100_000, trim_whitespace=False,
                                 help_text="Required unless the step has `variants`.")
    variants = VariantIn(many=True, required=False, min_length=MIN_VARIANTS, max_length=MAX_VARIANTS,
                         help_text=f"{MIN_VARIANTS} to {MAX_VARIANTS} alternative texts `{{subject?, body}}` instead "
                                   "of `subject`/`body`; each lead gets one, evenly and deterministically.")
    wait_days = serializers.IntegerField(required=False, default=0, min_value=0, max_value=365,
                                         help_text="Days after the previous step's send (the first step's: after launch).")

    def validate_subject(self, value):
        return _check_subject(value)

    def validate_body(self, value):
        return _check_body(value)

    def validate(self, attrs):
        if "variants" in attrs:
            both = [f for f in ("subject", "body") if attrs.get(f)]
            if both:
                raise serializers.ValidationError(
                    {f: ["A step has either `variants` or its own subject and body, not both."] for f in both})
        elif "body" not in attrs:
            raise serializers.ValidationError({"body": ["This field is required (or give `variants`)."]})
        return attrs


class WindowIn(StrictSerializer):
    timezone = serializers.CharField(required=False, default="UTC", max_length=64, help_text=(
        "IANA time zone name, or `lead`: each lead in its own `timezone` (then `fallback_timezone` is required)."))
    fallback_timezone = serializers.CharField(required=False, max_length=64, help_text=(
        "With `timezone: lead`: the IANA zone of leads without one."))
    days = serializers.ListField(child=serializers.ChoiceField(choices=list(DAY_NAMES)), required=False,
                                 min_length=1, max_length=7, default=list(DEFAULT_WINDOW["days"]))
    start_hour = serializers.IntegerField(required=False, default=9, min_value=0, max_value=23)
    end_hour = serializers.IntegerField(required=False, default=17, min_value=1, max_value=24)

    def validate_timezone(self, value):
        if value != LEAD_ZONE:
            _check_zone(value)
        return value

    def validate_fallback_timezone(self, value):
        _check_zone(value)
        return value

    def validate(self, attrs):
        if attrs["start_hour"] >= attrs["end_hour"]:
            raise serializers.ValidationError({"end_hour": ["end_hour must be after start_hour."]})
        if attrs.get("timezone") == LEAD_ZONE and not attrs.get("fallback_timezone"):
            raise serializers.ValidationError({"fallback_timezone": [
                "Required with timezone \"lead\": the zone of leads without one."]})
        if attrs.get("timezone") != LEAD_ZONE and "fallback_timezone" in attrs:
            raise serializers.ValidationError({"fallback_timezone": ["Only with timezone \"lead\"."]})
        attrs["days"] = [d for d in DAY_NAMES if d in set(attrs["days"])]
        return attrs


class AutoWinnerIn(StrictSerializer):
    metric = serializers.ChoiceField(choices=["interested_rate", "reply_rate"], help_text=(
        "interested_rate: leads with an `interested` reply / sends; reply_rate: leads who replied (out-of-office "
        "and bounces excluded) / sends."))
    min_sends_per_variant = serializers.IntegerField(min_value=MIN_SENDS_PER_VARIANT, max_value=100_000, help_text=(
        "Every variant of a step needs this many sends before a winner may be chosen (at least 20)."))


class CreateCampaignIn(StrictSerializer):
    name = serializers.CharField(max_length=MAX_NAME)
    leads = LeadIn(many=True, min_length=1, max_length=MAX_LEADS, allow_empty=False)
    steps = StepIn(many=True, min_length=1, max_length=MAX_STEPS, allow_empty=False)
    sending_window = WindowIn(required=False)
    stop_on_reply = serializers.BooleanField(required=False, default=True,
                                             help_text="Always true: a reply stops that lead's sequence.")
    auto_winner = AutoWinnerIn(required=False, allow_null=True, help_text=(
        "Send only the best variant of a step to the leads still to reach it, once every variant has "
        "`min_sends_per_variant` sends and the leader passes the documented test (docs/campaigns.md)."))
    stop_on_company_reply = serializers.BooleanField(required=False, default=False, help_text=(
        "A reply (not out-of-office, not a bounce) from any lead of a company domain stops the other leads of "
        "that domain in this campaign (`stopped_company_replied`); free-mail domains excluded."))
    match_mailbox_provider = serializers.BooleanField(required=False, default=False, help_text=(
        "Send leads whose domain's MX is Google-hosted from a Google mailbox and Microsoft-hosted from a "
        "Microsoft one when the campaign has one with capacity left that day, otherwise from any."))
    verify_leads = serializers.BooleanField(
        required=False, default=False,
        help_text="Verify at launch every lead without a verification from the last 30 days (1 credit each, "
                  "`unknown` free); `invalid` ones are suppressed as `invalid_email`. The launch preview shows the "
                  "cost.")

    def validate_stop_on_reply(self, value):
        if value is not True:
            raise serializers.ValidationError("Replies always stop the sequence; stop_on_reply cannot be false.")
        return value

    def validate(self, attrs):
        steps = attrs["steps"]
        problems: list[dict] = [{} for _ in steps]
        allowed = set(templating.STANDARD_VARIABLES)
        for lead in attrs["leads"]:
            allowed.update((lead.get("custom") or {}).keys())
        for i, step in enumerate(steps):
            texts = ([(problems[i].setdefault("variants", {}).setdefault(j, {}), v)
                      for j, v in enumerate(step["variants"])] if "variants" in step else [(problems[i], step)])
            for where, text in texts:
                if i == 0 and not (text.get("subject") or "").strip():
                    where["subject"] = ["The first step needs a subject."
                                        if where is problems[i] else "Every variant of the first step needs a subject."]
                for field in ("subject", "body"):
                    for message in text_problems(text.get(field) or "", allowed):
                        where.setdefault(field, []).append(message)
            if not any(problems[i].get("variants", {}).values()):
                problems[i].pop("variants", None)
        if any(problems):
            raise serializers.ValidationError({"steps": {i: p for i, p in enumerate(problems) if p}})
        if attrs.get("auto_winner") and not any("variants" in s for s in steps):
            raise serializers.ValidationError({"auto_winner": ["Needs at least one step with `variants`."]})
        return attrs


def text_problems(text: str, allowed: set[str]) -> list[str]:
    """What is wrong with one subject or body: broken spintax (with its position), unknown variables. The
    console's campaign form shows the same messages."""
    problem = templating.spintax_problem(text)
    if problem:
        return [problem[0].upper() + problem[1:] + "."]
    unknown = templating.unknown_variables(templating.spintax_flatten(text), allowed)
    if unknown:
        return ["Unknown variable(s): " + ", ".join("{{" + u + "}}" for u in unknown)
                + ". Known: " + ", ".join(sorted(allowed)) + "."]
    return []


class CampaignOut(serializers.Serializer):
    campaign_id = serializers.UUIDField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=["draft", "launched", "paused", "completed"])
    leads_accepted = serializers.IntegerField()
    leads_suppressed = serializers.IntegerField(help_text="Suppressed or invalid leads filtered out.")
    suppressed_reasons = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="unsubscribed, bounced, replied, invalid_email, duplicate (and manual when present).")
    created_at = serializers.DateTimeField()
    steps = serializers.IntegerField()
    sending_window = serializers.DictField()
    stop_on_reply = serializers.BooleanField()
    auto_winner = serializers.DictField(allow_null=True, help_text="{metric, min_sends_per_variant} or null")
    stop_on_company_reply = serializers.BooleanField()
    match_mailbox_provider = serializers.BooleanField()
    verify_leads = serializers.BooleanField(help_text=(
        "Leads without a verification from the last 30 days are verified at launch (1 credit each, `unknown` "
        "free) and `invalid` ones suppressed as `invalid_email`."))


def _clean_step(step: dict) -> dict:
    if "variants" in step:
        return {"variants": [{"subject": (v.get("subject") or None), "body": v["body"]} for v in step["variants"]],
                "wait_days": step.get("wait_days", 0)}
    return {"subject": (step.get("subject") or None), "body": step["body"], "wait_days": step.get("wait_days", 0)}


def run_create_args(*, name, leads, steps, sending_window=None, stop_on_reply=True, auto_winner=None,
                    stop_on_company_reply=False, match_mailbox_provider=False, verify_leads=False) -> dict:
    """campaign_create's arguments from validated create_campaign input (the API and the console's form)."""
    return {"name": name.strip() or name, "leads": leads, "steps": [_clean_step(s) for s in steps],
            "sending_window": dict(sending_window) if sending_window else dict(DEFAULT_WINDOW),
            "auto_winner": dict(auto_winner) if auto_winner else None,
            "stop_on_company_reply": stop_on_company_reply, "match_mailbox_provider": match_mailbox_provider,
            "verify_leads": verify_leads}


def run_create(ctx, **data) -> Outcome:
    campaign = services.campaign_create(workspace=ctx.workspace, **run_create_args(**data))
    return Outcome(result=selectors.campaign_record(campaign))


create_campaign = register(Verb(
    name="create_campaign", path="/v1/campaigns", run=run_create, input=CreateCampaignIn, output=CampaignOut,
    scope="campaign:write", idempotency="required", max_charge=0, tags=("campaigns",),
    summary="Create a draft campaign (drafts never send)",
    description=(
        "Free. Leads are normalized; invalid syntax, duplicates and suppressed addresses are filtered out and "
        "counted in `suppressed_reasons`. Steps support `{{first_name}}`, `{{last_name}}`, `{{company_name}}`, "
        "`{{email}}`, any `custom` key, and fallbacks such as `{{first_name|there}}`; an unknown variable is 400. "
        "The first step needs a subject; a later step without one is sent as a reply in the same thread. "
        "A step may carry 2-5 `variants` (`{subject?, body}`) instead of one text: leads are assigned evenly and "
        "deterministically, and `auto_winner` sends only the best one once the documented test picks it. "
        "Spintax `{{RANDOM | A | B}}` picks one option per lead and place (an empty option or unbalanced block is "
        "400 naming the step and position). `sending_window` defaults to mon-fri 9-17 UTC; `timezone: \"lead\"` "
        "(with `fallback_timezone`) sends each lead in its own `timezone`. `stop_on_company_reply` stops a "
        "company's other leads when one replies; `match_mailbox_provider` sends Google- and Microsoft-hosted "
        "leads from mailboxes of the same provider."
    ),
))


class LaunchIn(StrictSerializer):
    campaign_id = serializers.UUIDField()
    confirmation_token = serializers.CharField(required=False, max_length=200,
                                               help_text="Absent: preview + token. Present and approved: launch.")


class SampleOut(serializers.Serializer):
    to = serializers.CharField()
    variant = serializers.IntegerField(allow_null=True, help_text="0-based variant index, null without variants")
    subject = serializers.CharField()
    body = serializers.CharField()


class LaunchOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["preview", "launched"])
    campaign_id = serializers.UUIDField()
    mailboxes_active = serializers.IntegerField(required=False, help_text="preview")
    leads_active = serializers.IntegerField()
    leads_suppressed_since_draft = serializers.IntegerField(required=False, help_text="preview")
    confirmation_token = serializers.CharField(required=False, help_text="preview; single use, 24 hours")
    confirmation_expires_at = serializers.DateTimeField(required=False, help_text="preview")
    approval_url = serializers.URLField(required=False, help_text="preview: a human approves here")
    samples = SampleOut(many=True, required=False, help_text=(
        "preview: the first message as the first three leads will get it (variant chosen, spintax spun)."))
    mailboxes_attached = serializers.IntegerField(required=False, help_text="launched")
    leads_suppressed_at_launch = serializers.IntegerField(required=False, help_text="launched")
    leads_to_verify = serializers.IntegerField(required=False, help_text="preview, verify_leads campaigns")
    verification_credits_max = serializers.CharField(required=False,
                                                     help_text="preview, verify_leads: 1 credit per lead to verify")
    leads_catch_all = serializers.IntegerField(required=False, help_text="preview, verify_leads: recent results")
    leads_risky = serializers.IntegerField(required=False, help_text="preview, verify_leads: recent results")
    leads_verified = serializers.IntegerField(required=False, help_text="launched, verify_leads")
    leads_invalid = serializers.IntegerField(required=False,
                                             help_text="launched, verify_leads: suppressed as invalid_email")
    leads_unknown = serializers.IntegerField(required=False, help_text="launched, verify_leads: free misses")


def run_launch(ctx, *, campaign_id, confirmation_token=None) -> Outcome:
    if confirmation_token is None:
        result = services.launch_preview(workspace=ctx.workspace, campaign_id=campaign_id, request_id=ctx.request_id)
        return Outcome(result=result)
    # verify_leads: verify (held before the run) and suppress invalid leads, then launch; the exact charge settles
    charge, counts = verify_leads.verify_at_launch(workspace=ctx.workspace, campaign_id=campaign_id,
                                                   request_id=ctx.request_id, hold=ctx.hold)
    result = services.campaign_launch(workspace=ctx.workspace, campaign_id=campaign_id,
                                      confirmation_token=confirmation_token, request_id=ctx.request_id)
    return Outcome(result={**result, **counts}, charge=charge)


launch_campaign = register(Verb(
    name="launch_campaign", path="/v1/launch_campaign", run=run_launch, input=LaunchIn, output=LaunchOut,
    scope="campaign:launch", idempotency=lambda raw: "confirmation_token" in raw, max_charge=verify_leads.launch_hold,
    tags=("campaigns",),
    errors=(errors.NotFound, errors.ConfirmationInvalid, errors.ConfirmationDenied, errors.ConfirmationPending,
            errors.ConfirmationUsed, errors.ConfirmationExpired, errors.SendingCapacityRequired,
            errors.CampaignNotDraft, errors.LaunchAborted, errors.IdempotencyKeyRequired, errors.InsufficientCredits),
    summary="Preview a launch (token for human approval), then launch with the approved token",
    description=(
        "Free. Without `confirmation_token`: `status: preview` with `mailboxes_active`, `leads_active`, "
        "`leads_suppressed_since_draft` and a single-use 24-hour token plus `approval_url`. With the approved "
        "token (and an Idempotency-Key): `status: launched`; every active mailbox is attached and leads "
        "suppressed since drafting are removed (`leads_suppressed_at_launch`). If a removal cannot be "
        "confirmed the launch aborts (409 `launch_aborted`) and the campaign stays a draft. A campaign created with "
        "`verify_leads: true`: the preview adds `leads_to_verify`, `verification_credits_max`, `leads_catch_all` and "
        "`leads_risky`; the launch holds that maximum, verifies those leads (1 credit each, `unknown` free), "
        "suppresses `invalid` ones as `invalid_email` and charges the exact amount."
    ),
))


# --- campaign reads and control (CONTRACT 4.10b) ------------------------------------------------------
WAITING_REASONS = ["outside_window", "daily_cap_reached", "no_active_mailbox", "mailbox_needs_reconnect",
                   "mailbox_paused", "paused",
                   "completed"]
STATES = ["draft", "launched", "paused", "completed"]
LIST_MAX = 100


class CampaignIdIn(StrictSerializer):
    campaign_id = serializers.UUIDField(help_text="A campaign of this workspace (another workspace's is 404).")


class CampaignIdPathIn(StrictSerializer):
    campaign_id = serializers.CharField(max_length=64)


def _campaign(ctx, campaign_id):
    import uuid

    try:
        pk = uuid.UUID(str(campaign_id))
    except ValueError:
        raise errors.NotFound("No such campaign in this workspace.") from None
    return selectors.campaign_get(workspace=ctx.workspace, campaign_id=pk)


class MailboxOut(serializers.Serializer):
    class Meta:
        ref_name = "CampaignMailbox"  # sending.verbs.MailboxOut is the component "MailboxOut"

    mailbox_id = serializers.CharField()
    email = serializers.CharField()
    status = serializers.CharField(help_text="active, suspended, needs_reconnect, provisioning, failed, removed")


class StepCountOut(serializers.Serializer):
    step = serializers.IntegerField(help_text="1-based")
    sent = serializers.IntegerField()


class MessageStatsOut(serializers.Serializer):
    sent = serializers.IntegerField()
    sent_per_step = StepCountOut(many=True)
    bounced = serializers.IntegerField()
    in_doubt = serializers.IntegerField(help_text="Messages whose hand-over to SMTP never finished (a crash "
                                                  "mid-send): never re-sent; see the leads' send_in_doubt.")


class VariantStatsOut(serializers.Serializer):
    variant = serializers.IntegerField(help_text="0-based index into the step's `variants`")
    sent = serializers.IntegerField()
    replies = serializers.IntegerField(help_text="Leads who replied to it (out-of-office and bounces excluded).")
    interested = serializers.IntegerField(help_text="Leads whose reply is `interested`.")
    bounced = serializers.IntegerField()


class StepStatsOut(serializers.Serializer):
    step = serializers.IntegerField(help_text="1-based")
    sent = serializers.IntegerField()
    variants = VariantStatsOut(many=True, help_text="Empty for a step without variants.")
    winner = serializers.IntegerField(allow_null=True, help_text="0-based index of the chosen variant (auto_winner).")
    winner_chosen_at = serializers.DateTimeField(allow_null=True)


class StatsOut(serializers.Serializer):
    leads = serializers.DictField(child=serializers.IntegerField(), help_text=(
        "Leads by status: queued, active, finished, replied, bounced, unsubscribed, suppressed_at_send, "
        "suppressed, send_unknown, stopped_company_replied, stopped, removed_at_launch, and total."))
    messages = MessageStatsOut()
    replies = serializers.DictField(child=serializers.IntegerField(), help_text="Replies by classification.")
    leads_contacted = serializers.IntegerField()
    bounce_rate = serializers.FloatField(allow_null=True, help_text="bounced / (sent + bounced attempts)")
    reply_rate = serializers.FloatField(allow_null=True, help_text=(
        "leads who replied (out-of-office and bounces excluded) / leads contacted"))
    steps = StepStatsOut(many=True, help_text="Per step: sends, per-variant figures and the winner.")


class CampaignDetailOut(CampaignOut):
    state = serializers.ChoiceField(choices=STATES)
    launched_at = serializers.DateTimeField(allow_null=True)
    paused_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    next_send_at = serializers.DateTimeField(allow_null=True, help_text=(
        "The next moment a message is due inside the sending window; null when nothing can be scheduled."))
    waiting_reason = serializers.ChoiceField(choices=WAITING_REASONS, allow_null=True, help_text=(
        "Why nothing is being sent right now, or null."))
    mailboxes = MailboxOut(many=True)
    stats = StatsOut()


def run_get_campaign(ctx, *, campaign_id) -> Outcome:
    return Outcome(result=selectors.campaign_detail(_campaign(ctx, campaign_id)))


get_campaign = register(Verb(
    name="get_campaign", path="/v1/campaigns/<str:campaign_id>", method="GET", run=run_get_campaign,
    input=CampaignIdPathIn, output=CampaignDetailOut, envelope=False, record=False, tags=("campaigns",),
    errors=(errors.NotFound,),
    summary="Read a campaign back: state, next send or why it waits, mailboxes, stats",
    description=(
        "Free. The campaign record plus `state` (draft, launched, paused, completed), `next_send_at` (the next "
        "moment a message is due inside the sending window) and `waiting_reason` (`outside_window`, "
        "`daily_cap_reached`, `no_active_mailbox`, `mailbox_needs_reconnect`, `mailbox_paused`, `paused`, "
        "`completed`, or null), "
        "the attached `mailboxes` with their state, and `stats`: leads by status, messages sent per step, "
        "replies by classification, bounce and reply rates. Another workspace's id is 404."
    ),
))


class ListCampaignsIn(StrictSerializer):
    state = serializers.ChoiceField(choices=STATES, required=False, help_text="Only campaigns in this state.")
    cursor = serializers.CharField(required=False, max_length=500, help_text="next_cursor of the previous page.")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=LIST_MAX)


class CampaignListItemOut(CampaignOut):
    state = serializers.ChoiceField(choices=STATES)
    launched_at = serializers.DateTimeField(allow_null=True)
    paused_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    next_send_at = serializers.DateTimeField(allow_null=True)
    waiting_reason = serializers.ChoiceField(choices=WAITING_REASONS, allow_null=True)
    messages_sent = serializers.IntegerField()
    replies = serializers.IntegerField()


class ListCampaignsOut(serializers.Serializer):
    campaigns = CampaignListItemOut(many=True)
    next_cursor = serializers.CharField(allow_null=True, help_text="Pass as `cursor` for the next page; null at the end.")


def run_list_campaigns(ctx, *, state=None, cursor=None, limit=50) -> Outcome:
    rows, next_cursor = selectors.campaigns_page(workspace=ctx.workspace, state=state, cursor=cursor, limit=limit)
    return Outcome(result={"campaigns": selectors.campaign_list_items(rows), "next_cursor": next_cursor})


list_campaigns = register(Verb(
    name="list_campaigns", path="/v1/campaigns", method="GET", run=run_list_campaigns, input=ListCampaignsIn,
    output=ListCampaignsOut, envelope=False, record=False, tags=("campaigns",), query=("state", "cursor", "limit"),
    summary="List campaigns, newest first",
    description="Free. Cursor pagination (`cursor` = the previous page's `next_cursor`); filter by `state`.",
))


class ListLeadsIn(StrictSerializer):
    campaign_id = serializers.CharField(max_length=64)
    cursor = serializers.CharField(required=False, max_length=500, help_text="next_cursor of the previous page.")
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=LIST_MAX)
    status = serializers.ChoiceField(required=False, choices=[
        "queued", "active", "finished", "replied", "bounced", "unsubscribed", "suppressed_at_send", "suppressed",
        "send_unknown", "stopped_company_replied", "stopped", "removed_at_launch"], help_text="Only leads with this status.")


class SendInDoubtOut(serializers.Serializer):
    message_id = serializers.CharField()
    step = serializers.IntegerField()
    sending_since = serializers.DateTimeField()
    reported_at = serializers.DateTimeField(allow_null=True, help_text="When the sweeper declared it stuck.")


class CampaignLeadOut(serializers.Serializer):
    email = serializers.CharField()
    first_name = serializers.CharField()
    last_name = serializers.CharField()
    company_name = serializers.CharField()
    status = serializers.CharField(help_text="queued, active, finished, replied, bounced, unsubscribed, "
                                             "suppressed_at_send, suppressed, send_unknown, stopped_company_replied, "
                                             "stopped, removed_at_launch")
    state = serializers.CharField(help_text="pending, active, finished, stopped, removed")
    stop_reason = serializers.CharField(allow_null=True)
    stopped_at = serializers.DateTimeField(allow_null=True)
    mailbox_id = serializers.CharField(allow_null=True)
    timezone = serializers.CharField(allow_null=True, help_text="The lead's IANA time zone, if given.")
    recipient_provider = serializers.ChoiceField(choices=HOST_PROVIDERS, allow_null=True, help_text=(
        "Who hosts the lead's mail (its domain's MX), recorded before the first send when the campaign has "
        "`match_mailbox_provider`; null otherwise."))
    variants = serializers.ListField(child=serializers.IntegerField(allow_null=True), help_text=(
        "The lead's assigned variant per step (0-based; null for a step without variants). A chosen winner "
        "overrides it for steps not yet sent."))
    last_step_sent = serializers.IntegerField(allow_null=True, help_text="1-based")
    last_sent_at = serializers.DateTimeField(allow_null=True)
    next_step = serializers.IntegerField(allow_null=True, help_text="1-based")
    next_send_at = serializers.DateTimeField(allow_null=True)
    reply_id = serializers.CharField(allow_null=True, help_text="The newest reply from this lead (get_replies).")
    send_in_doubt = SendInDoubtOut(allow_null=True, help_text=(
        "A message that was mid-send at a crash: its outcome is unknown and it is never re-sent; the lead is "
        "stopped (`send_unknown`) once it is reported. Check the mailbox's Sent folder and decide."))


class ListLeadsOut(serializers.Serializer):
    leads = CampaignLeadOut(many=True)
    next_cursor = serializers.CharField(allow_null=True)


def run_list_campaign_leads(ctx, *, campaign_id, cursor=None, limit=50, status=None) -> Outcome:
    campaign = _campaign(ctx, campaign_id)
    leads, next_cursor = selectors.campaign_leads_page(campaign=campaign, cursor=cursor, limit=limit,
                                                       status=status or "")
    return Outcome(result={"leads": leads, "next_cursor": next_cursor})


list_campaign_leads = register(Verb(
    name="list_campaign_leads", path="/v1/campaigns/<str:campaign_id>/leads", method="GET",
    run=run_list_campaign_leads, input=ListLeadsIn, output=ListLeadsOut, envelope=False, record=False,
    tags=("campaigns",), query=("cursor", "limit", "status"), errors=(errors.NotFound,),
    summary="A campaign's leads: status, last step sent, next step due, reply",
    description=(
        "Free. In the order the leads were given; cursor pagination; filter by `status`. A lead whose message was "
        "mid-send at a crash carries `send_in_doubt` (and, once reported, status `send_unknown`): it was not "
        "re-sent, so an operator can decide."
    ),
))


class CampaignStateOut(serializers.Serializer):
    campaign_id = serializers.UUIDField()
    state = serializers.ChoiceField(choices=STATES)
    paused_at = serializers.DateTimeField(allow_null=True)
    next_send_at = serializers.DateTimeField(allow_null=True)
    waiting_reason = serializers.ChoiceField(choices=WAITING_REASONS, allow_null=True)
    sends_in_flight = serializers.IntegerField(help_text=(
        "Messages already handed to SMTP when the call answered: a pause does not stop these, they finish (within "
        "the SMTP conversation's time, usually well under a second). 0 means nothing more leaves."))


def _state_result(campaign) -> dict:
    next_send_at, reason = selectors.campaign_schedule(campaign)
    return {"campaign_id": str(campaign.pk), "state": campaign.state, "paused_at": campaign.paused_at,
            "next_send_at": next_send_at, "waiting_reason": reason,
            "sends_in_flight": selectors.campaign_sends_in_flight(campaign)}


def run_pause(ctx, *, campaign_id) -> Outcome:
    return Outcome(result=_state_result(services.campaign_pause(workspace=ctx.workspace, campaign_id=campaign_id)))


def run_resume(ctx, *, campaign_id) -> Outcome:
    return Outcome(result=_state_result(services.campaign_resume(workspace=ctx.workspace, campaign_id=campaign_id)))


pause_campaign = register(Verb(
    name="pause_campaign", path="/v1/pause_campaign", run=run_pause, input=CampaignIdIn, output=CampaignStateOut,
    scope="campaign:launch", max_charge=0, tags=("campaigns",),
    errors=(errors.NotFound, errors.CampaignNotLaunched),
    summary="Pause a launched campaign: nothing more is sent until it is resumed",
    description=(
        "Free; safe to repeat (pausing a paused campaign answers its state). Once this returns nothing more is "
        "claimed for sending; a message already handed to SMTP finishes. Leads keep their place. A draft or "
        "completed campaign is 409 `campaign_not_launched`."
    ),
))

resume_campaign = register(Verb(
    name="resume_campaign", path="/v1/resume_campaign", run=run_resume, input=CampaignIdIn, output=CampaignStateOut,
    scope="campaign:launch", idempotency="required", max_charge=0, tags=("campaigns",),
    errors=(errors.NotFound, errors.CampaignNotPaused),
    summary="Resume a paused campaign (no new approval: the launch was approved)",
    description=(
        "Free; needs an Idempotency-Key. Leads due while paused are sent at the next tick inside the window; "
        "suppression is re-checked now and at every send. A campaign that is not paused (a completed one "
        "included) is 409 `campaign_not_paused`."
    ),
))
