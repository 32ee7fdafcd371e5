"""Test-only verbs that exercise the pipeline. Registered only by tests/urls.py; never routed in the product."""

import threading
import time

from rest_framework import serializers

from accounts import services as accounts
from core import errors
from core.money import InvalidCreditString, parse_credits
from core.verbs import Outcome, StrictSerializer, Verb, register

GATES: dict[str, threading.Event] = {}


class CreditField(serializers.CharField):
    def to_internal_value(self, data):
        try:
            return parse_credits(super().to_internal_value(data))
        except InvalidCreditString as exc:
            raise serializers.ValidationError(str(exc)) from exc


class EchoIn(StrictSerializer):
    charge = CreditField(required=False, default=0)
    hold = CreditField(required=False)
    fail = serializers.CharField(required=False)
    gate = serializers.CharField(required=False)
    payload = serializers.JSONField(required=False)


def run_echo(ctx, *, charge=0, hold=None, fail=None, gate=None, payload=None):
    if gate:
        GATES.setdefault(gate, threading.Event()).wait(timeout=10)
    if fail == "crash":
        raise RuntimeError("boom: secret internals")
    if fail:
        for cls in errors.ALL_ERRORS:
            if cls.code == fail:
                raise cls()
    time.sleep(0)
    return Outcome(result={"echo": payload, "hold": hold}, charge=charge)


echo = register(Verb(
    name="test_echo", path="/v1/test_echo", run=run_echo, input=EchoIn, test_only=True,
    max_charge=lambda ctx, d: d.get("hold", d.get("charge", 0)),
))


class ConfirmIn(StrictSerializer):
    amount = serializers.IntegerField(min_value=1)
    confirmation_token = serializers.CharField(required=False)


def run_confirm(ctx, *, amount, confirmation_token=None):
    from django.db import transaction

    params = {"amount": amount}
    if confirmation_token is None:
        token, plaintext = accounts.token_issue(workspace=ctx.workspace, verb="test_confirm", params=params,
                                                ttl=accounts.QUOTE_TTL, summary={"amount": amount},
                                                request_id=ctx.request_id)
        return Outcome(result={"status": "quote", **accounts.token_fields(token, plaintext)})
    with transaction.atomic():
        accounts.token_consume(workspace=ctx.workspace, verb="test_confirm", params=params,
                               plaintext=confirmation_token, request_id=ctx.request_id)
    return Outcome(result={"status": "purchased", "amount": amount}, charge=amount)


confirm = register(Verb(
    name="test_confirm", path="/v1/test_confirm", run=run_confirm, input=ConfirmIn, test_only=True,
    scope="assets:purchase", idempotency=lambda raw: "confirmation_token" in raw,
    max_charge=lambda ctx, d: d["amount"] if d.get("confirmation_token") else 0,
))
