"""Webhook endpoints over REST and MCP (one declaration each; see docs/webhooks.md). Free, any valid key."""

from rest_framework import serializers

from core import errors
from core.verbs import Outcome, StrictSerializer, Verb, register
from webhooks import services


class CreateWebhookIn(StrictSerializer):
    url = serializers.CharField(max_length=2000, help_text="Where events are POSTed (https; no private addresses).")
    events = serializers.ListField(child=serializers.CharField(max_length=64), allow_empty=False,
                                   help_text="Event types to receive, or [\"*\"] for all: "
                                             + ", ".join(services.EVENT_TYPES))


class WebhookIdIn(StrictSerializer):
    webhook_id = serializers.CharField(max_length=40)


class DeliveryOut(serializers.Serializer):
    delivery_id = serializers.CharField(help_text="The webhook-id header of this message (same on every retry).")
    event_id = serializers.CharField()
    event = serializers.CharField()
    status = serializers.CharField(help_text="pending | succeeded | failed")
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_null=True)
    latency_ms = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    next_attempt_at = serializers.DateTimeField(allow_null=True)


class WebhookOut(serializers.Serializer):
    webhook_id = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    status = serializers.CharField(help_text="active | disabled (after 3 days of failures)")
    created_at = serializers.DateTimeField()
    failing_since = serializers.DateTimeField(allow_null=True)
    disabled_at = serializers.DateTimeField(allow_null=True)


class WebhookWithSecretOut(WebhookOut):
    secret = serializers.CharField(help_text="whsec_…: shown only in this response.")


class WebhookDetailOut(WebhookOut):
    recent_deliveries = DeliveryOut(many=True)


class WebhookListOut(serializers.Serializer):
    webhooks = WebhookOut(many=True)


def run_create(ctx, *, url, events) -> Outcome:
    endpoint, secret = services.endpoint_create(workspace=ctx.workspace, url=url, events=events,
                                                created_by=getattr(ctx.api_key, "created_by", None))
    return Outcome(result=services.endpoint_render(endpoint, secret=secret))


def run_list(ctx) -> Outcome:
    return Outcome(result={"webhooks": [services.endpoint_render(e) for e in services.endpoints_list(workspace=ctx.workspace)]})


def run_get(ctx, *, webhook_id) -> Outcome:
    endpoint = services.endpoint_get(workspace=ctx.workspace, webhook_id=webhook_id)
    return Outcome(result=services.endpoint_render(endpoint, deliveries=True))


def run_delete(ctx, *, webhook_id) -> Outcome:
    endpoint = services.endpoint_get(workspace=ctx.workspace, webhook_id=webhook_id)
    services.endpoint_delete(endpoint=endpoint)
    return Outcome(result={"webhook_id": endpoint.pk, "deleted": True})


def run_test(ctx, *, webhook_id) -> Outcome:
    endpoint = services.endpoint_get(workspace=ctx.workspace, webhook_id=webhook_id)
    delivery = services.endpoint_test(endpoint=endpoint)
    return Outcome(result={"webhook_id": endpoint.pk, "delivery_id": delivery.pk, "event": services.TEST_EVENT,
                           "status": "queued"})


def run_rotate(ctx, *, webhook_id) -> Outcome:
    endpoint = services.endpoint_get(workspace=ctx.workspace, webhook_id=webhook_id)
    secret = services.endpoint_rotate_secret(endpoint=endpoint)
    return Outcome(result={**services.endpoint_render(endpoint, secret=secret),
                           "previous_secret_valid_until": endpoint.previous_secret_until})


COMMON = dict(max_charge=0, tags=("webhooks",))

register(Verb(
    name="create_webhook", path="/v1/webhooks", run=run_create, input=CreateWebhookIn, output=WebhookWithSecretOut,
    summary="Add a webhook endpoint",
    description="Free. Returns the endpoint with its signing secret (`whsec_…`, Standard Webhooks), shown only here. "
                "A URL on a private or link-local address is refused (400), and a loopback one outside sandbox mode "
                "(the 400's details.setting names the setting that allows it).",
    errors=(errors.InvalidRequest,), **COMMON))
register(Verb(
    name="list_webhooks", path="/v1/webhooks", method="GET", run=run_list, output=WebhookListOut, envelope=False,
    record=False, summary="The workspace's webhook endpoints", description="Free.", tags=("webhooks",)))
register(Verb(
    name="get_webhook", path="/v1/webhooks/<str:webhook_id>", method="GET", run=run_get, input=WebhookIdIn,
    output=WebhookDetailOut, envelope=False, record=False, errors=(errors.NotFound,),
    summary="A webhook endpoint with its 25 most recent deliveries",
    description="Free. Another workspace's id is 404.", tags=("webhooks",)))
register(Verb(
    name="delete_webhook", path="/v1/webhooks/<str:webhook_id>", method="DELETE", run=run_delete, input=WebhookIdIn,
    envelope=False, record=False, errors=(errors.NotFound,), summary="Delete a webhook endpoint",
    description="Free. Pending deliveries to it are dropped.", tags=("webhooks",)))
register(Verb(
    name="test_webhook", path="/v1/webhooks/<str:webhook_id>/test", run=run_test, input=WebhookIdIn,
    summary="Send a webhook.test event to this endpoint", description="Free. Delivered like any event.",
    errors=(errors.NotFound,), **COMMON))
register(Verb(
    name="rotate_webhook_secret", path="/v1/webhooks/<str:webhook_id>/rotate_secret", run=run_rotate,
    input=WebhookIdIn, output=WebhookWithSecretOut, summary="Rotate the signing secret",
    description="Free. Returns the new secret (shown only here). For 24 hours the old and the new secret both "
                "sign every message (two `v1,` signatures).", errors=(errors.NotFound,), **COMMON))
