"""get_replies (SPEC 4.8, CONTRACT 4.8): free; newest first; `since` exclusive; limit 1 to 200, default 50."""

from __future__ import annotations

import uuid
from datetime import UTC

from django.utils import timezone
from rest_framework import serializers

from accounts.models import ApiKey
from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register
from llmproxy import verbs as llm_verbs
from replies import answers, drafting, selectors
from replies.models import Classification, ReplyAnswer

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
        "ISO 8601 timestamp, exclusive, compared with `updated_at`: only replies that arrived or changed (label "
        "set or corrected, answered) after it. Poll pattern: pass the newest `updated_at` you have read. A "
        "timestamp without an offset is UTC."))
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
    snippet = serializers.CharField(help_text="A short excerpt of `text` on one line.")
    text = serializers.CharField(help_text=(
        "The person's own words: quoted history and signature removed (the classifier's cut); at most 5,000 "
        "characters here, the whole of it in GET /v1/replies/{reply_id} `full_text`."))
    text_truncated = serializers.BooleanField(help_text="`text` was cut at 5,000 characters.")
    classification = serializers.ChoiceField(choices=Classification.choices, allow_null=True,
                                             help_text="Null while unclassified.")
    language = serializers.CharField(allow_null=True, help_text=(
        "ISO 639-1 code of the language the person wrote in (e.g. `de`, `ja`); null for machine mail (bounces, "
        "automatic replies, receipts), an empty reply, or while unclassified."))
    received_at = serializers.DateTimeField(help_text="When the service accepted the message; never changes.")
    updated_at = serializers.DateTimeField(help_text=(
        "Moves when the label is set or corrected and when the reply is answered; `since` compares with it."))
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
        "stopped that lead's sequence and suppressed the address. Poll with `since` = the newest `updated_at` "
        "you have read (exclusive): new replies and changed ones (label set or corrected, answered) come back. "
        "Each row carries `text`, the person's own words; GET /v1/replies/{reply_id} has the whole message and "
        "the thread."
    ),
))


# --- one whole reply and its conversation (CONTRACT 4.8c) ---------------------------------------------------
class ReplyIdPathIn(StrictSerializer):
    reply_id = serializers.CharField(max_length=2000, help_text="A reply of this workspace (any other id is 404).")


class AttachmentOut(serializers.Serializer):
    filename = serializers.CharField(allow_blank=True)
    content_type = serializers.CharField()
    size = serializers.IntegerField(help_text="Bytes, decoded.")


ANSWER_STATES = ["pending_approval", "queued", "sent", "send_unknown", "failed", "denied"]


class ThreadItemOut(serializers.Serializer):
    direction = serializers.ChoiceField(choices=["out", "in"])
    kind = serializers.ChoiceField(choices=["step", "reply", "answer"], help_text=(
        "`step`: a campaign message we sent; `reply`: theirs; `answer`: ours, in this thread."))
    message_id = serializers.CharField(allow_blank=True)
    at = serializers.DateTimeField(help_text="Sent (ours) or accepted (theirs).")
    subject = serializers.CharField(allow_blank=True)
    text = serializers.CharField(allow_blank=True, help_text="Steps: the body as rendered for the lead; replies: "
                                                            "the person's own words; answers: the body sent.")
    state = serializers.ChoiceField(required=False, choices=ANSWER_STATES, help_text="Answers only.")
    sent_by = serializers.CharField(required=False, help_text="Answers only: the API key's name or the member's email.")
    reply_id = serializers.CharField(required=False, help_text="Replies, and answers (the reply answered).")
    answer_id = serializers.CharField(required=False, help_text="Answers only.")


class ReplyDetailOut(ReplyOut):
    full_text = serializers.CharField(allow_blank=True, help_text="The whole body as plain text, HTML converted.")
    attachments = AttachmentOut(many=True, help_text="Never the content.")
    answered = serializers.BooleanField(help_text="An answer to this reply was sent.")
    thread = ThreadItemOut(many=True, help_text="The conversation in time order.")


def run_get_reply(ctx, *, reply_id) -> Outcome:
    return Outcome(result=selectors.reply_detail(workspace=ctx.workspace, reply_id=reply_id))


get_reply = register(Verb(
    name="get_reply", path="/v1/replies/<str:reply_id>", method="GET", run=run_get_reply, input=ReplyIdPathIn,
    output=ReplyDetailOut, envelope=False, record=False, tags=("replies",), errors=(errors.NotFound,),
    summary="Read one reply whole, with its conversation",
    description=(
        "Free, no envelope. The get_replies row plus `full_text` (the whole body as plain text, HTML converted), "
        "`attachments` (filename, content type, size; never the content) and `thread`: every message of the "
        "conversation in time order (our campaign steps, their replies, our answers with their `state` and "
        "`sent_by`). Another workspace's reply is 404."
    ),
))


# --- answering (CONTRACT 4.8c) -------------------------------------------------------------------------------
class SendReplyIn(StrictSerializer):
    reply_id = StringField(max_length=64, help_text="The reply to answer (another workspace's is 404).")
    body = serializers.CharField(trim_whitespace=False, allow_blank=True, max_length=answers.MAX_BODY * 2, help_text=(
        "Plain text, 1 to 20,000 characters; sent as written, in the reply's thread."))
    confirmation_token = serializers.CharField(required=False, max_length=200, help_text=(
        "Absent: a preview and a token for a human to approve (unless the key may answer without approval). "
        "Present and approved: the answer is sent (Idempotency-Key required)."))


class SendReplyOut(serializers.Serializer):
    status = serializers.ChoiceField(choices=["preview", "queued", "sent", "failed"], help_text=(
        "`preview`: a human must approve; `sent`: handed to the mail server; `queued`: a temporary failure, "
        "retried; `failed`: the mail server refused it for good (nothing delivered)."))
    reply_id = serializers.CharField()
    answer_id = serializers.CharField()
    message_id = serializers.CharField(help_text="The answer's Message-ID, without <>.")
    from_ = serializers.CharField(required=False, help_text="preview: the mailbox it leaves from")
    to = serializers.CharField(required=False, help_text="preview: the person who wrote")
    subject = serializers.CharField(required=False, help_text="preview: `Re: ` + the reply's subject")
    body = serializers.CharField(required=False, help_text="preview: exactly what is sent")
    in_reply_to = serializers.CharField(required=False, help_text="preview: the reply's Message-ID")
    references = serializers.ListField(child=serializers.CharField(), required=False, help_text="preview: the chain")
    confirmation_token = serializers.CharField(required=False, help_text="preview; single use, 24 hours")
    confirmation_expires_at = serializers.DateTimeField(required=False, help_text="preview")
    approval_url = serializers.URLField(required=False, help_text="preview: a human approves here, the thread above the draft")
    sent_by = serializers.CharField(required=False, help_text="queued/sent: the key (or connection) that sent it")
    without_approval = serializers.BooleanField(required=False, help_text="queued/sent: under the owner's answers_per_day")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields


def _sent_result(answer, state: str) -> dict:
    status = {"sent": "sent", "failed": "failed"}.get(state, "queued")
    return {"status": status, "reply_id": answer.reply_id, "answer_id": answer.pk, "message_id": answer.message_id,
            "sent_by": answer.sent_by, "without_approval": answer.without_approval}


def _deliver(answer) -> str:
    answer.refresh_from_db()
    if answer.state == ReplyAnswer.State.QUEUED and answer.next_attempt_at and answer.next_attempt_at > timezone.now():
        return "queued"  # a retry of a call whose first attempt failed for a while: the sweep retries it
    if answer.state == ReplyAnswer.State.QUEUED:
        return answers.answer_deliver(answer_id=answer.pk)
    return selectors.answer_state(answer)


def run_send_reply(ctx, *, reply_id, body, confirmation_token=None) -> Outcome:
    if confirmation_token is not None:
        answer = answers.answer_approved(workspace=ctx.workspace, api_key=ctx.api_key, reply_id=reply_id, body=body,
                                         confirmation_token=confirmation_token, request_id=ctx.request_id,
                                         idempotency_key=ctx.idempotency_key or "")
        return Outcome(result=_sent_result(answer, _deliver(answer)))
    policy = ApiKey.objects.filter(pk=ctx.api_key.pk).values_list("answers_per_day", flat=True).first() \
        if ctx.api_key is not None else None  # read fresh: the door may hold a cached key
    if policy is not None:
        if not ctx.idempotency_key:
            raise errors.IdempotencyKeyRequired(
                "This key may answer without approval: send an Idempotency-Key (MCP: idempotency_key) so a retry "
                "never sends twice.")
        answer = answers.answer_direct(workspace=ctx.workspace, reply_id=reply_id, body=body, api_key=ctx.api_key,
                                       request_id=ctx.request_id, idempotency_key=ctx.idempotency_key)
        if answer is not None:
            return Outcome(result=_sent_result(answer, _deliver(answer)))
    return Outcome(result=answers.answer_preview(workspace=ctx.workspace, api_key=ctx.api_key, reply_id=reply_id,
                                                 body=body, request_id=ctx.request_id))


send_reply = register(Verb(
    name="send_reply", path="/v1/send_reply", run=run_send_reply, input=SendReplyIn, output=SendReplyOut,
    scope="replies:send", idempotency=lambda raw: "confirmation_token" in raw, max_charge=0, tags=("replies",),
    errors=(errors.NotFound, errors.RecipientSuppressed, errors.MailboxUnavailable, errors.ConfirmationInvalid,
            errors.ConfirmationDenied, errors.ConfirmationPending, errors.ConfirmationUsed,
            errors.ConfirmationExpired, errors.IdempotencyKeyRequired),
    summary="Answer a reply in its thread, from the mailbox that carried it, once a human approved",
    description=(
        "Free. Without `confirmation_token`: `status: preview` with the exact message (`from`, `to`, `subject`, "
        "`body`, `in_reply_to`, `references`) and a single-use 24-hour token plus `approval_url`, where a human "
        "sees the whole conversation above the draft and approves or denies. With the approved token (and an "
        "Idempotency-Key): the answer is sent (`status: sent`, or `queued` after a temporary failure, retried). "
        "A key or OAuth connection the owner allowed to answer without approval (`answers_per_day`) gets the "
        "send on the first call while today's count lasts (Idempotency-Key required), then previews again. The "
        "answer leaves from the mailbox that sent the lead's last campaign step, with `In-Reply-To`, "
        "`References` and `Re: ` + the reply's subject, DKIM-signed like campaign mail, without "
        "List-Unsubscribe, at most once (a send in doubt is `send_unknown` in the thread, never repeated). An "
        "address suppressed as `unsubscribed` or `bounced` is 409 `recipient_suppressed` (`replied` does not "
        "block answers); a mailbox that is suspended, removed, paused or needs reconnecting is 409 "
        "`mailbox_unavailable` with `details.reason`; an empty body, one over 20,000 characters, or a subject "
        "that would break a header is 400."
    ),
))


# --- drafting with an allowlisted model (CONTRACT 4.8c) --------------------------------------------------------
class DraftReplyIn(StrictSerializer):
    reply_id = StringField(max_length=64, help_text="The reply to answer (another workspace's is 404).")
    instructions = serializers.CharField(required=False, allow_blank=True, max_length=drafting.MAX_INSTRUCTIONS,
                                         help_text="What the answer should say or do, e.g. \"offer Thursday 10:00\".")
    model = StringField(required=False, max_length=200, help_text=(
        "An allowlisted model id (GET /v1/llm/models); default: the service's drafting model "
        "(REPLIES_DRAFT_MODEL, else the first allowlisted model)."))


class DraftReplyOut(serializers.Serializer):
    body = serializers.CharField(help_text="A suggested answer; nothing is sent. Pass it (edited) to send_reply.")
    model = serializers.CharField()


def _draft_body(ctx, data: dict) -> dict:
    if "draft_body" not in ctx.extra:
        ctx.extra["draft_body"] = drafting.chat_body(workspace=ctx.workspace, reply_id=data["reply_id"],
                                                     instructions=data.get("instructions"), model=data.get("model"))
    return ctx.extra["draft_body"]


def run_draft_reply(ctx, *, reply_id, instructions=None, model=None) -> Outcome:
    body = _draft_body(ctx, {"reply_id": reply_id, "instructions": instructions, "model": model})
    completion, usage, charge = llm_verbs.complete(ctx, body)
    return Outcome(result={"body": drafting.body_of(completion), "model": usage["model"]}, charge=charge,
                   usage=usage)


draft_reply = register(Verb(
    name="draft_reply", path="/v1/draft_reply", run=run_draft_reply, input=DraftReplyIn, output=DraftReplyOut,
    max_charge=lambda ctx, data: llm_verbs.hold_for(_draft_body(ctx, data)), tags=("replies",),
    errors=(errors.NotFound, errors.ModelNotAllowed, errors.InsufficientCredits, errors.ProviderUnavailable),
    summary="Suggest an answer to a reply, written by an allowlisted model from the conversation",
    description=(
        "Billed like /v1/llm/chat: a hold for the prompt (the conversation and your instructions) plus 600 "
        "completion tokens at the model's price, settled to the exact tokens used (`service.credits_charged`). "
        "Returns `{\"body\", \"model\"}`; never sends anything: pass the body (edited as you like) to send_reply."
    ),
))
