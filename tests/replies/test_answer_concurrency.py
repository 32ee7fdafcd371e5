"""Answers under real threads and real database locking: one approved token used by several calls at once sends one
answer; a key allowed one answer a day asked for several at once sends one without approval (the others preview);
several workers delivering the same queued answer at once send it once."""

from __future__ import annotations

import pytest

from accounts import services as accounts
from accounts.models import ApiKey
from core import errors
from replies import answers, services
from replies.models import Reply, ReplyAnswer
from tests.replies.conftest import make_world, reply_bytes
from tests.replies.test_concurrency import race

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reply(workspace):
    world = make_world(workspace)
    stored = services.inbound_store(mailbox=world.mailbox, source="smtp", raw=reply_bytes(
        message_id="<race@acme.com>", in_reply_to="<msg-0@outreach-sbx.test>"))
    services.inbound_classify(inbound_id=stored.inbound.pk)
    return Reply.objects.get(inbound=stored.inbound)


def _sink_answers(settings):
    from pathlib import Path

    new = Path(settings.MAIL_SINK_DIR) / "new"
    return [p for p in new.iterdir() if b"In-Reply-To: <race@acme.com>" in p.read_bytes()] if new.exists() else []


def test_one_token_used_at_once_sends_one_answer(workspace, owner, reply, settings):
    key = ApiKey.objects.get(workspace=workspace)
    preview = answers.answer_preview(workspace=workspace, api_key=key, reply_id=reply.pk, body="Tuesday it is.")
    accounts.token_approve(token=accounts.token_lookup(plaintext=preview["confirmation_token"]), user=owner)
    counter = iter(range(100))

    def call():
        try:
            answer = answers.answer_approved(workspace=workspace, api_key=key, reply_id=reply.pk, body="Tuesday it is.",
                                             confirmation_token=preview["confirmation_token"],
                                             idempotency_key=f"race-{next(counter)}")
        except errors.ConfirmationUsed:
            return "used"
        return answers.answer_deliver(answer_id=answer.pk)

    results = race(4, call)
    assert sorted(results).count("used") == 3 and "sent" in results
    assert ReplyAnswer.objects.filter(state="sent").count() == 1
    assert len(_sink_answers(settings)) == 1


def test_policy_of_one_a_day_asked_four_times_at_once(workspace, reply, settings):
    key = ApiKey.objects.get(workspace=workspace)
    accounts.key_answers_per_day_set(key=key, answers_per_day=1)
    counter = iter(range(100))
    results = race(4, lambda: answers.answer_direct(workspace=workspace, reply_id=reply.pk, body="Happy to talk.",
                                                    api_key=key, idempotency_key=f"pol-{next(counter)}"))
    allowed = [r for r in results if r is not None]
    assert len(allowed) == 1 and allowed[0].without_approval
    assert ReplyAnswer.objects.filter(without_approval=True).count() == 1


def test_workers_delivering_the_same_answer_at_once_send_it_once(workspace, owner, reply, settings):
    from django.contrib.auth import get_user_model

    member = get_user_model().objects.get(pk=owner.pk)
    answer = answers.answer_direct(workspace=workspace, reply_id=reply.pk, body="Thanks!", member=member)
    results = race(4, lambda: answers.answer_deliver(answer_id=answer.pk))
    assert set(results) <= {"sent", "sending"}  # the losers report the state they found
    assert ReplyAnswer.objects.get(pk=answer.pk).state == "sent"
    assert len(_sink_answers(settings)) == 1
