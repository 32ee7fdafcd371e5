"""verify_email (SPEC 4.3, CONTRACT 4.3): 1 credit per call, `unknown` is a free miss."""

from rest_framework import serializers

from core.money import credits
from core.verbs import Outcome, StrictSerializer, Verb, register
from leads.verification import (
    intent,  # noqa: F401 - registers the dns_technology intent provider
    services,
)
from leads.verification.models import Status

PRICE = credits("1")


class StrictStringField(serializers.CharField):
    """A string, and only a string (DRF's CharField would turn 42 into "42")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class VerifyEmailIn(StrictSerializer):
    email = StrictStringField(allow_blank=True, trim_whitespace=False,
                              help_text="The address to verify. A malformed address is `invalid` (charged).")


class VerificationResultOut(serializers.Serializer):
    email = serializers.CharField(help_text="The address as given.")
    status = serializers.ChoiceField(choices=Status.values)
    is_catch_all_domain = serializers.BooleanField()
    checked_at = serializers.DateTimeField()
    reason = serializers.CharField(help_text="Why this status: accepted, user_unknown, catch_all, blocked, ...")
    mx_host = serializers.CharField(allow_null=True, help_text="The MX host that answered (or was tried).")
    is_disposable = serializers.BooleanField()
    is_role_account = serializers.BooleanField()
    is_free_provider = serializers.BooleanField()


def run_verify_email(ctx, *, email: str) -> Outcome:
    row = services.verification_run(email=email, workspace=ctx.workspace, request_id=ctx.request_id, store=False)
    charge = 0 if row.status == Status.UNKNOWN else PRICE
    # a new result is written with the settlement (one statement on PostgreSQL), a reused one is already stored
    return Outcome(result=services.result_payload(row, email=email), charge=charge,
                   writes=(row,) if row.pk is None else ())


verify_email = register(Verb(
    name="verify_email", path="/v1/verify_email", run=run_verify_email, input=VerifyEmailIn,
    output=VerificationResultOut, max_charge=PRICE, tags=("leads",),
    summary="Verify an email address over DNS and SMTP",
    description=(
        "1 credit per call; status `unknown` (timeouts, greylisting after a retry, unreachable or blocked MX) "
        "is a free miss. Statuses: valid, invalid, catch_all_valid, catch_all_unknown, risky, unknown; "
        "`reason` says why."
    ),
))
