"""find_leads, enrich and find_intent: declared once, served over REST and MCP by the pipeline."""

import re

from rest_framework import serializers

from core import errors
from core.money import InvalidCreditString, parse_credits
from core.verbs import StrictSerializer, Verb, register
from leads import services
from leads.identity import norm_domain
from leads.providers.base import SIGNAL_TYPES

LIST_MAX = 25
DOMAIN_RE = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$")
FINGERPRINT_RE = re.compile(r"^fp1:[A-Za-z0-9_-]{1,64}$")


class CreditStringField(serializers.CharField):
    """A credit amount as a decimal string ("5", "0.25"), at most 6 decimals; parsed to micro-credits."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError('Must be a decimal string such as "5".')
        try:
            return parse_credits(data)
        except InvalidCreditString as exc:
            raise serializers.ValidationError(str(exc)) from exc


class TextField(serializers.CharField):
    """A CharField that refuses non-strings (DRF would coerce 123 to "123")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class WholeNumberField(serializers.IntegerField):
    """An IntegerField that refuses strings, booleans and fractions (DRF would coerce "5" and True)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float) or (isinstance(data, float) and not data.is_integer()):
            raise serializers.ValidationError("Must be an integer.")
        return super().to_internal_value(int(data))


def _string_list(help_text: str, item_max: int = 200):
    return serializers.ListField(
        child=TextField(max_length=item_max), required=False, max_length=LIST_MAX, help_text=help_text,
    )


# --- find_leads -----------------------------------------------------------------------------------
class HeadcountIn(StrictSerializer):
    min = WholeNumberField(required=False, min_value=0, help_text="Smallest employee count (inclusive).")
    max = WholeNumberField(required=False, min_value=0, help_text="Largest employee count (inclusive).")

    def validate(self, attrs):
        if "min" in attrs and "max" in attrs and attrs["min"] > attrs["max"]:
            raise serializers.ValidationError({"min": ["Must not exceed max."]})
        return attrs


class FindLeadsIn(StrictSerializer):
    audience = TextField(
        min_length=3, max_length=2000,
        help_text="Who you are looking for, in words (3 to 2000 characters). It steers your choice of filters; "
                  "the search itself uses the structured filters below.",
    )
    titles = _string_list("Up to 25 job-title fragments; a lead matches when its title contains any of them "
                          "(case-insensitive), e.g. [\"head of sales\", \"vp sales\"].")
    industries = _string_list("Up to 25 industries (professional-network taxonomy, e.g. \"Computer Software\"); "
                              "case-insensitive equality, any item.")
    locations = _string_list("Up to 25 countries, regions or cities; case-insensitive equality with the lead's "
                             "city, region or country, any item.")
    company_headcount = HeadcountIn(required=False, help_text="Employee-count range of the lead's company, "
                                                              "bounds inclusive: {\"min\": 50, \"max\": 500}.")
    limit = WholeNumberField(required=False, default=25, min_value=1, max_value=200,
                                     help_text="Leads to return, 1 to 200 (default 25). Costs 0.2 credits per "
                                               "lead returned; the hold is 0.2 x limit.")
    cursor = TextField(required=False, max_length=2000,
                                   help_text="`next_cursor` of the previous page, with the same filters.")


class LeadOut(serializers.Serializer):
    fingerprint = serializers.CharField(help_text="Stable `fp1:` id of the person; pass it to enrich.")
    full_name = serializers.CharField()
    title = serializers.CharField()
    company_name = serializers.CharField()
    company_domain = serializers.CharField()
    work_email = serializers.CharField(allow_null=True, help_text="Always null here: reveal with enrich.")
    social_url = serializers.CharField()
    location = serializers.CharField(help_text="City, region, country.")


class FindLeadsOut(serializers.Serializer):
    leads = LeadOut(many=True)
    total_found = serializers.IntegerField(help_text="Every match of the filters; may exceed the leads returned.")
    next_cursor = serializers.CharField(allow_null=True, help_text="Pass as `cursor` for the next page; null "
                                                                   "on the last page.")


find_leads = register(Verb(
    name="find_leads", path="/v1/find_leads", run=services.find_leads_run, input=FindLeadsIn, output=FindLeadsOut,
    max_charge=lambda ctx, d: services.FIND_LEADS_PRICE * d.get("limit", 25),
    errors=(errors.InsufficientCredits, errors.ProviderUnavailable), tags=("leads",),
    summary="Find leads (people) by title, industry, location and company size; emails masked",
    description="Costs 0.2 credits per lead returned (zero results are free). Deterministic order; page with "
                "`cursor` / `next_cursor`. Emails are always null here: reveal one with enrich.",
))


# --- enrich ---------------------------------------------------------------------------------------
class PersonIn(StrictSerializer):
    fingerprint = TextField(required=False, max_length=80,
                                        help_text="A lead's `fp1:` fingerprint from find_leads.")
    full_name = TextField(required=False, max_length=300, help_text="With company_domain.")
    first_name = TextField(required=False, max_length=150, help_text="With last_name and company_domain.")
    last_name = TextField(required=False, max_length=150)
    company_domain = TextField(required=False, max_length=253, help_text="e.g. acme.com")
    social_url = TextField(required=False, max_length=500, help_text="Professional-network profile URL.")
    email = serializers.EmailField(required=False, max_length=320, help_text="A known address of the person.")

    def validate_fingerprint(self, value):
        if not FINGERPRINT_RE.match(value):
            raise serializers.ValidationError("Must be an fp1: fingerprint from find_leads.")
        return value

    def validate_company_domain(self, value):
        if not DOMAIN_RE.match(norm_domain(value)):
            raise serializers.ValidationError("Must be a domain name such as acme.com.")
        return value

    def validate(self, attrs):
        has_name = bool(attrs.get("full_name") or (attrs.get("first_name") and attrs.get("last_name")))
        if not (attrs.get("fingerprint") or attrs.get("social_url") or attrs.get("email")
                or (has_name and attrs.get("company_domain"))):
            raise serializers.ValidationError(
                "Identify the person by fingerprint; or social_url; or email; or full_name (or first_name and "
                "last_name) together with company_domain.")
        return attrs


WANT_CHOICES = ("work_email", "mobile_phone", "profile")


class EnrichIn(StrictSerializer):
    person = PersonIn(help_text="One identifiable combination: `fingerprint`; or `social_url`; or `email`; or "
                                "`full_name` (or `first_name` + `last_name`) with `company_domain`.")
    want = serializers.ListField(
        child=serializers.ChoiceField(choices=WANT_CHOICES), required=False, min_length=1, max_length=3,
        help_text="What to return: work_email, mobile_phone, profile. Default [\"work_email\"].",
    )
    max_credits = CreditStringField(required=False, help_text="Spend ceiling as a credit string. Below \"5\" an "
                                                              "uncached lookup is refused with 402 "
                                                              "spend_ceiling_exceeded before any provider is asked.")


class ContactOut(serializers.Serializer):
    fingerprint = serializers.CharField(allow_null=True)
    title = serializers.CharField()
    work_email = serializers.CharField(required=False, allow_null=True)
    work_email_status = serializers.ChoiceField(required=False, choices=["valid", "catch_all", "unknown", "not_found"],
                                                help_text="A verification older than 30 days, or none, is unknown.")
    mobile_phone = serializers.CharField(required=False, allow_null=True, help_text="Only when wanted.")
    full_name = serializers.CharField(required=False, help_text="With want profile (also first_name, last_name, "
                                                                "company_name, company_domain, social_url, location).")


class EnrichOut(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["hit", "miss"])
    contact = ContactOut(allow_null=True)
    from_cache = serializers.BooleanField(help_text="True when served free from the 90-day workspace cache.")


enrich = register(Verb(
    name="enrich", path="/v1/enrich", run=services.enrich_run, input=EnrichIn, output=EnrichOut,
    max_charge=services.enrich_max_charge,
    errors=(errors.InsufficientCredits, errors.SpendCeilingExceeded, errors.ProviderUnavailable), tags=("leads",),
    summary="Reveal a person's work email (and optionally mobile phone and profile)",
    description="Costs 5 credits on a hit (at least one item of `want` returned); a miss is free. Hits are "
                "cached per workspace for 90 days: a repeat with the same person and `want` returns "
                "`from_cache: true` and costs 0.",
))


# --- find_intent ----------------------------------------------------------------------------------
class FindIntentIn(StrictSerializer):
    company_domains = serializers.ListField(
        child=TextField(max_length=253), min_length=1, max_length=100,
        help_text="1 to 100 company domains (lower-cased and de-duplicated before counting).",
    )
    signals = serializers.ListField(
        child=serializers.ChoiceField(choices=SIGNAL_TYPES), required=False, min_length=1,
        max_length=len(SIGNAL_TYPES),
        help_text="Signal types: hiring, funding, news, job_change, technology. Default [\"hiring\", \"funding\"].",
    )

    def validate_company_domains(self, value):
        bad = [v for v in value if not DOMAIN_RE.match(norm_domain(v))]
        if bad:
            raise serializers.ValidationError(f"Not domain names: {', '.join(bad[:5])}.")
        return value


class SignalOut(serializers.Serializer):
    company_domain = serializers.CharField()
    signal = serializers.ChoiceField(choices=SIGNAL_TYPES)
    summary = serializers.CharField()
    observed_at = serializers.DateField()
    evidence_url = serializers.CharField(required=False)


class FindIntentOut(serializers.Serializer):
    signals = SignalOut(many=True, help_text="Signals observed in the last 90 days.")
    companies_scanned = serializers.IntegerField()
    companies_with_signals = serializers.IntegerField()


find_intent = register(Verb(
    name="find_intent", path="/v1/find_intent", run=services.find_intent_run, input=FindIntentIn,
    output=FindIntentOut, max_charge=0,
    errors=(errors.InsufficientCredits, errors.KeyBudgetExceeded, errors.ProviderUnavailable), tags=("leads",),
    summary="Buying-intent signals (hiring, funding, news, job changes, technology) for companies",
    description="Costs 10 credits per company with at least one signal plus 0.5 per other company scanned "
                "(100 scanned, 8 with signals = 126). No signal at all is a free miss. Only signals observed in "
                "the last 90 days count.",
))
