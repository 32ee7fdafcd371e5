"""State reads (SPEC 4.10): free, GET, and not wrapped in the billing envelope."""

from rest_framework import serializers

from billing import selectors
from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register


class UsageRowSerializer(serializers.Serializer):
    verb = serializers.CharField()
    calls = serializers.IntegerField()
    credits_charged = serializers.CharField()


class KeyPeriodSerializer(serializers.Serializer):
    limit = serializers.CharField(help_text="Credits per period.")
    spent = serializers.CharField(help_text="Charged plus still held by calls in flight, in this period.")
    remaining = serializers.CharField()
    resets_at = serializers.DateTimeField(help_text="Midnight UTC ending the day, or the first of the next month.")


class KeyLimitsSerializer(serializers.Serializer):
    day = KeyPeriodSerializer(allow_null=True, help_text="Null: no daily limit.")
    month = KeyPeriodSerializer(allow_null=True, help_text="Null: no monthly limit.")


class UsageKeySerializer(serializers.Serializer):
    key_id = serializers.CharField(help_text="The calling key's id (manage.py key_limits KEY_ID).")
    name = serializers.CharField()
    limits = KeyLimitsSerializer()


class UsageByKeySerializer(serializers.Serializer):
    key_id = serializers.CharField()
    name = serializers.CharField(help_text="The key's name, or the OAuth connection's client name.")
    kind = serializers.ChoiceField(choices=["api_key", "oauth_connection"])
    calls = serializers.IntegerField()
    credits_charged = serializers.CharField()


class UsageSerializer(serializers.Serializer):
    credits_balance = serializers.CharField()
    credits_reserved = serializers.CharField(help_text="Held by calls in flight.")
    credits_available = serializers.CharField()
    last_30_days = UsageRowSerializer(many=True)
    key = UsageKeySerializer(help_text="The calling key's spend limits (docs/budgets.md).")
    by_key = UsageByKeySerializer(many=True, help_text="Every key and OAuth connection of the workspace with its "
                                  "calls and credits over the last 30 days, most credits first.")


class RequestRecordSerializer(serializers.Serializer):
    request_id = serializers.CharField()
    verb = serializers.CharField()
    status = serializers.ChoiceField(choices=["in_progress", "succeeded", "failed", "interrupted"])
    credits_charged = serializers.CharField()
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    error = serializers.DictField(required=False)
    usage = serializers.DictField(required=False)


class RequestIdIn(StrictSerializer):
    request_id = serializers.CharField(max_length=64, help_text="The request_id of a previous call.")


def run_usage(ctx) -> Outcome:
    return Outcome(result=selectors.usage_get(workspace=ctx.workspace, api_key=ctx.api_key))


def run_get_request(ctx, *, request_id: str) -> Outcome:
    return Outcome(result=selectors.request_get(workspace=ctx.workspace, request_id=request_id))


usage = register(Verb(
    name="usage", mcp_name="get_usage", path="/v1/usage", method="GET", run=run_usage, input=None,
    output=UsageSerializer, envelope=False, record=False, tags=("state",),
    summary="Credit balance, holds and the last 30 days of usage per verb",
    description="Free. `credits_available` = `credits_balance` - `credits_reserved`. `key`: the calling key's "
    "daily and monthly limits with what is spent (held included), remaining and when each resets (null: no "
    "limit); `by_key`: every key and OAuth connection with its calls and credits over the last 30 days.",
))

get_request = register(Verb(
    name="get_request", path="/v1/requests/<str:request_id>", method="GET", run=run_get_request,
    input=RequestIdIn, output=RequestRecordSerializer, envelope=False, record=False, tags=("state",),
    errors=(errors.NotFound,),
    summary="Status and final billing of a previous request",
    description="Free. Includes interrupted streams and their usage. Another workspace's id is 404.",
))
