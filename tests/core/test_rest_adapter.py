"""Both REST doors settle the same way (api.rest.run_verb): under Django's handler too (API_FAST_DOOR=0), a call
whose settlement is known exactly is answered first, stating what its settlement then commits, and the settlement
runs when the handler closes the response (once it is sent)."""

import json

from django.core.signals import request_finished
from django.db import close_old_connections
from django.test import RequestFactory
from django.urls import resolve

from billing.models import CreditAccount, RequestRecord


def _call(api_key, body):
    request = RequestFactory().post("/v1/test_echo", data=json.dumps(body), content_type="application/json",
                                    HTTP_AUTHORIZATION=f"Bearer {api_key}")
    request.request_id = "req_django_door"  # (the middleware's)
    return resolve("/v1/test_echo").func(request)


def _close(response):
    """What the handler does once the response is out (as the test client does it: the test's connection kept)."""
    request_finished.disconnect(close_old_connections)
    try:
        response.close()
    finally:
        request_finished.connect(close_old_connections)


def test_djangos_handler_settles_after_the_answer_when_the_response_is_closed(api_key, workspace, settings):
    settings.SETTLE_AFTER_RESPONSE = True
    response = _call(api_key, {"hold": "1", "charge": "0.5"})
    assert response.status_code == 200, response.content
    service = json.loads(response.content)["service"]
    assert (service["credits_charged"], service["credits_available"]) == ("0.5", "299.5")
    assert RequestRecord.objects.get(pk="req_django_door").status == "in_progress"  # answered, not yet settled
    _close(response)
    record = RequestRecord.objects.get(pk="req_django_door")
    assert (record.status, record.credits_charged_micros) == ("succeeded", 500_000)
    account = CreditAccount.objects.get(pk=workspace.pk)
    assert (account.balance_micros - account.reserved_micros, account.reserved_micros) == (299_500_000, 0)


def test_with_the_setting_off_the_answer_waits_for_the_settlement(api_key, workspace, settings):
    settings.SETTLE_AFTER_RESPONSE = False
    response = _call(api_key, {"hold": "1", "charge": "0.5"})
    assert response.status_code == 200, response.content
    assert RequestRecord.objects.get(pk="req_django_door").status == "succeeded"
    _close(response)
    assert CreditAccount.objects.get(pk=workspace.pk).reserved_micros == 0
