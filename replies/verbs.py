"""get_replies (SPEC 4.8, CONTRACT 4.8): free; newest first; `since` exclusive; limit 1 to 200, default 50."""

from __future__ import annotations

import uuid
from datetime import UTC

from django.utils import timezone
from rest_framework import serializers

from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register
from replies import selectors
from replies.models import Classification

MAX_LIMIT = 200
DEFAULT_LIMIT = 50


class StringField(serializers.CharField):
    """A string, not a number coerced to one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class GetRepliesIn(StrictSerializer):
    campaign_id = StringField(required=False, max_length=64,
                                        help_text="Only replies to this campaign. Unknown (or another workspace's): 404.")
    since = serializers.DateTimeField(required=False, help_text=(
        "ISO 8601 timestamp, exclusive: only replies received after it. Poll pattern: pass the newest "
        "`received_at` you have read. A timestamp without an offset is UTC."))
    before = serializers.DateTimeField(required=False, help_text=(
        "Extension, exclusive: only replies received before it. To page back through more than `limit` new "
        "replies, pass the oldest `received_at` of the previous page."))
    limit = serializers.IntegerField(required=False, default=DEFAULT_LIMIT, min_value=1, max_value=MAX_LIMIT)

    def _aware(self, value):
        return timezone.make_aware(value, UTC) if timezone.is_naive(value) else value

    def validate_since(self, value):
        return self._aware(value)

    def validate_before(self, value):
        return self._aware(value)


class ReplyOut(serializers.Serializer):
    reply_id = serializers.CharField()
    campaign_id = serializers.CharField(allow_null=True, help_text="Null when the reply matched no campaign.")
    from_email = serializers.CharField(help_text="The replier's address (a bounce's is the mailer daemon's).")
    subject = serializers.CharField()
    snippet = serializers.CharField(help_text="The new text of the reply, quoted history and signature stripped.")
    classification = serializers.ChoiceField(choices=Classification.choices, allow_null=True,
                                             help_text="Null while unclassified.")
    language = serializers.CharField(allow_null=True, help_text=(
        "ISO 639-1 code of the language the person wrote in (e.g. `de`, `ja`); null for machine mail (bounces, "
        "automatic replies, receipts), an empty reply, or while unclassified."))
    received_at = serializers.DateTimeField()
    lead_email = serializers.CharField(allow_null=True, help_text="The campaign lead the reply was attributed to.")
    correction = serializers.DictField(allow_null=True, help_text=(
        "The latest human correction of the label in the console, or null: {\"from\", \"to\", \"by\", \"at\"}. "
        "`classification` is then the corrected label."))


class GetRepliesOut(serializers.Serializer):
    replies = ReplyOut(many=True)


def run_get_replies(ctx, *, limit=DEFAULT_LIMIT, campaign_id=None, since=None, before=None) -> Outcome:
    campaign = None
    if campaign_id is not None:
        from campaigns.models import Campaign

        try:
            campaign_uuid = uuid.UUID(str(campaign_id))
        except ValueError:
            raise errors.NotFound("No such campaign in this workspace.") from None
        campaign = Campaign.objects.filter(workspace=ctx.workspace, pk=campaign_uuid).first()
        if campaign is None:
            raise errors.NotFound("No such campaign in this workspace.")
    rows = selectors.replies_list(workspace=ctx.workspace, campaign=campaign, since=since, before=before,
                                  limit=limit)
    return Outcome(result={"replies": [selectors.reply_record(r) for r in rows]})


get_replies = register(Verb(
    name="get_replies", path="/v1/get_replies", run=run_get_replies, input=GetRepliesIn, output=GetRepliesOut,
    max_charge=0, errors=(errors.NotFound,), tags=("replies",),
    summary="Read replies to your campaigns, newest first",
    description=(
        "Free. Replies are classified `interested`, `not_interested`, `out_of_office`, `unsubscribe`, `bounce` "
        "or `other` (null while unclassified). Any reply (out-of-office and bounce included) has already "
        "stopped that lead's sequence and suppressed the address. Poll with `since` = the newest `received_at` "
        "you have read (exclusive)."
    ),
))
