"""Console pages for webhooks: endpoints (add, test, delete, enable), the delivery log with replay, and the
low-balance threshold. Reading: members; changing: owners and admins. Another workspace's objects are 404."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.console_views import console_page, show_once_pop, show_once_put
from core import errors
from core.money import InvalidCreditString, format_credits, parse_credits
from webhooks import services
from webhooks.models import WebhookDelivery


def _endpoint(membership, webhook_id):
    try:
        return services.endpoint_get(workspace=membership.workspace, webhook_id=webhook_id)
    except errors.NotFound as exc:
        raise Http404 from exc


@never_cache
@console_page
@require_http_methods(["GET", "POST"])
def webhook_list(request, membership):
    ws = membership.workspace
    created, error = None, None
    if request.method == "POST":
        if not membership.can_approve:
            raise Http404
        try:
            endpoint, secret = services.endpoint_create(workspace=ws, url=request.POST.get("url", ""),
                                                        events=request.POST.getlist("events"), created_by=request.user)
        except errors.InvalidRequest as exc:
            error = exc.message
        else:  # POST/redirect/GET: the secret is shown once, on the page redirected to; a reload creates nothing
            show_once_put(request, "webhook_secret", {"webhook_id": str(endpoint.pk), "secret": secret})
            return redirect("webhooks_console:list")
    pending = show_once_pop(request, "webhook_secret") if request.method == "GET" else None
    if pending:
        endpoint = services.endpoints_list(workspace=ws).filter(pk=pending["webhook_id"]).first()
        if endpoint is not None:
            created = {"endpoint": endpoint, "secret": pending["secret"]}
    threshold = services.balance_threshold_get(workspace=ws)
    return render(request, "webhooks/webhooks.html", {
        "endpoints": services.endpoints_list(workspace=ws), "event_types": services.EVENT_TYPES,
        "created": created, "error": error,
        "threshold": format_credits(threshold) if threshold is not None else "",
    })


@console_page
def webhook_detail(request, membership, webhook_id):
    endpoint = _endpoint(membership, webhook_id)
    deliveries = endpoint.deliveries.select_related("event").order_by("-created_at")[:100]
    return render(request, "webhooks/webhook_detail.html", {"endpoint": endpoint, "deliveries": deliveries})


@console_page(approver=True)
@require_POST
def webhook_action(request, membership, webhook_id, action):
    endpoint = _endpoint(membership, webhook_id)
    if action == "delete":
        services.endpoint_delete(endpoint=endpoint)
        messages.success(request, f"Endpoint {endpoint.url} deleted.")
        return redirect("webhooks_console:list")
    if action == "test":
        services.endpoint_test(endpoint=endpoint)
        messages.success(request, "A webhook.test event is on its way.")
    elif action == "enable":
        services.endpoint_enable(endpoint=endpoint)
        messages.success(request, "Endpoint enabled again.")
    else:
        raise Http404
    return redirect("webhooks_console:detail", webhook_id=endpoint.pk)


@console_page(approver=True)
@require_POST
def delivery_replay(request, membership, delivery_id):
    delivery = WebhookDelivery.objects.filter(pk=delivery_id, endpoint__workspace=membership.workspace,
                                              endpoint__deleted_at__isnull=True).first()
    if delivery is None:
        raise Http404
    services.delivery_replay(delivery=delivery)
    messages.success(request, f"Delivery {delivery.pk} queued again.")
    return redirect("webhooks_console:detail", webhook_id=delivery.endpoint_id)


@console_page(approver=True)
@require_POST
def balance_threshold(request, membership):
    raw = request.POST.get("threshold", "").strip()
    try:
        amount = parse_credits(raw) if raw else None
    except InvalidCreditString:
        messages.error(request, "The threshold must be an amount of credits, e.g. 100.")
        return redirect("webhooks_console:list")
    services.balance_threshold_set(workspace=membership.workspace, threshold=amount)
    messages.success(request, "Low-balance threshold saved." if raw else "Low-balance alert turned off.")
    return redirect("webhooks_console:list")
